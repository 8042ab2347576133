/**
 * Redis with Sentinel, three nodes on the process runtime (a redis-server and a Sentinel on each
 * address): the master killed, and (as root) the master isolated with the clients still on it, the
 * scenario of the public Redis analyses. Sentinel's down-after is 5 s here (above the 4 s lease of
 * min-replicas-max-lag 1, as the target's default 6 s is), failover-timeout 6 s. Not run, and said
 * so in one line, where the packages are not installed; the partition needs CAP_NET_ADMIN too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isolate } from '../../nemesis/grudge.js';
import { needs } from '../../../test-support/capabilities.js';
import type { OwnershipView } from '../target.js';
import { alive, sampleUntil, startTargetCluster, type TestTargetCluster } from '../test-support/target-cluster.js';
import { WriteLoop, type LoggedWrite } from '../test-support/write-loop.js';
import { RedisSentinelTarget } from './redis-target.js';

/**
 * Bound on a failover step (promotion, an old master back in sync), ms: Sentinel's down-after plus
 * its failover and the replicas' resync, which a loaded 2-core machine stretches (a full make test
 * saw 40 s pass with the promoted master still short of a replica: NOREPLICAS throughout).
 */
const FAILOVER_BOUND_MS = 120_000;

const target = new RedisSentinelTarget({ downAfterMs: 5_000, failoverTimeoutMs: 6_000 });
// redis-server, redis-sentinel and setpriv (Debian packages); partitions need iptables: without them NOT run
const redis = needs('redis');
const net = needs('iptables');
const NODES = ['n1', 'n2', 'n3'];
const KEYS = ['a', 'b', 'c', 'd'];
const healthy = (v: OwnershipView): boolean => v.rows[0].health === 'Healthy' && v.rows[0].inSync?.length === 3;

/** Samples every 100 ms in the background, keeping (time, view) pairs. */
class Watch {
  readonly seen: Array<{ t: number; v: OwnershipView }> = [];
  private stopped = false;
  private readonly loop: Promise<void>;
  constructor(private readonly c: TestTargetCluster) {
    this.loop = this.run();
  }
  private async run(): Promise<void> {
    while (!this.stopped) {
      this.seen.push({ t: performance.now(), v: await this.c.sampler.sample() });
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }
}

async function finals(c: TestTargetCluster): Promise<Map<string, string | null>> {
  for (let i = 0; i < 100; i++) {
    const got = await c.client.readMany(target.store, KEYS);
    if (got.every((r) => r.outcome === 'ok')) return new Map(got.map((r) => [r.key, r.value]));
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('final reads never succeeded');
}

// Run alone (ZARIS_TEST_REDIS_FAILOVER=1; `make test` runs it after the suite, the Makefile's
// SOLO_TESTS): inside the full
// suite on this loaded 2-core machine Sentinel's promoted master waited more than 120 s for a
// replica to follow it (NOREPLICAS) three times in three runs, while it passes alone, also beside
// a certify run or the other target tests. The cause is open (see the closing note of issue 15).
const solo = process.env.ZARIS_TEST_REDIS_FAILOVER === '1' ? null : 'runs alone: ZARIS_TEST_REDIS_FAILOVER=1 (make test does, after the suite)';
const TITLE = 'Redis with Sentinel (three nodes, process runtime)';
describe.skipIf(redis.skip || solo !== null)(redis.skip ? redis.title(TITLE) : solo !== null ? `${TITLE} [NOT RUN: ${solo}]` : TITLE, () => {
  let c: TestTargetCluster;

  beforeAll(async () => {
    c = await startTargetCluster(target, NODES, { partitions: !net.skip, operationTimeoutMs: 2_000 });
  });
  afterAll(async () => {
    if (!c) return;
    const pids = NODES.flatMap((n) => c.runtime.pidsOf(n));
    await c.close();
    for (const p of pids) expect(alive(p)).toBe(false);
  });

  it('the master killed: writes fail or go indeterminate, Sentinel promotes a replica at a higher config epoch, the adapter follows it', async () => {
    const before = await sampleUntil(c.sampler, healthy, 30_000, 'the master with both replicas in sync');
    const master = before.leader!;
    const epoch = before.rows[0].epoch;
    const loop = new WriteLoop(c.client, target.store, KEYS, { pauseMs: 2 });
    try {
      await loop.until((w) => w.out.outcome === 'ok', 10_000, 'a first acknowledged write');
      await c.runtime.kill(master);
      const next = await loop.until((w) => w.out.outcome === 'ok' && w.out.ack!.node !== master, FAILOVER_BOUND_MS, 'an ack from a promoted replica');
      expect(next.out.ack!.epoch).toBeGreaterThan(epoch);
      // every Sentinel still up comes to name the new master at the new epoch (the one that led the
      // failover is left out of the samples until it has finished: its view is half old, half new)
      const settledOnNew = (v: OwnershipView): boolean => {
        const own = v.rows.filter((r) => r.node !== null && r.node !== master);
        return v.leader === next.out.ack!.node && own.length === 2 && own.every((r) => r.active === next.out.ack!.node && r.epoch === next.out.ack!.epoch);
      };
      const after = await sampleUntil(c.sampler, settledOnNew, 20_000, 'both live Sentinels to name the new master');
      expect(after.rows[0].epoch).toBe(next.out.ack!.epoch);
      // versions of the new tenure are above the old one's
      const oldMax = Math.max(...loop.log.filter((w) => w.out.outcome === 'ok' && w.out.ack!.epoch === epoch).map((w) => w.out.ack!.version));
      expect(next.out.ack!.version).toBeGreaterThan(oldMax);
      // the old master comes back with its append-only data and is made a replica of the new one
      await c.runtime.restart(master);
      await sampleUntil(c.sampler, healthy, FAILOVER_BOUND_MS, 'the old master back as an in-sync replica');
    } finally {
      await loop.stop();
    }
    // after the failover the key's writes went on at the new master: the last acks are there
    expect(loop.contradictions(await finals(c))).toEqual([]);
    for (const w of loop.log) expect(['ok', 'fail', 'info']).toContain(w.out.outcome);
    console.log(`Redis kill of master ${master}: ${JSON.stringify(loop.counts())}`);
  }, 300_000);

  it.skipIf(net.skip)(
    net.title('the master isolated with the clients on its side: it acknowledges until its replicas lag, those writes are lost when Sentinel promotes a replica at a higher epoch'),
    async () => {
      const before = await sampleUntil(c.sampler, healthy, FAILOVER_BOUND_MS, 'the master with both replicas in sync');
      const master = before.leader!;
      const epoch = before.rows[0].epoch;
      const watch = new Watch(c);
      const loop = new WriteLoop(c.client, target.store, KEYS, { pauseMs: 2 });
      let cutAt = 0;
      try {
        await loop.until((w) => w.out.outcome === 'ok', 10_000, 'a first acknowledged write');
        cutAt = performance.now();
        await c.runtime.partition(isolate(NODES, master).grudge);
        // the master stops acknowledging once its replicas' acks are too old (min-replicas-max-lag)
        await loop.until((w) => w.out.status === 'NOREPLICAS', 15_000, 'the isolated master to refuse (NOREPLICAS)');
      } finally {
        await loop.stop();
      }
      // the majority side promotes a replica at a higher config epoch
      const promoted = await sampleUntil(c.sampler, (v) => v.leader !== null && v.leader !== master && v.rows[0].epoch > epoch, 30_000, 'a promoted replica');
      await c.runtime.heal();
      await sampleUntil(c.sampler, healthy, FAILOVER_BOUND_MS, 'the old master back as an in-sync replica');
      await watch.stop();

      const ackedByOldAfterCut = loop.log.filter((w) => w.out.outcome === 'ok' && w.out.ack!.node === master && w.invokeMs >= cutAt);
      const lastAck = new Map<string, LoggedWrite>();
      for (const w of loop.log) if (w.out.outcome === 'ok') lastAck.set(w.key, w);
      const fin = await finals(c);
      const lost = [...lastAck.values()].filter((w) => fin.get(w.key) !== w.valueId);
      // the known answer: acknowledged writes are lost, and every lost one was acknowledged by the
      // isolated master after the cut, at the old epoch
      expect(ackedByOldAfterCut.length).toBeGreaterThan(0);
      expect(lost.length).toBeGreaterThan(0);
      for (const w of lost) {
        expect(w.out.ack!.node).toBe(master);
        expect(w.out.ack!.epoch).toBe(epoch);
        expect(w.invokeMs).toBeGreaterThanOrEqual(cutAt);
      }
      // ... and a master change at a higher epoch came after each of them (the loss is tied to it)
      const firstNewEpoch = watch.seen.find((s) => s.v.rows[0].epoch > epoch && s.v.leader !== master)!;
      expect(firstNewEpoch).toBeDefined();
      expect(firstNewEpoch.v.rows[0].epoch).toBe(promoted.rows[0].epoch);
      for (const w of lost) expect(w.completeMs).toBeLessThan(firstNewEpoch.t);
      console.log(
        `Redis partition of master ${master}: ${JSON.stringify(loop.counts())}; acked by the isolated master after the cut: ${ackedByOldAfterCut.length}; lost (last ack of a key): ${lost.length}; ` +
          `NOREPLICAS after ${Math.round(loop.log.find((w) => w.out.status === 'NOREPLICAS')!.invokeMs - cutAt)} ms; new master ${firstNewEpoch.v.leader} at epoch ${firstNewEpoch.v.rows[0].epoch} after ${Math.round(firstNewEpoch.t - cutAt)} ms`,
      );
    },
    400_000,
  );
});
