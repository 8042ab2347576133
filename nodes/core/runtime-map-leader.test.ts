import { initialMemberSet } from './member-consensus.js';
import { describe, expect, it } from 'vitest';
import { DEFAULT_TIMING, type ClusterConfig } from '../cluster-config.js';
import { supersedes, type ClusterMsg, type RuntimeEntry } from '../cluster-messages.js';
import { runtimeEntry } from '../test-support/runtime-entry.js';
import { Election } from './election.js';
import type { LocalPartition } from './partition-state.js';
import { PeerTable } from './peer-table.js';
import { RuntimeMapLeader } from './runtime-map-leader.js';

/** n1 leading a 3-node cluster of one store `s` (1 partition): the leader's runtime-map side, its messages recorded. */
function leader() {
  const clock = { now: 10_000 };
  const sent: Array<[string, ClusterMsg]> = [];
  const logs: string[] = [];
  const accepted = new Map<string, RuntimeEntry>();
  const committed = new Map<string, RuntimeEntry>();
  const counters = { failovers: 0, promotions: 0 };
  const config = { nodes: [{ id: 'n1' }, { id: 'n2' }, { id: 'n3' }], stores: [{ name: 's', replicationFactor: 3, ackMode: 'sync', segments: 4 }], timing: DEFAULT_TIMING, partitionsPerStore: 1 } as unknown as ClusterConfig;
  const env = { now: () => clock.now, random: () => 0.5, send: (to: string, msg: ClusterMsg) => void sent.push([to, msg]), log: (e: string) => void logs.push(e) };
  const fd = new PeerTable({ node: 'n1', inc: 'n1-i1' }, ['n2', 'n3'], 2, DEFAULT_TIMING, { now: env.now, log: env.log, term: () => el.term });
  const el: Election = new Election({ node: 'n1', inc: 'n1-i1' }, ['n2', 'n3'], 2, DEFAULT_TIMING, { ...env, maps: () => ({ accepted: [], committed: [] }), onElected: () => undefined, onStepDown: () => rm.stepDown() }, fd);
  const learnt: RuntimeEntry[] = [];
  const rm: RuntimeMapLeader = new RuntimeMapLeader({
    id: 'n1',
    inc: 'n1-i1',
    me: { node: 'n1', inc: 'n1-i1' },
    config,
    env,
    peerIds: ['n2', 'n3'],
    voterPeerIds: new Set(['n2', 'n3']),
    majority: 2,
    members: () => initialMemberSet(config),
    placementNodes: () => ['n1', 'n2', 'n3'],
    afterDecisions: () => undefined,
    // n1 leads term 2: the leader reads its term and role through the election
    el: new Proxy(el, { get: (t, k) => (k === 'term' ? 2 : k === 'role' ? 'leader' : Reflect.get(t, k, t)) }),
    fd,
    parts: new Map([['s/0', { pkey: 's/0', store: config.stores[0] } as LocalPartition]]),
    accepted,
    committed,
    counters,
    learnCommitted: (e) => {
      learnt.push(e);
      const cur = committed.get(e.pkey);
      if (!cur || supersedes(e, cur)) committed.set(e.pkey, e);
    },
    refreshRole: () => undefined,
    ownReport: (pkey) => ({ pkey, rev: 0, heldKeys: 0, syncedSegments: 4, tag: '', accepted: -1 }),
  });
  for (const n of ['n2', 'n3']) fd.noteIncarnation(n, `${n}-i1`);
  return { rm, sent, logs, accepted, committed, counters, learnt, clock };
}

describe('RuntimeMapLeader (nodes/core/runtime-map-leader.ts): the leader\'s side of the runtime map', () => {
  it('taking office: the highest committed entry of the voters is learnt, a higher accepted one re-proposed above every epoch known, heartbeats sent', () => {
    const l = leader();
    const c4 = runtimeEntry({ epoch: 4, term: 1 });
    const a5 = runtimeEntry({ epoch: 5, term: 1, health: 'Degraded', inSync: [c4.inSync[0], c4.inSync[1]] });
    l.rm.elected(10_000, [
      { accepted: [c4], committed: [c4] },
      { accepted: [a5], committed: [runtimeEntry({ epoch: 3, term: 1 })] },
    ]);
    expect(l.learnt.map((e) => e.epoch)).toEqual([4]);
    const proposals = l.sent.filter(([, m]) => m.t === 'propose').map(([to, m]) => [to, (m as Extract<ClusterMsg, { t: 'propose' }>).entry.epoch]);
    // epoch 6: strictly above the committed 4 and the accepted 5 it re-proposes
    expect(proposals).toEqual([
      ['n2', 6],
      ['n3', 6],
    ]);
    expect(l.accepted.get('s/0')).toMatchObject({ epoch: 6, term: 2, health: 'Degraded' });
    expect(l.sent.filter(([, m]) => m.t === 'hb').map(([to]) => to)).toEqual(['n2', 'n3']);
    expect(l.logs).toContain('leader');
    // one accept of the two others makes a majority with the leader: committed and announced
    l.rm.onProposeReply('n2', { t: 'propose-r', term: 2, pkey: 's/0', epoch: 6, ok: true }, 10_010);
    expect(l.committed.get('s/0')?.epoch).toBe(6);
    expect(l.sent.filter(([, m]) => m.t === 'commit').map(([to]) => to)).toEqual(['n2', 'n3']);
    expect(l.rm.state?.inflight.size).toBe(0);
  });

  it('an active\'s requests: an in-sync addition at its epoch is proposed; one at another epoch, or from a node that is not the active, is not', () => {
    const l = leader();
    l.rm.elected(10_000, [{ accepted: [], committed: [] }]);
    const e = runtimeEntry({ epoch: 7, inSync: [runtimeEntry().inSync[0], runtimeEntry().inSync[1]], health: 'Degraded' });
    l.committed.set('s/0', e);
    l.sent.length = 0;
    const n3 = { node: 'n3', inc: 'n3-i1' };
    l.rm.onLeaderRequest('n2', { t: 'req-add', term: 2, pkey: 's/0', epoch: 7, member: n3 }, 10_001);
    l.rm.onLeaderRequest('n1', { t: 'req-add', term: 2, pkey: 's/0', epoch: 6, member: n3 }, 10_001);
    expect(l.sent.filter(([, m]) => m.t === 'propose')).toEqual([]);
    l.rm.onLeaderRequest('n1', { t: 'req-add', term: 2, pkey: 's/0', epoch: 7, member: n3 }, 10_001);
    const p = l.sent.find(([, m]) => m.t === 'propose')![1] as Extract<ClusterMsg, { t: 'propose' }>;
    expect(p.entry.epoch).toBe(8);
    expect(p.entry.inSync.map((m) => m.node)).toEqual(['n1', 'n2', 'n3']);
    // one change at a time per partition: nothing more while that proposal is in flight
    l.rm.onLeaderRequest('n1', { t: 'recovered', term: 2, pkey: 's/0', epoch: 7, rev: 1 }, 10_002);
    expect(l.sent.filter(([, m]) => m.t === 'propose')).toHaveLength(2);
  });

  it('stepping down forgets the term\'s state', () => {
    const l = leader();
    l.rm.elected(10_000, [{ accepted: [], committed: [] }]);
    expect(l.rm.state).not.toBeNull();
    l.rm.stepDown();
    expect(l.rm.state).toBeNull();
  });
});
