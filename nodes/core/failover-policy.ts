import type { SelfTestBug, TimingConfig } from '../cluster-config.js';
import { sameMember, tenureTag, type Health, type Member, type PartitionReport, type RuntimeEntry } from '../cluster-messages.js';

/** A failback handoff not finished within this long is cancelled (ms). */
export const HANDOFF_TIMEOUT_MS = 3_000;

/**
 * What the leader knows when it decides for one partition: liveness of the members, their fresh
 * reports, and its own bookkeeping. NodeCore backs it with its peer table (failure detection);
 * tests with tables. Every query is read-only; `now` is the leader's local time, ms.
 */
export interface FailoverView {
  /** The leader's node id. */
  readonly self: string;
  readonly timing: Pick<TimingConfig, 'recoveryCooldownMs' | 'evictionTimeoutMs'>;
  readonly selfTestBug?: SelfTestBug;
  /** Every configured node id, in configuration order (regeneration's fallback homes). */
  readonly nodeIds: readonly string[];
  /** Replication factor of the partition's store. */
  replicationFactor(pkey: string): number;
  /** The incarnation the leader knows for a node (its own for itself), or null. */
  incOf(node: string): string | null;
  /** The node answers within the suspicion window and is not confirmed silent (seed 002 detection). */
  nodeLive(node: string, now: number): boolean;
  /** This incarnation is gone for good: refused probe, or a newer incarnation answered. */
  gone(m: Member): boolean;
  /** Not gone, the node live, and this is its current incarnation. */
  live(m: Member, now: number): boolean;
  /** Gone, or silent past the escalation timeout; never on suspicion alone (seed 002). */
  confirmedDown(m: Member): boolean;
  /** Silent past the suspicion window (never the leader itself). */
  suspected(node: string, now: number): boolean;
  /** May be relied on as the one copy left in an in-sync set: the leader, or live and freshly heard. */
  confirmable(m: Member, now: number): boolean;
  /** The member's fresh, term-matched report of the partition (a stale report does not count, seed 002), or null. */
  freshReport(m: Member, pkey: string, now: number): PartitionReport | null;
  /** The fresh reports of the peers' current incarnations (decide step 3: entries accepted above the committed one). */
  peerReports(pkey: string, now: number): PartitionReport[];
  /**
   * The node's latest report is of another term, or answered a heartbeat sent before the leader
   * learnt `deposed` down (null: no death to compare with): it may predate the deposed owner's
   * last ops reaching that node. Asked only of peers, never of the leader itself.
   */
  reportPredatesDeath(node: string, deposed: Member | null): boolean;
  /** When the partition last changed owner or health under this leader (ms; 0 when never). */
  lastTransitionAt(pkey: string): number | undefined;
  /** Since when the partition has had no active owner (ms), if known. */
  unavailableSince(pkey: string): number | undefined;
  /** Since when the failback handoff in progress runs (ms), if known. */
  handoffSince(pkey: string): number | undefined;
}

/** A structured log line the decision asks for: event name and fields (the node logs them in order). */
export type PolicyLog = [event: string, fields: Record<string, unknown>];

/**
 * The leader's decision for one partition: at most one runtime-entry change (seed 002, one
 * change at a time), the log lines that explain it, and whether the active owner was found
 * confirmed down (a failover counted, even while the promotion waits for fresh reports).
 */
export interface FailoverDecision {
  /** The entry to propose at the partition's next epoch; null: nothing to do now. */
  proposal: { entry: RuntimeEntry; newTenure: boolean } | null;
  logs: PolicyLog[];
  /** Step 1 fired: the active owner is confirmed down. */
  failover: boolean;
}

/**
 * Failover policy (seed 002 steps 1-5, DESIGN.md §2): from the committed runtime entry and what
 * the leader knows of the members ({@link FailoverView}), the next change, or none. In order:
 * 1. the active owner confirmed down: promote ({@link promoteDecision}); 2. no active: promote a
 * live in-sync member, else evict (regenerate) after the eviction timeout or at once when every
 * copy is provably gone; 3. an entry accepted above the committed one: reaffirm; 4. Recovering
 * whose sync source is gone: Degraded; 5. lost replicas: shrink the in-sync set (never to members
 * the leader cannot confirm); 6. a failback handoff whose target left or that runs too long:
 * cancel; 7. the recovery sweep: Healthy once every assigned replica is live and in sync after the
 * cooldown; 8. failback to the preferred primary. Pure: no state is changed.
 */
export function decideFailover(e: RuntimeEntry, v: FailoverView, now: number): FailoverDecision {
  const logs: PolicyLog[] = [];
  const none = (): FailoverDecision => ({ proposal: null, logs, failover: false });
  const propose = (entry: RuntimeEntry, newTenure = false): FailoverDecision => ({ proposal: { entry, newTenure }, logs, failover: false });
  const cooled = now - (v.lastTransitionAt(e.pkey) ?? 0) >= v.timing.recoveryCooldownMs;
  // 1. the active owner is confirmed down: promote an in-sync survivor, or Unavailable
  if (e.active && v.confirmedDown(e.active)) {
    logs.push(['failover', { pkey: e.pkey, from: e.active.node, epoch: e.epoch }]);
    return { ...promoteDecision(e, e.active, v, now, logs), failover: true };
  }
  // 2. no active: promote a live in-sync member as soon as one answers; else evict when due
  if (!e.active) {
    if (e.inSync.some((m) => v.live(m, now))) return promoteDecision(e, null, v, now, logs);
    // eviction: after the countdown, or at once when every in-sync copy is provably gone (its
    // node came back as a new, empty incarnation) and an assigned node is there to take it
    const since = v.unavailableSince(e.pkey) ?? now;
    const allGone = e.inSync.every((m) => v.gone(m)) && e.replicas.some((n) => v.nodeLive(n, now));
    if (allGone || now - since >= v.timing.evictionTimeoutMs) return regenerateDecision(e, v, now, logs);
    return none();
  }
  // 3. a node accepted an entry above the committed one that never committed here and that this
  //    leader does not know (nothing is in flight): nodes act on what they accepted (an active
  //    stops serving, a replica fences the active's stream) and report it in their metadata
  //    (clients route by the highest epoch), so commit the entry again above that epoch
  let fencedAt = -1;
  for (const r of v.peerReports(e.pkey, now)) if (r.accepted > e.epoch && r.accepted > fencedAt) fencedAt = r.accepted;
  if (cooled && fencedAt >= 0) {
    logs.push(['reaffirm', { pkey: e.pkey, epoch: e.epoch, accepted: fencedAt }]);
    return propose({ ...e });
  }
  // 4. Recovering whose more complete holder is gone (dead, cut off, or no longer holding a
  //    prefix of the deposed owner's log): the candidate is the authority now, and only now are
  //    the writes it lacks lost (seed 002, possession proof)
  if (e.health === 'Recovering' && !syncSourceValid(e, v, now)) {
    logs.push(['recovery-source-lost', { pkey: e.pkey, from: e.syncFrom?.node ?? null, syncTag: e.syncTag ?? null }]);
    return propose({ ...e, health: 'Degraded', syncFrom: null, syncTag: null });
  }
  // 5. a lost replica makes the partition Degraded at once (cheap and reversible)
  const lost = e.inSync.filter((m) => !sameMember(m, e.active) && (v.confirmedDown(m) || v.suspected(m.node, now)));
  if (lost.length > 0) {
    const inSync = e.inSync.filter((m) => !lost.some((l) => sameMember(l, m)));
    // never shrink the in-sync set to members this leader cannot confirm (a suspected active
    // left alone in it): should that member turn out dead, no copy is left to promote and the
    // partition is regenerated empty while the dropped replicas held its data (make sim run 1346)
    if (!inSync.some((m) => v.confirmable(m, now))) return none();
    // a holder outside the in-sync set is never among the lost (step 4 judges it)
    const syncFrom = e.syncFrom && !lost.some((m) => sameMember(m, e.syncFrom)) ? e.syncFrom : null;
    const health: Health = e.health === 'Recovering' && syncFrom ? 'Recovering' : 'Degraded';
    const handoffTo = e.handoffTo && inSync.some((m) => sameMember(m, e.handoffTo)) ? e.handoffTo : null;
    return propose({ ...e, inSync, health, syncFrom, handoffTo });
  }
  // 6. a failback handoff in progress: cancel it if the target left or it takes too long
  if (e.handoffTo) {
    const since = v.handoffSince(e.pkey) ?? now;
    if (!v.live(e.handoffTo, now) || now - since > HANDOFF_TIMEOUT_MS) {
      logs.push(['handoff-cancel', { pkey: e.pkey, to: e.handoffTo.node }]);
      return propose({ ...e, handoffTo: null });
    }
    return none();
  }
  if (e.health === 'Recovering') return none();
  // 7. the recovery sweep: every assigned replica alive and in sync, after a cooldown
  const allIn = e.replicas.every((n) => e.inSync.some((m) => m.node === n && v.live(m, now)));
  if (e.health !== 'Healthy') return allIn && cooled ? propose({ ...e, health: 'Healthy' }) : none();
  // 8. failback: the preferred primary is back in sync: hand ownership back
  const preferred = e.replicas[0];
  if (cooled && e.active.node !== preferred) {
    const m = e.inSync.find((x) => x.node === preferred);
    if (m && v.live(m, now)) return propose({ ...e, handoffTo: m });
  }
  return none();
}

/**
 * Is the Recovering entry's sync source still one to wait for (decide step 4). An in-sync
 * member: while it is live. A holder outside the in-sync set (`syncTag` set, chosen by
 * {@link promoteDecision} from the assigned replicas): while it is live, still assigned, and its
 * fresh, term-matched report still says its copy is a prefix of the deposed owner's log (report
 * tag === `syncTag`). Seed 002, possession proof: "syncs from that better source first"; once
 * the source is gone the candidate is the authority (Degraded).
 */
export function syncSourceValid(e: RuntimeEntry, v: FailoverView, now: number): boolean {
  const src = e.syncFrom;
  if (!src || !v.live(src, now)) return false;
  if (e.inSync.some((m) => sameMember(m, src))) return true;
  if (!e.syncTag || !e.replicas.includes(src.node)) return false;
  // no report of this term yet (a new leader): wait for it while the holder answers
  const r = v.freshReport(src, e.pkey, now);
  return r === null || r.tag === e.syncTag;
}

/**
 * Promotion (seed 002 steps 2-3) after the active owner `deposed` was confirmed down (or, with
 * `deposed` null, of a partition without an active); appends its log lines to `logs`.
 *
 * The candidate: among the live in-sync members (never a stale copy), the highest revision of
 * the deposed owner's log, then the most synced segments, then partition-map order.
 *
 * The possession proof then decides Degraded (serve now) or Recovering (sync from the more
 * complete live holder first). Seed 002 looks for that holder "among the partition's assigned
 * replicas", not only the in-sync ones: a live assigned replica (not the deposed owner) whose
 * fresh report postdates the owner's death, follows the deposed owner's tenure (its copy is a
 * prefix of that log, so it extends the candidate's, which follows the same log) and holds a
 * higher revision than the candidate is strictly more complete: the candidate is promoted
 * Recovering with `syncFrom` = the highest such holder and `syncTag` = the deposed tenure. (An
 * async owner may have streamed writes it acknowledged to a replica whose acks never reached it,
 * so that replica never joined the in-sync set; certify seed 4040 lost 78 such writes.) Failing
 * that, an in-sync member holding more keys than the candidate (the count-based proof of seed
 * 002). Waits one heartbeat round (no proposal) while a report it needs predates the owner's death.
 */
export function promoteDecision(e: RuntimeEntry, deposed: Member | null, v: FailoverView, now: number, logs: PolicyLog[] = []): FailoverDecision {
  const wait: FailoverDecision = { proposal: null, logs, failover: false };
  const propose = (entry: RuntimeEntry, newTenure: boolean): FailoverDecision => ({ proposal: { entry, newTenure }, logs, failover: false });
  const remaining = e.inSync.filter((m) => !deposed || !sameMember(m, deposed));
  // a failover waits for every other in-sync member to be either live (its report counts) or
  // confirmed down (seed 002: promotion is irreversible, so it waits for proof; a holder that
  // went silent is not counted, but suspicion alone is no proof of silence). A member merely
  // suspected may hold more of the deposed owner's log than any live one: a leader just back from
  // a cut suspects every peer it did not hear through the cut, and promoted itself over an
  // in-sync member no fault had touched (make power-sim SEED=20261130 run 69 of the dense schedules
  // of the time, traced: n1 back 258 ms from a cut, its link to n2 not yet up again, counted the
  // restarted n3 for its majority, suspected n2 and promoted itself holding revision 82 while n2
  // held 92 of the crashed owner's log). The member answers, or is confirmed down within the
  // escalation window, so the failover is delayed, never stopped.
  if (deposed && remaining.some((m) => !v.live(m, now) && !v.confirmedDown(m))) return wait;
  const cands = remaining.filter((m) => v.live(m, now));
  // the possession proof compares copies as they stand after the owner died: a report that
  // answered a heartbeat sent before we learnt it down may predate the owner's last ops reaching
  // that member (seed 002: a fresh table), so wait for the next round (a member that never
  // answers stops being live and drops out of the candidates)
  const staleReport = (node: string): boolean => node !== v.self && v.reportPredatesDeath(node, deposed);
  for (const m of cands) if (staleReport(m.node)) return wait;
  // the same freshness for the other live assigned replicas: possible holders (seed 002)
  const others = deposed ? otherHolders(e, deposed, cands, v, now) : [];
  for (const m of others) if (staleReport(m.node)) return wait;
  if (cands.length === 0) {
    // every in-sync copy is provably gone (refused probes, new incarnations): the best copy left
    // is the longest prefix of the deposed owner's log a live assigned replica holds (seed 002:
    // the possession proof looks among the assigned replicas). Going Unavailable instead would
    // regenerate the partition empty at once (decide, step 2) and wipe that copy too: make sim
    // run 1346, where a stale shrink had left in-sync = [a crashed owner] while a replica held
    // every write it acknowledged. Only when nothing in the set can come back with more.
    const tenure = deposed && e.active && sameMember(deposed, e.active) ? tenureTag(deposed, e.activeSince) : null;
    if (tenure !== null && e.inSync.every((m) => v.gone(m))) {
      let heir: { m: Member; rev: number; order: number } | null = null;
      for (const m of others) {
        const r = v.freshReport(m, e.pkey, now);
        const order = e.replicas.indexOf(m.node);
        if (r && r.tag === tenure && (!heir || r.rev > heir.rev || (r.rev === heir.rev && order < heir.order))) heir = { m, rev: r.rev, order };
      }
      if (heir) {
        logs.push(['possession-heir', { pkey: e.pkey, deposed: deposed!.node, heir: heir.m.node, rev: heir.rev, tenure }]);
        return propose({ ...e, active: heir.m, health: 'Degraded', inSync: [heir.m], handoffTo: null, syncFrom: null, syncTag: null }, true);
      }
    }
    // keep every member that may come back with its data (a paused or cut-off owner is not gone)
    return propose({ ...e, active: null, health: 'Unavailable', inSync: e.inSync.filter((m) => !v.gone(m)), handoffTo: null, syncFrom: null }, false);
  }
  // revisions compare only within one log: the deposed owner's tenure
  const tenure = e.active ? tenureTag(e.active, e.activeSince) : null;
  const scored = cands.map((m) => {
    const r = v.freshReport(m, e.pkey, now);
    const follows = tenure !== null && r !== null && r.tag === tenure ? 1 : 0;
    return { m, follows, synced: r?.syncedSegments ?? 0, rev: r?.rev ?? -1, held: r ? r.heldKeys : -1, order: e.replicas.indexOf(m.node) };
  });
  if (v.selfTestBug === 'no-possession-proof') {
    // the deliberate bug: availability-first (most synced segments, then partition-map order),
    // straight to Degraded: what the candidates hold is never compared
    scored.sort((a, b) => b.synced - a.synced || a.order - b.order);
    logs.push(['self-test-bug', { bug: 'no-possession-proof', pkey: e.pkey, promoted: scored[0].m.node }]);
    return propose({ ...e, active: scored[0].m, health: 'Degraded', inSync: remaining, handoffTo: null, syncFrom: null }, true);
  }
  // the most complete copy first: among the members whose copy is a prefix of the deposed
  // owner's log (they follow its tenure, or asked to resume it: a member re-syncing after the
  // owner went silent reports no synced segments yet holds the same prefix), the highest
  // revision; a copy from another tenure (one that was cut off and has not caught up again) has
  // revisions of another log, not comparable (found by make power-sim: a member back from a cut
  // with revision 269 of an older tenure was promoted over one holding the deposed owner's
  // acknowledged writes up to 150); then synced segments, then map order
  scored.sort((a, b) => b.follows - a.follows || b.rev - a.rev || b.synced - a.synced || a.order - b.order);
  const cand = scored[0];
  // possession proof, by revision (seed 002: the more complete holder is any live assigned
  // replica): a replica outside the in-sync set whose copy is a longer prefix of the same log.
  // Also when the candidate does not follow the deposed tenure at all (no live in-sync member
  // does): its copy is at best the prefix of that log the deposed owner started from (an in-sync
  // member of an earlier tenure that never caught up with the deposed owner), and a holder that
  // follows the deposed tenure holds that start and the owner's own writes after it. Seen in a
  // 3-minute run of the default mix: an async owner died with one replica behind, the other took
  // over holding more and was cut off before the laggard caught up (it still reported the first
  // owner's tenure), the first owner restarted and synced from the second; when the second was
  // confirmed down the laggard was promoted Degraded over the live holder, and writes the holder
  // kept were lost.
  let holder: { m: Member; rev: number } | null = null;
  if (tenure !== null) {
    for (const m of others) {
      const r = v.freshReport(m, e.pkey, now);
      if (r && r.tag === tenure && r.rev > cand.rev && (!holder || r.rev > holder.rev)) holder = { m, rev: r.rev };
    }
  }
  if (holder) {
    logs.push(['possession-holder', { pkey: e.pkey, candidate: cand.m.node, candidateRev: cand.rev, holder: holder.m.node, holderRev: holder.rev, tenure }]);
    return propose({ ...e, active: cand.m, health: 'Recovering', inSync: remaining, handoffTo: null, syncFrom: holder.m, syncTag: tenure }, true);
  }
  // possession proof, by held keys (seed 002's count), among the in-sync members; but never
  // from a member whose copy is a shorter prefix of the same log as the candidate's (both follow
  // the deposed tenure: the candidate's revision is the highest, so that copy is contained in the
  // candidate's; it may count more keys only because later writes of the log deleted some, and
  // installing it would drop those writes: found by the one-way-cut sim property, a candidate at
  // revision 188 recovered from an in-sync member at 128 holding one more key)
  let best: (typeof scored)[number] | null = null;
  for (const s of scored.slice(1)) if (s.held >= 0 && !(cand.follows === 1 && s.follows === 1) && (!best || s.held > best.held)) best = s;
  const recovering = best !== null && best.held > Math.max(cand.held, 0);
  const health: Health = recovering ? 'Recovering' : 'Degraded';
  return propose({ ...e, active: cand.m, health, inSync: remaining, handoffTo: null, syncFrom: recovering ? best!.m : null, syncTag: null }, true);
}

/**
 * The live assigned replicas of `e` that are neither the deposed owner nor a candidate (members
 * outside the in-sync set, under the incarnation the leader knows): the possible more complete
 * holders of seed 002's possession proof.
 */
export function otherHolders(e: RuntimeEntry, deposed: Member, cands: readonly Member[], v: FailoverView, now: number): Member[] {
  const out: Member[] = [];
  for (const n of e.replicas) {
    if (n === deposed.node || cands.some((c) => c.node === n)) continue;
    const inc = v.incOf(n);
    if (!inc) continue;
    const m: Member = { node: n, inc };
    if (v.live(m, now)) out.push(m);
  }
  return out;
}

/**
 * Eviction (seed 002): no in-sync member survives; a planned regeneration re-homes the
 * partition on live nodes (assigned ones first), starting empty at a new map version. No
 * proposal when no node is live.
 */
export function regenerateDecision(e: RuntimeEntry, v: FailoverView, now: number, logs: PolicyLog[] = []): FailoverDecision {
  const rf = v.replicationFactor(e.pkey);
  const liveNodes = [...e.replicas, ...v.nodeIds.filter((n) => !e.replicas.includes(n))].filter((n) => v.nodeLive(n, now));
  if (liveNodes.length === 0) return { proposal: null, logs, failover: false };
  const replicas = liveNodes.slice(0, rf);
  const active: Member = { node: replicas[0], inc: v.incOf(replicas[0])! };
  logs.push(['regenerate', { pkey: e.pkey, replicas, lost: e.inSync.map((m) => m.node) }]);
  return { proposal: { entry: { ...e, active, inSync: [active], health: 'Degraded', handoffTo: null, syncFrom: null, replicas, mapVersion: e.mapVersion + 1, keepCopies: false }, newTenure: true }, logs, failover: false };
}
