import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_TIMING, ownerLeaseUsedMs } from '../cluster-config.js';
import type { ClusterMsg, RuntimeEntry } from '../cluster-messages.js';
import { Election, type VoteState } from './election.js';
import { PeerTable } from './peer-table.js';

const TIMING = { ...DEFAULT_TIMING, electionTimeoutMinMs: 300, electionTimeoutMaxMs: 600, heartbeatMs: 100 };

function node(id = 'n1', peers = ['n2', 'n3']) {
  const clock = { now: 0 };
  const sent: Array<[string, ClusterMsg]> = [];
  const logs: string[] = [];
  const elected: Array<{ now: number; voteStates: VoteState[] }> = [];
  let steppedDown = 0;
  const map: RuntimeEntry[] = [];
  const fd = new PeerTable({ node: id, inc: 'i' }, peers, 2, TIMING, { now: () => clock.now, log: () => undefined, term: () => el.term });
  const el: Election = new Election({ node: id, inc: 'i' }, peers, Math.floor((peers.length + 1) / 2) + 1, TIMING, {
    now: () => clock.now,
    random: () => 0.5,
    send: (to, msg) => sent.push([to, msg]),
    log: (e) => logs.push(e),
    maps: () => ({ accepted: [...map], committed: [] }),
    onElected: (now, voteStates) => elected.push({ now, voteStates }),
    onStepDown: () => void steppedDown++,
  }, fd);
  return { el, fd, clock, sent, logs, elected, stepped: () => steppedDown };
}

/** Ends the rejoin of a fresh node as on a first boot: every peer answers "term 0, nothing known". */
function firstBoot(n: ReturnType<typeof node>): void {
  n.el.onRejoinReply('n2', 0, false);
}

describe('Election (nodes/core/election.ts): terms, pre-vote, votes, rejoin, leases', () => {
  it('a first boot rejoins at once; after the joining window, pre-vote then election by a majority; onElected gets the voters\' maps', () => {
    const n = node();
    expect(n.el.rejoinPending).toBe(true);
    firstBoot(n);
    expect(n.el.rejoinPending).toBe(false);
    expect(n.logs).toContain('rejoined');
    // within the joining window a node never campaigns (it may have voted there in an earlier life)
    n.el.startPreVote(100);
    expect(n.sent.filter(([, m]) => m.t === 'prevote')).toHaveLength(0);
    expect(n.el.electionDeadline).toBe(450);
    n.clock.now = 700;
    n.el.startPreVote(700);
    expect(n.sent.filter(([, m]) => m.t === 'prevote').map(([to, m]) => [to, (m as { term: number }).term])).toEqual([
      ['n2', 1],
      ['n3', 1],
    ]);
    expect(n.el.term).toBe(0);
    n.el.onPreVoteReply('n2', 1, true, 700);
    expect(n.el.term).toBe(1);
    expect(n.el.role).toBe('candidate');
    const accepted: RuntimeEntry[] = [];
    n.el.onVoteReply('n3', { t: 'vote-r', term: 1, granted: true, accepted, committed: [] }, 710);
    expect(n.el.role).toBe('leader');
    expect(n.el.leaderId).toBe('n1');
    expect(n.elected).toHaveLength(1);
    expect(n.elected[0].voteStates).toHaveLength(2);
    // a higher term makes the leader step down
    n.el.adoptTerm(5, 'n2');
    expect(n.el.role).toBe('follower');
    expect(n.el.leaderId).toBe('n2');
    expect(n.stepped()).toBe(1);
    expect(n.logs).toContain('leader-step-down');
  });

  it('one vote per term; no vote while rejoining, within the joining window, or in a term heard of while joining', () => {
    const n = node();
    n.el.onHello(4, 10);
    expect(n.el.term).toBe(4);
    firstBoot(n);
    n.clock.now = 1_000;
    n.el.onVote('n2', 4, 1_000);
    expect(n.sent.at(-1)![1]).toMatchObject({ t: 'vote-r', term: 4, granted: false });
    n.el.adoptTerm(6, null);
    n.el.onVote('n2', 6, 1_000);
    expect(n.sent.at(-1)![1]).toMatchObject({ t: 'vote-r', term: 6, granted: true });
    n.el.onVote('n3', 6, 1_000);
    expect(n.sent.at(-1)![1]).toMatchObject({ t: 'vote-r', term: 6, granted: false });
    // a rejoining node votes for nobody
    const r = node();
    r.el.adoptTerm(2, null);
    r.el.onVote('n2', 2, 5_000);
    expect(r.sent.at(-1)![1]).toMatchObject({ granted: false });
  });

  it('a rejoin waits for a leader at least as recent as the terms a majority reported', () => {
    const n = node();
    n.el.onRejoinReply('n2', 7, true);
    // one answer of two others is no majority: nothing learnt yet
    expect(n.el.term).toBe(0);
    n.el.onRejoinReply('n3', 5, true);
    expect(n.el.rejoinPending).toBe(true);
    expect(n.el.term).toBe(7);
    expect(n.el.rejoinedBy(6)).toBe(false);
    expect(n.el.rejoinPending).toBe(true);
    expect(n.el.rejoinedBy(7)).toBe(true);
    expect(n.el.rejoinPending).toBe(false);
  });

  it('leases: the quorum lease runs leaseMs from the heartbeat a majority answered; the owner lease never past what the leader had left', () => {
    const n = node();
    const leaseMs = ownerLeaseUsedMs(TIMING);
    expect(n.el.leaseMs).toBe(leaseMs);
    n.el.renewQuorumLease();
    expect(n.el.quorumLeaseUntil).toBe(-Infinity);
    Object.assign(n.fd.peers.get('n2')!, { hbrTerm: 0, hbrEcho: 1_000 });
    n.el.renewQuorumLease();
    expect(n.el.quorumLeaseUntil).toBe(1_000 + leaseMs);
    expect(n.el.leaseUntil).toBe(1_000 + leaseMs);
    const f = node('n2', ['n1', 'n3']);
    f.el.grantOwnerLease('i', { echoInc: 'other', echo: 50, leaseLeft: 10_000 });
    expect(f.el.leaseUntil).toBe(-Infinity);
    f.el.grantOwnerLease('i', { echoInc: 'i', echo: 50, leaseLeft: 100 });
    expect(f.el.leaseUntil).toBe(150);
    f.el.grantOwnerLease('i', { echoInc: 'i', echo: 60, leaseLeft: 1e9 });
    expect(f.el.leaseUntil).toBe(60 + leaseMs);
  });

  it('property: at most one node of three becomes leader per term, whatever order votes arrive in', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom('n1', 'n2', 'n3'), fc.constantFrom('n1', 'n2', 'n3')), { maxLength: 40 }), (deliveries) => {
        const ids = ['n1', 'n2', 'n3'];
        const ns = Object.fromEntries(ids.map((id) => [id, node(id, ids.filter((x) => x !== id))]));
        const leaders = new Map<number, Set<string>>();
        for (const id of ids) {
          firstBoot(ns[id]);
          ns[id].clock.now = 1_000;
          ns[id].el.startPreVote(1_000);
        }
        // deliver queued messages in the generated order (from, to), each at most once
        for (const [from, to] of deliveries) {
          const q = ns[from].sent;
          const i = q.findIndex(([dst]) => dst === to);
          if (i < 0) continue;
          const [, msg] = q.splice(i, 1)[0];
          const el = ns[to].el;
          if ('term' in msg && msg.t !== 'prevote' && msg.t !== 'prevote-r' && msg.term > el.term) el.adoptTerm(msg.term, null);
          if (msg.t === 'prevote') el.onPreVote(from, msg.term, 1_000);
          else if (msg.t === 'prevote-r') el.onPreVoteReply(from, msg.term, msg.granted, 1_000);
          else if (msg.t === 'vote') el.onVote(from, msg.term, 1_000);
          else if (msg.t === 'vote-r') el.onVoteReply(from, msg, 1_000);
          for (const id of ids) if (ns[id].el.role === 'leader') (leaders.get(ns[id].el.term) ?? leaders.set(ns[id].el.term, new Set()).get(ns[id].el.term)!).add(id);
        }
        for (const set of leaders.values()) expect(set.size).toBeLessThanOrEqual(1);
      }),
      { seed: 20261201, numRuns: 1_500 },
    );
  });
});
