import { sameMember, tenureTag, type ClusterMsg, type RuntimeEntry } from '../cluster-messages.js';
import type { Election } from './election.js';
import type { KvStatus } from '../kv-status.js';
import { FOLLOW_STALE_MS, readLeased, RETRY_MS, type FollowerLink, type LocalPartition, type NodeContext, type PendingWrite } from './partition-state.js';

/**
 * Read lease of a sync store's in-sync replica, ms: the longest a replica answers hedged reads
 * (seed 004 long-tail retry) after its latest acknowledgement the active echoed back. While it may
 * run, the active acknowledges no write that replica has not applied, so a replica read never
 * misses a write acknowledged before it (issue 10: reads are checked for every store).
 */
export const REPLICA_READ_LEASE_MS = 500;

/** Replication keepalive period (ms); to a lagging follower it carries the last op, so it sees gaps. */
const REP_KEEPALIVE_MS = 200;

/** Leader requests a partition's active sends (req-add, req-drop, handoff-ready, recovered). */
export type LeaderRequest = Extract<ClusterMsg, { t: 'req-add' | 'req-drop' | 'handoff-ready' | 'recovered' }>;

/**
 * What replication needs of its node: identity, configuration, the partitions and the runtime
 * map it holds, the election's view (term, role, leader, latest heartbeat), counters, and the
 * data path's hooks (pending writes, indeterminate answers). Read-only except the partitions'
 * own state and the counters named.
 */
export interface ReplicationHost extends NodeContext {
  readonly env: { now(): number; send(to: string, msg: ClusterMsg): void; log(event: string, fields?: Record<string, unknown>): void };
  readonly counters: { staleEpochRefusals: { replication: number }; syncsServed: number; snapshotsInstalled: number };
  /** The node's election (core/election.ts): term, role, the leader it follows, the leader's last heartbeat, the owner lease. */
  readonly el: Pick<Election, 'term' | 'role' | 'leaderId' | 'hbSeen' | 'leaseUntil'>;
  hasPeer(node: string): boolean;
  /** Null when the active may serve now, else the status it answers (core/data-path.ts). */
  servingState(lp: LocalPartition): KvStatus | null;
  /** The committed entry naming this node's current incarnation active, or null. */
  activeEntry(pkey: string): RuntimeEntry | null;
  /** Acknowledge the pending writes the followers' acks now allow. */
  progressPending(lp: LocalPartition): void;
  answerIndeterminate(p: PendingWrite): void;
  selfTestBugHit(bug: string, pkey: string): void;
  /** The leader's handling of a request (this node leads: handled in place). */
  onLeaderRequest(from: string, msg: LeaderRequest, now: number): void;
}

/**
 * Replication and catch-up (DESIGN.md §2-§5; seed 002): the follower side (fenced op streams,
 * gaps, read leases, catch-up requests from an agreed (tenure, revision) position, installing a
 * snapshot or the log suffix) and the active side (follower links, serving catch-ups, the
 * possession-proof sync of a Recovering active, replication timeouts reported to the leader,
 * in-sync additions in two steps, failback readiness). Times are the node's clock, ms.
 */
export class Replication {
  private readonly h: ReplicationHost;

  constructor(host: ReplicationHost) {
    this.h = host;
  }

  /**
   * The active side's sends, once per event-loop turn: each streaming follower gets the ops queued
   * since the last flush, or a keepalive every REP_KEEPALIVE_MS (to a follower that has not acked
   * our head it carries our last op: one that lost ops with a connection then sees the gap and
   * catches up, where an empty keepalive would leave it behind for good), with a read lease where
   * {@link mayGrantReads} and the follower allow (hedged reads, seed 004).
   */
  flushStreams(now: number): void {
    for (const lp of this.h.parts.values()) {
      const act = lp.act;
      if (!act) continue;
      // looked up once per partition, not once per follower (this runs every event-loop turn)
      const e = this.h.committed.get(lp.pkey);
      let leasing: boolean | null = null;
      for (const f of act.followers.values()) {
        if (!f.streaming || (f.queue.length === 0 && now - f.lastSentAt < REP_KEEPALIVE_MS)) continue;
        const ops = f.queue.length === 0 && act.lastOp && f.acked < act.lastOp.rev ? [act.lastOp] : f.queue;
        let echo = -1;
        let leaseLeft = 0;
        if (e && f.ackAt >= 0 && e.inSync.some((m) => sameMember(m, f.member)) && (leasing ??= this.mayGrantReads(lp, now))) {
          echo = f.ackAt;
          leaseLeft = Math.min(REPLICA_READ_LEASE_MS, this.h.el.leaseUntil - now);
          f.grantUntil = Math.max(f.grantUntil, f.ackRecvAt + REPLICA_READ_LEASE_MS);
        }
        this.h.env.send(f.member.node, { t: 'rep', pkey: lp.pkey, epoch: e ? e.epoch : 0, tag: act.tag, ops, echo, leaseLeft });
        f.queue = [];
        f.lastSentAt = now;
      }
    }
  }

  /**
   * May the active grant (renew) read leases in this partition now: a sync store, we serve as
   * active (our own lease runs) and no handoff is about to commit. A follower gets one when it also
   * is an in-sync member by the committed entry under its incarnation and has acked (flushStreams).
   */
  private mayGrantReads(lp: LocalPartition, now: number): boolean {
    if (!readLeased(lp.store) || !lp.act || lp.act.handoffReady) return false;
    return this.h.servingState(lp) === null && this.h.el.leaseUntil > now;
  }

  onRep(from: string, msg: Extract<ClusterMsg, { t: 'rep' }>, now: number): void {
    const lp = this.h.parts.get(msg.pkey);
    if (!lp || lp.act || lp.followTag !== msg.tag) return;
    // fencing: only the active of the entry we accepted last, within its tenure, may feed us
    const a = this.h.accepted.get(msg.pkey);
    if (!a || !a.active || a.active.node !== from || tenureTag(a.active, a.activeSince) !== msg.tag || msg.epoch < a.activeSince) {
      this.h.counters.staleEpochRefusals.replication++;
      this.h.env.send(from, { t: 'rep-nack', pkey: msg.pkey, tag: msg.tag, reason: 'fenced' });
      // our copy is still a prefix of that tenure's log: report it so (a promotion may sync from
      // it, seed 002 possession proof), though we follow it no more
      lp.resumeTag = lp.followTag;
      lp.followTag = '';
      return;
    }
    lp.lastRepAt = now;
    const data = lp.data;
    for (const op of msg.ops) {
      if (op.rev <= data.revision) continue;
      if (op.rev !== data.revision + 1) {
        // a gap: ops were lost with a connection; catch up from our (tenure, revision)
        this.h.env.log('rep-gap', { pkey: msg.pkey, have: data.revision, got: op.rev });
        this.requestSync(lp, a, now, true);
        return;
      }
      data.apply(op);
    }
    if (msg.echo >= 0 && msg.leaseLeft > 0) {
      const until = msg.echo + Math.min(REPLICA_READ_LEASE_MS, msg.leaseLeft);
      if (!lp.readLease || lp.readLease.tag !== msg.tag) lp.readLease = { tag: msg.tag, until };
      else if (until > lp.readLease.until) lp.readLease.until = until;
    }
    this.h.env.send(from, { t: 'rep-ack', pkey: msg.pkey, tag: msg.tag, rev: data.revision, at: now, inc: this.h.inc });
  }

  onRepAck(from: string, msg: Extract<ClusterMsg, { t: 'rep-ack' }>, now: number): void {
    const lp = this.h.parts.get(msg.pkey);
    const act = lp?.act;
    if (!lp || !act || act.tag !== msg.tag) return;
    const f = act.followers.get(from);
    // an ack of an earlier incarnation of the follower (its clock, its data) is not this link's
    if (!f || f.member.inc !== msg.inc) return;
    if (msg.rev > f.acked) f.acked = msg.rev;
    if (msg.at > f.ackAt) {
      f.ackAt = msg.at;
      f.ackRecvAt = now;
    }
    this.h.progressPending(lp);
  }

  onRepNack(from: string, pkey: string, tag: string): void {
    const act = this.h.parts.get(pkey)?.act;
    if (!act || act.tag !== tag) return;
    const f = act.followers.get(from);
    if (f) f.streaming = false;
  }

  private requestSync(lp: LocalPartition, e: RuntimeEntry, now: number, keepPosition: boolean): void {
    const tag = tenureTag(e.active!, e.activeSince);
    let haveTag = keepPosition ? lp.followTag || lp.resumeTag || tag : lp.followTag;
    if (this.h.config.selfTestBug === 'fencing-off-by-one' && haveTag !== tag && this.h.accepted.get(lp.pkey)?.epoch === e.epoch) {
      // the deliberate bug: the owner's entry is at our own epoch, so our watermark is taken for
      // a position in its log, whatever tenure our copy followed
      this.h.selfTestBugHit('fencing-off-by-one', lp.pkey);
      haveTag = tag;
    }
    lp.resumeTag = haveTag;
    lp.resyncWanted = false;
    lp.followTag = '';
    lp.syncRequestedAt = now;
    this.h.env.send(e.active!.node, { t: 'sync-req', pkey: lp.pkey, inc: this.h.inc, tag, haveTag, haveRev: lp.data.revision, recovery: false });
  }

  onSyncReq(from: string, msg: Extract<ClusterMsg, { t: 'sync-req' }>, now: number): void {
    const lp = this.h.parts.get(msg.pkey);
    if (!lp) return;
    // the follower is the incarnation that asked: our own view of the peer may not have seen its
    // restart yet, and a link keyed by the old incarnation could never be added back in sync
    if (!this.h.hasPeer(from)) return;
    const fromInc = msg.inc;
    if (msg.recovery) {
      // a Recovering active asks the more complete holder for everything it has (possession
      // proof); the answer says which log our copy is a prefix of (holdTag) and which incarnation
      // holds it, so the active installs it only if it is still the copy the leader chose
      this.h.counters.syncsServed++;
      const holdTag = lp.act ? lp.act.tag : lp.followTag || lp.resumeTag;
      this.h.env.send(from, { t: 'sync-resp', pkey: msg.pkey, tag: msg.tag, rev: lp.data.revision, segs: lp.data.syncSince(-1), recovery: true, inc: this.h.inc, holdTag });
      return;
    }
    const act = lp.act;
    const e = this.h.activeEntry(msg.pkey);
    if (!act || !e || act.tag !== msg.tag || (e.health !== 'Healthy' && e.health !== 'Degraded')) return;
    if (!e.replicas.includes(from)) return;
    const haveRev = msg.haveTag === act.tag ? msg.haveRev : -1;
    const segs = lp.data.syncSince(haveRev);
    // the deliberate bug (partition-data.ts) acts on a catch-up from the op log with ops to send
    if (this.h.config.selfTestBug === 'catchup-skips-last-op' && haveRev >= 0 && lp.data.revision > haveRev && segs.some((x) => !x.snapshot)) this.h.selfTestBugHit('catchup-skips-last-op', lp.pkey);
    const prev = act.followers.get(from);
    const link: FollowerLink = {
      member: { node: from, inc: fromInc },
      streaming: true,
      acked: prev && prev.member.inc === fromInc ? prev.acked : -1,
      queue: [],
      lastSentAt: now,
      paceRev: -1,
      paceAt: -Infinity,
      ackAt: -1,
      ackRecvAt: -Infinity,
      // a read lease granted to the previous link of the same incarnation may still run
      grantUntil: prev && prev.member.inc === fromInc ? prev.grantUntil : -Infinity,
    };
    act.followers.set(from, link);
    this.h.counters.syncsServed++;
    this.h.env.send(from, { t: 'sync-resp', pkey: msg.pkey, tag: act.tag, rev: lp.data.revision, segs, recovery: false });
  }

  onSyncResp(from: string, msg: Extract<ClusterMsg, { t: 'sync-resp' }>, now: number): void {
    const lp = this.h.parts.get(msg.pkey);
    if (!lp) return;
    const e = this.h.committed.get(msg.pkey);
    if (!e || !e.active) return;
    if (msg.recovery) {
      if (!lp.act || e.health !== 'Recovering' || !e.syncFrom || e.syncFrom.node !== from || msg.tag !== lp.act.tag) return;
      // only the incarnation the leader chose (a restarted holder answers from an empty copy)
      if (msg.inc !== undefined && msg.inc !== e.syncFrom.inc) return;
      const own = lp.data.revision;
      if (e.syncTag) {
        // a holder outside the in-sync set: its copy must still be a prefix of the deposed
        // owner's log, which ours is a prefix of too (else wait: the leader sees its report and
        // falls back to Degraded); a copy no longer than ours adds nothing
        if (msg.holdTag !== e.syncTag) return;
        if (msg.rev > own) lp.data.installSync(msg.segs, msg.rev);
      } else {
        lp.data.installSync(msg.segs, Math.max(own, msg.rev));
      }
      this.h.counters.snapshotsInstalled++;
      lp.recoveredAtEpoch = e.epoch;
      this.h.env.log('recovered-from-holder', { pkey: msg.pkey, from, rev: msg.rev, own, heldKeys: lp.data.heldKeys });
      this.sendRecovered(lp, e, now);
      return;
    }
    if (lp.act || e.active.node !== from || tenureTag(e.active, e.activeSince) !== msg.tag) return;
    // fencing, as for a rep: once we accepted an entry naming another tenure, the deposed owner's
    // catch-up no longer feeds us (make sim RUNS=2000 SEED=4040 run 1944, with the fresh-view fixes:
    // a replica catching up from an owner confirmed down just after a cut healed installed its
    // answer after accepting the promotion of another member, and held writes the new active lacked)
    // Unless the entry we accepted names us: then we are the heir, not yet serving (lp.act is
    // null), and a longer prefix of the deposed owner's log is what the possession proof wants the
    // new owner to hold (seed 002 step 3; make power-sim RUNS=100 SEED=20261201 run 186: the leader
    // n3 promoted itself from reports in which n1 and n3 held the same prefix, the proposal reached
    // only n3 before a split; after the heal the deposed owner's catch-up brought n1 a write it had
    // acknowledged while cut off, n3 refused the same answer, and n3's re-elected term committed
    // the promotion: n3 served without the write in-sync n1 held).
    const a = this.h.accepted.get(msg.pkey);
    const heir = a?.active?.node === this.h.id && a.active.inc === this.h.inc;
    if (a && a.epoch > e.epoch && !heir && (!a.active || tenureTag(a.active, a.activeSince) !== msg.tag)) {
      this.h.counters.staleEpochRefusals.replication++;
      return;
    }
    if (msg.segs.some((s) => s.snapshot)) this.h.counters.snapshotsInstalled++;
    lp.data.installSync(msg.segs, msg.rev);
    lp.followTag = msg.tag;
    lp.resumeTag = '';
    lp.lastRepAt = now;
    this.h.env.send(from, { t: 'rep-ack', pkey: msg.pkey, tag: msg.tag, rev: lp.data.revision, at: now, inc: this.h.inc });
  }

  private sendRecovered(lp: LocalPartition, e: RuntimeEntry, now: number): void {
    if (!this.h.el.leaderId) return;
    lp.recoveredSentAt = now;
    this.sendToLeader({ t: 'recovered', term: this.h.el.term, pkey: lp.pkey, epoch: e.epoch, rev: lp.data.revision });
  }

  /**
   * req-drop's `seen`: the leader-clock time of the latest heartbeat of our term we received, or
   * `now` when we lead (our own clock is the leader's); -1 when we have none of this term.
   */
  private leaderViewAt(now: number): number {
    if (this.h.el.role === 'leader') return now;
    return this.h.el.hbSeen.term === this.h.el.term ? this.h.el.hbSeen.at : -1;
  }

  private sendToLeader(msg: ClusterMsg): void {
    if (!this.h.el.leaderId) return;
    if (this.h.el.leaderId === this.h.id) this.h.onLeaderRequest(this.h.id, msg as LeaderRequest, this.h.env.now());
    else this.h.env.send(this.h.el.leaderId, msg);
  }

  /** Per-partition timers: catch-up requests, replication timeouts, in-sync additions, handoff. */
  partitionTick(lp: LocalPartition, now: number): void {
    const e = this.h.committed.get(lp.pkey);
    if (!e) return;
    const act = lp.act;
    if (!act) {
      // a replica: follow the current tenure of the serving active
      if (!e.active || !e.replicas.includes(this.h.id) || sameMember(e.active, this.h.me)) return;
      if (e.health !== 'Healthy' && e.health !== 'Degraded') return;
      const tag = tenureTag(e.active, e.activeSince);
      if (lp.followTag === tag && !lp.resyncWanted && now - lp.lastRepAt < FOLLOW_STALE_MS) return;
      if (now - lp.syncRequestedAt < RETRY_MS) return;
      this.requestSync(lp, e, now, lp.followTag === tag || lp.resumeTag === tag);
      return;
    }
    const t = this.h.config.timing;
    // Recovering: pull from the more complete holder, then tell the leader
    if (e.health === 'Recovering' && e.syncFrom) {
      if (lp.recoveredAtEpoch === e.epoch) {
        if (now - lp.recoveredSentAt >= RETRY_MS) this.sendRecovered(lp, e, now);
      } else if (now - lp.syncRequestedAt >= RETRY_MS) {
        lp.syncRequestedAt = now;
        this.h.env.send(e.syncFrom.node, { t: 'sync-req', pkey: lp.pkey, inc: this.h.inc, tag: act.tag, haveTag: '', haveRev: -1, recovery: true });
      }
      return;
    }
    // read leases lapse with time: writes that waited only for them may go now
    if (act.pending.length > 0) this.h.progressPending(lp);
    // writes that waited too long for their replicas: the owner cannot tell their fate
    while (act.pending.length > 0 && now - act.pending[0].at > t.writeResolveTimeoutMs) this.h.answerIndeterminate(act.pending.shift()!);
    // replicas that do not keep up are reported to the leader (only it changes the in-sync set)
    if (act.opTimes.length > 0 && now - act.opTimes[0][1] > t.replicationTimeoutMs) {
      const [oldRev] = act.opTimes[0];
      for (const m of e.inSync) {
        if (m.node === this.h.id) continue;
        const f = act.followers.get(m.node);
        const acked = f && f.member.inc === m.inc ? f.acked : -1;
        if (acked >= oldRev) continue;
        if (now - (act.lastDropReq.get(m.node) ?? -Infinity) < RETRY_MS) continue;
        act.lastDropReq.set(m.node, now);
        this.h.env.log('replica-lagging', { pkey: lp.pkey, node: m.node, acked, need: oldRev });
        this.sendToLeader({ t: 'req-drop', term: this.h.el.term, pkey: lp.pkey, epoch: e.epoch, member: m, seen: this.leaderViewAt(now) });
      }
      for (const [node, pa] of act.pendingAdds) {
        const f = act.followers.get(node);
        if (f && f.member.inc === pa.member.inc && f.acked >= oldRev) continue;
        if (pa.reqEpoch < 0) {
          act.pendingAdds.delete(node);
          continue;
        }
        // an addition we asked for may still commit: ask the leader to settle it (a req-drop of a
        // member not in the set moves the epoch on), and wait for the follower until it is settled
        if (now - (act.lastDropReq.get(node) ?? -Infinity) < RETRY_MS) continue;
        act.lastDropReq.set(node, now);
        this.h.env.log('replica-lagging', { pkey: lp.pkey, node, acked: f && f.member.inc === pa.member.inc ? f.acked : -1, need: oldRev, adding: true });
        this.sendToLeader({ t: 'req-drop', term: this.h.el.term, pkey: lp.pkey, epoch: e.epoch, member: pa.member, seen: this.leaderViewAt(now) });
      }
      this.h.progressPending(lp);
    }
    // a committed entry above the epoch of our last req-add settles that addition: in the set, or
    // not (then it can no longer commit)
    for (const [node, pa] of act.pendingAdds) {
      if (pa.reqEpoch >= 0 && e.epoch > pa.reqEpoch && !e.inSync.some((m) => sameMember(m, pa.member))) act.pendingAdds.delete(node);
    }
    // followers that keep pace join the in-sync set through the leader, in two steps so that a
    // steady stream of writes cannot keep one out for ever: once it acks, within RETRY_MS, the
    // revision we were at when we looked (or is fully caught up), writes wait for it too from the
    // current revision on; once it holds that revision it holds every acknowledged write
    for (const f of act.followers.values()) {
      if (!f.streaming) continue;
      const node = f.member.node;
      if (e.inSync.some((m) => sameMember(m, f.member))) {
        act.pendingAdds.delete(node);
        continue;
      }
      let pa = act.pendingAdds.get(node);
      if (!pa || pa.member.inc !== f.member.inc) {
        const keepsPace = f.acked >= lp.data.revision || (f.paceRev >= 0 && f.acked >= f.paceRev && now - f.paceAt < RETRY_MS);
        if (!keepsPace) {
          if (f.paceRev < 0 || now - f.paceAt >= RETRY_MS) {
            f.paceRev = lp.data.revision;
            f.paceAt = now;
          }
          continue;
        }
        pa = { member: f.member, at: -Infinity, fromRev: lp.data.revision, reqEpoch: -1 };
        act.pendingAdds.set(node, pa);
      }
      // asked again after a while, or at once when the epoch moved on (the leader takes a req-add
      // only at its current epoch)
      if (f.acked < pa.fromRev || (now - pa.at < RETRY_MS * 4 && pa.reqEpoch === e.epoch)) continue;
      pa.at = now;
      pa.reqEpoch = e.epoch;
      this.sendToLeader({ t: 'req-add', term: this.h.el.term, pkey: lp.pkey, epoch: e.epoch, member: f.member });
    }
    // failback: once drained and the preferred primary holds everything, say so
    if (!e.handoffTo) act.handoffReady = false;
    if (e.handoffTo && act.pending.length === 0 && now - act.lastLeaderReq >= RETRY_MS) {
      const f = act.followers.get(e.handoffTo.node);
      if (f && f.streaming && f.member.inc === e.handoffTo.inc && f.acked >= lp.data.revision) {
        act.lastLeaderReq = now;
        act.handoffReady = true;
        this.sendToLeader({ t: 'handoff-ready', term: this.h.el.term, pkey: lp.pkey, epoch: e.epoch, rev: lp.data.revision });
      }
    }
  }
}
