import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MAX_FRAME_BYTES, validateClusterConfig, type ClusterConfig } from './cluster-config.js';
import { ZarisClient } from './client/zaris-client.js';
import { KvStatus } from './kv-status.js';
import type { MetadataDoc } from './node-core.js';
import { NodeShell } from './node-shell.js';
import { loopbackBlock } from '../harness/runtime/process-runtime.js';
import { TEST_STORES, TEST_TIMING, waitFor, waitHealthy } from '../harness/test-support/process-cluster.js';

/**
 * Membership on real nodes talking TCP (issue 14): three voters and a spare n4 started with
 * `--join` (it asks the leader by itself); the leader moves copies onto n4 and admits it; then an
 * admin `leave n4` drains it. No write acknowledged before, during or after a move is lost.
 */
describe('membership on real nodes: a spare joins, takes copies, then leaves drained', () => {
  const block = loopbackBlock(randomBytes(4).toString('hex'));
  let config: ClusterConfig;
  const shells: NodeShell[] = [];
  let client: ZarisClient;
  const written = new Map<string, string>();

  beforeAll(async () => {
    config = validateClusterConfig({
      cluster: 'membership-test',
      nodes: [1, 2, 3, 4].map((i) => ({ id: `n${i}`, host: `${block}.${10 + i}`, clientPort: 7300, clusterPort: 7400, ...(i === 4 ? { spare: true } : {}) })),
      stores: TEST_STORES,
      timing: TEST_TIMING,
      maxFrameBytes: DEFAULT_MAX_FRAME_BYTES,
    });
    for (const n of config.nodes) {
      const s = new NodeShell(config, n.id, () => undefined, undefined, { join: n.id === 'n4' });
      shells.push(s);
      await s.start();
    }
    client = new ZarisClient({ seeds: config.nodes.slice(0, 3).map((n) => ({ host: n.host, port: n.clientPort })), attemptTimeoutMs: 1_500, retry: { maxAttempts: 8, backoffMillis: 50, timeoutMs: 15_000, disableRetries: false } });
    await waitFor(async () => {
      try {
        await client.connect();
        return true;
      } catch {
        return false;
      }
    }, 10_000, 'the cluster to answer metadata');
    await waitHealthy(client, 20_000);
  }, 40_000);

  afterAll(async () => {
    client?.close();
    for (const s of shells) await s.stop();
  });

  async function docs(): Promise<MetadataDoc[]> {
    return (await client.fetchViewAndDocs()).docs;
  }
  async function leaderDoc(): Promise<MetadataDoc | undefined> {
    return (await docs()).find((d) => d.isLeader);
  }
  async function writeSome(tag: string, n: number): Promise<void> {
    for (let i = 0; i < n; i++) {
      for (const store of ['sync3', 'async3', 'rf1']) {
        const key = `${tag}-${i}`;
        const o = await client.put(store, key, Buffer.from(`${store}:${key}`));
        expect(o.ledgerOutcome, `${store}/${key}`).toBe('ok');
        written.set(`${store}\u0000${key}`, `${store}:${key}`);
      }
    }
  }
  async function readAll(): Promise<void> {
    for (const [sk, value] of written) {
      const [store, key] = sk.split('\u0000');
      const o = await client.get(store, key);
      expect(o.result?.status, `${store}/${key}`).toBe(KvStatus.Ok);
      expect(o.result?.value?.toString()).toBe(value);
    }
  }

  it('n4 joins by itself (--join), receives copies of every store and is admitted; the map moves while writes go on', async () => {
    await writeSome('before', 10);
    // writes go on while n4 asks to join and copies move onto it
    const during = writeSome('during', 30);
    await waitFor(async () => {
      const d = await leaderDoc();
      return !!d && d.members?.members.some((m) => m.id === 'n4' && m.state === 'member') === true;
    }, 30_000, 'n4 to be admitted');
    await during;
    const d = (await leaderDoc())!;
    const onN4 = d.partitionMap.partitions.filter((p) => p.replicas.includes('n4'));
    // per RF3 store 9 copies over 4 members: n4 takes 2 (the even share, copies stay put where
    // they can); the RF1 store's 3 copies stay on their owners (n4's share of them is 0)
    expect(onN4.filter((p) => p.store === 'sync3').length).toBe(2);
    expect(onN4.filter((p) => p.store === 'async3').length).toBe(2);
    expect(onN4.filter((p) => p.store === 'rf1').length).toBe(0);
    expect(d.partitionMap.partitions.filter((p) => p.store !== 'rf1').every((p) => p.replicas.length === 3)).toBe(true);
    expect(d.members!.version).toBe(3); // joining (2), then admitted (3)
    await readAll();
  }, 60_000);

  it('leave n4: its copies move away, then it is removed; every write is still there', async () => {
    const r = await client.admin('leave n4');
    expect(r.status).toBe(KvStatus.Ok);
    expect(r.answer.message).toMatch(/^leave of n4 proposed: member set version 4$/);
    const during = writeSome('leaving', 20);
    await waitFor(async () => {
      const d = await leaderDoc();
      return !!d && d.members!.members.every((m) => m.id !== 'n4') && d.partitionMap.partitions.every((p) => !p.replicas.includes('n4'));
    }, 30_000, 'n4 to be drained and removed');
    await during;
    await readAll();
    // a second leave is refused in one line; so is a leave below the replication factor
    const again = await client.admin('leave n4');
    expect([again.answer.ok, again.answer.message]).toEqual([false, 'leave: n4 is not a member (not in the set)']);
    const below = await client.admin('leave n1');
    expect([below.answer.ok, below.answer.message]).toEqual([false, 'leave: n1 would leave 2 members holding copies, fewer than the replication factor 3']);
  }, 60_000);

  it('admin join n4 brings it back (a --join node that left does not ask again by itself); writes go on during the moves', async () => {
    // n4 stays out on its own: it asked once, was admitted and left
    await new Promise((r) => setTimeout(r, 1_500));
    expect((await leaderDoc())!.members!.members.some((m) => m.id === 'n4')).toBe(false);
    const r = await client.admin('join n4');
    expect([r.status, r.answer.message]).toEqual([KvStatus.Ok, 'join of n4 proposed: member set version 6']);
    await writeSome('rejoin', 30);
    await waitFor(async () => (await leaderDoc())?.members?.members.some((m) => m.id === 'n4' && m.state === 'member') === true, 30_000, 'n4 to be admitted again');
    expect((await leaderDoc())!.partitionMap.partitions.filter((p) => p.replicas.includes('n4')).length).toBe(4);
    await readAll();
  }, 60_000);
});
