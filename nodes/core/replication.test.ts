import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_TIMING, type ClusterConfig, type SelfTestBug, type StoreConfig } from '../cluster-config.js';
import { tenureTag, type ClusterMsg, type RuntimeEntry } from '../cluster-messages.js';
import { PartitionData, type ReplicatedOp } from '../partition-data.js';
import type { LocalPartition } from './partition-state.js';
import { runtimeEntry } from '../test-support/runtime-entry.js';
import { Replication, type ReplicationHost } from './replication.js';

const STORE: StoreConfig = { name: 'async3', replicationFactor: 3, ackMode: 'async', segments: 4 };
const PKEY = 'async3/0';

/** n2 holding a replica of async3/0, whose active is n1 (incarnation a) since epoch 3. */
function replica(o: { bug?: SelfTestBug; acceptedEpoch?: number; acceptedActive?: string } = {}) {
  const sent: Array<[string, ClusterMsg]> = [];
  const data = new PartitionData([0, 1, 2, 3]);
  const lp: LocalPartition = {
    pkey: PKEY,
    store: STORE,
    partition: 0,
    segments: [0, 1, 2, 3],
    data,
    followTag: '',
    resumeTag: '',
    resyncWanted: false,
    lastRepAt: -Infinity,
    syncRequestedAt: -Infinity,
    mapVersion: 1,
    droppedAt: -Infinity,
    act: null,
    recoveredAtEpoch: -1,
    recoveredSentAt: -Infinity,
    readLease: null,
  };
  const entry = runtimeEntry({ store: 'async3', epoch: 3, term: 1, active: { node: 'n1', inc: 'a' }, activeSince: 3, inSync: [{ node: 'n1', inc: 'a' }, { node: 'n2', inc: 'b' }] });
  const accepted = new Map<string, RuntimeEntry>([[PKEY, { ...entry, epoch: o.acceptedEpoch ?? 3, ...(o.acceptedActive ? { active: { node: o.acceptedActive, inc: 'z' }, activeSince: o.acceptedEpoch ?? 3 } : {}) }]]);
  const committed = new Map<string, RuntimeEntry>([[PKEY, entry]]);
  const counters = { staleEpochRefusals: { replication: 0 }, syncsServed: 0, snapshotsInstalled: 0 };
  const hits: string[] = [];
  const config = { nodes: [], stores: [STORE], timing: DEFAULT_TIMING, ...(o.bug ? { selfTestBug: o.bug } : {}) } as unknown as ClusterConfig;
  const host: ReplicationHost = {
    id: 'n2',
    inc: 'b',
    me: { node: 'n2', inc: 'b' },
    config,
    env: { now: () => 0, send: (to, msg) => sent.push([to, msg]), log: () => undefined },
    parts: new Map([[PKEY, lp]]),
    accepted,
    committed,
    counters,
    el: { term: 1, role: 'follower', leaderId: 'n3', hbSeen: { term: 1, at: 10 }, leaseUntil: 0 },
    hasPeer: () => true,
    servingState: () => null,
    activeEntry: () => null,
    progressPending: () => undefined,
    answerIndeterminate: () => undefined,
    selfTestBugHit: (bug) => hits.push(bug),
    onLeaderRequest: () => undefined,
  };
  return { rep: new Replication(host), lp, data, sent, counters, entry, hits, tag: tenureTag(entry.active!, entry.activeSince) };
}

const op = (rev: number, key = `k${rev}`): ReplicatedOp => ({ rev, seg: rev % 4, key, value: Buffer.from(`v${rev}`), version: rev });

describe('Replication (nodes/core/replication.ts): the follower side', () => {
  it('a replica asks the active for a catch-up from nothing, installs the answer, then applies the stream in order and acks', () => {
    const r = replica();
    r.rep.partitionTick(r.lp, 1_000);
    expect(r.sent).toEqual([['n1', { t: 'sync-req', pkey: PKEY, inc: 'b', tag: r.tag, haveTag: '', haveRev: 0, recovery: false }]]);
    // the answer: a snapshot at revision 2
    r.rep.onSyncResp('n1', { t: 'sync-resp', pkey: PKEY, tag: r.tag, rev: 2, recovery: false, segs: [0, 1, 2, 3].map((seg) => ({ seg, snapshot: seg === 1 ? [['k1', Buffer.from('v1'), 1, 1]] : seg === 2 ? [['k2', Buffer.from('v2'), 2, 2]] : [] })) }, 1_010);
    expect(r.lp.followTag).toBe(r.tag);
    expect(r.data.revision).toBe(2);
    expect(r.counters.snapshotsInstalled).toBe(1);
    r.rep.onRep('n1', { t: 'rep', pkey: PKEY, epoch: 3, tag: r.tag, ops: [op(2), op(3), op(4)], echo: -1, leaseLeft: 0 }, 1_020);
    expect(r.data.revision).toBe(4);
    expect(r.sent.at(-1)).toEqual(['n1', { t: 'rep-ack', pkey: PKEY, tag: r.tag, rev: 4, at: 1_020, inc: 'b' }]);
    // a gap: the replica asks to resume from its own position in the same tenure
    r.rep.onRep('n1', { t: 'rep', pkey: PKEY, epoch: 3, tag: r.tag, ops: [op(6)], echo: -1, leaseLeft: 0 }, 1_030);
    expect(r.data.revision).toBe(4);
    expect(r.sent.at(-1)).toEqual(['n1', { t: 'sync-req', pkey: PKEY, inc: 'b', tag: r.tag, haveTag: r.tag, haveRev: 4, recovery: false }]);
  });

  it('fencing: a stream of a tenure other than the accepted entry\'s is refused (counted, nacked) and the copy reported as a prefix of it', () => {
    const r = replica({ acceptedEpoch: 5, acceptedActive: 'n3' });
    r.lp.followTag = r.tag;
    r.rep.onRep('n1', { t: 'rep', pkey: PKEY, epoch: 3, tag: r.tag, ops: [op(1)], echo: -1, leaseLeft: 0 }, 1_000);
    expect(r.data.revision).toBe(0);
    expect(r.counters.staleEpochRefusals.replication).toBe(1);
    expect(r.sent).toEqual([['n1', { t: 'rep-nack', pkey: PKEY, tag: r.tag, reason: 'fenced' }]]);
    expect(r.lp.followTag).toBe('');
    expect(r.lp.resumeTag).toBe(r.tag);
  });

  it('the self-test bug fencing-off-by-one takes the replica\'s watermark for a position in the new owner\'s log when the epochs match', () => {
    for (const bug of [undefined, 'fencing-off-by-one'] as const) {
      const r = replica({ bug, acceptedEpoch: 3 });
      r.lp.resumeTag = 'n3:z:1';
      r.data.apply(op(1));
      r.rep.partitionTick(r.lp, 1_000);
      const req = r.sent[0][1] as Extract<ClusterMsg, { t: 'sync-req' }>;
      // the correct store asks for a snapshot: its copy followed another tenure
      expect(req.haveTag).toBe(bug ? r.tag : '');
      expect(r.hits).toEqual(bug ? ['fencing-off-by-one'] : []);
    }
  });

  it('property: whatever order and duplication the stream arrives in, the replica\'s revision only grows by contiguous ops and every op it acks it holds', () => {
    fc.assert(
      fc.property(fc.array(fc.array(fc.integer({ min: 1, max: 12 }), { minLength: 1, maxLength: 4 }), { maxLength: 12 }), (batches) => {
        const r = replica();
        r.lp.followTag = r.tag;
        let prev = 0;
        for (const b of batches) {
          r.rep.onRep('n1', { t: 'rep', pkey: PKEY, epoch: 3, tag: r.tag, ops: b.map((x) => op(x)), echo: -1, leaseLeft: 0 }, 1_000);
          expect(r.data.revision).toBeGreaterThanOrEqual(prev);
          prev = r.data.revision;
          const acks = r.sent.filter(([, m]) => m.t === 'rep-ack').map(([, m]) => (m as { rev: number }).rev);
          for (const a of acks) expect(a).toBeLessThanOrEqual(r.data.revision);
        }
        for (let rev = 1; rev <= r.data.revision; rev++) expect(r.data.get(rev % 4, `k${rev}`)?.version).toBe(rev);
      }),
      { seed: 20261201, numRuns: 1_000 },
    );
  });
});
