import type { StoreConfig } from '../cluster-config.js';
import { sameMember, tenureTag, type RuntimeEntry } from '../cluster-messages.js';
import { FLAG_INDETERMINATE, Op, type ClientRequest, type ClientResponse, type GetManyItem, type WriteInfo } from '../client-protocol.js';
import { KvStatus } from '../kv-status.js';
import { partitionOfSegment, segmentOf } from '../partitioning.js';
import type { ReplicatedOp } from '../partition-data.js';
import { newActiveState, type LocalPartition, type NodeContext, type PendingWrite } from './partition-state.js';
import { REPLICA_READ_LEASE_MS } from './replication.js';
import type { Election } from './election.js';

/**
 * Versions of tenure `activeSince` start above activeSince x 2^32: strictly above any version an
 * earlier tenure gave (fewer than 2^32 writes per key per tenure), exact in a double up to epoch 2^21.
 */
export const VERSION_TENURE_STRIDE = 2 ** 32;

/** Self-test bug `stale-owner-acks`: how long past its lease an owner goes on acknowledging async writes, ms. */
const STALE_OWNER_BUG_MS = 5_000;

const EMPTY_INFO: WriteInfo = { node: '', partition: 0, epoch: 0, version: 0, revision: 0, ackMode: 'sync', copies: 0 };

/**
 * What the data path needs of its node: identity, configuration, the partitions and the runtime
 * map it holds, the owner lease (from the election), and the counters it keeps.
 */
export interface DataPathHost extends NodeContext {
  readonly env: { now(): number; respond(token: unknown, res: ClientResponse): void; log(event: string, fields?: Record<string, unknown>): void };
  /** Partitions per store (segments group into this many). */
  readonly nPartitions: number;
  readonly counters: { writesAcked: number; writesRefused: number; indeterminate: number; migratingAnswers: number };
  /** The node's election: until when (own clock, ms) it may act as an active owner (core/election.ts). */
  readonly el: Pick<Election, 'leaseUntil'>;
  /** Does the store give its in-sync replicas read leases (sync, RF > 1; seed 004 hedged reads). */
  readLeased(store: StoreConfig): boolean;
}

/**
 * How long a copy dropped by a planned change (a move, an admin regeneration that kept copies) is
 * kept before it is emptied, ms: well past any owner lease (an active that counted its
 * acknowledgements learns of the drop from the leader within its lease, or stops serving).
 */
export const DROPPED_COPY_GRACE_MS = 10_000;

/**
 * Client operations on this node (seed 000's statuses, DESIGN.md §2): routing a key to its
 * partition, who may serve (the active by its committed entry and lease; Recovering never
 * serves), writes with versions above every earlier tenure's and sync / async acknowledgement
 * (a sync write at RF > 1 never on the active's copy alone), single and batch reads (hedged
 * batch reads from an in-sync replica within its read lease, seed 004), local probe reads, and
 * the self-test bugs that act on this path.
 */
export class DataPath {
  private readonly h: DataPathHost;
  /** Self-test bug hits already logged. */
  private readonly bugLogged = new Set<string>();

  constructor(host: DataPathHost) {
    this.h = host;
  }

  /**
   * Is this node the active owner per its committed entry, not deposed by a later accepted one.
   * A node that accepted an entry naming someone else stops at once, before that entry commits.
   */
  activeEntry(pkey: string): RuntimeEntry | null {
    const e = this.h.committed.get(pkey);
    if (!e || !sameMember(e.active, this.h.me)) return null;
    const a = this.h.accepted.get(pkey);
    if (a && a.epoch > e.epoch && (!sameMember(a.active, this.h.me) || a.activeSince !== e.activeSince)) return null;
    return e;
  }

  answerIndeterminate(p: PendingWrite): void {
    this.h.counters.indeterminate++;
    p.res.status = KvStatus.Unavailable;
    p.res.flags = FLAG_INDETERMINATE;
    this.h.env.respond(p.token, p.res);
  }

  /**
   * Null when the active may serve now; otherwise the status to answer. Seed 002: Recovering never
   * serves; DESIGN.md §2: a sync write with RF > 1 is refused when no replica is in sync.
   */
  servingState(lp: LocalPartition, asyncWrite = false): KvStatus | null {
    const e = this.activeEntry(lp.pkey);
    if (!e || !lp.act) return KvStatus.ReplicaWriteRejected;
    if (e.health !== 'Healthy' && e.health !== 'Degraded') return KvStatus.Unavailable;
    // lease lapsed: probably cut off, maybe already replaced; the client refreshes its map (seed 000)
    const now = this.h.env.now();
    if (now > this.h.el.leaseUntil) {
      if (asyncWrite && this.h.config.selfTestBug === 'stale-owner-acks' && now - this.h.el.leaseUntil <= STALE_OWNER_BUG_MS) {
        this.selfTestBugHit('stale-owner-acks', lp.pkey);
        return null;
      }
      return KvStatus.OwnershipChanging;
    }
    return null;
  }

  /** The deliberate bug of the harness's self-test took effect: log it once per partition and tenure. */
  selfTestBugHit(bug: string, pkey: string): void {
    const key = `${bug}:${pkey}:${this.h.parts.get(pkey)?.act?.tag ?? ''}`;
    if (this.bugLogged.has(key)) return;
    this.bugLogged.add(key);
    this.h.env.log('self-test-bug', { bug, pkey });
  }

  private route(store: string, key: string): { lp: LocalPartition; seg: number } | KvStatus {
    const st = this.h.config.stores.find((s) => s.name === store);
    if (!st) return KvStatus.InvalidInput;
    const seg = segmentOf(key, st.segments);
    const pkey = `${store}/${partitionOfSegment(seg, this.h.nPartitions)}`;
    return { lp: this.h.parts.get(pkey)!, seg };
  }

  /**
   * The answer while ownership is handed off: Migrating when the handoff is a step of a planned
   * move (`migrating`, core/migration-driver.ts; seed 000: "the segment is mid-migration to a new
   * owner; writes are briefly held", the client backs off 8x), counted; else OwnershipChanging (a
   * failback or an admin handoff, seed 002).
   */
  private handoffStatus(e: RuntimeEntry): KvStatus {
    if (!e.migrating) return KvStatus.OwnershipChanging;
    this.h.counters.migratingAnswers++;
    return KvStatus.Migrating;
  }

  /**
   * Status for a request that reached a node which is not the serving active (seed 000's
   * vocabulary; seed 002: an old owner, fenced or gone, answers Moved or OwnershipChanging). The
   * client routed here because its map names this node the active; every answer that means "not
   * me" is one the client refreshes its map on, so it never stays stuck on a deposed or restarted
   * owner. Only a partition that has no active at all is Unavailable (the client retries as is).
   */
  private notActiveStatus(lp: LocalPartition, write: boolean): KvStatus {
    const e = this.h.committed.get(lp.pkey);
    // restarted (memory only) and not yet told the runtime map: whatever the client's map names,
    // it is not this incarnation; the failover of the previous one is under way
    if (!e) return KvStatus.OwnershipChanging;
    if (!e.replicas.includes(this.h.id)) return KvStatus.Moved;
    if (!e.active) return KvStatus.Unavailable;
    if (e.handoffTo && (e.handoffTo.node === this.h.id || e.active.node === this.h.id)) return this.handoffStatus(e);
    // the entry names an earlier incarnation of ours, or we accepted an entry deposing us
    if (e.active.node === this.h.id) return KvStatus.OwnershipChanging;
    return write ? KvStatus.ReplicaWriteRejected : KvStatus.Moved;
  }

  clientWrite(req: Extract<ClientRequest, { op: typeof Op.Put | typeof Op.Delete }>, token: unknown): void {
    const res: PendingWrite['res'] = { op: req.op, reqId: req.reqId, status: KvStatus.Ok, flags: 0, info: { ...EMPTY_INFO, node: this.h.id } };
    const refuse = (status: KvStatus): void => {
      this.h.counters.writesRefused++;
      res.status = status;
      this.h.env.respond(token, res);
    };
    if (req.key.length === 0) return refuse(KvStatus.InvalidInput);
    const r = this.route(req.store, req.key);
    if (typeof r === 'number') return refuse(r);
    const { lp, seg } = r;
    res.info.partition = lp.partition;
    res.info.ackMode = lp.store.ackMode;
    const e = this.activeEntry(lp.pkey);
    if (!e || !lp.act) return refuse(this.notActiveStatus(lp, true));
    res.info.epoch = e.epoch;
    const sync = lp.store.ackMode === 'sync';
    const serving = this.servingState(lp, !sync);
    if (serving !== null) return refuse(serving);
    if (e.handoffTo) return refuse(this.handoffStatus(e));
    if (sync && lp.store.replicationFactor > 1 && e.inSync.length < 2) return refuse(KvStatus.Unavailable);
    const act = lp.act;
    const cur = lp.data.get(seg, req.key);
    const curVersion = cur ? cur.version : 0;
    const present = !!cur && cur.value !== null;
    res.info.version = curVersion;
    if (req.ifMatchVersion !== undefined && (!present || cur!.version !== req.ifMatchVersion)) return refuse(KvStatus.Conflict);
    if (req.op === Op.Put && req.ifAbsent && present) return refuse(KvStatus.Conflict);
    if (req.op === Op.Delete && !present) return refuse(KvStatus.NotFound);
    const rev = lp.data.revision + 1;
    // versions never go backwards, even where a copy was lost (RF1 crash, async window): every
    // tenure starts its versions above any version an earlier tenure can have given
    const version = Math.max(curVersion, act.activeSince * VERSION_TENURE_STRIDE) + 1;
    const op: ReplicatedOp = { rev, seg, key: req.key, value: req.op === Op.Put ? req.value : null, version };
    lp.data.apply(op);
    const now = this.h.env.now();
    if (!sync && this.h.config.selfTestBug === 'never-replicate-async') {
      // the deliberate bug: acknowledged, never streamed, never reported lagging
      this.selfTestBugHit('never-replicate-async', lp.pkey);
    } else {
      for (const f of act.followers.values()) if (f.streaming) f.queue.push(op);
      act.opTimes.push([rev, now]);
      act.lastOp = op;
    }
    res.info.version = op.version;
    res.info.revision = rev;
    if (sync) {
      act.pending.push({ rev, token, res, at: now });
      this.progressPending(lp);
    } else {
      this.h.counters.writesAcked++;
      res.info.copies = 1;
      this.h.env.respond(token, res);
    }
  }

  /** Members whose acknowledgement a write needs: the in-sync set (but us) and requested additions. */
  private requiredAcked(lp: LocalPartition): number {
    const e = this.h.committed.get(lp.pkey);
    const act = lp.act!;
    let min = lp.data.revision;
    if (!e) return -1;
    for (const m of e.inSync) {
      if (m.node === this.h.id) continue;
      const f = act.followers.get(m.node);
      const acked = f && f.member.inc === m.inc ? f.acked : -1;
      if (acked < min) min = acked;
    }
    for (const { member } of act.pendingAdds.values()) {
      const f = act.followers.get(member.node);
      const acked = f && f.member.inc === member.inc ? f.acked : -1;
      if (acked < min) min = acked;
    }
    // replicas that may hold a read lease (ours, or an earlier tenure's) must hold what we ack
    const now = this.h.env.now();
    for (const f of act.followers.values()) if (f.grantUntil > now && f.acked < min) min = f.acked;
    if (now < act.inheritUntil) {
      for (const m of act.inherited) {
        const f = act.followers.get(m.node);
        const acked = f && f.member.inc === m.inc ? f.acked : -1;
        if (acked < min) min = acked;
      }
    }
    return min;
  }

  /**
   * Copies of revision `rev` among the partition's in-sync members (ourselves included) by the
   * committed entry `e`: what a sync ack reports as `copies` (the verifier checks >= 2 at RF > 1).
   */
  private copiesHolding(lp: LocalPartition, e: RuntimeEntry, rev: number): number {
    const act = lp.act!;
    let n = 0;
    for (const m of e.inSync) {
      if (m.node === this.h.id) {
        if (m.inc === this.h.inc && lp.data.revision >= rev) n++;
        continue;
      }
      const f = act.followers.get(m.node);
      if (f && f.member.inc === m.inc && f.acked >= rev) n++;
    }
    return n;
  }

  /** The highest revision every in-sync replica has applied (what the harness samples). */
  replicatedRevision(lp: LocalPartition): number {
    const e = this.h.committed.get(lp.pkey);
    // with no replica in sync nothing is replicated: never claim otherwise (the verifier trusts it)
    if (!e || !e.inSync.some((m) => m.node !== this.h.id)) return 0;
    return Math.max(0, this.requiredAcked(lp));
  }

  progressPending(lp: LocalPartition): void {
    const act = lp.act;
    if (!act) return;
    const acked = this.requiredAcked(lp);
    let i = 0;
    while (i < act.opTimes.length && act.opTimes[i][0] <= acked) i++;
    if (i > 0) act.opTimes.splice(0, i);
    // an owner whose lease lapsed acknowledges nothing, not even a write its replicas hold: it may
    // have been replaced (its successor then holds the write, but the ack would come from a
    // deposed owner, past the lease the store declares); the write waits, and is answered as
    // indeterminate if the owner resigns or it waits too long
    if (act.pending.length === 0 || this.servingState(lp) !== null) return;
    const e = this.h.committed.get(lp.pkey)!;
    // the deliberate bug: a sync write is acknowledged once this node applied it, replicas or not
    const early = this.h.config.selfTestBug === 'sync-ack-before-replica';
    const ackedUpTo = early ? lp.data.revision : acked;
    // DESIGN.md §2: at RF > 1 a sync write is never acknowledged on the active's copy alone.
    // Pending writes were admitted while another member was in sync; when the leader has since
    // dropped every other member (lagging, down), they wait until a member holding them is in
    // the in-sync set again, or time out as indeterminate (history-format.md v2
    // under-replicated-ack)
    const twoCopies = lp.store.replicationFactor > 1 && !early;
    let n = 0;
    while (n < act.pending.length && act.pending[n].rev <= ackedUpTo) {
      const p = act.pending[n];
      const copies = this.copiesHolding(lp, e, p.rev);
      // copies only fall with the revision: no later pending write has two either
      if (twoCopies && copies < 2) break;
      p.res.info.epoch = e.epoch;
      p.res.info.copies = copies;
      this.h.counters.writesAcked++;
      this.h.env.respond(p.token, p.res);
      n++;
    }
    if (n > 0) act.pending.splice(0, n);
  }

  clientGet(req: Extract<ClientRequest, { op: typeof Op.Get }>): ClientResponse {
    const r = this.route(req.store, req.key);
    const res = { op: Op.Get, reqId: req.reqId, status: KvStatus.Ok, flags: 0, node: this.h.id, epoch: 0, version: 0, value: null as Buffer | null };
    if (typeof r === 'number') return { ...res, status: r };
    const { lp, seg } = r;
    if (req.local) {
      const e = this.h.committed.get(lp.pkey);
      const status = this.localReadStatus(lp, e);
      if (status !== null) return { ...res, status };
      res.epoch = e!.epoch;
      const rec = lp.data.get(seg, req.key);
      if (!rec || rec.value === null) return { ...res, status: KvStatus.NotFound, version: rec ? rec.version : 0 };
      return { ...res, version: rec.version, value: rec.value };
    }
    const e = this.activeEntry(lp.pkey);
    if (!e || !lp.act) return { ...res, status: this.notActiveStatus(lp, false) };
    const serving = this.servingState(lp);
    if (serving !== null) return { ...res, status: serving };
    if (lp.act.handoffReady && e.handoffTo) return { ...res, status: this.handoffStatus(e) };
    res.epoch = e.epoch;
    const rec = lp.data.get(seg, req.key);
    if (!rec || rec.value === null) return { ...res, status: KvStatus.NotFound, version: rec ? rec.version : 0 };
    return { ...res, version: rec.version, value: rec.value };
  }

  /**
   * A local (probe) read: null when this node may answer from its own copy, else the status to
   * answer. It may when, by its own committed entry, it is an in-sync member of the partition
   * under its current incarnation and not catching up: the serving active (not Recovering), or a
   * replica following the current tenure (its catch-up installed). The copy may lag an async
   * active: a probe says what this node holds, not what the store acknowledged.
   */
  private localReadStatus(lp: LocalPartition, e: RuntimeEntry | undefined): KvStatus | null {
    if (!e) return KvStatus.Unavailable;
    if (!e.replicas.includes(this.h.id)) return KvStatus.Moved;
    if (!e.active || !e.inSync.some((m) => sameMember(m, this.h.me))) return KvStatus.Unavailable;
    if (sameMember(e.active, this.h.me)) return lp.act && this.activeEntry(lp.pkey) && (e.health === 'Healthy' || e.health === 'Degraded') ? null : KvStatus.Unavailable;
    return lp.followTag === tenureTag(e.active, e.activeSince) ? null : KvStatus.Unavailable;
  }

  /**
   * May this replica answer a hedged batch read (seed 004 long-tail retry) from its own copy: only
   * an in-sync replica of a sync store (RF > 1), following the serving active's current tenure,
   * within the read lease that active granted it. An async replica may lack acknowledged writes
   * and never answers; nor does one whose lease lapsed (dropped from the in-sync set, cut off).
   */
  private mayAnswerHedged(lp: LocalPartition): boolean {
    if (!this.h.readLeased(lp.store)) return false;
    const e = this.h.committed.get(lp.pkey);
    if (!e || !e.active || (e.health !== 'Healthy' && e.health !== 'Degraded')) return false;
    const tag = tenureTag(e.active, e.activeSince);
    if (lp.followTag !== tag || !e.inSync.some((m) => sameMember(m, this.h.me))) return false;
    return !!lp.readLease && lp.readLease.tag === tag && this.h.env.now() <= lp.readLease.until;
  }

  clientGetMany(req: Extract<ClientRequest, { op: typeof Op.GetMany }>): ClientResponse {
    const items: GetManyItem[] = new Array(req.keys.length);
    const limit = this.h.config.stores.find((s) => s.name === req.store)?.batchGetLimit ?? 500;
    if (new Set(req.keys).size > limit) {
      return { op: Op.GetMany, reqId: req.reqId, status: KvStatus.InvalidInput, flags: 0, node: this.h.id, items: [] };
    }
    for (let i = 0; i < req.keys.length; i++) {
      const r = this.route(req.store, req.keys[i]);
      if (typeof r === 'number') {
        items[i] = { status: r, version: 0, value: null };
        continue;
      }
      const { lp, seg } = r;
      const ae = this.activeEntry(lp.pkey);
      let ok = ae !== null && lp.act !== null && this.servingState(lp) === null && !(lp.act.handoffReady && ae.handoffTo);
      if (!ok && req.allowReplica) ok = this.mayAnswerHedged(lp);
      if (!ok) {
        items[i] = { status: this.notActiveStatus(lp, false), version: 0, value: null };
        continue;
      }
      const rec = lp.data.get(seg, req.keys[i]);
      items[i] = !rec || rec.value === null ? { status: KvStatus.NotFound, version: rec ? rec.version : 0, value: null } : { status: KvStatus.Ok, version: rec.version, value: rec.value };
    }
    return { op: Op.GetMany, reqId: req.reqId, status: KvStatus.Ok, flags: 0, node: this.h.id, items };
  }

  /**
   * Re-derives this node's role in the partition from the entries it holds: a regeneration empties
   * the copy (but for the members an admin regeneration kept); the committed entry naming this
   * incarnation active (and no later accepted one deposing it) starts a tenure (a new ActiveState,
   * read leases an earlier tenure may have granted inherited); otherwise an active resigns.
   */
  refreshRole(pkey: string): void {
    const lp = this.h.parts.get(pkey);
    if (!lp) return;
    const e = this.h.committed.get(pkey);
    if (e && e.mapVersion > lp.mapVersion) {
      // a regeneration: the partition starts empty on its new replicas, but for the in-sync
      // members an admin regeneration or a move kept (node-admin.ts, migration-driver.ts)
      const keep = e.keepCopies === true;
      const inSync = e.inSync.some((m) => sameMember(m, this.h.me));
      const assigned = e.replicas.includes(this.h.id);
      if (lp.mapVersion !== 0 && !(keep && inSync)) {
        if (keep && !assigned) {
          // our copy left the partition by a planned change (a move's drop): it no longer follows
          // (no more acks) and is never served, but stays DROPPED_COPY_GRACE_MS, so that every
          // acknowledgement the active counted from it while it did follow stays true of a copy
          // that exists (the active learns the drop from the same commit, within its lease)
          this.resign(lp, 'dropped');
          lp.followTag = '';
          lp.resumeTag = '';
          lp.droppedAt = this.h.env.now();
        } else if (!keep || lp.droppedAt !== -Infinity) {
          // an eviction's regeneration (no copy is known good), or a copy we were dropped from
          // coming back: start empty and catch up
          this.resign(lp, 'regenerated');
          lp.followTag = '';
          lp.resumeTag = '';
          lp.data.clear(0);
          lp.droppedAt = -Infinity;
        }
        // else a planned change that keeps us assigned, out of sync: our copy is a prefix of the
        // log we follow (or asked to resume), and we go on catching up from where it stands.
        // Never emptied behind the active's back: its link to us says what we acknowledged, and
        // it asks the leader to add us from that (make sim MEMBERSHIP=1 RUNS=1000 SEED=7, run
        // 978: a lagging replica emptied by a move's new map version was added to the in-sync
        // set on the strength of its acks from before, holding nothing)
      }
      lp.mapVersion = e.mapVersion;
    }
    const ae = this.activeEntry(pkey);
    if (ae && lp.act && e) {
      // followers the committed map no longer assigns (a move dropped them): their acks count no
      // more (a copy they are given again is caught up afresh, through a sync request); a read
      // lease we granted still runs out first (acked -1 holds writes until grantUntil)
      for (const [node, f] of lp.act.followers) {
        if (e.replicas.includes(node) || !f.streaming) continue;
        f.streaming = false;
        f.acked = -1;
        lp.act.pendingAdds.delete(node);
      }
    }
    if (ae) {
      const tag = tenureTag(ae.active!, ae.activeSince);
      if (!lp.act || lp.act.tag !== tag) {
        this.resign(lp, 'new tenure');
        const inherited = this.h.readLeased(lp.store) ? ae.inSync.filter((m) => !sameMember(m, this.h.me)) : [];
        lp.act = newActiveState(tag, ae.activeSince, inherited, this.h.env.now() + REPLICA_READ_LEASE_MS);
        lp.followTag = tag;
        lp.resumeTag = '';
        if (this.h.config.selfTestBug === 'lose-on-promotion' && ae.activeSince > 1) {
          // the deliberate bug of the harness's self-test: a new owner forgets what it held
          this.h.env.log('self-test-bug', { bug: 'lose-on-promotion', pkey, dropped: lp.data.heldKeys });
          lp.data.clear(lp.data.revision);
        }
        this.h.env.log('active', { pkey, epoch: ae.epoch, health: ae.health, rev: lp.data.revision });
      }
      this.progressPending(lp);
    } else if (lp.act) {
      this.resign(lp, 'deposed');
    }
  }

  /**
   * A copy dropped by a planned change is emptied once DROPPED_COPY_GRACE_MS passed, if the
   * partition did not come back to this node meanwhile (then the regeneration path emptied it).
   */
  sweepDropped(lp: LocalPartition, now: number): void {
    if (lp.droppedAt === -Infinity || now - lp.droppedAt < DROPPED_COPY_GRACE_MS) return;
    lp.droppedAt = -Infinity;
    if (this.h.committed.get(lp.pkey)?.replicas.includes(this.h.id)) return;
    this.h.env.log('dropped-copy-cleared', { pkey: lp.pkey, rev: lp.data.revision, keys: lp.data.heldKeys });
    lp.data.clear(0);
  }

  /** Stop acting as active: pending writes get an indeterminate answer (they may survive elsewhere). */
  private resign(lp: LocalPartition, why: string): void {
    const act = lp.act;
    if (!act) return;
    lp.act = null;
    lp.followTag = '';
    for (const p of act.pending) this.answerIndeterminate(p);
    this.h.env.log('resign', { pkey: lp.pkey, why, pending: act.pending.length });
  }
}
