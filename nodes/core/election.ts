import { ownerLeaseUsedMs, type TimingConfig } from '../cluster-config.js';
import type { ClusterMsg, Member, RuntimeEntry } from '../cluster-messages.js';
import { RETRY_MS } from './partition-state.js';
import type { PeerTable } from './peer-table.js';
import type { MemberBallot } from './member-consensus.js';

/** A node's part in the election (Raft). */
export type Role = 'follower' | 'candidate' | 'leader';

/** The runtime map a voter holds, sent with its vote: what it accepted and what it saw committed. */
export interface VoteState {
  accepted: RuntimeEntry[];
  committed: RuntimeEntry[];
  /** The voter's member sets (core/member-consensus.ts); absent from nodes of an older build. */
  members?: { accepted: MemberBallot; committed: MemberBallot };
}

/** What the election needs from its node: clock (ms), jitter, messages, log, and the leader-side hooks. */
export interface ElectionHost {
  now(): number;
  /** Uniform [0, 1): election timeout jitter. */
  random(): number;
  send(to: string, msg: ClusterMsg): void;
  log(event: string, fields?: Record<string, unknown>): void;
  /** The runtime map this node holds (a candidate counts its own; a vote carries it). */
  maps(): VoteState;
  /** Elected: set up leadership from the voters' maps (NodeCore merges them and re-proposes). */
  onElected(now: number, voteStates: VoteState[]): void;
  /** No longer leader or candidate: drop leader-only state. */
  onStepDown(): void;
}

/**
 * Terms and election (DESIGN.md §2, seed 002's leader): Raft-style terms with pre-vote, one vote
 * per term, a candidate elected by a majority (itself counted); the rejoin rule for a restarted,
 * memory-only node (Viewstamped Replication's recovery: neither vote, campaign nor accept before
 * a majority told it their terms and a leader at least that recent sent the committed map); the
 * leader's quorum lease and the owner lease it grants (Raft's leader lease). Times are the node's
 * monotonic clock, ms. The runtime map itself (proposals, commits) stays with the node.
 */
export class Election {
  private readonly id: string;
  private readonly peerIds: readonly string[];
  private readonly majority: number;
  private readonly timing: TimingConfig;
  private readonly host: ElectionHost;
  private readonly fd: PeerTable;
  private readonly startedAt: number;
  private _term = 0;
  private votedFor: string | null = null;
  /** Terms up to this one are not voted in (a restarted node may have voted there before). */
  private noVoteUpTo = 0;
  /**
   * Non-null while this incarnation rejoins (memory only: an earlier life of this node may have
   * voted, accepted runtime entries and seen terms it has now forgotten). Until a majority of the
   * other nodes told it their term (rejoin-r) and a leader of at least the highest of those terms
   * sent it the committed runtime map, it neither votes, campaigns nor accepts proposals (the
   * recovery rule of Viewstamped Replication). When not even the nodes that have not answered
   * could make a majority holding runtime entries (the first boot, or a majority that lost its
   * memory at once), there is nothing a wait could protect and it takes part at once.
   */
  private rejoin: { heard: Map<string, { term: number; known: boolean }>; needTerm: number | null; askedAt: number } | null;
  private _role: Role = 'follower';
  private _leaderId: string | null = null;
  private _electionDeadline = 0;
  private votes = new Set<string>();
  private preVotes = new Set<string>();
  private preVoteTerm = 0;
  private voteStates: VoteState[] = [];
  private _lastLeaderContact = -Infinity;
  /**
   * Until when (own clock) this node may act as an active owner: acknowledge writes and answer
   * reads (issue 10). Extended only by a leader's heartbeat echoing the send time of one of our
   * own replies, bounded by that leader's quorum lease; as leader, by heartbeats a majority
   * answered. A message that waited in a buffer (a paused process, a stalled link) echoes an old
   * time and extends nothing. See ownerLeaseMs (cluster-config.ts) for why no other owner can be
   * promoted first.
   */
  private _leaseUntil = -Infinity;
  /** Leader: until when a majority (ourselves included) answered heartbeats of this term (own clock). */
  private _quorumLeaseUntil = -Infinity;
  /** The term and leader-clock send time (`hb.at`) of the latest heartbeat received (req-drop's `seen`). */
  private _hbSeen = { term: -1, at: -1 };

  /** This node votes and may lead; false for a spare (cluster-config.ts): it never asks for or grants a vote. */
  readonly voter: boolean;

  /**
   * `self`: this node; `peerIds`: the other voters; `majority`: of the voters; `fd`: the peer table
   * (heartbeat replies for the quorum lease); `votes`: false for a spare.
   */
  constructor(self: Member, peerIds: readonly string[], majority: number, timing: TimingConfig, host: ElectionHost, fd: PeerTable, votes = true) {
    this.voter = votes;
    this.id = self.node;
    this.peerIds = peerIds;
    this.majority = majority;
    this.timing = timing;
    this.host = host;
    this.fd = fd;
    this.startedAt = host.now();
    this.rejoin = peerIds.length > 0 ? { heard: new Map(), needTerm: null, askedAt: -Infinity } : null;
  }

  get term(): number {
    return this._term;
  }
  get role(): Role {
    return this._role;
  }
  /** The leader this node follows (itself when leader), or null when none is known. */
  get leaderId(): string | null {
    return this._leaderId;
  }
  get electionDeadline(): number {
    return this._electionDeadline;
  }
  /** Last time (own clock) a leader was heard, or, as leader, a majority. */
  get lastLeaderContact(): number {
    return this._lastLeaderContact;
  }
  /** Until when (own clock) this node may act as an active owner. */
  get leaseUntil(): number {
    return this._leaseUntil;
  }
  /** Leader: until when its quorum lease runs (own clock). */
  get quorumLeaseUntil(): number {
    return this._quorumLeaseUntil;
  }
  get hbSeen(): { term: number; at: number } {
    return this._hbSeen;
  }
  /** Still rejoining (see the rejoin rule): answers rejoin questions with "known: false". */
  get rejoinPending(): boolean {
    return this.rejoin !== null;
  }
  /** When this incarnation started (own clock, ms). */
  get started(): number {
    return this.startedAt;
  }

  /** Within one maximum election timeout of the start: a restarted node may have voted in the terms it hears of. */
  isJoining(now: number): boolean {
    return now - this.startedAt < this.timing.electionTimeoutMaxMs;
  }

  resetElectionDeadline(): void {
    const t = this.timing;
    this._electionDeadline = this.host.now() + t.electionTimeoutMinMs + this.host.random() * (t.electionTimeoutMaxMs - t.electionTimeoutMinMs);
  }

  /** Raft: a higher term seen is adopted, and a leader or candidate steps down. */
  adoptTerm(term: number, leader: string | null): void {
    if (term <= this._term) return;
    this._term = term;
    this.votedFor = null;
    if (this._role !== 'follower') this.stepDown('higher term');
    this._leaderId = leader;
  }

  stepDown(reason: string): void {
    if (this._role === 'leader') this.host.log('leader-step-down', { term: this._term, reason });
    this._role = 'follower';
    this.host.onStepDown();
    if (this._leaderId === this.id) this._leaderId = null;
    this.resetElectionDeadline();
  }

  private canVote(now: number, term: number): boolean {
    return !this.isJoining(now) && term > this.noVoteUpTo && this.rejoin === null;
  }

  /** A peer said hello at `term`: a joining node will not vote up to it; a higher term is adopted. */
  onHello(term: number, now: number): void {
    // memory-only: a node that just started may have voted in this term in an earlier life
    if (this.isJoining(now)) this.noVoteUpTo = Math.max(this.noVoteUpTo, term);
    if (term > this._term) this.adoptTerm(term, null);
  }

  /** While rejoining: ask every peer where the cluster stands (every RETRY_MS; answers change). */
  askRejoin(now: number): void {
    const r = this.rejoin;
    if (!r || now - r.askedAt < RETRY_MS) return;
    r.askedAt = now;
    for (const p of this.peerIds) this.host.send(p, { t: 'rejoin-q', term: this._term });
  }

  /** A peer's answer while rejoining: its term, and whether it knows any runtime entry. */
  onRejoinReply(from: string, term: number, known: boolean): void {
    const r = this.rejoin;
    if (!r) return;
    r.heard.set(from, { term, known });
    let holders = 0;
    let maxTerm = this._term;
    for (const h of r.heard.values()) {
      if (h.known) holders++;
      if (h.term > maxTerm) maxTerm = h.term;
    }
    // nodes that may hold runtime entries: those that said so, and those that have not answered
    if (holders + this.peerIds.length - r.heard.size < this.majority) {
      // no majority can remember anything (the cluster's first boot, or a majority lost its
      // memory at once, which no memory-only store survives intact): waiting would only wedge
      // the cluster. Take part again, but never vote in a term someone may have voted in.
      this.noVoteUpTo = Math.max(this.noVoteUpTo, maxTerm);
      if (maxTerm > this._term) this.adoptTerm(maxTerm, null);
      this.finishRejoin(holders === 0 && maxTerm === 0 ? 'first boot' : 'no majority remembers');
      return;
    }
    if (r.heard.size < this.majority || (r.needTerm !== null && maxTerm <= r.needTerm)) return;
    // a majority of the others answered: every term our earlier life can have taken part in is
    // at most the highest of theirs; relearn the runtime map from a leader at least that recent
    r.needTerm = maxTerm;
    this.noVoteUpTo = Math.max(this.noVoteUpTo, maxTerm);
    if (maxTerm > this._term) this.adoptTerm(maxTerm, null);
  }

  private finishRejoin(why: string): void {
    this.rejoin = null;
    this.host.log('rejoined', { why, term: this._term });
  }

  private heardLeaderRecently(now: number): boolean {
    return this._role === 'leader' || now - this._lastLeaderContact < this.timing.electionTimeoutMinMs;
  }

  /** The election timeout ran out: ask for pre-votes for the next term (Raft pre-vote). */
  startPreVote(now: number): void {
    this.resetElectionDeadline();
    if (!this.voter || !this.canVote(now, this._term + 1)) return;
    this.preVoteTerm = this._term + 1;
    this.preVotes = new Set([this.id]);
    for (const p of this.peerIds) this.host.send(p, { t: 'prevote', term: this.preVoteTerm });
    if (this.preVotes.size >= this.majority) this.startElection(now);
  }

  onPreVote(from: string, term: number, now: number): void {
    const granted = this.voter && term > this._term && !this.heardLeaderRecently(now);
    this.host.send(from, { t: 'prevote-r', term, granted });
  }

  onPreVoteReply(from: string, term: number, granted: boolean, now: number): void {
    if (this._role === 'leader' || term !== this.preVoteTerm || term !== this._term + 1 || !granted) return;
    this.preVotes.add(from);
    if (this.preVotes.size >= this.majority) {
      this.preVoteTerm = 0;
      this.startElection(now);
    }
  }

  private startElection(now: number): void {
    this._term++;
    this._role = 'candidate';
    this.votedFor = this.id;
    this._leaderId = null;
    this.votes = new Set([this.id]);
    this.voteStates = [this.host.maps()];
    this.resetElectionDeadline();
    this.host.log('election', { term: this._term });
    for (const p of this.peerIds) this.host.send(p, { t: 'vote', term: this._term });
    if (this.votes.size >= this.majority) this.becomeLeader(now);
  }

  onVote(from: string, term: number, now: number): void {
    let granted = false;
    if (this.voter && term === this._term && this._role === 'follower' && this.canVote(now, term) && (this.votedFor === null || this.votedFor === from)) {
      granted = true;
      this.votedFor = from;
      this.resetElectionDeadline();
    }
    const maps: VoteState = granted ? this.host.maps() : { accepted: [], committed: [] };
    this.host.send(from, { t: 'vote-r', term: this._term, granted, accepted: maps.accepted, committed: maps.committed, ...(maps.members ? { members: maps.members } : {}) });
  }

  onVoteReply(from: string, msg: Extract<ClusterMsg, { t: 'vote-r' }>, now: number): void {
    if (this._role !== 'candidate' || msg.term !== this._term || !msg.granted || this.votes.has(from)) return;
    this.votes.add(from);
    this.voteStates.push({ accepted: msg.accepted, committed: msg.committed, ...(msg.members ? { members: msg.members } : {}) });
    if (this.votes.size >= this.majority) this.becomeLeader(now);
  }

  private becomeLeader(now: number): void {
    this._role = 'leader';
    this._leaderId = this.id;
    this._lastLeaderContact = now;
    const vs = this.voteStates;
    this.voteStates = [];
    this.host.onElected(now, vs);
  }

  /** A new leader's quorum lease starts from nothing (its first heartbeats a majority answers). */
  resetQuorumLease(): void {
    this._quorumLeaseUntil = -Infinity;
  }

  /** Leader: a majority was heard recently (leaderTick's quorum check). */
  heardMajority(now: number): void {
    this._lastLeaderContact = now;
  }

  /** A commit of this term or later from `from`: it leads. */
  noteLeader(from: string, now: number): void {
    this._leaderId = from;
    this._lastLeaderContact = now;
  }

  /** A proposal of a term at least ours: its sender leads (a leader or candidate steps down). */
  followProposer(from: string, now: number): void {
    this.follow(from, now, 'proposal from leader');
  }

  private follow(from: string, now: number, reason: string): void {
    if (this._role !== 'follower') this.stepDown(reason);
    this._leaderId = from;
    this._lastLeaderContact = now;
    this.resetElectionDeadline();
  }

  /** A heartbeat of a term at least ours: follow its sender (a leader or candidate steps down). */
  followLeader(from: string, msg: { term: number; at: number }, now: number): void {
    this.follow(from, now, 'heartbeat from leader');
    if (msg.term > this._hbSeen.term || (msg.term === this._hbSeen.term && msg.at > this._hbSeen.at)) this._hbSeen = { term: msg.term, at: msg.at };
  }

  /**
   * After a heartbeat's committed map was learnt: false while this node must stay silent (not
   * rejoined, and this leader is older than every term a majority of the others reported); a
   * leader recent enough ends the rejoin (and is never voted against in its term).
   */
  rejoinedBy(term: number): boolean {
    if (!this.rejoin) return true;
    if (this.rejoin.needTerm === null || term < this.rejoin.needTerm) return false;
    this.noVoteUpTo = Math.max(this.noVoteUpTo, term);
    this.finishRejoin('learnt the runtime map from the leader');
    return true;
  }

  /**
   * The owner lease, from our own clock: the leader had heard our reply sent at `echo` while its
   * quorum lease still ran for `leaseLeft` ms (so it ends no later than echo + leaseLeft); an echo
   * of a time another incarnation's clock gave is not ours.
   */
  grantOwnerLease(myInc: string, msg: { echoInc: string; echo: number; leaseLeft: number }): void {
    if (msg.echoInc === myInc && msg.echo >= 0 && msg.leaseLeft > 0) this._leaseUntil = Math.max(this._leaseUntil, msg.echo + Math.min(this.leaseMs, msg.leaseLeft));
  }

  /**
   * Leader: the quorum lease runs `leaseMs` from the send time of the latest heartbeat of this
   * term that a majority (ourselves included) answered (Raft's leader lease).
   */
  renewQuorumLease(): void {
    const need = this.majority - 1;
    let start: number;
    if (need <= 0) start = this.host.now();
    else {
      const echoes: number[] = [];
      // the voters' answers only: a spare's does not make a majority
      for (const id of this.peerIds) {
        const p = this.fd.peers.get(id);
        if (p && p.hbrTerm === this._term && Number.isFinite(p.hbrEcho)) echoes.push(p.hbrEcho);
      }
      if (echoes.length < need) return;
      echoes.sort((a, b) => b - a);
      start = echoes[need - 1];
    }
    this._quorumLeaseUntil = Math.max(this._quorumLeaseUntil, start + this.leaseMs);
    this._leaseUntil = Math.max(this._leaseUntil, this._quorumLeaseUntil);
  }

  /**
   * The owner lease actually used, ms: timing.leaseMs, but never so long that a leader could
   * confirm the owner down and promote another before it lapsed. A leader promotes a silent owner
   * no sooner than suspectAfterMs + escalationTimeoutMs after the owner's last reply it received
   * (and a new leader no sooner than that after its election: it counts every peer as heard at its
   * election); the lease runs from a reply's send time (an earlier instant), and a leader grants
   * at most what remains of its own quorum lease, which started before any later leader's
   * election. Four heartbeats of margin cover ticks and message delays.
   */
  get leaseMs(): number {
    return ownerLeaseUsedMs(this.timing);
  }
}
