import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { validateClusterConfig } from '../cluster-config.js';
import { initialMemberSet, MemberConsensus, type MemberBallot, type MemberMsg } from './member-consensus.js';

const CONFIG = validateClusterConfig({
  cluster: 't',
  nodes: [1, 2, 3, 4].map((i) => ({ id: `n${i}`, host: '127.0.0.1', clientPort: 7000 + i, clusterPort: 7100 + i, ...(i === 4 ? { spare: true } : {}) })),
  stores: [{ name: 's', replicationFactor: 3, ackMode: 'sync' }],
});

/** A consensus of node `id` whose messages are recorded. */
function node(id: string): { mc: MemberConsensus; sent: Array<[string, MemberMsg]> } {
  const sent: Array<[string, MemberMsg]> = [];
  const peers = ['n1', 'n2', 'n3', 'n4'].filter((n) => n !== id);
  const mc = new MemberConsensus(
    { id, peerIds: peers, voterPeerIds: new Set(peers.filter((n) => n !== 'n4')), majority: 2, selfVotes: id !== 'n4', send: (to, msg) => void sent.push([to, msg]), log: () => undefined },
    initialMemberSet(CONFIG),
  );
  return { mc, sent };
}

describe('MemberConsensus (nodes/core/member-consensus.ts): the member set committed by a majority of the voters', () => {
  it('starts from the non-spare nodes as members, version 1', () => {
    const s = initialMemberSet(CONFIG);
    expect(s.version).toBe(1);
    expect(s.members.map((m) => [m.id, m.state, m.peerPort])).toEqual([
      ['n1', 'member', 7101],
      ['n2', 'member', 7102],
      ['n3', 'member', 7103],
    ]);
  });

  it('commits a join once one other voter accepted; a spare acceptance counts for nothing', () => {
    const { mc, sent } = node('n1');
    const b = mc.proposeChange({ kind: 'join', node: { id: 'n4', host: '127.0.0.1', clientPort: 7004, peerPort: 7104 } }, 3, 0);
    expect(typeof b).toBe('object');
    expect(sent.map(([to, m]) => [to, m.t])).toEqual([
      ['n2', 'mpropose'],
      ['n3', 'mpropose'],
      ['n4', 'mpropose'],
    ]);
    expect(mc.pending).toBe(true);
    // one change at a time
    expect(mc.proposeChange({ kind: 'leave', id: 'n2' }, 3, 1)).toBe('a membership change is still pending: one change at a time (its commit comes first)');
    mc.onProposeReply('n4', { t: 'mpropose-r', term: 3, version: 2, ok: true }, 3);
    expect(mc.committed.version).toBe(1);
    mc.onProposeReply('n2', { t: 'mpropose-r', term: 3, version: 2, ok: true }, 3);
    expect(mc.committed.version).toBe(2);
    expect(mc.committed.members.find((m) => m.id === 'n4')?.state).toBe('joining');
    expect(sent.filter(([, m]) => m.t === 'mcommit').map(([to]) => to)).toEqual(['n2', 'n3', 'n4']);
    expect(mc.pending).toBe(false);
  });

  it('a follower accepts only a ballot above its accepted one (version, then term)', () => {
    const { mc, sent } = node('n2');
    const v2: MemberBallot = { ...initialMemberSet(CONFIG), version: 2, term: 3 };
    mc.onPropose('n1', 3, v2, true);
    mc.onPropose('n1', 3, v2, true);
    mc.onPropose('n3', 2, { ...v2, term: 2 }, true);
    mc.onPropose('n3', 4, { ...v2, term: 4 }, true);
    mc.onPropose('n3', 5, { ...v2, version: 3, term: 5 }, false);
    expect(sent.map(([, m]) => (m.t === 'mpropose-r' ? m.ok : null))).toEqual([true, false, false, true, false]);
    expect(mc.accepted.term).toBe(4);
  });

  it('a new leader re-proposes the highest accepted set above the committed one (property: the committed version never goes back)', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ acc: fc.integer({ min: 1, max: 6 }), com: fc.integer({ min: 1, max: 6 }), term: fc.integer({ min: 1, max: 4 }) }), { minLength: 1, maxLength: 3 }), (states) => {
        const { mc, sent } = node('n1');
        const base = initialMemberSet(CONFIG);
        const votes = states.map((s) => ({ accepted: { ...base, version: Math.max(s.acc, s.com), term: s.term }, committed: { ...base, version: s.com, term: 1 } }));
        mc.elected(votes);
        const maxCom = Math.max(1, ...states.map((s) => s.com));
        expect(mc.committed.version).toBe(maxCom);
        const maxAcc = Math.max(...states.map((s) => Math.max(s.acc, s.com)));
        mc.tick(9, 0);
        const proposed = sent.filter(([, m]) => m.t === 'mpropose').map(([, m]) => (m as Extract<MemberMsg, { t: 'mpropose' }>).ballot.version);
        if (maxAcc > maxCom) expect(new Set(proposed)).toEqual(new Set([maxAcc]));
        else expect(proposed).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });
});
