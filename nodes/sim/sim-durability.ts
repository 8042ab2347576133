import type { StoreConfig } from '../cluster-config.js';
import { sameMember, tenureTag, type RuntimeEntry } from '../cluster-messages.js';
import type { WriteInfo } from '../client-protocol.js';
import type { KeyHistory, WriteRecord } from './sim-client.js';
import { FaultTimeline } from './sim-fault-timeline.js';
import { InvariantViolation, type NodeView } from './sim-invariants.js';

/**
 * The durability rules of the store's contract (DESIGN.md §2 and §5, history-format.md v2, seed
 * 002), checked by the simulator from god's view while the run goes on, not only at the end (a
 * write lost at a promotion is often written again before the end; a replica left behind is
 * often resynced by a later failover):
 * - under-replicated-ack: an acknowledgement of a sync store with RF > 1 says fewer than two
 *   copies (`copies`), or fewer than two in-sync copies hold the write when it is acknowledged
 *   (the active included; not on the store's word alone, issue 10), or more copies than hold it;
 * - possession: when a node starts serving a partition in a new tenure, its copy holds every
 *   write acknowledged before (sync store, RF > 1, within budget); for an async store, every
 *   acknowledged write that another in-sync member, untouched by any fault since the write was
 *   invoked, holds at that moment (seed 002 step 3: promotion never skips a more complete live
 *   holder; an op that never left the dead owner is the async window's loss, not this); and, when
 *   the active owner of an async partition crashes, every write it acknowledged that a surviving
 *   assigned replica holds at the crash (in sync or not: seed 002 looks for the more complete
 *   holder "among the partition's assigned replicas"; history-format.md v2 async-ack 3, "after a
 *   crash, any member other than L's acking node") must be held by the first node to serve the
 *   partition in a new tenure after it, while that replica is still up, the same incarnation, and
 *   untouched by any fault since the crash;
 * - replica-missing-write: an in-sync replica of a sync store (RF > 1) lacks a write acknowledged
 *   before (checked every poll, within budget);
 * - replication-lag: an in-sync replica of an async store holds a revision below the one its
 *   active held `asyncLagMs` earlier, while the partition kept its epoch and no fault touched any
 *   of its nodes, nor any connection between that replica and the active broke or was down, in
 *   that window (history-format.md v2, replication-lag; the connection clause is the
 *   simulator's, whose network resets connections: a replica catches up after a reset of its own
 *   stream, one elsewhere delays nothing);
 * - lost (async and RF1 stores, at the end, within budget): the last acknowledged write of a key
 *   is missing and the loss is not the contract's: RF1 only when its acking node crashed after
 *   the write, or a node that took the partition over after it crashed after its takeover; async only when its owner was replaced (crashed, or another node started a tenure)
 *   after the write, and a fault touched the owner before that (a takeover from an owner no fault
 *   touched is a handoff, which loses nothing) and within the lag bound after its ack.
 * Versions order a key's writes (every tenure gives versions above any earlier one), so "holds W"
 * is "holds W's version or a later one" (a later write of the key, acknowledged or not).
 */

/** One key's record in a node's copy: value (null: a tombstone), version, and the revision of the op that wrote it. */
export interface PeekedRecord {
  value: Buffer | null;
  version: number;
  revision: number;
}

/** What the durability checks read of one running node: NodeCore's public surface. */
export interface DurableView extends NodeView {
  peek(pkey: string, key: string): PeekedRecord | undefined;
  /** The record of a key as this copy's log stood at revision `rev`: null for none then, undefined when the copy cannot tell. */
  peekAt(pkey: string, key: string, rev: number): PeekedRecord | null | undefined;
  revisionOf(pkey: string): number;
}

/**
 * Is a replica's copy the prefix up to some revision r of an active's log (DESIGN.md §2: "a
 * catch-up position is an (epoch, revision) agreed with the current active, never a replica's own
 * watermark"): every key held exactly as the log stood at r (same version, same value, a
 * tombstone as a tombstone, no record where the log had none). Keys whose state at r the active's
 * copy can no longer tell (its op log does not reach back) are not judged.
 * @param keys the keys to compare (the workload's keys of the partition).
 * @param activeAt the active's record of a key as its log stood at r: null for none, undefined
 *   when it cannot tell (NodeCore.peekAt).
 * @param replica the replica's present record of a key.
 * @returns null when the copy is that prefix, else one line naming the first key that differs.
 */
export function prefixDivergence(
  keys: readonly string[],
  activeAt: (key: string) => PeekedRecord | null | undefined,
  replica: (key: string) => PeekedRecord | undefined,
): string | null {
  for (const key of keys) {
    const a = activeAt(key);
    if (a === undefined) continue;
    const b = replica(key);
    if (a === null) {
      if (b) return `${key}: the log had no record of it, the replica holds ${recordText(b)}`;
      continue;
    }
    if (!b || b.version !== a.version || !sameValue(a.value, b.value)) return `${key}: the log held ${recordText(a)}, the replica holds ${b ? recordText(b) : 'nothing'}`;
  }
  return null;
}

function sameValue(a: Buffer | null, b: Buffer | null): boolean {
  return a === null || b === null ? a === b : a.equals(b);
}

function recordText(r: PeekedRecord): string {
  return `${r.value === null ? 'a tombstone' : r.value.toString()} v${r.version} (rev ${r.revision})`;
}

/** What the checker needs from the simulator. */
export interface DurabilityHost {
  /** Virtual time, ms. */
  now(): number;
  /** Every node that is up (paused ones included). */
  up(): readonly DurableView[];
  /** Is this node paused now. */
  paused(node: string): boolean;
  /** The highest committed entry of a partition on any node that is up. */
  bestEntry(pkey: string): RuntimeEntry | undefined;
}

/** Options of {@link DurabilityChecker}. */
export interface DurabilityOptions {
  stores: readonly StoreConfig[];
  /** The keys' write histories (the simulated clients'), by partition. */
  histories: readonly KeyHistory[];
  /** The async lag bound, ms (history-format.md v2 `asyncLagMaxMs`; ASYNC_LAG, 1 s by default). */
  asyncLagMs: number;
  /** Check the within-budget rules (possession, replica-missing-write, lost). */
  within: boolean;
}

interface LagSample {
  t: number;
  epoch: number;
  active: string | null;
  revision: number;
}

/** The durability rules of the module doc, fed by the simulator. */
export class DurabilityChecker {
  private readonly storeOf = new Map<string, StoreConfig>();
  private readonly byPkey = new Map<string, KeyHistory[]>();
  /** Partition -> its workload keys. */
  private readonly keysOf = new Map<string, string[]>();
  /** Nemesis faults (crash, pause, partition) with the nodes they touched, crash instants, connection changes. */
  private readonly timeline: FaultTimeline;
  /** Tenures already checked for possession, and when each partition's tenures started serving. */
  private readonly tenuresSeen = new Set<string>();
  private readonly tenureStarts = new Map<string, Array<{ t: number; node: string }>>();
  private readonly lagSamples = new Map<string, LagSample[]>();
  /** Async partition -> writes its crashed owner acknowledged that surviving replicas held at the crash. */
  private readonly heldAtCrash = new Map<string, HeldAtCrash[]>();
  /** Writes checked by {@link checkHeldAtCrash} so far (a figure: the rule was exercised). */
  heldAtCrashChecked = 0;
  /** Position claims checked by {@link onPositionClaim} so far (a figure: the rule was exercised). */
  positionClaimsChecked = 0;

  constructor(
    private readonly host: DurabilityHost,
    private readonly o: DurabilityOptions,
  ) {
    this.timeline = new FaultTimeline(() => host.now());
    for (const s of o.stores) this.storeOf.set(s.name, s);
    for (const h of o.histories) {
      const list = this.byPkey.get(h.pkey) ?? [];
      list.push(h);
      this.byPkey.set(h.pkey, list);
      const keys = this.keysOf.get(h.pkey) ?? [];
      keys.push(h.key);
      this.keysOf.set(h.pkey, keys);
    }
  }

  // ───────────── what the simulator reports ─────────────

  /** A nemesis fault started, touching `nodes`; returns the function that ends it. */
  faultStart(nodes: readonly string[]): () => void {
    return this.timeline.faultStart(nodes);
  }

  /** A node crashed (kill -9): a fault until its restart, and a crash instant. */
  crashed(node: string): () => void {
    this.timeline.noteCrash(node);
    if (this.o.within) this.noteHeldAtCrash(node);
    return this.faultStart([node]);
  }

  /**
   * The active owner `node` of async partitions just crashed: for each of its partitions and
   * each key, the latest write it acknowledged that a surviving assigned replica holds now (the
   * key's last acknowledged write, or, when no replica holds that one yet, the latest earlier one
   * a replica does hold: a promotion that skips the more complete holder loses it as surely, and
   * the key's last write, too recent to have left the owner, would hide that), for
   * {@link checkHeldAtCrash}.
   */
  private noteHeldAtCrash(node: string): void {
    const now = this.host.now();
    for (const [pkey, hs] of this.byPkey) {
      const st = this.storeOf.get(hs[0].store)!;
      if (st.ackMode !== 'async' || st.replicationFactor < 2) continue;
      const e = this.host.bestEntry(pkey);
      if (!e || e.active?.node !== node) continue;
      const views = this.host.up().filter((v) => v.id !== node && e.replicas.includes(v.id));
      const held: HeldAtCrash[] = [];
      for (const h of hs) {
        const last = lastAcked(h, now);
        if (!last || last.ack!.node !== node) continue;
        const best = Math.max(0, ...views.map((v) => v.peek(pkey, h.key)?.version ?? 0));
        // the latest write the owner acknowledged that some surviving replica holds
        let w: WriteRecord | null = null;
        for (let i = h.writes.length - 1; i >= 0 && !w; i--) {
          const x = h.writes[i];
          if (x.outcome === 'ok' && x.completeMs <= now && x.ack && x.ack.node === node && x.ack.version <= best) w = x;
        }
        if (!w) continue;
        const v = w.ack!.version;
        const holders = views.filter((y) => (y.peek(pkey, h.key)?.version ?? 0) >= v).map((y) => ({ node: y.id, inc: y.inc }));
        held.push({ key: h.key, store: h.store, w, holders, crashAt: now, owner: node });
      }
      if (held.length > 0) this.heldAtCrash.set(pkey, held);
      else this.heldAtCrash.delete(pkey);
    }
  }

  /** The connection from `a` to `b` broke (a grudge, a crash, a reset) or came back up: replication over it was disrupted until it is up again. */
  linkChanged(a: string, b: string, up: boolean): void {
    this.timeline.linkChanged(a, b, up);
  }

  // ───────────── checks ─────────────

  /**
   * Replica `r` claims a position in the log of the tenure `tag` of `pkey`: it acknowledged
   * revision `rev` of that tenure's stream (rep-ack), or asked to catch up from revision `rev` of
   * it (sync-req naming that tenure as the log it holds). `active` is the incarnation whose
   * committed entry names it the active of that tenure, so its copy is that log. The claim must
   * be true: `rev` no further than the log reaches, and `r`'s copy that log's prefix at `rev`
   * ({@link prefixDivergence}), for sync and async stores alike. A bug like fencing off by one
   * (a returning copy that follows another log taken for a position in this one) shows here, at
   * the claim, before the workload's next writes of the keys cover the copy's wrong ones.
   * @throws InvariantViolation (replica-divergence).
   */
  onPositionClaim(what: 'rep-ack' | 'sync-req', r: DurableView, active: DurableView, pkey: string, tag: string, rev: number): void {
    const keys = this.keysOf.get(pkey);
    if (!keys) return;
    this.positionClaimsChecked++;
    const end = active.revisionOf(pkey);
    const d = rev > end ? `the log ends at revision ${end}` : prefixDivergence(keys, (k) => active.peekAt(pkey, k, rev), (k) => r.peek(pkey, k));
    if (d) {
      const e = active.committedEntry(pkey);
      throw new InvariantViolation('replica-divergence', `${r.id} (inc ${r.inc}) ${what === 'rep-ack' ? 'acknowledged' : 'asked to catch up from'} revision ${rev} of ${tag} for ${pkey} to ${active.id} (at revision ${end}, ${e ? describe(e) : 'no entry'}), but its copy is not that log's prefix: ${d}`);
    }
  }

  /**
   * A write acknowledged (Ok) by `x` (rule under-replicated-ack).
   * @throws InvariantViolation (under-replicated-ack).
   */
  onAck(x: DurableView, pkey: string, store: string, key: string, info: WriteInfo): void {
    const st = this.storeOf.get(store);
    if (!st || st.ackMode !== 'sync' || st.replicationFactor < 2) return;
    const e = x.committedEntry(pkey);
    // an in-sync member whose incarnation is gone may have held the write until it crashed (the
    // store counts the acknowledgement it sent): counted as a holder, the checker cannot tell
    let holders = 0;
    for (const m of e?.inSync ?? []) {
      const v = this.viewOf(m.node, m.inc);
      const rec = v?.peek(pkey, key);
      if (!v || (rec && rec.version >= info.version)) holders++;
    }
    // at least two copies, and an honest claim: no more than the in-sync members holding it
    if (info.copies < 2 || holders < 2 || holders < info.copies) {
      throw new InvariantViolation('under-replicated-ack', `${x.id} acknowledged ${store}/${key} v${info.version} (rev ${info.revision}, epoch ${info.epoch}) saying ${info.copies} copies; ${holders} in-sync copies hold it (${e ? describe(e) : 'no entry'})`);
    }
  }

  /**
   * After every event of node `x`: a partition `x` serves in a tenure not seen serving before is
   * checked for possession.
   * @throws InvariantViolation (possession).
   */
  afterEvent(x: DurableView, pkeys: readonly string[]): void {
    for (const pkey of pkeys) {
      if (!x.isServingActive(pkey)) continue;
      const e = x.committedEntry(pkey)!;
      const tag = tenureTag(e.active!, e.activeSince);
      if (this.tenuresSeen.has(tag + pkey)) continue;
      this.tenuresSeen.add(tag + pkey);
      const starts = this.tenureStarts.get(pkey) ?? [];
      starts.push({ t: this.host.now(), node: x.id });
      this.tenureStarts.set(pkey, starts);
      if (this.o.within) {
        this.checkHeldAtCrash(x, pkey, e);
        this.checkPossession(x, pkey, e);
      }
    }
  }

  /** The first new tenure after an async owner's crash holds what a surviving replica held then. */
  private checkHeldAtCrash(x: DurableView, pkey: string, e: RuntimeEntry): void {
    const held = this.heldAtCrash.get(pkey);
    if (!held) return;
    this.heldAtCrash.delete(pkey);
    const now = this.host.now();
    for (const c of held) {
      this.heldAtCrashChecked++;
      const mine = x.peek(pkey, c.key)?.version ?? 0;
      if (mine >= c.w.ack!.version) continue;
      const still = c.holders.find((m) => this.viewOf(m.node, m.inc) && !this.touched(m.node, c.crashAt + 1e-6, now));
      if (!still) continue;
      throw new InvariantViolation(
        'possession',
        `${x.id} (inc ${x.inc}) serves ${pkey} in a new tenure (${describe(e)}) without ${c.store}/${c.key} ${c.w.valueId ?? 'delete'} (seq ${c.w.seq}, v${c.w.ack!.version}, acknowledged by ${c.owner} at epoch ${c.w.ack!.epoch}, t=${c.w.completeMs.toFixed(1)}); it holds v${mine}, while ${still.node}, an assigned replica that survived ${c.owner}'s crash at t=${c.crashAt.toFixed(1)} untouched by any fault since, held it then`,
      );
    }
  }

  private checkPossession(x: DurableView, pkey: string, e: RuntimeEntry): void {
    const now = this.host.now();
    const what = (h: KeyHistory, w: WriteRecord, mine: number): string =>
      `${x.id} (inc ${x.inc}) serves ${pkey} in a new tenure (${describe(e)}) without ${h.store}/${h.key} ${w.valueId ?? 'delete'} (seq ${w.seq}, v${w.ack!.version}, acknowledged by ${w.ack!.node} at epoch ${w.ack!.epoch}, t=${w.completeMs.toFixed(1)}); it holds v${mine}`;
    for (const h of this.byPkey.get(pkey) ?? []) {
      const st = this.storeOf.get(h.store)!;
      const w = lastAcked(h, now);
      if (!w) continue;
      const mine = x.peek(pkey, h.key)?.version ?? 0;
      if (mine >= w.ack!.version) continue;
      if (st.replicationFactor > 1 && st.ackMode === 'sync') throw new InvariantViolation('possession', what(h, w, mine));
      if (st.ackMode !== 'async') continue;
      // every acknowledged write an in-sync member holds, not only the key's last one (which may
      // be too recent to have left its owner, while the member holds an earlier one we lack)
      for (const m of e.inSync) {
        if (m.node === x.id) continue;
        const v = this.viewOf(m.node, m.inc);
        const rec = v?.peek(pkey, h.key);
        if (!v || !rec || rec.version <= mine) continue;
        // the latest such write: the shortest window for a fault to have touched the member
        const held = latestAckedIn(h, now, mine, rec.version);
        if (!held || this.touched(m.node, held.invokeMs, now)) continue;
        throw new InvariantViolation('possession', `${what(h, held, mine)}, while in-sync ${m.node}, untouched by any fault since, holds v${rec.version}`);
      }
    }
  }

  /**
   * Every poll (100 ms of virtual time): replica-missing-write (sync stores, within budget) and
   * replication-lag (async stores).
   * @throws InvariantViolation (replica-missing-write, replication-lag).
   */
  poll(pkeys: readonly string[]): void {
    const now = this.host.now();
    for (const pkey of pkeys) {
      const hs = this.byPkey.get(pkey);
      const e = this.host.bestEntry(pkey);
      if (!e || !hs || hs.length === 0) continue;
      const st = this.storeOf.get(hs[0].store)!;
      if (st.ackMode === 'sync' && st.replicationFactor > 1 && this.o.within) this.checkInSyncHolds(pkey, e, hs, now);
      if (st.ackMode === 'async' && st.replicationFactor > 1) this.checkLag(pkey, e, now);
    }
  }

  private checkInSyncHolds(pkey: string, e: RuntimeEntry, hs: readonly KeyHistory[], now: number): void {
    for (const m of e.inSync) {
      // a Recovering active syncs from the more complete holder before it serves
      if (e.health === 'Recovering' && sameMember(m, e.active)) continue;
      const v = this.viewOf(m.node, m.inc);
      if (!v) continue;
      for (const h of hs) {
        const w = lastAcked(h, now);
        if (!w) continue;
        const have = v.peek(pkey, h.key)?.version ?? 0;
        if (have < w.ack!.version) {
          throw new InvariantViolation('replica-missing-write', `${m.node} (inc ${m.inc}), in sync for ${pkey} (${describe(e)}), holds ${h.store}/${h.key} at v${have}, without ${w.valueId ?? 'delete'} (seq ${w.seq}, v${w.ack!.version}) acknowledged by ${w.ack!.node} at t=${w.completeMs.toFixed(1)}`);
        }
      }
    }
  }

  private checkLag(pkey: string, e: RuntimeEntry, now: number): void {
    const samples = this.lagSamples.get(pkey) ?? [];
    this.lagSamples.set(pkey, samples);
    const activeView = e.active ? this.viewOf(e.active.node, e.active.inc) : null;
    samples.push({ t: now, epoch: e.epoch, active: e.active?.node ?? null, revision: activeView ? activeView.revisionOf(pkey) : -1 });
    const from = now - this.o.asyncLagMs;
    while (samples.length > 1 && samples[1].t <= from) samples.shift();
    const base = samples[0];
    if (base.t > from || !activeView) return;
    if (samples.some((s) => s.epoch !== e.epoch || s.active !== base.active)) return;
    for (const n of e.replicas) if (this.touched(n, from, now)) return;
    const act = e.active!.node;
    for (const m of e.inSync) {
      if (sameMember(m, e.active)) continue;
      // the stream from the active to this member (and its acks) ran undisturbed: no connection
      // between the two broke or came back in the window, none is down (a reset elsewhere, say
      // between two replicas, delays nothing of this stream)
      if (this.timeline.linkDisturbed(act, m.node, from)) continue;
      const v = this.viewOf(m.node, m.inc);
      if (!v) continue;
      const rev = v.revisionOf(pkey);
      if (rev < base.revision) {
        throw new InvariantViolation('replication-lag', `${m.node}, in sync for async ${pkey} (${describe(e)}), holds revision ${rev} at t=${now.toFixed(1)}; its active held ${base.revision} ${this.o.asyncLagMs} ms earlier, with no fault or broken connection in between`);
      }
    }
  }

  /**
   * At the end (within budget): a key of an async or RF1 store whose last acknowledged write `w`
   * is missing from the final value.
   * @throws InvariantViolation (lost) when the contract does not allow that loss.
   */
  checkLoss(h: KeyHistory, w: WriteRecord, finalDetail: string): void {
    const st = this.storeOf.get(h.store)!;
    // every window runs from the ack, as the verifier's (history-format.md v2: t = L.complete):
    // never more lenient than the verifier (a crash before the ack of a write a restarted node
    // acknowledged excuses nothing)
    const t = w.completeMs;
    const acker = w.ack!.node;
    const crash = this.timeline.crashTimes(acker).find((c) => c >= t);
    if (st.replicationFactor === 1) {
      if (crash !== undefined) return;
      // the only copy moves with the partition (a move's handoff, issue 14): a node that took the
      // partition over after the write and crashed while holding it lost it too (make sim
      // MEMBERSHIP=1 RUNS=1000 SEED=7, run 563: rf1/1 moved from n2 to n4, then n4 crashed)
      for (const s of this.tenureStarts.get(h.pkey) ?? []) {
        if (s.t < t) continue;
        if (this.timeline.crashTimes(s.node).some((c) => c >= s.t)) return;
      }
      throw new InvariantViolation('lost', `${finalDetail}: an RF1 write whose node ${acker} never crashed after it, nor any node that took the partition over`);
    }
    if (st.ackMode !== 'async') return;
    const takeover = (this.tenureStarts.get(h.pkey) ?? []).find((s) => s.t >= t && s.node !== acker);
    const te = Math.min(crash ?? Infinity, takeover?.t ?? Infinity);
    if (te === Infinity) throw new InvariantViolation('lost', `${finalDetail}: an async write whose owner ${acker} was never replaced after it`);
    if (!this.touched(acker, t, te)) throw new InvariantViolation('lost', `${finalDetail}: an async write whose owner ${acker} no fault touched before its successor took over at t=${te.toFixed(1)} (a handoff loses nothing)`);
    // the node that took over: the first other node to serve the partition after the write
    const taker = takeover?.node ?? null;
    // async-ack 4: a fault in effect at some instant of [t, t + asyncLagMaxMs] (make sim RUNS=2000
    // SEED=4040 run 939: async3/k8#35, retried through a split, acked by n2 at 23,773.9 ms, n2 cut
    // off 30 ms later with the rep still on a 40 ms link, then crashed: allowed)
    const lagEnd = t + this.o.asyncLagMs;
    if (!this.touched(acker, t, lagEnd) && !(taker && this.touched(taker, t, lagEnd))) {
      throw new InvariantViolation('lost', `${finalDetail}: an async write whose replication no fault disrupted within ${this.o.asyncLagMs} ms`);
    }
  }

  // ───────────── helpers ─────────────

  /** Was `node` touched by a nemesis fault in effect at some instant of [from, to]. */
  private touched(node: string, from: number, to: number): boolean {
    return this.timeline.touched(node, from, to);
  }

  /** The running view of this incarnation, or null when that incarnation is gone. */
  private viewOf(node: string, inc: string): DurableView | null {
    for (const v of this.host.up()) if (v.id === node) return v.inc === inc ? v : null;
    return null;
  }
}

/** A write a crashed async owner acknowledged, and the surviving replicas that held it at the crash. */
interface HeldAtCrash {
  key: string;
  store: string;
  w: WriteRecord;
  holders: Array<{ node: string; inc: string }>;
  crashAt: number;
  owner: string;
}

/** The latest write of the key acknowledged to its client at or before `now` whose version is in (above, atMost]. */
function latestAckedIn(h: KeyHistory, now: number, above: number, atMost: number): WriteRecord | null {
  for (let i = h.writes.length - 1; i >= 0; i--) {
    const w = h.writes[i];
    if (w.outcome === 'ok' && w.completeMs <= now && w.ack && w.ack.version > above && w.ack.version <= atMost) return w;
  }
  return null;
}

/** The last write of the key acknowledged to its client at or before `now`. */
function lastAcked(h: KeyHistory, now: number): WriteRecord | null {
  for (let i = h.writes.length - 1; i >= 0; i--) {
    const w = h.writes[i];
    if (w.outcome === 'ok' && w.completeMs <= now && w.ack) return w;
  }
  return null;
}

function describe(e: RuntimeEntry): string {
  return `e${e.epoch} ${e.active ? `${e.active.node}/${e.active.inc}` : '-'} ${e.health} inSync=${e.inSync.map((m) => m.node).join(',')}`;
}
