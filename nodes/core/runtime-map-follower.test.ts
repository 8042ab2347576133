import { describe, expect, it } from 'vitest';
import { DEFAULT_TIMING, validateClusterConfig } from '../cluster-config.js';
import type { ClusterMsg, RuntimeEntry } from '../cluster-messages.js';
import { PartitionData } from '../partition-data.js';
import { runtimeEntry } from '../test-support/runtime-entry.js';
import { Election } from './election.js';
import { initialMemberSet, MemberConsensus } from './member-consensus.js';
import type { LocalPartition } from './partition-state.js';
import { PeerTable } from './peer-table.js';
import { RuntimeMapFollower } from './runtime-map-follower.js';

const CONFIG = validateClusterConfig({
  cluster: 't',
  nodes: [1, 2, 3].map((i) => ({ id: `n${i}`, host: '127.0.0.1', clientPort: 7000 + i, clusterPort: 7100 + i })),
  stores: [{ name: 's', replicationFactor: 3, ackMode: 'sync', segments: 4 }],
});

/** n2's follower side over one partition `s/0`; messages and role refreshes recorded. */
function follower(o: { rejoined?: boolean } = {}) {
  const sent: Array<[string, ClusterMsg]> = [];
  const refreshed: string[] = [];
  const env = { now: () => 1_000, random: () => 0.5, send: (to: string, msg: ClusterMsg) => void sent.push([to, msg]), log: () => undefined };
  const fd = new PeerTable({ node: 'n2', inc: 'n2-i1' }, ['n1', 'n3'], 2, DEFAULT_TIMING, { now: env.now, log: env.log, term: () => el.term });
  const el: Election = new Election({ node: 'n2', inc: 'n2-i1' }, ['n1', 'n3'], 2, DEFAULT_TIMING, { ...env, maps: () => ({ accepted: [], committed: [] }), onElected: () => undefined, onStepDown: () => undefined }, fd);
  if (o.rejoined !== false) {
    // two peers answered "no runtime entry known": a first boot, so the node takes part at once
    el.onRejoinReply('n1', 0, false);
    el.onRejoinReply('n3', 0, false);
  }
  const data = new PartitionData([0, 1, 2, 3]);
  const lp = { pkey: 's/0', store: CONFIG.stores[0], partition: 0, segments: [0, 1, 2, 3], data, followTag: 't1', resumeTag: '', act: null } as unknown as LocalPartition;
  const accepted = new Map<string, RuntimeEntry>();
  const committed = new Map<string, RuntimeEntry>();
  const counters = { staleEpochRefusals: { proposal: 0 } };
  const members = new MemberConsensus({ id: 'n2', peerIds: ['n1', 'n3'], voterPeerIds: new Set(['n1', 'n3']), majority: 2, selfVotes: true, send: () => undefined, log: () => undefined }, initialMemberSet(CONFIG));
  const f = new RuntimeMapFollower({ id: 'n2', inc: 'n2-i1', me: { node: 'n2', inc: 'n2-i1' }, config: CONFIG, env, el, parts: new Map([['s/0', lp]]), accepted, committed, members, counters, refreshRole: (pkey) => void refreshed.push(pkey) });
  return { f, el, sent, refreshed, accepted, committed, counters, members, lp };
}

describe('RuntimeMapFollower (nodes/core/runtime-map-follower.ts): every node side of the runtime map', () => {
  it('accepts a proposal of a current term only above the accepted epoch; a stale term or a lower epoch is refused and counted', () => {
    const { f, el, sent, refreshed, accepted, counters } = follower();
    el.adoptTerm(3, null);
    f.onPropose('n1', 3, runtimeEntry({ epoch: 5, term: 3 }), 1_000);
    f.onPropose('n1', 3, runtimeEntry({ epoch: 5, term: 3 }), 1_000);
    f.onPropose('n1', 2, runtimeEntry({ epoch: 9, term: 2 }), 1_000);
    expect(sent.map(([, m]) => (m.t === 'propose-r' ? [m.epoch, m.ok, m.term] : null))).toEqual([
      [5, true, 3],
      [5, false, 3],
      [9, false, 3],
    ]);
    expect(accepted.get('s/0')!.epoch).toBe(5);
    expect(refreshed).toEqual(['s/0']);
    expect(counters.staleEpochRefusals.proposal).toBe(2);
  });

  it('accepts nothing while rejoining (an earlier life may have accepted more)', () => {
    const { f, sent, accepted } = follower({ rejoined: false });
    f.onPropose('n1', 1, runtimeEntry({ epoch: 5, term: 1 }), 1_000);
    expect(sent.map(([, m]) => (m.t === 'propose-r' ? m.ok : null))).toEqual([false]);
    expect(accepted.size).toBe(0);
  });

  it('learns a committed entry only if it supersedes its own (epoch, then term), and raises the accepted one with it', () => {
    const { f, accepted, committed, refreshed } = follower();
    f.learnCommitted(runtimeEntry({ epoch: 4, term: 2 }));
    f.learnCommitted(runtimeEntry({ epoch: 3, term: 9 }));
    f.learnCommitted(runtimeEntry({ epoch: 4, term: 3 }));
    expect([committed.get('s/0')!.epoch, committed.get('s/0')!.term]).toEqual([4, 3]);
    expect(accepted.get('s/0')!.term).toBe(3);
    expect(refreshed).toEqual(['s/0', 's/0']);
  });

  it('answers a heartbeat of an older term with no reports; a current one with its copy reported and the member set learnt', () => {
    const { f, el, sent, members, lp } = follower();
    el.adoptTerm(4, null);
    lp.data.apply({ rev: 1, seg: 0, key: 'k', value: Buffer.from('v'), version: 1 });
    const hb = (term: number): Extract<ClusterMsg, { t: 'hb' }> => ({ t: 'hb', term, seq: 1, committed: [], at: 500, echo: -1, echoInc: '', leaseLeft: 0, members: { ...initialMemberSet(CONFIG), version: 2, term } });
    f.onHeartbeat('n1', hb(3), 1_000);
    f.onHeartbeat('n1', hb(4), 1_000);
    const replies = sent.filter(([, m]) => m.t === 'hb-r').map(([, m]) => m as Extract<ClusterMsg, { t: 'hb-r' }>);
    expect(replies.map((r) => [r.term, r.reports.length])).toEqual([
      [4, 0],
      [4, 1],
    ]);
    expect(replies[1].reports[0]).toEqual({ pkey: 's/0', rev: 1, heldKeys: 1, syncedSegments: 4, tag: 't1', accepted: -1 });
    expect(members.committed.version).toBe(2);
  });
});
