/**
 * The class of a lost write (history-format.md, both versions): rf1, async-ack, beyond-budget or
 * violation, first match wins, with the evidence it rests on.
 */
import type { HistoryFault, HistoryOwnership, HistoryWrite } from './history-format.js';
import type { LossEvidence } from './history-findings.js';
import { crashAt, endOf, inEffectDuring, INF, type HistoryIndex } from './history-index.js';
import { earliestAllDown } from './intervals.js';

/**
 * The class of a lost write L (first match wins): rf1, async-ack, beyond-budget, violation, by
 * the rules of the history's version; with the evidence it rests on.
 */
export function classifyLostWrite(ix: HistoryIndex, l: HistoryWrite): LossEvidence {
  const t = l.complete as number;
  const store = ix.stores.get(l.store)!;
  const replicas = ix.replicasAt(l.store, l.partition, t);
  // rf1: RF 1 and the node holding it crashed after the ack (DESIGN.md §5): a node of the
  // partition's replicas, or (v2, our reading) the acking node itself: an RF1 write's only copy
  // is the acking owner's, also when the write was acknowledged in the first moments of a new
  // tenure (a regeneration onto another node) before any sample showed that map (a 150 s run,
  // seed 4040: two writes acked 58 ms before the sample naming the new replica were violations)
  if (store.replicationFactor === 1 && (!ix.v2 || ix.rules.rf1)) {
    const holders = ix.v2 && l.ack !== undefined && !replicas.includes(l.ack.node) ? [...replicas, l.ack.node] : replicas;
    const hit =
      holders.flatMap((n) => ix.crashedAfter(n, t).slice(0, 1).map((f) => ({ fault: f.id, node: n, at: crashAt(f) }))).sort((a, b) => a.at - b.at)[0] ??
      (ix.v2 ? ix.laterHolderCrash(l.store, l.partition, t) : undefined);
    if (hit !== undefined) return { cls: 'rf1', crash: hit };
  }
  if (ix.v2) {
    const a = asyncAckV2(ix, l, t);
    if (a !== null) return a;
    if (ix.h.run!.beyondBudget && ix.rules.beyondBudget) {
      const at = allDownV2(ix, l, t, replicas);
      if (at !== null) return { cls: 'beyond-budget', allDownMs: at };
    }
    return { cls: 'violation' };
  }
  const a = asyncAckV1(ix, l, t);
  if (a !== null) return a;
  const at = allDownV1(ix, t, replicas);
  if (at !== null) return { cls: 'beyond-budget', allDownMs: at };
  return { cls: 'violation' };
}

/** v1 async-ack: the ack's own mode; a crash after the ack or any higher epoch; not replicated by te. */
function asyncAckV1(ix: HistoryIndex, l: HistoryWrite, t: number): LossEvidence | null {
  const ack = l.ack!;
  if (ack.ackMode !== 'async') return null;
  const crash = ix.crashedAfter(ack.node, t)[0];
  const samples = ix.samplesOf(l.store, l.partition);
  const bump = samples.find((s) => s.t >= t && s.epoch > ack.epoch);
  const moments = [...(crash ? [crashAt(crash)] : []), ...(bump ? [bump.t] : [])];
  if (moments.length === 0) return null;
  const te = Math.min(...moments);
  if (samples.some((s) => s.t >= t && s.t <= te && s.epoch === ack.epoch && s.replicatedRevision >= ack.revision)) return null;
  const ev: LossEvidence = { cls: 'async-ack', takeoverMs: te };
  if (crash !== undefined && crashAt(crash) === te) ev.crash = { fault: crash.id, node: ack.node, at: te };
  else if (bump?.active != null) ev.takeoverNode = bump.active;
  return ev;
}

/** v1 beyond-budget: the earliest instant >= t at which every replica is in [start, caughtUp or end). */
function allDownV1(ix: HistoryIndex, t: number, replicas: string[]): number | null {
  const down = (n: string): Array<[number, number]> =>
    ix.crashes.filter((f) => f.nodes.includes(n)).map((f) => [crashAt(f), f.caughtUp ?? endOf(f)] as [number, number]);
  return earliestAllDown(replicas.map(down), t);
}

/** v2 async-ack: all six conditions and not deposed (history-format.md v2). */
function asyncAckV2(ix: HistoryIndex, l: HistoryWrite, t: number): LossEvidence | null {
  const ack = l.ack!;
  const owner = ack.node;
  // 1. the store's ack mode is async (and its contract claims async-ack)
  if (ix.stores.get(l.store)!.ackMode !== 'async' || !ix.rules.asyncAck) return null;
  // 2. takeover: the owner crashed after the ack, or a sample at or after t shows a higher
  //    epoch and another active; te the earlier
  const samples = ix.samplesOf(l.store, l.partition);
  const crash = ix.crashedAfter(owner, t)[0];
  const crashTe = crash === undefined ? INF : crashAt(crash);
  const taker = samples.find((s) => s.t >= t && s.epoch > ack.epoch && s.active !== null && s.active !== owner);
  const sampleTe = taker === undefined ? INF : taker.t;
  const te = Math.min(crashTe, sampleTe);
  if (te === INF) return null;
  const byCrash = crashTe <= sampleTe;
  // the node(s) that took over: the active of the sample at te; after a crash, any member other than the owner
  const takers = (n: string): boolean => (byCrash ? n !== owner : n === taker!.active);
  // 3. not yet held by the node that took over; or it was, and lost the partition in its turn
  //    before it passed the write on (a chained takeover, {@link chainedTakeover})
  let chain: ChainedTakeover | null | undefined;
  for (const s of samples) {
    if (s.t < t || s.t > te || s.epoch !== ack.epoch) continue;
    if (s.revisions === undefined) {
      if (s.replicatedRevision >= ack.revision) return null;
    } else if (Object.entries(s.revisions).some(([n, rev]) => takers(n) && rev >= ack.revision)) {
      chain = chainedTakeover(ix, l, t, te, byCrash ? null : taker!);
      if (chain === null) return null;
      break;
    }
  }
  // 4. disrupted in time: a fault on the owner or the node that took over, in effect within
  //    [t, t + lag] (no lag bound declared: within [t, te])
  const replicas = ix.replicasAt(l.store, l.partition, t);
  const touches = (f: HistoryFault): boolean => f.nodes.includes(owner) || f.nodes.some((n) => takers(n) && (!byCrash || replicas.includes(n)));
  const disrupting = ix.h.faults.find((f) => touches(f) && inEffectDuring(f, t, ix.rules.asyncLagMs === null ? te : t + ix.lag));
  if (disrupting === undefined) return null;
  // 5. not a planned handoff: a takeover shown by a sample needs a fault on the owner within [t, te]
  if (!byCrash && !ix.h.faults.some((f) => f.nodes.includes(owner) && inEffectDuring(f, t, te))) return null;
  // 6. within the lease: no partition isolating the owner took effect (`effective`, else
  //    `start`) more than leaseMs before the invoke and was still in effect at it
  if (ix.rules.leaseMs !== null) {
    const lease = ix.rules.leaseMs;
    const cutOff = ix.h.faults.some(
      (f) => f.kind === 'partition' && (f.isolated ?? f.nodes).includes(owner) && (f.effective ?? f.start) < l.invoke - lease && inEffectDuring(f, l.invoke, l.invoke),
    );
    if (cutOff) return null;
  }
  // not deposed (when the contract declares fencing): no sample before the invoke shows a higher epoch with another active
  if (ix.rules.fencing && samples.some((s) => s.t < l.invoke && s.epoch > ack.epoch && s.active !== null && s.active !== owner)) return null;
  const ev: LossEvidence = { cls: 'async-ack', takeoverMs: te, disruptedBy: disrupting.id };
  if (byCrash) ev.crash = { fault: crash!.id, node: owner, at: crashTe };
  else ev.takeoverNode = taker!.active!;
  if (chain) {
    ev.via = chain.via;
    if (chain.takeoverNode !== undefined) ev.takeoverNode = chain.takeoverNode;
  }
  return ev;
}

/** The longest chain of takeovers {@link chainedTakeover} follows (each needs its own fault within the lag bound). */
export const MAX_CHAINED_TAKEOVERS = 4;

/** A chained takeover: the holders that took over and lost the partition in turn, and who took it last. */
export interface ChainedTakeover {
  /** Each holder of the write that took over (`node`, first sampled active at `fromMs`) and lost the partition at `lostMs`; ms. */
  via: NonNullable<LossEvidence['via']>;
  /** The node that took over from the last holder, when sampled. */
  takeoverNode?: string;
}

/**
 * A chained takeover (async-ack, condition 3, our reading of seed 002 beside history-format.md
 * v2): the node A that took over from L's owner held L, but A lost the partition in its turn (A
 * crashed, or a sample shows a higher epoch and another active) with a fault on A (or on the node
 * that took over from it) in effect within the async lag bound of A's first sample as the active
 * (within [A's takeover, A's loss] when no bound is declared), a fault on A in effect until its loss
 * when a sample shows it (not a handoff), and the node that took over from A never held L in a
 * sample of an epoch of the chain since the ack (after a crash of A: no member other than L's owner
 * and the chain's holders), nor did a node of the chain at an epoch after its own tenure (L's owner
 * restarted and synced from A holds L: a surviving holder the promotion had to prefer). Seed 002: an async write is lost when the active dies before the op
 * reaches a surviving holder; a new active that holds it is that active, with the same window.
 * When the next node held L too and took over, the chain goes on (at most
 * {@link MAX_CHAINED_TAKEOVERS} links). `taker` is the sample that showed the first takeover, or
 * null when it was L's owner's crash (then A is the first active sampled at a higher epoch after
 * `te`). Null when any of this fails (L's loss is then a violation).
 */
export function chainedTakeover(ix: HistoryIndex, l: HistoryWrite, t: number, te: number, taker: HistoryOwnership | null): ChainedTakeover | null {
  const ack = l.ack!;
  const samples = ix.samplesOf(l.store, l.partition);
  const replicas = ix.replicasAt(l.store, l.partition, t);
  const epochs = new Set([ack.epoch]);
  // each node of the chain and the epoch of its tenure: L's owner, then each holder that took over
  const tenure = new Map([[ack.node, ack.epoch]]);
  // a node of the chain holding L at a later epoch came back with it: a surviving holder
  const cameBack = (n: string, e: number): boolean => tenure.has(n) && e > tenure.get(n)!;
  const held = (who: (n: string, e: number) => boolean, until: number): boolean =>
    samples.some((s) => s.t >= t && s.t <= until && epochs.has(s.epoch) && s.revisions !== undefined && Object.entries(s.revisions).some(([n, rev]) => who(n, s.epoch) && rev >= ack.revision));
  const nextActive = (from: number, epoch: number, node: string): HistoryOwnership | undefined =>
    samples.find((s) => s.t >= from && s.epoch > epoch && s.active !== null && s.active !== node);
  let next = taker ?? nextActive(te, ack.epoch, ack.node);
  const via: ChainedTakeover['via'] = [];
  for (let link = 0; link < MAX_CHAINED_TAKEOVERS && next !== undefined; link++) {
    const a = next.active!;
    const since = next.t;
    const epochA = next.epoch;
    if (!held((n) => n === a, since)) return null;
    epochs.add(epochA);
    tenure.set(a, epochA);
    // A's loss of the partition: its crash, or a sample at a higher epoch with another active
    const crash = ix.crashedAfter(a, since)[0];
    const crashTe = crash === undefined ? INF : crashAt(crash);
    const tk = nextActive(since, epochA, a);
    const lostMs = Math.min(crashTe, tk === undefined ? INF : tk.t);
    if (lostMs === INF) return null;
    const byCrash = crashTe <= (tk === undefined ? INF : tk.t);
    // who must not have held L: after A's crash, any member but the chain's; after a takeover
    // shown by a sample, the node that took over; and a node of the chain that came back with it
    const takers = (n: string, e: number): boolean => cameBack(n, e) || (byCrash ? !tenure.has(n) : n === tk!.active);
    const touches = (f: HistoryFault): boolean => f.nodes.includes(a) || f.nodes.some((n) => (byCrash ? !tenure.has(n) && replicas.includes(n) : n === tk!.active));
    if (!ix.h.faults.some((f) => touches(f) && inEffectDuring(f, since, ix.rules.asyncLagMs === null ? lostMs : since + ix.lag))) return null;
    if (!byCrash && !ix.h.faults.some((f) => f.nodes.includes(a) && inEffectDuring(f, since, lostMs))) return null;
    via.push({ node: a, fromMs: since, lostMs });
    next = byCrash ? nextActive(lostMs, epochA, a) : tk;
    if (!held(takers, lostMs)) return next?.active != null ? { via, takeoverNode: next.active } : { via };
  }
  return null;
}

/**
 * v2 beyond-budget: the earliest instant s >= t at which every replica is down for the
 * partition or was out of the in-sync set in the latest sample at or before t.
 */
function allDownV2(ix: HistoryIndex, l: HistoryWrite, t: number, replicas: string[]): number | null {
  const samples = ix.samplesOf(l.store, l.partition);
  let prior: HistoryOwnership | undefined;
  for (const s of samples) if (s.t <= t) prior = s;
  const outOfSync = (n: string): boolean => prior?.inSync !== undefined && !prior.inSync.includes(n);
  const lists = replicas.filter((n) => !outOfSync(n)).map((n) => ix.downV2(l.store, l.partition, n));
  if (lists.length === 0) return replicas.length === 0 ? null : t;
  return earliestAllDown(lists, t);
}
