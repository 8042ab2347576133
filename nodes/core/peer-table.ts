import type { TimingConfig } from '../cluster-config.js';
import type { Member, PartitionReport } from '../cluster-messages.js';

/** What a node knows of one peer: liveness evidence, incarnations, its latest reports (seed 002 detection). */
export interface PeerView {
  /** Last time any message arrived from the peer. */
  lastHeard: number;
  /** Last heartbeat reply (leader only). */
  lastReply: number;
  inc: string | null;
  term: number;
  /** Fresh, term-matched reports (possession proof input). */
  reports: Map<string, PartitionReport>;
  reportTerm: number;
  reportAt: number;
  /** Our clock when we sent the heartbeat the latest report answered (the report holds the peer's state after that). */
  reportEcho: number;
  /** Our clock when we last learnt the peer down (an incarnation gone, or confirmed silent). */
  downAt: number;
  suspectedSince: number | null;
  /** Silent past the escalation timeout (seed 002); cleared when the peer answers again. */
  silentConfirmed: boolean;
  /** Incarnations known to be gone (refused probe, or superseded by a newer incarnation). */
  deadIncs: Set<string>;
  /**
   * Leader: the term, incarnation, follower-clock `at` (that incarnation's clock) and leader-clock
   * `echo` of the peer's latest hb-r.
   */
  hbrTerm: number;
  hbrInc: string;
  hbrAt: number;
  hbrEcho: number;
}

/** What the peer table needs from its node: the clock (ms), the log, the current term. */
export interface PeerTableDeps {
  now(): number;
  log(event: string, fields?: Record<string, unknown>): void;
  term(): number;
}

/**
 * Failure detection (seed 002 step 1, DESIGN.md §2): one node's table of its peers, and the
 * liveness questions the leader asks of it. A peer is suspected after `suspectAfterMs` of silence,
 * confirmed down only after `escalationTimeoutMs` more (never on suspicion alone), and an
 * incarnation is gone for good when a probe was refused or a newer incarnation spoke. The node
 * writes the evidence (heartbeat replies, reports, probe answers) into {@link peers}; this class
 * reads it. Times are the node's monotonic clock, ms.
 */
export class PeerTable {
  /** The peers by node id (every configured node but this one). */
  readonly peers = new Map<string, PeerView>();
  /** Peers whose NodeLeft is being re-checked by a probe: node id -> the incarnation probed. */
  readonly probing = new Map<string, string>();
  private readonly id: string;
  private readonly inc: string;
  private readonly voterPeerIds: readonly string[];
  private readonly majority: number;
  private readonly timing: TimingConfig;
  private readonly deps: PeerTableDeps;

  /**
   * `self`: this node's id and incarnation; `peerIds`: the other nodes; `majority`: of the voters;
   * `voterPeerIds`: the other nodes that vote (cluster-config.ts: spares do not), all of `peerIds`
   * when absent. Only voters count toward {@link freshMajority}.
   */
  constructor(self: Member, peerIds: readonly string[], majority: number, timing: TimingConfig, deps: PeerTableDeps, voterPeerIds: readonly string[] = peerIds) {
    this.id = self.node;
    this.inc = self.inc;
    this.voterPeerIds = voterPeerIds;
    this.majority = majority;
    this.timing = timing;
    this.deps = deps;
    for (const p of peerIds) {
      this.peers.set(p, {
        lastHeard: -Infinity,
        lastReply: -Infinity,
        inc: null,
        term: 0,
        reports: new Map(),
        reportTerm: -1,
        reportAt: -Infinity,
        reportEcho: -Infinity,
        downAt: -Infinity,
        suspectedSince: null,
        silentConfirmed: false,
        deadIncs: new Set(),
        hbrTerm: -1,
        hbrInc: '',
        hbrAt: -1,
        hbrEcho: -Infinity,
      });
    }
  }

  /**
   * How recent a leader's view must be to change the runtime map, ms: two heartbeats inside the
   * suspicion window, so a peer counted in the majority was heard at least two heartbeat rounds
   * after any peer suspected at the same moment fell silent (a cut-off leader never sees both).
   */
  get freshViewMs(): number {
    const t = this.timing;
    return Math.max(t.heartbeatMs, t.suspectAfterMs - 2 * t.heartbeatMs);
  }

  /**
   * Leader: a majority (ourselves included) answered a heartbeat of this term sent within
   * {@link freshViewMs} (the quorum lease's own evidence, {@link renewQuorumLease}). DESIGN.md §2,
   * leader and ownership decisions: "a leader without a live majority changes nothing"; live is
   * read as heard within the fresh view, not within the suspicion window.
   */
  freshMajority(now: number): boolean {
    let n = 1;
    for (const id of this.voterPeerIds) if (this.freshlyHeard(id, now)) n++;
    return n >= this.majority;
  }

  /** Leader: the peer's latest reply of this term answered a heartbeat sent within freshViewMs, and no NodeLeft of it is being re-checked. */
  freshlyHeard(node: string, now: number): boolean {
    const p = this.peers.get(node);
    if (!p || p.inc === null || p.deadIncs.has(p.inc) || this.probing.has(node)) return false;
    return p.hbrTerm === this.deps.term() && p.hbrInc === p.inc && now - p.hbrEcho < this.freshViewMs;
  }

  /**
   * Leader: may the member be relied on as the one copy left in an in-sync set: ourselves, or a
   * live incarnation heard freshly ({@link freshlyHeard}). A shrink of the in-sync set must keep
   * at least one such member (a bug found by a NodeCore test: a killed owner's queued req-drop
   * left in-sync = [that dead owner], then the partition was regenerated empty).
   */
  confirmable(m: Member, now: number): boolean {
    if (m.node === this.id) return m.inc === this.inc;
    return this.live(m, now) && this.freshlyHeard(m.node, now);
  }

  /** The incarnation known for a node (this node's own for itself), or null before it spoke. */
  incOf(node: string): string | null {
    return node === this.id ? this.inc : (this.peers.get(node)?.inc ?? null);
  }

  /**
   * The node answers (the leader heard it within the suspicion window), is not confirmed silent,
   * and its current incarnation is not known to be gone.
   */
  nodeLive(node: string, now: number): boolean {
    if (node === this.id) return true;
    const p = this.peers.get(node);
    if (!p || p.inc === null || p.deadIncs.has(p.inc)) return false;
    return !p.silentConfirmed && now - p.lastReply < this.timing.suspectAfterMs;
  }

  /** This incarnation is gone for good: a refused probe, or a newer incarnation of the node answered. */
  gone(m: Member): boolean {
    if (m.node === this.id) return m.inc !== this.inc;
    const p = this.peers.get(m.node);
    if (!p) return true;
    return p.deadIncs.has(m.inc) || (p.inc !== null && p.inc !== m.inc);
  }

  /** The node's current incarnation when it is {@link live}, else null (admin requests, migrations). */
  liveMember(node: string, now: number): Member | null {
    const inc = this.incOf(node);
    if (inc === null) return null;
    const m = { node, inc };
    return this.live(m, now) ? m : null;
  }

  /** Not gone, the node live, and this is its current incarnation. */
  live(m: Member, now: number): boolean {
    return !this.gone(m) && this.nodeLive(m.node, now) && this.incOf(m.node) === m.inc;
  }

  /**
   * Confirmed down (seed 002; DESIGN.md §2 failover: "a silent owner is suspected first and
   * confirmed only after the escalation timeout"): gone, or silent past the escalation timeout.
   * Never on suspicion alone.
   */
  confirmedDown(m: Member): boolean {
    if (this.gone(m)) return true;
    if (m.node === this.id) return false;
    return this.peers.get(m.node)!.silentConfirmed;
  }

  /** Silent past the suspicion window (never this node). */
  suspected(node: string, now: number): boolean {
    if (node === this.id) return false;
    const p = this.peers.get(node);
    return !p || now - p.lastReply >= this.timing.suspectAfterMs;
  }

  /** Leader: suspicion and escalation (logs `suspect`, `confirm-down`); a peer that answers again is cleared. */
  updateSuspicion(now: number): void {
    const t = this.timing;
    for (const [id, p] of this.peers) {
      if (now - p.lastReply >= t.suspectAfterMs) {
        if (p.suspectedSince === null) {
          p.suspectedSince = now;
          this.deps.log('suspect', { node: id });
        } else if (!p.silentConfirmed && now - p.suspectedSince >= t.escalationTimeoutMs) {
          p.silentConfirmed = true;
          p.downAt = now;
          this.deps.log('confirm-down', { node: id, reason: 'RuntimeOwnershipSuspectEscalationTimeout' });
        }
      } else if (p.suspectedSince !== null) {
        p.suspectedSince = null;
        p.silentConfirmed = false;
      }
    }
  }

  /** A peer speaks as incarnation `inc` (never one in deadIncs: onMessage dropped those). */
  noteIncarnation(node: string, inc: string): void {
    const peer = this.peers.get(node);
    if (!peer) return;
    if (peer.inc !== null && peer.inc !== inc) {
      peer.deadIncs.add(peer.inc);
      peer.downAt = this.deps.now();
      this.deps.log('incarnation', { node, old: peer.inc, inc });
    }
    peer.inc = inc;
  }
}
