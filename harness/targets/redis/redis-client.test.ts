/**
 * The Redis adapter against one real node (the Debian packages' redis-server with the
 * redis-sentinel beside it, which the adapter asks for the master) on its own loopback address.
 * min-replicas-to-write is 0 here (a lone master has no replica). Where the packages are not
 * installed the suite is NOT run, and says so in one line.
 */
import { existsSync } from 'node:fs';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { needs } from '../../../test-support/capabilities.js';
import { endpointOf } from '../target.js';
import { alive, sampleUntil, startTargetCluster, type TestTargetCluster } from '../test-support/target-cluster.js';
import { scriptArgs, TENURE_STRIDE, WRITE_SCRIPT } from './redis-script.js';
import { RedisSentinelTarget } from './redis-target.js';

const target = new RedisSentinelTarget({ minReplicasToWrite: 0 });
// redis-server, redis-sentinel and setpriv (Debian packages): without them NOT run
const redis = needs('redis');

describe.skipIf(redis.skip)(redis.title('Redis adapter (one node: redis-server and its Sentinel)'), () => {
  let c: TestTargetCluster;
  let side: Redis;
  const store = target.store;

  beforeAll(async () => {
    c = await startTargetCluster(target, ['n1'], { operationTimeoutMs: 1_500 });
    const e = endpointOf(c.cluster, 'n1', 'redis');
    side = new Redis({ host: e.host, port: e.port, maxRetriesPerRequest: 1 });
    side.on('error', () => undefined);
  });
  afterAll(async () => {
    side?.disconnect();
    if (!c) return;
    const pids = c.runtime.pidsOf('n1');
    const dataDir = c.runtime.dataDirOf('n1');
    await c.close();
    expect(pids).toHaveLength(2);
    for (const p of pids) expect(alive(p)).toBe(false);
    expect(existsSync(dataDir)).toBe(false);
  });

  it('reports the installed version and its client library', async () => {
    expect(await target.version()).toMatch(/^redis 7\.\d+\.\d+ \(sentinel\)$/);
    expect(target.clientLibrary).toBe('ioredis 5.11.1');
  });

  it('acknowledges puts with the master, config epoch 0, and versions and revisions counted by the script', async () => {
    const w1 = await c.client.write({ store, key: 'a', op: 'put', valueId: 'w1.1' });
    expect(w1).toMatchObject({ outcome: 'ok', status: 'OK', ack: { node: 'n1', epoch: 0, version: 1, revision: 1 } });
    expect(w1.attempts).toEqual([expect.objectContaining({ n: 1, node: 'n1', status: 'OK', epoch: 0 })]);
    const w2 = await c.client.write({ store, key: 'a', op: 'put', valueId: 'w1.2' });
    expect(w2.ack).toMatchObject({ version: 2, revision: 2 });
    const w3 = await c.client.write({ store, key: 'b', op: 'put', valueId: 'w2.1' });
    expect(w3.ack).toMatchObject({ version: 1, revision: 3 });
    expect(await c.client.read(store, 'a')).toEqual({ key: 'a', outcome: 'ok', status: 'OK', node: 'n1', value: 'w1.2' });
  });

  it('create, cas and delete refuse without changing anything (fail) and a re-created key goes on counting', async () => {
    expect(await c.client.write({ store, key: 'a', op: 'create', valueId: 'w1.3' })).toMatchObject({ outcome: 'fail', status: 'Conflict' });
    expect(await c.client.write({ store, key: 'a', op: 'cas', valueId: 'w1.3', ifMatchVersion: 1 })).toMatchObject({ outcome: 'fail', status: 'Conflict' });
    expect((await c.client.read(store, 'a')).value).toBe('w1.2');
    expect(await c.client.write({ store, key: 'a', op: 'cas', valueId: 'w1.3', ifMatchVersion: 2 })).toMatchObject({ outcome: 'ok', ack: { version: 3 } });
    expect(await c.client.write({ store, key: 'a', op: 'delete', valueId: 'w1.4' })).toMatchObject({ outcome: 'ok', ack: { version: 4 } });
    expect(await c.client.read(store, 'a')).toMatchObject({ outcome: 'ok', status: 'NotFound', value: null });
    expect(await c.client.write({ store, key: 'a', op: 'delete', valueId: 'w1.5' })).toMatchObject({ outcome: 'fail', status: 'NotFound' });
    expect(await c.client.write({ store, key: 'a', op: 'cas', valueId: 'w1.5', ifMatchVersion: 4 })).toMatchObject({ outcome: 'fail', status: 'Conflict' });
    expect(await c.client.write({ store, key: 'a', op: 'create', valueId: 'w1.6' })).toMatchObject({ outcome: 'ok', ack: { version: 5 } });
  });

  it('a higher tenure starts its versions and revisions above epoch x 2^32', async () => {
    const { keys, argv } = scriptArgs(store, 't', 'put', 'w7.1', undefined, 3);
    const reply = (await side.eval(WRITE_SCRIPT, keys.length, ...keys, ...argv)) as [string, number, number];
    expect(reply).toEqual(['OK', 3 * TENURE_STRIDE + 1, 3 * TENURE_STRIDE + 1]);
    // back at tenure 0 (this node's Sentinel says epoch 0), versions still only grow
    const w = await c.client.write({ store, key: 't', op: 'put', valueId: 'w7.2' });
    expect(w.ack).toMatchObject({ epoch: 0, version: 3 * TENURE_STRIDE + 2, revision: 3 * TENURE_STRIDE + 2 });
  });

  it('a batch read returns every value in order', async () => {
    const keys = Array.from({ length: 250 }, (_, i) => `m${i}`);
    for (const [i, k] of keys.entries()) if (i % 5 !== 0) expect((await c.client.write({ store, key: k, op: 'put', valueId: `w${100 + i}.1` })).outcome).toBe('ok');
    const got = await c.client.readMany(store, keys);
    expect(got.map((r) => r.key)).toEqual(keys);
    expect(got.every((r) => r.outcome === 'ok' && r.node === 'n1')).toBe(true);
    expect(got.map((r) => r.value)).toEqual(keys.map((_, i) => (i % 5 === 0 ? null : `w${100 + i}.1`)));
  });

  it('NOREPLICAS refuses the script before it runs (fail, nothing applied)', async () => {
    await side.config('SET', 'min-replicas-to-write', '1');
    try {
      const w = await c.client.write({ store, key: 'b', op: 'put', valueId: 'w2.2' });
      expect(w).toMatchObject({ outcome: 'fail', status: 'NOREPLICAS' });
      expect(w.ack).toBeUndefined();
    } finally {
      await side.config('SET', 'min-replicas-to-write', '0');
    }
    expect((await c.client.read(store, 'b')).value).toBe('w2.1');
  });

  it('the sampler names the master at its config epoch with its revision, Healthy', async () => {
    const v = await sampleUntil(c.sampler, (x) => x.answered.length === 1, 5_000, 'the node to answer');
    expect(v.leader).toBe('n1');
    const [merged, own] = v.rows;
    const rev = Number(await side.get(`${store}:rev`));
    expect(merged).toMatchObject({ store, partition: 0, node: null, active: 'n1', epoch: 0, health: 'Healthy', inSync: ['n1'] });
    expect(merged.revisions!.n1).toBe(rev);
    expect(merged.replicatedRevision).toBe(rev);
    expect(own).toMatchObject({ node: 'n1', active: 'n1', epoch: 0, health: 'Healthy' });
  });

  it('a paused node leaves a write indeterminate (info); a killed one is not written to (fail); a restart keeps the append-only data', async () => {
    await c.runtime.pause('n1');
    const paused = await c.client.write({ store, key: 'p', op: 'put', valueId: 'w9.1' });
    await c.runtime.resume('n1');
    expect(paused).toMatchObject({ outcome: 'info', status: 'Timeout' });

    await c.runtime.kill('n1');
    // a write sent before the client saw the connection break may be in flight (info); once it
    // knows, nothing is sent (fail)
    let dead = await c.client.write({ store, key: 'q', op: 'put', valueId: 'w10.1' });
    for (let i = 2; i < 40 && dead.outcome !== 'fail'; i++) {
      expect(dead.outcome).toBe('info');
      await new Promise((res) => setTimeout(res, 50));
      dead = await c.client.write({ store, key: 'q', op: 'put', valueId: `w10.${i}` });
    }
    expect(dead.outcome).toBe('fail');
    expect(['MasterUnconfirmed', 'NotConnected']).toContain(dead.status);

    await c.runtime.restart('n1');
    let r = await c.client.read(store, 'b');
    for (let i = 0; i < 50 && r.outcome !== 'ok'; i++) {
      await new Promise((res) => setTimeout(res, 100));
      r = await c.client.read(store, 'b');
    }
    expect(r.value).toBe('w2.1');
  });
});
