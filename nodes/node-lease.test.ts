import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeConnection } from './client/node-connection.js';
import { Op, type ClientResponse } from './client-protocol.js';
import { KvStatus } from './kv-status.js';
import { partitionOfSegment, segmentOf } from './partitioning.js';
import { startTestCluster, TEST_TIMING, waitFor, type TestCluster } from '../harness/test-support/process-cluster.js';

/** Keys of a 12-segment, 3-partition store that fall in partition `p`. */
function keysOf(p: number, n: number): string[] {
  const out: string[] = [];
  for (let i = 0; out.length < n; i++) if (partitionOfSegment(segmentOf(`k${i}`, 12), 3) === p) out.push(`k${i}`);
  return out;
}

/**
 * Issue 10, bug 1 (15-minute run, seed 4042): an owner paused 11.3 s, past the escalation,
 * resumed and acknowledged async writes for ~150 ms at its old epoch although another node's
 * promotion had already committed: the heartbeats queued during the pause renewed its lease on
 * resume. Real processes: SIGSTOP the owner of async3/0, queue writes to it while the others
 * promote a replica, SIGCONT: none of the queued writes may be acknowledged.
 */
describe('an owner paused past the escalation acknowledges nothing on resume', () => {
  let c: TestCluster;
  beforeAll(async () => {
    c = await startTestCluster();
  }, 60_000);
  afterAll(async () => {
    await c?.close();
  });

  it('writes queued to a paused async owner are refused once its successor is committed', async () => {
    const before = (await c.client.fetchView()).runtime.get('async3/0')!;
    const owner = before.active!;
    const node = c.config.nodes.find((n) => n.id === owner)!;
    const direct = new NodeConnection({ host: node.host, port: node.clientPort });
    try {
      // warm the connection (the owner acknowledges), then stop it
      await waitFor(async () => (await direct.request({ op: Op.Put, store: 'async3', key: keysOf(0, 1)[0], value: Buffer.from('warm') }, 2_000).catch(() => null))?.status === KvStatus.Ok, 15_000, `${owner} to acknowledge async3 writes`);
      await c.runtime.pause(owner);
      // wait for a promotion elsewhere (suspicion + escalation), then queue writes to the stopped owner
      let promoted: { active: string; epoch: number } | null = null;
      await waitFor(async () => {
        const e = (await c.client.fetchView().catch(() => null))?.runtime.get('async3/0');
        if (e?.active && e.active !== owner && e.epoch > before.epoch) promoted = { active: e.active, epoch: e.epoch };
        return promoted !== null;
      }, 20_000, 'a replica of async3/0 promoted while its owner is stopped');
      const queued: Array<Promise<ClientResponse | null>> = keysOf(0, 10).map((key, i) => direct.request({ op: Op.Put, store: 'async3', key, value: Buffer.from(`queued-${i}`) }, 15_000).catch(() => null));
      await new Promise((r) => setTimeout(r, 300));
      await c.runtime.resume(owner);
      const answers = await Promise.all(queued);
      const statuses = answers.map((r) => (r ? KvStatus[r.status] : 'no answer'));
      console.log(`${owner} stopped ${TEST_TIMING.escalationTimeoutMs} ms+ (promoted ${promoted!.active} at epoch ${promoted!.epoch}); queued writes answered: ${statuses.join(', ')}`);
      for (const r of answers) if (r) expect(KvStatus[r.status]).not.toBe('Ok');
      // and the answers send the client elsewhere (seed 000 refreshes on them)
      for (const r of answers) if (r) expect(['OwnershipChanging', 'ReplicaWriteRejected', 'Moved']).toContain(KvStatus[r.status]);
    } finally {
      direct.close();
    }
  }, 90_000);
});
