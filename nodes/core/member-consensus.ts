import { voterIds, type ClusterConfig } from '../cluster-config.js';
import { supersedes } from '../cluster-messages.js';
import { applyMembershipChange, type MemberSet, type MembershipChange } from '../membership/members.js';

/**
 * A member set as the runtime map's consensus holds it: the set (members.ts) and the term of the
 * leader that proposed it. Versions order the sets; the term breaks a tie between two sets
 * proposed at one version by different leaders (the later term's may have committed, as for
 * runtime entries: cluster-messages.ts `supersedes`).
 */
export interface MemberBallot extends MemberSet {
  term: number;
}

/** A member-set proposal in flight: who accepted it, since when (ms). */
interface MemberProposal {
  ballot: MemberBallot;
  oks: Set<string>;
  at: number;
}

/** A member-set proposal not accepted by a majority of the voters within this long is dropped (ms). */
const MEMBER_PROPOSE_TIMEOUT_MS = 1_000;

/**
 * The member set at the cluster's start (version 1, term 0): every non-spare node of the config as
 * a `member` (cluster-config.ts `spare`). Every node computes the same.
 */
export function initialMemberSet(config: Pick<ClusterConfig, 'nodes'>): MemberBallot {
  const voters = new Set(voterIds(config));
  return {
    version: 1,
    term: 0,
    members: config.nodes.filter((n) => voters.has(n.id)).map((n) => ({ id: n.id, host: n.host, clientPort: n.clientPort, peerPort: n.clusterPort, state: 'member' as const })),
  };
}

function ballotOrder(b: MemberBallot): { epoch: number; term: number } {
  return { epoch: b.version, term: b.term };
}

/** What the member-set consensus needs of its node: sending to peers, the voters, log, clock (ms). */
export interface MemberConsensusHost {
  readonly id: string;
  /** Every peer: voters and spares (spares hear the set, their acceptance does not count). */
  readonly peerIds: readonly string[];
  /** Voting peers (this node excluded). */
  readonly voterPeerIds: ReadonlySet<string>;
  /** Votes needed: a majority of the voters (this node included when it votes). */
  readonly majority: number;
  readonly selfVotes: boolean;
  send(to: string, msg: MemberMsg): void;
  log(event: string, fields?: Record<string, unknown>): void;
}

/** The member-set messages (cluster-messages.ts ClusterMsg carries them). */
export type MemberMsg =
  | { t: 'mpropose'; term: number; ballot: MemberBallot }
  | { t: 'mpropose-r'; term: number; version: number; ok: boolean }
  | { t: 'mcommit'; term: number; ballot: MemberBallot };

/**
 * The member set's consensus (issue 14; DESIGN.md §2 "Leader and ownership decisions"), beside the
 * runtime map's: the leader proposes the next member set (one single-node change at a time,
 * members.ts), a node accepts a ballot of a current term above the one it accepted, the leader
 * commits once a majority of the voters accepted, and heartbeats carry the committed set so a
 * lost commit is repaired. A new leader starts from the highest committed set among its voters'
 * and proposes again the highest accepted one above it (Raft: accepted entries are re-proposed).
 * The voters are fixed (the non-spare nodes of the config): the member set says who holds copies,
 * not who votes, so no change of it moves a majority.
 */
export class MemberConsensus {
  private readonly h: MemberConsensusHost;
  private _accepted: MemberBallot;
  private _committed: MemberBallot;
  private inflight: MemberProposal | null = null;
  /** Every node some committed set this node learnt listed (a `--join` node asks only until it is one). */
  readonly everListed = new Set<string>();

  constructor(host: MemberConsensusHost, initial: MemberBallot) {
    this.h = host;
    this._accepted = initial;
    this._committed = initial;
    for (const m of initial.members) this.everListed.add(m.id);
  }

  /** The highest member set this node accepted. */
  get accepted(): MemberBallot {
    return this._accepted;
  }

  /** The committed member set this node knows. */
  get committed(): MemberBallot {
    return this._committed;
  }

  /** A proposal is in flight, or an accepted set above the committed one is unresolved: no new change now. */
  get pending(): boolean {
    return this.inflight !== null || this._accepted.version > this._committed.version;
  }

  /** A committed set from a heartbeat, commit or vote merge: adopted if it supersedes ours. */
  learnCommitted(b: MemberBallot): void {
    if (!supersedes(ballotOrder(b), ballotOrder(this._committed))) return;
    this._committed = b;
    for (const m of b.members) this.everListed.add(m.id);
    if (supersedes(ballotOrder(b), ballotOrder(this._accepted))) this._accepted = b;
    this.h.log('members', { version: b.version, members: b.members.map((m) => `${m.id}:${m.state}`).join(',') });
  }

  /** Follower: a proposal of a term at least ours (the caller checked the term). Returns whether accepted. */
  onPropose(from: string, term: number, ballot: MemberBallot, acceptable: boolean): void {
    const ok = acceptable && supersedes(ballotOrder(ballot), ballotOrder(this._accepted));
    if (ok) this._accepted = ballot;
    this.h.send(from, { t: 'mpropose-r', term, version: ballot.version, ok });
  }

  /** Leader: a reply to our proposal; commits once a majority of the voters accepted it. */
  onProposeReply(from: string, msg: Extract<MemberMsg, { t: 'mpropose-r' }>, term: number): void {
    const p = this.inflight;
    if (!p || msg.term !== term || msg.version !== p.ballot.version || !msg.ok || !this.h.voterPeerIds.has(from)) return;
    p.oks.add(from);
    if (p.oks.size >= this.h.majority) this.commit(term);
  }

  /**
   * Leader: proposes `change` applied to the committed set, at the next version.
   * @returns the proposed set, or a one-line refusal (members.ts MembershipError's message, or
   *   "pending" while another change is unresolved).
   */
  proposeChange(change: MembershipChange, term: number, now: number): MemberBallot | string {
    let next: MemberSet;
    try {
      next = applyMembershipChange(this._committed, change, this.pending);
    } catch (err) {
      return (err as Error).message;
    }
    return this.propose({ ...next, term }, term, now);
  }

  private propose(ballot: MemberBallot, term: number, now: number): MemberBallot {
    this._accepted = ballot;
    this.inflight = { ballot, oks: new Set(this.h.selfVotes ? [this.h.id] : []), at: now };
    this.h.log('members-propose', { version: ballot.version, term, members: ballot.members.map((m) => `${m.id}:${m.state}`).join(',') });
    for (const p of this.h.peerIds) this.h.send(p, { t: 'mpropose', term, ballot });
    if (this.inflight.oks.size >= this.h.majority) this.commit(term);
    return ballot;
  }

  private commit(term: number): void {
    const b = this.inflight!.ballot;
    this.inflight = null;
    this.learnCommitted(b);
    for (const p of this.h.peerIds) this.h.send(p, { t: 'mcommit', term, ballot: b });
  }

  /**
   * Leader, each tick: a proposal nobody answered within the timeout is dropped; an accepted set
   * above the committed one (a proposal of ours or of an earlier leader that was cut short) is
   * proposed again at this term before any new change.
   */
  tick(term: number, now: number): void {
    if (this.inflight && now - this.inflight.at > MEMBER_PROPOSE_TIMEOUT_MS) this.inflight = null;
    if (!this.inflight && this._accepted.version > this._committed.version) this.propose({ ...this._accepted, term }, term, now);
  }

  /** Elected: start from the highest committed set among the voters' and re-propose the highest accepted above it (at the next tick). */
  elected(states: ReadonlyArray<{ accepted: MemberBallot; committed: MemberBallot } | undefined>): void {
    this.inflight = null;
    for (const s of states) if (s) this.learnCommitted(s.committed);
    for (const s of states) if (s && supersedes(ballotOrder(s.accepted), ballotOrder(this._accepted))) this._accepted = s.accepted;
    // an accepted set at or below the committed version that is not the committed one never committed
    if (this._accepted.version <= this._committed.version) this._accepted = this._committed;
  }

  /** Stepped down: a proposal of ours may still commit through a later leader; we stop counting. */
  stepDown(): void {
    this.inflight = null;
  }

  /** The pair a vote reply carries. */
  voteState(): { accepted: MemberBallot; committed: MemberBallot } {
    return { accepted: this._accepted, committed: this._committed };
  }
}
