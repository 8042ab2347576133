import { assignAll } from '../partitioning.js';
import { sameMember, supersedes, type ClusterMsg, type Health, type Member, type PartitionReport, type RuntimeEntry } from '../cluster-messages.js';
import type { Election, VoteState } from './election.js';
import { decideFailover, type FailoverView } from './failover-policy.js';
import type { NodeContext } from './partition-state.js';
import type { PeerTable } from './peer-table.js';
import type { LeaderRequest } from './replication.js';
import type { MemberBallot } from './member-consensus.js';

/** A runtime entry proposed and not yet committed: who accepted it, since when (ms). */
export interface Proposal {
  entry: RuntimeEntry;
  oks: Set<string>;
  at: number;
}

/** What a leader keeps of its term: heartbeat rounds, proposals in flight, per-partition transition times (ms). */
export interface LeaderState {
  since: number;
  hbSeq: number;
  lastHbAt: number;
  inflight: Map<string, Proposal>;
  lastProposed: Map<string, number>;
  lastTransition: Map<string, number>;
  unavailableSince: Map<string, number>;
  handoffSince: Map<string, number>;
}

/** Proposal abandoned when no majority accepted it within this long (ms). */
const PROPOSE_TIMEOUT_MS = 1_000;

/**
 * What the leader's runtime-map work needs of its node: identity and configuration, the election
 * (term, role, leases, stepping down) and the peer table, the partitions and the runtime map the
 * node holds, its counters, and the node-side handlers a commit or a proposal of its own goes
 * through (learnCommitted, refreshRole) and its own copy's report.
 */
export interface RuntimeMapHost extends NodeContext {
  readonly env: { now(): number; send(to: string, msg: ClusterMsg): void; log(event: string, fields?: Record<string, unknown>): void };
  /** Every peer: voters and spares (all hear heartbeats, proposals and commits). */
  readonly peerIds: readonly string[];
  /** The voting peers: only their acceptance and answers make a majority. */
  readonly voterPeerIds: ReadonlySet<string>;
  /** A majority of the voters (this node included). */
  readonly majority: number;
  /** The committed member set, sent with every heartbeat (core/member-consensus.ts). */
  members(): MemberBallot;
  /** The nodes a regeneration may place copies on (members and joiners). */
  placementNodes(): string[];
  /** After the round's failover decisions, with a fresh majority: membership and migrations (core/membership-role.ts). */
  afterDecisions(now: number): void;
  readonly el: Election;
  readonly fd: PeerTable;
  /** The leader records its own proposals as accepted. */
  readonly accepted: Map<string, RuntimeEntry>;
  readonly counters: { failovers: number; promotions: number };
  /** Accept a committed entry if it supersedes the node's (epoch, then term). */
  learnCommitted(e: RuntimeEntry): void;
  /** Re-derive the node's role in the partition from the entries it holds. */
  refreshRole(pkey: string): void;
  /** This node's own report of its copy of the partition. */
  ownReport(pkey: string): PartitionReport;
}

/**
 * The leader's side of the runtime map (DESIGN.md §2, seed 002): taking office (the voters' maps
 * merged, accepted entries re-proposed), heartbeats carrying the committed map and gathering the
 * members' reports, proposals at each partition's next epoch committed by a majority, the
 * periodic decisions (bootstrap, re-proposal, the failover policy of failover-policy.ts), and the
 * requests of partitions' actives (in-sync additions and drops, handoff, recovery). Times are the
 * node's clock, ms.
 */
export class RuntimeMapLeader {
  private readonly h: RuntimeMapHost;
  /** This node's leadership of the current term; null when it does not lead. */
  private leader: LeaderState | null = null;

  constructor(host: RuntimeMapHost) {
    this.h = host;
  }

  /** The leader's state while this node leads (admin requests read what is in flight), else null. */
  get state(): LeaderState | null {
    return this.leader;
  }

  /** No longer leading: forget the term's state. */
  stepDown(): void {
    this.leader = null;
  }

  /** Elected (core/election.ts): leader state, the runtime map merged from the voters' maps, re-proposals, first heartbeats. */
  elected(now: number, voteStates: VoteState[]): void {
    const ls: LeaderState = {
      since: now,
      hbSeq: 0,
      lastHbAt: -Infinity,
      inflight: new Map(),
      lastProposed: new Map(),
      lastTransition: new Map(),
      unavailableSince: new Map(),
      handoffSince: new Map(),
    };
    this.leader = ls;
    // Start from every committed decision: merge what a majority accepted and committed.
    const reproposals: RuntimeEntry[] = [];
    for (const pkey of this.h.parts.keys()) {
      let hiAcc: RuntimeEntry | undefined;
      let hiCom: RuntimeEntry | undefined;
      for (const vs of voteStates) {
        // the highest ballot: epoch, then term (Paxos). Two entries accepted at one epoch by
        // different terms (a cut-off leader's proposal that only it accepted, and the later
        // leader's, committed by a majority) are not a tie: the later term's may have committed,
        // the earlier one never did (make sim RUNS=2000 SEED=4040, run 1408: the cut-off old
        // leader, elected again, re-proposed its own epoch-2 entry naming itself, over the
        // committed epoch 2 of its successor: the successor's acks at epoch 2 were superseded)
        for (const e of vs.accepted) if (e.pkey === pkey && (!hiAcc || supersedes(e, hiAcc))) hiAcc = e;
        for (const e of vs.committed) if (e.pkey === pkey && (!hiCom || supersedes(e, hiCom))) hiCom = e;
      }
      if (hiCom) this.h.learnCommitted(hiCom);
      if (hiAcc) ls.lastProposed.set(pkey, hiAcc.epoch);
      if (hiAcc && (!hiCom || hiAcc.epoch > hiCom.epoch)) reproposals.push(this.reproposal(hiAcc, hiCom));
      ls.lastTransition.set(pkey, now);
      const c = this.h.committed.get(pkey);
      if (c && c.health === 'Unavailable') ls.unavailableSince.set(pkey, now);
      if (c && c.handoffTo) ls.handoffSince.set(pkey, now);
    }
    this.h.env.log('leader', { term: this.h.el.term, reproposals: reproposals.length });
    for (const p of this.h.fd.peers.values()) {
      // liveness grace: count every peer as heard at the election. A silent owner is then
      // confirmed down no sooner than suspectAfterMs + escalationTimeoutMs from now, after any
      // lease an earlier leader granted it has lapsed (see leaseMs)
      p.lastReply = Math.max(p.lastReply, now);
      p.hbrTerm = -1;
      p.hbrEcho = -Infinity;
    }
    this.h.el.resetQuorumLease();
    for (const e of reproposals) this.propose(e, false, now);
    this.sendHeartbeats(now);
  }

  sendHeartbeats(now: number): void {
    const ls = this.leader!;
    ls.lastHbAt = now;
    ls.hbSeq++;
    const committed = [...this.h.committed.values()];
    const leaseLeft = this.h.el.quorumLeaseUntil - now;
    const members = this.h.members();
    const deposing = this.deposedOwners();
    for (const id of this.h.peerIds) {
      const p = this.h.fd.peers.get(id)!;
      const mine = p.hbrTerm === this.h.el.term;
      // no owner lease for a node this leader is deposing: it decided once the node's last lease
      // had lapsed, and a lease granted since (the node answering again before the change commits)
      // would let it acknowledge writes its successor never sees (make sim MEMBERSHIP=1 RUNS=1000
      // SEED=7, run 801: an async owner cut off, confirmed down and failed over, reconnected and
      // acked under a fresh lease until the re-proposed failover committed)
      const lease = deposing.has(id) ? 0 : leaseLeft;
      this.h.env.send(id, { t: 'hb', term: this.h.el.term, seq: ls.hbSeq, committed, at: now, echo: mine ? p.hbrAt : -1, echoInc: mine ? p.hbrInc : '', leaseLeft: lease, members });
    }
  }

  /**
   * The nodes this leader is deposing: the active of a committed entry whose accepted successor
   * here (a proposal in flight, or one to be proposed again) names another active or none.
   */
  private deposedOwners(): Set<string> {
    const out = new Set<string>();
    for (const [pkey, acc] of this.h.accepted) {
      const c = this.h.committed.get(pkey);
      if (!c?.active || !supersedes(acc, c)) continue;
      if (!acc.active || acc.active.node !== c.active.node) out.add(c.active.node);
    }
    return out;
  }

  onHeartbeatReply(from: string, msg: Extract<ClusterMsg, { t: 'hb-r' }>, now: number): void {
    if (this.h.el.role !== 'leader' || msg.term !== this.h.el.term) return;
    const peer = this.h.fd.peers.get(from)!;
    peer.lastReply = now;
    this.h.fd.noteIncarnation(from, msg.inc);
    peer.reports = new Map(msg.reports.map((r) => [r.pkey, r]));
    peer.reportTerm = msg.term;
    peer.reportAt = now;
    peer.reportEcho = msg.echo;
    // `at` values compare only within one incarnation's clock (a restart starts it again)
    if (peer.hbrTerm !== this.h.el.term || peer.hbrInc !== msg.inc || msg.at > peer.hbrAt) {
      peer.hbrTerm = this.h.el.term;
      peer.hbrInc = msg.inc;
      peer.hbrAt = msg.at;
    }
    if (msg.echo > peer.hbrEcho) peer.hbrEcho = msg.echo;
    this.h.el.renewQuorumLease();
  }

  onProposeReply(from: string, msg: Extract<ClusterMsg, { t: 'propose-r' }>, now: number): void {
    if (this.h.el.role !== 'leader' || msg.term !== this.h.el.term) return;
    const prop = this.leader!.inflight.get(msg.pkey);
    if (!prop || prop.entry.epoch !== msg.epoch) return;
    // a spare's acceptance fences it (it acts on what it accepted) but counts for nothing
    if (!msg.ok || !this.h.voterPeerIds.has(from)) return;
    prop.oks.add(from);
    if (prop.oks.size >= this.h.majority) this.commitProposal(prop, now);
  }

  // ───────────────────────────── leader: proposals ─────────────────────────────

  /**
   * Proposes a change of one partition at its next epoch (the generator never regresses:
   * strictly above every epoch committed, accepted or proposed that this leader knows, and every
   * epoch a node reported accepting this term).
   */
  propose(base: RuntimeEntry, newTenure: boolean, now: number): void {
    const ls = this.leader;
    if (!ls || ls.inflight.has(base.pkey)) return;
    const cur = this.h.committed.get(base.pkey);
    const acc = this.h.accepted.get(base.pkey);
    let reported = 0;
    for (const p of this.h.fd.peers.values()) {
      const r = p.reportTerm === this.h.el.term ? p.reports.get(base.pkey) : undefined;
      if (r && r.accepted > reported) reported = r.accepted;
    }
    const epoch = Math.max(cur?.epoch ?? 0, acc?.epoch ?? 0, ls.lastProposed.get(base.pkey) ?? 0, reported) + 1;
    const entry: RuntimeEntry = { ...base, epoch, term: this.h.el.term, activeSince: newTenure ? epoch : base.activeSince };
    // the holder's tenure means something only while there is a holder to sync from
    if (!entry.syncFrom || entry.health !== 'Recovering') entry.syncTag = null;
    ls.lastProposed.set(base.pkey, epoch);
    const prop: Proposal = { entry, oks: new Set([this.h.id]), at: now };
    ls.inflight.set(base.pkey, prop);
    this.h.accepted.set(entry.pkey, entry);
    this.h.refreshRole(entry.pkey);
    this.h.env.log('propose', describeEntry(entry));
    for (const p of this.h.peerIds) this.h.env.send(p, { t: 'propose', term: this.h.el.term, entry });
    if (prop.oks.size >= this.h.majority) this.commitProposal(prop, now);
  }

  private commitProposal(prop: Proposal, now: number): void {
    const ls = this.leader!;
    const e = prop.entry;
    ls.inflight.delete(e.pkey);
    const prev = this.h.committed.get(e.pkey);
    ls.lastTransition.set(e.pkey, now);
    if (e.health === 'Unavailable') {
      if (!prev || prev.health !== 'Unavailable') ls.unavailableSince.set(e.pkey, now);
    } else ls.unavailableSince.delete(e.pkey);
    if (e.handoffTo) {
      if (!prev || !prev.handoffTo) ls.handoffSince.set(e.pkey, now);
    } else ls.handoffSince.delete(e.pkey);
    if (prev && e.active && (!prev.active || !sameMember(prev.active, e.active))) this.h.counters.promotions++;
    this.h.env.log('commit', describeEntry(e));
    this.h.learnCommitted(e);
    for (const p of this.h.peerIds) this.h.env.send(p, { t: 'commit', term: this.h.el.term, entry: e });
  }

  leaderTick(now: number): void {
    const ls = this.leader;
    if (!ls) return;
    const t = this.h.config.timing;
    // check quorum: a leader that cannot hear a majority steps down (a minority never decides)
    let heard = 1;
    for (const [id, p] of this.h.fd.peers) if (this.h.voterPeerIds.has(id) && now - p.lastReply < t.electionTimeoutMaxMs) heard++;
    if (heard >= this.h.majority) {
      this.h.el.heardMajority(now);
      if (this.h.majority === 1) this.h.el.renewQuorumLease();
    } else if (now - ls.since > t.electionTimeoutMaxMs) {
      this.h.el.stepDown('lost quorum');
      return;
    }
    if (now - ls.lastHbAt >= t.heartbeatMs) this.sendHeartbeats(now);
    for (const [pkey, prop] of ls.inflight) if (now - prop.at > PROPOSE_TIMEOUT_MS) ls.inflight.delete(pkey);
    if (heard < this.h.majority) return;
    // decide only from a fresh view (make sim run 1346, seed 4040): the quorum check above counts a
    // peer heard up to electionTimeoutMaxMs ago, the very window after which a peer is suspected,
    // so a leader cut off from the majority side passes through a moment where the far side's
    // first-silenced members are suspected while a later-silenced one still counts: it then drops
    // live replicas from an in-sync set, leaving only a member it has not heard from either (a
    // proposal a later leader may adopt and commit, Raft's re-proposal of accepted entries). A
    // decision needs a majority that answered a heartbeat sent within freshViewMs; the view of a
    // new leader starts at its election (hbrEcho is reset then).
    if (!this.h.fd.freshMajority(now)) return;
    const bootstrapReady = this.bootstrapReady(now);
    for (const a of assignAll(this.h.config)) {
      const pkey = `${a.store}/${a.partition}`;
      if (ls.inflight.has(pkey)) continue;
      const e = this.h.committed.get(pkey);
      // an accepted entry above the committed one (its proposal was lost with a connection and
      // timed out) is proposed again before anything new is decided, as a new leader re-proposes
      // what it finds accepted: nodes that accepted it already act on it (a deposed active stops
      // at once), so it must reach a commit
      const acc = this.h.accepted.get(pkey);
      if (acc && (!e || acc.epoch > e.epoch)) {
        this.propose(this.reproposal(acc, e), false, now);
        continue;
      }
      if (!e) {
        if (bootstrapReady) this.bootstrap(pkey, a.store, a.partition, a.replicas, now);
        continue;
      }
      this.decide(e, now);
    }
    this.h.afterDecisions(now);
  }

  /**
   * An accepted entry above the committed `base`, as this leader proposes it again (Raft: a new
   * leader adopts what it finds accepted): without the in-sync members it adds
   * ({@link withoutAdditions}), and without the members it drops when every member it keeps is
   * provably gone (refused probe, new incarnation) to this leader. Such a shrink was decided from a
   * view of the cluster this leader knows to be wrong (make sim run 1346: a cut-off leader dropped
   * two live replicas, keeping an owner that had crashed); committed as is, it leaves no copy to
   * promote, and the partition is regenerated empty. Keeping the dropped members is safe: a
   * member dropped for lagging is promoted only when no member holds more of the deposed owner's
   * log (promote compares revisions), and the copies the shrink kept are gone whatever we do.
   */
  private reproposal(acc: RuntimeEntry, base: RuntimeEntry | undefined): RuntimeEntry {
    const e = withoutAdditions(acc, base);
    if (!base || e.inSync.length === 0 || !e.inSync.every((m) => this.h.fd.gone(m))) return e;
    const dropped = base.inSync.filter((m) => !this.h.fd.gone(m) && !e.inSync.some((x) => sameMember(x, m)));
    if (dropped.length === 0) return e;
    this.h.env.log('reproposal-keeps', { pkey: e.pkey, kept: dropped.map((m) => m.node).join(','), gone: e.inSync.map((m) => m.node).join(',') });
    return { ...e, inSync: [...e.inSync, ...dropped], health: e.health === 'Healthy' ? 'Degraded' : e.health };
  }

  private bootstrapReady(now: number): boolean {
    for (const p of this.h.fd.peers.values()) if (p.inc === null && now - this.leader!.since < this.h.config.timing.electionTimeoutMaxMs) return false;
    return true;
  }

  private bootstrap(pkey: string, store: string, partition: number, replicas: string[], now: number): void {
    const live = replicas.filter((n) => this.h.fd.nodeLive(n, now));
    if (live.length === 0) return;
    const members = live.map((n) => ({ node: n, inc: this.h.fd.incOf(n)! }));
    const entry: RuntimeEntry = {
      pkey,
      store,
      partition,
      epoch: 0,
      term: this.h.el.term,
      active: members[0],
      activeSince: 0,
      health: members.length === replicas.length ? 'Healthy' : 'Degraded',
      inSync: members,
      handoffTo: null,
      syncFrom: null,
      replicas,
      mapVersion: 1,
    };
    this.propose(entry, true, now);
  }

  /** Fresh, term-matched report of a member's copy (a stale report does not count, seed 002). */
  private freshReport(m: Member, pkey: string, now: number): PartitionReport | null {
    if (m.node === this.h.id) return this.h.ownReport(pkey);
    const p = this.h.fd.peers.get(m.node)!;
    if (p.reportTerm !== this.h.el.term || p.inc !== m.inc || now - p.reportAt > this.h.config.timing.suspectAfterMs) return null;
    return p.reports.get(pkey) ?? null;
  }

  /** The leader's decision for one partition, one change at a time (seed 002 steps 1-5; the policy: core/failover-policy.ts). */
  private decide(e: RuntimeEntry, now: number): void {
    const d = decideFailover(e, this.failoverView, now);
    if (d.failover) this.h.counters.failovers++;
    for (const [event, fields] of d.logs) this.h.env.log(event, fields);
    if (d.proposal) this.propose(d.proposal.entry, d.proposal.newTenure, now);
  }

  /** The leader's knowledge as the failover policy reads it (failover-policy.ts FailoverView): this node's peer table and leader bookkeeping. */
  private readonly failoverView: FailoverView = this.makeFailoverView();

  private makeFailoverView(): FailoverView {
    const core = this;
    return {
      get self() {
        return core.h.id;
      },
      get timing() {
        return core.h.config.timing;
      },
      get selfTestBug() {
        return core.h.config.selfTestBug;
      },
      get nodeIds() {
        return core.h.placementNodes();
      },
      replicationFactor: (pkey) => this.h.parts.get(pkey)!.store.replicationFactor,
      incOf: (node) => this.h.fd.incOf(node),
      nodeLive: (node, now) => this.h.fd.nodeLive(node, now),
      gone: (m) => this.h.fd.gone(m),
      live: (m, now) => this.h.fd.live(m, now),
      confirmedDown: (m) => this.h.fd.confirmedDown(m),
      suspected: (node, now) => this.h.fd.suspected(node, now),
      confirmable: (m, now) => this.h.fd.confirmable(m, now),
      freshReport: (m, pkey, now) => this.freshReport(m, pkey, now),
      peerReports: (pkey, now) => {
        const out: PartitionReport[] = [];
        for (const [n, p] of this.h.fd.peers) {
          const r = p.inc ? this.freshReport({ node: n, inc: p.inc }, pkey, now) : null;
          if (r) out.push(r);
        }
        return out;
      },
      reportPredatesDeath: (node, deposed) => {
        const downAt = deposed && deposed.node !== this.h.id ? (this.h.fd.peers.get(deposed.node)?.downAt ?? -Infinity) : -Infinity;
        const p = this.h.fd.peers.get(node)!;
        return p.reportTerm !== this.h.el.term || p.reportEcho <= downAt;
      },
      lastTransitionAt: (pkey) => this.leader!.lastTransition.get(pkey),
      unavailableSince: (pkey) => this.leader!.unavailableSince.get(pkey),
      handoffSince: (pkey) => this.leader!.handoffSince.get(pkey),
    };
  }

  onLeaderRequest(from: string, msg: LeaderRequest, now: number): void {
    if (this.h.el.role !== 'leader' || msg.term !== this.h.el.term) return;
    const ls = this.leader!;
    const e = this.h.committed.get(msg.pkey);
    if (!e || ls.inflight.has(msg.pkey) || !e.active || e.active.node !== from || this.h.fd.incOf(from) !== e.active.inc) return;
    switch (msg.t) {
      case 'req-add': {
        const m = msg.member;
        // only at the epoch the active asked at: a later commit settled any addition asked before
        if (msg.epoch !== e.epoch || !e.replicas.includes(m.node) || !this.h.fd.live(m, now) || e.inSync.some((x) => sameMember(x, m))) return;
        const inSync = [...e.inSync.filter((x) => x.node !== m.node), m];
        return this.propose({ ...e, inSync }, false, now);
      }
      case 'req-drop': {
        const m = msg.member;
        if (sameMember(m, e.active)) return;
        // judged against the leader's current view, not the requester's: a request made at an
        // earlier epoch, or from a view older than freshViewMs (`seen`: the latest heartbeat of ours
        // the owner had received; a request queued in a cut link, delivered after the owner was
        // killed, is as old as that), or by an owner whose NodeLeft we are re-checking, is ignored
        // (the owner asks again every RETRY_MS while it still wants it). Found by the insync
        // helper: a killed owner's queued request to drop a lagging replica, delivered after a cut
        // healed, committed in-sync = [the dead owner] ~9 ms before its probe came back refused.
        if (msg.epoch !== e.epoch || !(now - msg.seen < this.h.fd.freshViewMs) || !this.h.fd.confirmable(e.active, now)) return;
        if (!e.inSync.some((x) => sameMember(x, m))) {
          // an addition the active asked for and no longer wants: commit the entry again at a new
          // epoch, which settles it (no req-add of an earlier epoch is taken any more)
          if (msg.epoch === e.epoch) this.propose({ ...e }, false, now);
          return;
        }
        const inSync = e.inSync.filter((x) => !sameMember(x, m));
        const health: Health = e.health === 'Recovering' ? 'Recovering' : 'Degraded';
        const handoffTo = e.handoffTo && !sameMember(e.handoffTo, m) ? e.handoffTo : null;
        const syncFrom = e.syncFrom && !sameMember(e.syncFrom, m) ? e.syncFrom : null;
        return this.propose({ ...e, inSync, health: syncFrom || health !== 'Recovering' ? health : 'Degraded', handoffTo, syncFrom }, false, now);
      }
      case 'handoff-ready': {
        if (!e.handoffTo || msg.epoch !== e.epoch || !this.h.fd.live(e.handoffTo, now) || !e.inSync.some((x) => sameMember(x, e.handoffTo))) return;
        this.h.env.log('handoff', { pkey: e.pkey, from: e.active.node, to: e.handoffTo.node, rev: msg.rev });
        return this.propose({ ...e, active: e.handoffTo, handoffTo: null, migrating: false }, true, now);
      }
      case 'recovered': {
        if (e.health !== 'Recovering' || msg.epoch !== e.epoch) return;
        return this.propose({ ...e, health: 'Degraded', syncFrom: null }, false, now);
      }
    }
  }
}

/**
 * An accepted entry proposed again (it never committed): without the in-sync members it adds to
 * the committed entry `base`. An addition is only safe while the active waits for that member
 * (pendingAdds), which it stops doing once a later entry commits; no node acts on an addition
 * before it commits, so leaving it out changes nothing anyone relied on.
 */
function withoutAdditions(acc: RuntimeEntry, base: RuntimeEntry | undefined): RuntimeEntry {
  if (!base) return acc;
  const inSync = acc.inSync.filter((m) => sameMember(m, acc.active) || base.inSync.some((b) => sameMember(b, m)));
  if (inSync.length === acc.inSync.length) return acc;
  return { ...acc, inSync, health: acc.health === 'Healthy' ? 'Degraded' : acc.health };
}

function describeEntry(e: RuntimeEntry): Record<string, unknown> {
  return {
    pkey: e.pkey,
    epoch: e.epoch,
    term: e.term,
    active: e.active ? e.active.node : null,
    health: e.health,
    inSync: e.inSync.map((m) => m.node).join(','),
    handoffTo: e.handoffTo?.node ?? null,
    syncFrom: e.syncFrom?.node ?? null,
    mapVersion: e.mapVersion,
    ...(e.policy ? { policyVersion: e.policy.version } : {}),
  };
}
