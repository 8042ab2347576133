/**
 * The etcd adapter against one real etcd member (the Debian package's /usr/bin/etcd) on its own
 * loopback address. Where etcd is not installed the suite is NOT run, and says so in one line.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { needs } from '../../../test-support/capabilities.js';
import { alive, startTargetCluster, testNow, type TestTargetCluster } from '../test-support/target-cluster.js';
import { EtcdTarget } from './etcd-target.js';

const target = new EtcdTarget();
// etcd-server and setpriv (Debian packages): without them NOT run
const etcd = needs('etcd');

describe.skipIf(etcd.skip)(etcd.title('etcd adapter (one member)'), () => {
  let c: TestTargetCluster;
  const store = target.store;

  beforeAll(async () => {
    c = await startTargetCluster(target, ['n1'], { operationTimeoutMs: 1_500 });
  });
  afterAll(async () => {
    const pids = c ? c.runtime.pidsOf('n1') : [];
    const dataDir = c?.runtime.dataDirOf('n1');
    await c?.close();
    // nothing is left running or on disk
    for (const p of pids) expect(alive(p)).toBe(false);
    if (dataDir) expect(existsSync(dataDir)).toBe(false);
  });

  it('reports the installed version and its client library', async () => {
    expect(await target.version()).toMatch(/^etcd 3\.\d+\.\d+$/);
    expect(target.clientLibrary).toBe('etcd3 1.1.2');
  });

  it('acknowledges a put with the leader, its term and the store revision; a read returns the value id', async () => {
    const w = await c.client.write({ store, key: 'a', op: 'put', valueId: 'w1.1' });
    expect(w.outcome).toBe('ok');
    expect(w.status).toBe('OK');
    expect(w.ack!.node).toBe('n1');
    expect(w.ack!.epoch).toBeGreaterThanOrEqual(1);
    expect(w.ack!.revision).toBeGreaterThan(1);
    expect(w.ack!.version).toBe(w.ack!.revision);
    expect(w.attempts).toHaveLength(1);
    expect(w.attempts[0]).toMatchObject({ n: 1, node: 'n1', status: 'OK', epoch: w.ack!.epoch });
    const r = await c.client.read(store, 'a');
    expect(r).toEqual({ key: 'a', outcome: 'ok', status: 'OK', node: 'n1', value: 'w1.1' });
  });

  it('create is refused (Conflict, fail) on a present key and acknowledged on an absent one', async () => {
    const refused = await c.client.write({ store, key: 'a', op: 'create', valueId: 'w1.2' });
    expect(refused).toMatchObject({ outcome: 'fail', status: 'Conflict' });
    expect(refused.ack).toBeUndefined();
    expect((await c.client.read(store, 'a')).value).toBe('w1.1');
    const created = await c.client.write({ store, key: 'b', op: 'create', valueId: 'w2.1' });
    expect(created.outcome).toBe('ok');
    expect((await c.client.read(store, 'b')).value).toBe('w2.1');
  });

  it('cas applies only at the version the last ack named; versions only grow', async () => {
    const first = await c.client.write({ store, key: 'c', op: 'create', valueId: 'w3.1' });
    const second = await c.client.write({ store, key: 'c', op: 'cas', valueId: 'w3.2', ifMatchVersion: first.ack!.version });
    expect(second.outcome).toBe('ok');
    expect(second.ack!.version).toBeGreaterThan(first.ack!.version);
    const stale = await c.client.write({ store, key: 'c', op: 'cas', valueId: 'w3.3', ifMatchVersion: first.ack!.version });
    expect(stale).toMatchObject({ outcome: 'fail', status: 'Conflict' });
    expect((await c.client.read(store, 'c')).value).toBe('w3.2');
  });

  it('delete makes the key absent; deleting an absent key is NotFound (fail)', async () => {
    const d = await c.client.write({ store, key: 'b', op: 'delete', valueId: 'w2.2' });
    expect(d.outcome).toBe('ok');
    expect(await c.client.read(store, 'b')).toMatchObject({ outcome: 'ok', status: 'NotFound', value: null });
    expect(await c.client.write({ store, key: 'b', op: 'delete', valueId: 'w2.3' })).toMatchObject({ outcome: 'fail', status: 'NotFound' });
  });

  it('the fence: a write sent before a later acknowledged write of its key never lands after it (Conflict, nothing applied), also after a delete', async () => {
    // `late` is a client that has seen the store up to now, then falls silent: what it sends
    // next stands for a request that waited in a paused member's socket while others went on
    const late = target.client(c.cluster, { now: testNow, operationTimeoutMs: 1_500 });
    const late2 = target.client(c.cluster, { now: testNow, operationTimeoutMs: 1_500 });
    try {
      expect((await late.read(store, 'f')).outcome).toBe('ok');
      expect((await c.client.write({ store, key: 'f', op: 'create', valueId: 'w9.1' })).outcome).toBe('ok');
      expect(await late.write({ store, key: 'f', op: 'put', valueId: 'w9.0' })).toMatchObject({ outcome: 'fail', status: 'Conflict' });
      expect((await c.client.read(store, 'f')).value).toBe('w9.1');
      // a delete leaves no key to compare with: the fence key remembers it (a refusal's header
      // tells a client the revision of now, so each late write below is a client of its own)
      expect((await late.read(store, 'f')).value).toBe('w9.1');
      expect((await late2.read(store, 'f')).value).toBe('w9.1');
      expect((await c.client.write({ store, key: 'f', op: 'delete', valueId: 'w9.2' })).outcome).toBe('ok');
      expect(await late.write({ store, key: 'f', op: 'put', valueId: 'w9.3' })).toMatchObject({ outcome: 'fail', status: 'Conflict' });
      expect(await late2.write({ store, key: 'f', op: 'create', valueId: 'w9.4' })).toMatchObject({ outcome: 'fail', status: 'Conflict' });
      expect((await c.client.read(store, 'f')).value).toBeNull();
      // once it has seen the delete's revision, its writes apply again
      expect((await late.read(store, 'f')).value).toBeNull();
      expect((await late.write({ store, key: 'f', op: 'create', valueId: 'w9.5' })).outcome).toBe('ok');
      expect((await c.client.read(store, 'f')).value).toBe('w9.5');
    } finally {
      await late.close();
      await late2.close();
    }
  });

  it('a batch read of 250 keys (three transactions) returns every value in order', async () => {
    const keys = Array.from({ length: 250 }, (_, i) => `m${i}`);
    for (const [i, k] of keys.entries()) if (i % 5 !== 0) expect((await c.client.write({ store, key: k, op: 'put', valueId: `w${100 + i}.1` })).outcome).toBe('ok');
    const got = await c.client.readMany(store, keys);
    expect(got.map((r) => r.key)).toEqual(keys);
    expect(got.every((r) => r.outcome === 'ok')).toBe(true);
    expect(got.map((r) => r.value)).toEqual(keys.map((_, i) => (i % 5 === 0 ? null : `w${100 + i}.1`)));
  });

  it('the sampler names the member as leader of its term, in sync and Healthy', async () => {
    const v = await c.sampler.sample();
    expect(v.leader).toBe('n1');
    expect(v.answered).toEqual(['n1']);
    const [merged, own] = v.rows;
    expect(merged).toMatchObject({ store, partition: 0, node: null, active: 'n1', health: 'Healthy' });
    expect(merged.epoch).toBeGreaterThanOrEqual(1);
    // the first round has no earlier leader index to compare with; the second must still say in sync
    const v2 = await c.sampler.sample();
    expect(v2.rows[0].inSync).toEqual(['n1']);
    expect(v2.rows[0].revisions!.n1).toBeGreaterThan(1);
    expect(own).toMatchObject({ node: 'n1', active: 'n1', epoch: merged.epoch });
  });

  it('a paused member leaves a write indeterminate (info); a killed one fails it before sending (fail)', async () => {
    await c.runtime.pause('n1');
    const paused = await c.client.write({ store, key: 'p', op: 'put', valueId: 'w9.1' });
    await c.runtime.resume('n1');
    expect(paused).toMatchObject({ outcome: 'info', status: 'DeadlineExceeded' });
    expect(paused.ack).toBeUndefined();

    await c.runtime.kill('n1');
    expect(c.runtime.isUp('n1')).toBe(false);
    // a write sent on the connection before the client saw it break may be in flight (info); once
    // the channel knows, a write is refused before it is sent (fail)
    let dead = await c.client.write({ store, key: 'q', op: 'put', valueId: 'w10.1' });
    for (let i = 2; i < 40 && dead.status !== 'NoConnection'; i++) {
      expect(dead.outcome).not.toBe('ok');
      await new Promise((res) => setTimeout(res, 50));
      dead = await c.client.write({ store, key: 'q', op: 'put', valueId: `w10.${i}` });
    }
    expect(dead).toMatchObject({ outcome: 'fail', status: 'NoConnection' });
    const unread = await c.client.read(store, 'a');
    expect(unread).toMatchObject({ outcome: 'fail', value: null });

    // a restarted member keeps its data folder: acknowledged writes are still there
    await c.runtime.restart('n1');
    let r = await c.client.read(store, 'a');
    for (let i = 0; i < 50 && r.outcome !== 'ok'; i++) {
      await new Promise((res) => setTimeout(res, 100));
      r = await c.client.read(store, 'a');
    }
    expect(r.value).toBe('w1.1');
  });
});
