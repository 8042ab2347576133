import { describe, expect, it } from 'vitest';
import { DEFAULT_TIMING, type ClusterConfig, type SelfTestBug, type StoreConfig } from '../cluster-config.js';
import { Op, type ClientResponse } from '../client-protocol.js';
import { KvStatus } from '../kv-status.js';
import { PartitionData } from '../partition-data.js';
import { partitionOfSegment, segmentOf } from '../partitioning.js';
import { DataPath, VERSION_TENURE_STRIDE } from './data-path.js';
import { newActiveState, type LocalPartition } from './partition-state.js';
import { runtimeEntry } from '../test-support/runtime-entry.js';

/** n1, the active of every partition of one store (1 partition, 4 segments), at epoch 4 since epoch 2. */
function node(o: { ackMode: 'sync' | 'async'; rf?: number; bug?: SelfTestBug; leaseUntil?: number; active?: string }) {
  const store: StoreConfig = { name: 's', replicationFactor: o.rf ?? 3, ackMode: o.ackMode, segments: 4 };
  const clock = { now: 1_000 };
  const answers: Array<[unknown, ClientResponse]> = [];
  const entry = runtimeEntry({ term: 1, active: { node: o.active ?? 'n1', inc: 'a' }, activeSince: 2, inSync: [{ node: 'n1', inc: 'a' }, { node: 'n2', inc: 'b' }] });
  const lp: LocalPartition = {
    pkey: 's/0',
    store,
    partition: 0,
    segments: [0, 1, 2, 3],
    data: new PartitionData([0, 1, 2, 3]),
    followTag: 'n1:a:2',
    resumeTag: '',
    resyncWanted: false,
    lastRepAt: -Infinity,
    syncRequestedAt: -Infinity,
    mapVersion: 1,
    droppedAt: -Infinity,
    act: {
      ...newActiveState('n1:a:2', 2, [], -Infinity),
      followers: new Map([['n2', { member: { node: 'n2', inc: 'b' }, streaming: true, acked: 0, queue: [], lastSentAt: 0, paceRev: -1, paceAt: -Infinity, ackAt: -1, ackRecvAt: -Infinity, grantUntil: -Infinity }]]),
    },
    recoveredAtEpoch: -1,
    recoveredSentAt: -Infinity,
    readLease: null,
  };
  const counters = { writesAcked: 0, writesRefused: 0, indeterminate: 0, migratingAnswers: 0 };
  const config = { nodes: [], stores: [store], timing: DEFAULT_TIMING, ...(o.bug ? { selfTestBug: o.bug } : {}) } as unknown as ClusterConfig;
  const dp = new DataPath({
    id: 'n1',
    inc: 'a',
    me: { node: 'n1', inc: 'a' },
    config,
    env: { now: () => clock.now, respond: (t, r) => answers.push([t, r]), log: () => undefined },
    parts: new Map([['s/0', lp]]),
    accepted: new Map([['s/0', entry]]),
    committed: new Map([['s/0', entry]]),
    nPartitions: 1,
    counters,
    el: { leaseUntil: o.leaseUntil ?? 5_000 },
    readLeased: (st) => st.ackMode === 'sync' && st.replicationFactor > 1,
  });
  return { dp, lp, answers, counters, clock };
}

const put = (key: string, reqId = 1) => ({ op: Op.Put, reqId, store: 's', key, value: Buffer.from('v') }) as const;

describe('DataPath (nodes/core/data-path.ts): client operations on one node', () => {
  it('an async write is acknowledged at once with one copy, a version above every earlier tenure\'s, and streamed to the followers', () => {
    const n = node({ ackMode: 'async' });
    n.dp.clientWrite(put('k'), 't1');
    expect(n.answers).toHaveLength(1);
    const [token, res] = n.answers[0];
    expect(token).toBe('t1');
    expect(res).toMatchObject({ status: KvStatus.Ok, info: { node: 'n1', epoch: 4, revision: 1, version: 2 * VERSION_TENURE_STRIDE + 1, copies: 1, ackMode: 'async' } });
    expect(n.lp.act!.followers.get('n2')!.queue.map((op) => op.rev)).toEqual([1]);
    expect(n.counters.writesAcked).toBe(1);
  });

  it('a sync write at RF 3 waits for the in-sync replica, then is acknowledged with two copies', () => {
    const n = node({ ackMode: 'sync' });
    n.dp.clientWrite(put('k'), 't1');
    expect(n.answers).toHaveLength(0);
    n.lp.act!.followers.get('n2')!.acked = 1;
    n.dp.progressPending(n.lp);
    expect(n.answers.map(([, r]) => [r.status, (r as { info: { copies: number } }).info.copies])).toEqual([[KvStatus.Ok, 2]]);
    // the self-test bug acknowledges before any replica applied it
    const b = node({ ackMode: 'sync', bug: 'sync-ack-before-replica' });
    b.dp.clientWrite(put('k'), 't1');
    expect(b.answers.map(([, r]) => [r.status, (r as { info: { copies: number } }).info.copies])).toEqual([[KvStatus.Ok, 1]]);
  });

  it('refusals: not the active, lease lapsed (but for the stale-owner-acks bug), an empty key, an unknown store; a resigned write is indeterminate', () => {
    const other = node({ ackMode: 'async', active: 'n2' });
    other.dp.clientWrite(put('k'), 't');
    expect(other.answers[0][1].status).toBe(KvStatus.ReplicaWriteRejected);
    const lapsed = node({ ackMode: 'async', leaseUntil: 500 });
    lapsed.dp.clientWrite(put('k'), 't');
    expect(lapsed.answers[0][1].status).toBe(KvStatus.OwnershipChanging);
    const stale = node({ ackMode: 'async', leaseUntil: 500, bug: 'stale-owner-acks' });
    stale.dp.clientWrite(put('k'), 't');
    expect(stale.answers[0][1].status).toBe(KvStatus.Ok);
    stale.clock.now = 500 + 5_001;
    stale.dp.clientWrite(put('k', 2), 't');
    expect(stale.answers[1][1].status).toBe(KvStatus.OwnershipChanging);
    const n = node({ ackMode: 'async' });
    n.dp.clientWrite(put(''), 't');
    n.dp.clientWrite({ ...put('k'), store: 'nope' }, 't');
    expect(n.answers.map(([, r]) => r.status)).toEqual([KvStatus.InvalidInput, KvStatus.InvalidInput]);
    expect(n.counters.writesRefused).toBe(2);
    const s = node({ ackMode: 'sync' });
    s.dp.clientWrite(put('k'), 'w');
    s.dp.answerIndeterminate(s.lp.act!.pending[0]);
    expect(s.answers[0][1]).toMatchObject({ status: KvStatus.Unavailable });
    expect(s.counters.indeterminate).toBe(1);
  });

  it('reads: the active answers its copy; getMany answers each key, and refuses more distinct keys than the store\'s cap (seed 004: 500), at 500 and 501', () => {
    const n = node({ ackMode: 'async' });
    n.dp.clientWrite(put('k'), 't');
    expect(n.dp.clientGet({ op: Op.Get, reqId: 2, store: 's', key: 'k' })).toMatchObject({ status: KvStatus.Ok, epoch: 4, version: 2 * VERSION_TENURE_STRIDE + 1 });
    expect(n.dp.clientGet({ op: Op.Get, reqId: 3, store: 's', key: 'absent' }).status).toBe(KvStatus.NotFound);
    expect(partitionOfSegment(segmentOf('k', 4), 1)).toBe(0);
    const keys = (c: number) => Array.from({ length: c }, (_, i) => `k${i}`);
    const at500 = n.dp.clientGetMany({ op: Op.GetMany, reqId: 4, store: 's', keys: keys(500), allowReplica: false });
    expect(at500.status).toBe(KvStatus.Ok);
    expect((at500 as { items: unknown[] }).items).toHaveLength(500);
    expect(n.dp.clientGetMany({ op: Op.GetMany, reqId: 5, store: 's', keys: keys(501), allowReplica: false }).status).toBe(KvStatus.InvalidInput);
    // repeated keys count once
    expect(n.dp.clientGetMany({ op: Op.GetMany, reqId: 6, store: 's', keys: [...keys(500), 'k0'], allowReplica: false }).status).toBe(KvStatus.Ok);
    expect((n.dp.clientGetMany({ op: Op.GetMany, reqId: 7, store: 's', keys: [], allowReplica: false }) as { items: unknown[] }).items).toEqual([]);
  });

  it('refreshRole: the committed entry naming this incarnation starts a tenure; a later accepted entry deposes it (pending writes indeterminate); lose-on-promotion forgets the copy', () => {
    const n = node({ ackMode: 'sync' });
    n.dp.clientWrite(put('k'), 'w1');
    expect(n.lp.act!.pending).toHaveLength(1);
    // the same tenure: nothing changes
    const act = n.lp.act;
    n.dp.refreshRole('s/0');
    expect(n.lp.act).toBe(act);
    // deposed by an accepted entry naming n2 at a later epoch
    const h = (n.dp as unknown as { h: { accepted: Map<string, unknown>; committed: Map<string, { epoch: number }> } }).h;
    h.accepted.set('s/0', { ...h.committed.get('s/0')!, epoch: 5, active: { node: 'n2', inc: 'b' }, activeSince: 5 });
    n.dp.refreshRole('s/0');
    expect(n.lp.act).toBeNull();
    expect(n.answers.map(([t, r]) => [t, r.status])).toEqual([['w1', KvStatus.Unavailable]]);
    expect(n.counters.indeterminate).toBe(1);
    // a new tenure of this node: an ActiveState; with lose-on-promotion its copy is emptied
    for (const bug of [undefined, 'lose-on-promotion'] as const) {
      const m = node({ ackMode: 'async', bug });
      m.dp.clientWrite(put('k'), 't');
      m.lp.act = null;
      m.dp.refreshRole('s/0');
      expect((m.lp.act as LocalPartition['act'])?.tag).toBe('n1:a:2');
      expect(m.lp.data.heldKeys).toBe(bug ? 0 : 1);
    }
  });
});
