/**
 * PostgreSQL 15 with Patroni 3 on the process runtime, synchronous_mode_strict: three nodes (each
 * an etcd member, Patroni and PostgreSQL), writes through the adapter, the primary killed; Patroni
 * promotes the synchronous standby on a new timeline, the adapter follows it, the old primary
 * rejoins after its restart, and no acknowledged write is lost. A shorter ttl than the target's
 * default (10 s) keeps the failover short. NOT run, said in one line, where postgresql-15, patroni
 * or etcd-server is not installed.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { needs } from '../../../test-support/capabilities.js';
import { alive, sampleUntil, startTargetCluster, type TestTargetCluster } from '../test-support/target-cluster.js';
import { WriteLoop } from '../test-support/write-loop.js';
import type { OwnershipView } from '../target.js';
import { PostgresPatroniTarget } from './patroni-target.js';

const target = new PostgresPatroniTarget({ sync: 'strict', ttlS: 10, loopWaitS: 1, retryTimeoutS: 4 });
const patroni = needs('patroni');
const NODES = ['n1', 'n2', 'n3'];
const KEYS = ['a', 'b', 'c', 'd'];
const healthy = (v: OwnershipView): boolean => v.rows[0].health === 'Healthy';

describe.skipIf(patroni.skip)(patroni.title('PostgreSQL + Patroni (three nodes, synchronous_mode_strict, process runtime)'), () => {
  let c: TestTargetCluster;

  beforeAll(async () => {
    c = await startTargetCluster(target, NODES, { operationTimeoutMs: 5_000 });
  }, 180_000);
  afterAll(async () => {
    if (!c) return;
    const pids = NODES.flatMap((n) => c.runtime.pidsOf(n));
    const dataDirs = NODES.map((n) => c.runtime.dataDirOf(n));
    await c.close();
    for (const p of pids) expect(alive(p)).toBe(false);
    for (const d of dataDirs) expect(existsSync(d)).toBe(false);
  }, 60_000);

  it('reports the installed versions', async () => {
    expect(await target.version()).toMatch(/^postgresql 15\.\d+ \(patroni 3\.\d+\.\d+\)$/);
  });

  it('the primary killed: the synchronous standby is promoted on a new timeline, acks follow it, the old primary rejoins, nothing acknowledged is lost', async () => {
    const before = await sampleUntil(c.sampler, healthy, 90_000, 'a primary with both replicas streaming');
    const leader = before.leader!;
    const timeline = before.rows[0].epoch;
    const loop = new WriteLoop(c.client, target.store, KEYS, { pauseMs: 2 });
    try {
      await loop.until((w) => w.out.outcome === 'ok', 20_000, 'a first acknowledged write');
      await c.runtime.kill(leader);
      await loop.until((w) => w.out.outcome === 'ok' && w.out.ack!.node !== leader && w.out.ack!.epoch > timeline, 60_000, 'an ack from a new primary');
      const after = await sampleUntil(c.sampler, (v) => v.leader !== null && v.leader !== leader && v.rows[0].epoch > timeline, 20_000, 'the samples to name the new primary');
      await c.runtime.restart(leader);
      await sampleUntil(c.sampler, healthy, 120_000, 'all three nodes streaming again');
      await loop.until((w) => w.out.outcome === 'ok' && w.invokeMs > performance.now() - 1_000, 20_000, 'acks after the rejoin');
      await loop.stop();
      // acks name the primary of their timeline
      for (const w of loop.log.filter((x) => x.out.outcome === 'ok')) {
        if (w.out.ack!.epoch === timeline) expect(w.out.ack!.node).toBe(leader);
        if (w.out.ack!.epoch === after.rows[0].epoch) expect(w.out.ack!.node).toBe(after.leader);
      }
      const finals = new Map((await c.client.readMany(target.store, KEYS)).map((r) => [r.key, r.value]));
      expect(loop.contradictions(finals)).toEqual([]);
      for (const w of loop.log) expect(['ok', 'fail', 'info']).toContain(w.out.outcome);
      console.log(`Patroni kill of primary ${leader}: ${JSON.stringify(loop.counts())}; new primary ${after.leader} on timeline ${after.rows[0].epoch}`);
    } finally {
      await loop.stop();
    }
  }, 300_000);
});
