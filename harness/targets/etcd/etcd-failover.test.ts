/**
 * Three real etcd members on the process runtime: writes, the leader killed (and, as root, the
 * leader isolated by a partition), the outcomes the adapter gives meanwhile, the ownership change
 * in the samples, and no acknowledged write lost. Not run, and said so in one line, where etcd is
 * not installed; the partition case needs CAP_NET_ADMIN as well.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isolate } from '../../nemesis/grudge.js';
import { needs } from '../../../test-support/capabilities.js';
import { alive, sampleUntil, startTargetCluster, type TestTargetCluster } from '../test-support/target-cluster.js';
import { WriteLoop } from '../test-support/write-loop.js';
import type { OwnershipView } from '../target.js';
import { EtcdTarget } from './etcd-target.js';

const target = new EtcdTarget();
// etcd-server and setpriv (Debian packages); partitions need iptables: without them NOT run
const etcd = needs('etcd');
const net = needs('iptables');
const NODES = ['n1', 'n2', 'n3'];
const KEYS = ['a', 'b', 'c', 'd'];
const healthy = (v: OwnershipView): boolean => v.rows[0].health === 'Healthy' && v.rows[0].inSync?.length === 3;

/** Final values of the keys, read until a read succeeds. */
async function finals(c: TestTargetCluster): Promise<Map<string, string | null>> {
  for (let i = 0; i < 50; i++) {
    const got = await c.client.readMany(target.store, KEYS);
    if (got.every((r) => r.outcome === 'ok')) return new Map(got.map((r) => [r.key, r.value]));
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('final reads never succeeded');
}

async function scenario(c: TestTargetCluster, fault: (leader: string) => Promise<void>, undo: (leader: string) => Promise<void>): Promise<{ loop: WriteLoop; before: OwnershipView; after: OwnershipView; leader: string }> {
  const before = await sampleUntil(c.sampler, healthy, 30_000, 'a leader with all three members in sync');
  const leader = before.leader!;
  const term = before.rows[0].epoch;
  const loop = new WriteLoop(c.client, target.store, KEYS, { pauseMs: 2 });
  try {
    await loop.until((w) => w.out.outcome === 'ok', 10_000, 'a first acknowledged write');
    await fault(leader);
    // acknowledged again, by another member leading a higher term
    await loop.until((w) => w.out.outcome === 'ok' && w.out.ack!.node !== leader && w.out.ack!.epoch > term, 30_000, 'an ack from a new leader');
    const after = await sampleUntil(c.sampler, (v) => v.leader !== null && v.leader !== leader && v.rows[0].epoch > term, 10_000, 'the samples to name the new leader');
    await undo(leader);
    await sampleUntil(c.sampler, healthy, 30_000, 'all three members in sync again');
    await loop.until((w) => w.out.outcome === 'ok' && w.invokeMs > performance.now() - 1_000, 10_000, 'acks after the heal');
    return { loop, before, after, leader };
  } finally {
    await loop.stop();
  }
}

describe.skipIf(etcd.skip)(etcd.title('etcd cluster (three members, process runtime)'), () => {
  let c: TestTargetCluster;
  let pids: number[] = [];
  let dataDirs: string[] = [];

  beforeAll(async () => {
    c = await startTargetCluster(target, NODES, { partitions: !net.skip, operationTimeoutMs: 2_000 });
  });
  afterAll(async () => {
    if (!c) return;
    pids = NODES.flatMap((n) => c.runtime.pidsOf(n));
    dataDirs = NODES.map((n) => c.runtime.dataDirOf(n));
    await c.close();
    for (const p of pids) expect(alive(p)).toBe(false);
    for (const d of dataDirs) expect(existsSync(d)).toBe(false);
  });

  it('the leader killed: writes go indeterminate or fail, then a new leader acknowledges at a higher term; nothing acknowledged is lost', async () => {
    const { loop, before, after, leader } = await scenario(
      c,
      (l) => c.runtime.kill(l),
      (l) => c.runtime.restart(l),
    );
    const oks = loop.log.filter((w) => w.out.outcome === 'ok');
    // every ack names the leader the samples name for its term, before and after the kill
    for (const w of oks) {
      if (w.out.ack!.epoch === before.rows[0].epoch) expect(w.out.ack!.node).toBe(leader);
      if (w.out.ack!.epoch === after.rows[0].epoch) expect(w.out.ack!.node).toBe(after.leader);
    }
    // the members that stayed up name the new leader in their own rows
    const own = after.rows.filter((r) => r.node !== null);
    expect(own.map((r) => r.node).sort()).toEqual(NODES.filter((n) => n !== leader));
    for (const r of own) expect(r.active).toBe(after.leader);
    // no write is lost, no failed write's value appears
    expect(loop.contradictions(await finals(c))).toEqual([]);
    // only the three outcomes, each with a status
    for (const w of loop.log) expect(['ok', 'fail', 'info']).toContain(w.out.outcome);
    console.log(`etcd kill of leader ${leader}: ${JSON.stringify(loop.counts())}`);
  });

  it.skipIf(net.skip)(net.title('the leader isolated by a partition: the majority elects a new leader at a higher term; nothing acknowledged is lost'), async () => {
    const { loop, after, leader } = await scenario(
      c,
      (l) => c.runtime.partition(isolate(NODES, l).grudge),
      () => c.runtime.heal(),
    );
    expect(after.leader).not.toBe(leader);
    // while isolated, the old leader kept no write of a later term
    expect(loop.contradictions(await finals(c))).toEqual([]);
    console.log(`etcd partition of leader ${leader}: ${JSON.stringify(loop.counts())}`);
  });
});
