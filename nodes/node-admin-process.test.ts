import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KvStatus } from './kv-status.js';
import { partitionOfSegment, segmentOf } from './partitioning.js';
import { startTestCluster, waitFor, waitHealthy, type TestCluster } from '../harness/test-support/process-cluster.js';

/** Keys of a 12-segment, 3-partition test store that fall in partition `p`. */
function keysOf(p: number, n: number): string[] {
  const out: string[] = [];
  for (let i = 0; out.length < n; i++) if (partitionOfSegment(segmentOf(`k${i}`, 12), 3) === p) out.push(`k${i}`);
  return out;
}

/**
 * The admin request on real node processes (issue 13: an ownership change on demand): a handoff
 * moves the active owner to the named in-sync node without losing a write (then the preferred
 * primary fails back), a regeneration bumps the map version and keeps every copy; a follower
 * names the leader.
 */
describe('admin requests on real node processes', () => {
  let c: TestCluster;
  beforeAll(async () => {
    c = await startTestCluster();
  }, 60_000);
  afterAll(async () => {
    await c?.close();
  });

  async function writeAll(store: string, keys: string[], tag: string): Promise<void> {
    for (const k of keys) {
      const o = await c.client.put(store, k, Buffer.from(`${tag}-${k}`));
      expect(o.ledgerOutcome).toBe('ok');
    }
  }
  async function readAll(store: string, keys: string[], tag: string): Promise<void> {
    for (const k of keys) {
      const o = await c.client.get(store, k);
      expect(o.result?.status).toBe(KvStatus.Ok);
      expect(o.result?.value?.toString()).toBe(`${tag}-${k}`);
    }
  }

  it('hands a partition off to a named in-sync node, keeping every write, and the preferred primary gets it back', async () => {
    const keys = keysOf(0, 20);
    await writeAll('sync3', keys, 'a');
    await writeAll('async3', keys, 'a');
    const before = (await c.client.fetchView()).runtime.get('sync3/0')!;
    expect(before.active).toBe('n1');
    const r = await c.client.admin('handoff sync3/0 to n3');
    expect(r.status).toBe(KvStatus.Ok);
    expect(r.answer.ok).toBe(true);
    await waitFor(async () => (await c.client.fetchView()).runtime.get('sync3/0')!.active === 'n3', 10_000, 'n3 to own sync3/0');
    const after = (await c.client.fetchView()).runtime.get('sync3/0')!;
    expect(after.epoch).toBeGreaterThan(before.epoch);
    await readAll('sync3', keys, 'a');
    await writeAll('sync3', keys, 'b');
    // the preferred primary takes it back (failback) once the cooldown passed
    await waitHealthy(c.client, 20_000);
    await readAll('sync3', keys, 'b');
    const ra = await c.client.admin('handoff async3/0 to n2');
    expect(ra.status).toBe(KvStatus.Ok);
    await waitFor(async () => (await c.client.fetchView()).runtime.get('async3/0')!.active === 'n2', 10_000, 'n2 to own async3/0');
    await readAll('async3', keys, 'a');
    await waitHealthy(c.client, 20_000);
  }, 60_000);

  it('a regeneration bumps the map version, starts a new tenure and keeps every copy', async () => {
    const keys = keysOf(1, 20);
    await writeAll('sync3', keys, 'r');
    const before = (await c.client.fetchView()).runtime.get('sync3/1')!;
    const r = await c.client.admin('regenerate sync3/1');
    expect(r.status).toBe(KvStatus.Ok);
    expect(r.answer.message).toBe('regeneration of sync3/1 proposed: map version 2, replicas n2,n3,n1');
    await waitFor(async () => (await c.client.fetchView()).runtime.get('sync3/1')!.epoch > before.epoch, 10_000, 'the regeneration to commit');
    await waitHealthy(c.client, 20_000);
    const docs = (await c.client.fetchViewAndDocs()).docs;
    for (const d of docs) expect(d.partitionMap.partitions.find((p) => p.store === 'sync3' && p.partition === 1)!.mapVersion).toBe(2);
    await readAll('sync3', keys, 'r');
    // every in-sync replica holds the writes too (its own copy, once it follows the new tenure)
    for (const n of ['n1', 'n3']) {
      let got: Awaited<ReturnType<typeof c.client.getLocal>> | null = null;
      await waitFor(async () => (got = await c.client.getLocal(n, 'sync3', keys[0])).status === KvStatus.Ok, 10_000, `${n} to answer from its copy`);
      expect(got!.value?.toString()).toBe(`r-${keys[0]}`);
    }
  }, 60_000);

  it('refuses on a bad command, and a follower names the leader (the client follows it)', async () => {
    const bad = await c.client.admin('handoff sync3/0 to n9');
    expect(bad.status).toBe(KvStatus.InvalidInput);
    expect(bad.answer.message).toBe('unknown node "n9"');
    const v = await c.client.fetchView();
    expect(v.leader).not.toBeNull();
    const docs = (await c.client.fetchViewAndDocs()).docs;
    expect(docs.find((d) => d.isLeader)!.suspected).toEqual([]);
  }, 30_000);
});
