/**
 * The NATS JetStream adapter, sampler and final read against a real three-server cluster (the
 * Debian package's /usr/sbin/nats-server, each server on its own loopback address). Where
 * nats-server is not installed the suite is NOT run, and says so in one line.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { needs } from '../../../test-support/capabilities.js';
import { alive, sampleUntil, startTargetCluster, testNow, type TestTargetCluster } from '../test-support/target-cluster.js';
import { NatsJetStreamTarget } from './nats-target.js';

const target = new NatsJetStreamTarget();
// nats-server and setpriv (Debian packages): without them NOT run
const nats = needs('nats');

describe.skipIf(nats.skip)(nats.title('NATS JetStream adapter (three servers, an R3 stream)'), () => {
  let c: TestTargetCluster;
  const store = target.store;

  beforeAll(async () => {
    c = await startTargetCluster(target, target.nodeIds, { operationTimeoutMs: 5_000 });
    await sampleUntil(c.sampler, (v) => v.rows[0].health === 'Healthy', 60_000, 'the stream Healthy on all three');
  }, 120_000);
  afterAll(async () => {
    const pids = c ? target.nodeIds.flatMap((n) => c.runtime.pidsOf(n)) : [];
    const dataDir = c?.runtime.dataDirOf('n1');
    await c?.close();
    // nothing is left running or on disk
    for (const p of pids) expect(alive(p)).toBe(false);
    if (dataDir) expect(existsSync(dataDir)).toBe(false);
  }, 60_000);

  it('reports the installed version', async () => {
    expect(await target.version()).toMatch(/^nats-server 2\.\d+\.\d+/);
  });

  it('samples the stream leader with every server in sync, each server\'s last sequence as its revision', async () => {
    const v = await c.sampler.sample();
    expect(v.answered.sort()).toEqual(['n1', 'n2', 'n3']);
    const m = v.rows[0];
    expect(m).toMatchObject({ store, partition: 0, node: null, health: 'Healthy', inSync: ['n1', 'n2', 'n3'] });
    expect(target.nodeIds).toContain(m.active);
    expect(v.leader).toBe(m.active);
    expect(m.epoch).toBeGreaterThanOrEqual(1);
    expect(Object.keys(m.revisions ?? {}).sort()).toEqual(['n1', 'n2', 'n3']);
  });

  it('acknowledges a publish with its stream sequence and the leader; a read returns its value id; an unwritten key is absent', async () => {
    const w = await c.client.write({ store, key: 'k1', op: 'create', valueId: 'w1.1' });
    expect(w.outcome).toBe('ok');
    expect(w.status).toBe('OK');
    expect(w.ack!.revision).toBeGreaterThanOrEqual(1);
    expect(w.ack!.version).toBe(w.ack!.revision);
    expect(target.nodeIds).toContain(w.ack!.node);
    expect(w.attempts).toHaveLength(1);
    expect(w.attempts[0]).toMatchObject({ n: 1, status: 'OK', node: w.ack!.node, epoch: w.ack!.epoch });
    expect(await c.client.read(store, 'k1')).toEqual({ key: 'k1', outcome: 'ok', status: 'OK', node: null, value: 'w1.1' });
    expect(await c.client.read(store, 'k999')).toEqual({ key: 'k999', outcome: 'ok', status: 'NotFound', node: null, value: null });
    const many = await c.client.readMany(store, ['k1', 'k999']);
    expect(many.map((r) => r.value)).toEqual(['w1.1', null]);
  });

  it('a publish repeated with the same Nats-Msg-Id inside the duplicate window is acknowledged as a duplicate of the first, not stored twice', async () => {
    const first = await c.client.write({ store, key: 'k2', op: 'create', valueId: 'w2.1' });
    const again = await c.client.write({ store, key: 'k2', op: 'create', valueId: 'w2.1' });
    expect(again.outcome).toBe('ok');
    expect(again.attempts[0].status).toBe('OK-Duplicate');
    expect(again.ack!.revision).toBe(first.ack!.revision);
  });

  it('refuses a delete without sending anything (a stream keeps its messages)', async () => {
    const d = await c.client.write({ store, key: 'k1', op: 'delete', valueId: 'w1.2' });
    expect(d).toMatchObject({ outcome: 'fail', status: 'Unsupported' });
    expect((await c.client.read(store, 'k1')).value).toBe('w1.1');
  });

  it('reads the whole stream back: every publish present once, absent keys null, counts and each server\'s copy', async () => {
    for (let k = 3; k <= 40; k++) expect((await c.client.write({ store, key: `k${k}`, op: 'create', valueId: `w${k}.1` })).outcome).toBe('ok');
    await sampleUntil(c.sampler, (v) => v.rows[0].health === 'Healthy' && Object.values(v.rows[0].revisions ?? {}).every((r) => r === 40), 30_000, 'every server holding the 40 messages');
    const reader = target.finalReader(c.cluster);
    try {
      const r = await reader.readAll();
      expect(r).toMatchObject({ complete: true, stream: { messages: 40, firstSeq: 1, lastSeq: 40 }, read: 40, keys: 40, duplicates: 0, anomalies: 0 });
      expect(r.replicas).toEqual({ n1: { messages: 40, firstSeq: 1, lastSeq: 40 }, n2: { messages: 40, firstSeq: 1, lastSeq: 40 }, n3: { messages: 40, firstSeq: 1, lastSeq: 40 } });
      expect(reader.valueOf(store, 'k1')).toBe('w1.1');
      expect(reader.valueOf(store, 'k40')).toBe('w40.1');
      expect(reader.valueOf(store, 'k41')).toBeNull();
    } finally {
      await reader.close();
    }
  }, 60_000);

  it('a killed leader: publishes fail over to the new leader (a higher tenure) and nothing acknowledged is lost', async () => {
    const before = await c.sampler.sample();
    const leader = before.leader!;
    await c.runtime.kill(leader);
    const acked: string[] = [];
    const t0 = testNow();
    for (let k = 41; k <= 60; k++) {
      const w = await c.client.write({ store, key: `k${k}`, op: 'create', valueId: `w${k}.1` });
      if (w.outcome === 'ok') acked.push(`k${k}`);
      await sampleUntil(c.sampler, () => true, 1_000, 'a sample');
    }
    expect(acked.length).toBeGreaterThan(0);
    const after = await sampleUntil(c.sampler, (v) => v.leader !== null && v.leader !== leader, 30_000, 'a new leader');
    expect(after.rows[0].epoch).toBeGreaterThan(before.rows[0].epoch);
    await c.runtime.restart(leader);
    await sampleUntil(c.sampler, (v) => v.rows[0].health === 'Healthy', 60_000, 'the restarted server back in sync');
    const reader = target.finalReader(c.cluster);
    try {
      const r = await reader.readAll();
      expect(r.complete).toBe(true);
      for (const k of acked) expect(reader.valueOf(store, k)).toBe(`w${k.slice(1)}.1`);
      expect(testNow() - t0).toBeGreaterThan(0);
    } finally {
      await reader.close();
    }
  }, 180_000);
});
