/**
 * A history indexed for its rules (ledger/history-rules.ts): samples by partition and time, crash
 * faults, the contract's rules, and our readings of "down" and of a partition's lives.
 */
import type { History, HistoryFault, HistoryOwnership, HistoryStore } from './history-format.js';
import { HISTORY_FORMAT_V2 } from './history-format.js';
import { contractRules, letterContract, type ContractRules } from './contract.js';
import { intersectIntervals, mergeIntervals } from './intervals.js';

/** No end: a fault still in effect, a node never back. */
export const INF = Number.POSITIVE_INFINITY;
/** kill and stop lose the node's memory (a crash); the other kinds do not. */
export const isCrash = (f: HistoryFault): boolean => f.kind === 'kill' || f.kind === 'stop';
/** Crash instant c (v2; also v1's "start", which histories without `effective` equal). */
export const crashAt = (f: HistoryFault): number => f.effective ?? f.start;
/** A fault's end, INF when it has none. */
export const endOf = (f: HistoryFault): number => f.end ?? INF;
/** A fault is in effect from `start` to `end` (no end: to the end of the history). */
export const inEffectDuring = (f: HistoryFault, from: number, to: number): boolean => f.start <= to && endOf(f) >= from;
/** A partition's key in the index's maps. */
export const pkey = (store: string, partition: number): string => `${store}\u0000${partition}`;

/**
 * The parts of a history the rules look up, indexed once per judgement (pure; caches the total
 * losses it computes). Built by judgeHistory and classifyLoss (history-rules.ts).
 */
export class HistoryIndex {
  /** A v2 history (judged by the rules of version 2). */
  readonly v2: boolean;
  /** Stores by name. */
  readonly stores = new Map<string, HistoryStore>();
  private readonly replicas = new Map<string, string[]>();
  /** Samples per partition, by time (stable: input order among equal times). */
  readonly samples = new Map<string, HistoryOwnership[]>();
  /** (partition, life, epoch) -> the non-null actives of its samples. */
  readonly actives = new Map<string, Set<string>>();
  /** The kill and stop faults, in history order. */
  readonly crashes: HistoryFault[];
  /** The async lag bound, ms (0 when the contract declares none). */
  readonly lag: number;
  /** v2: the rules the contract declares (`run.contract`, else the letter: ledger/contract.ts). */
  readonly rules: ContractRules;
  /** v2 and `run.beyondBudget`: a partition may lose every copy at once (our total-amnesia reading). */
  private readonly amnesia: boolean;
  /** Partition -> the starts of its total losses ({@link lossStarts}). */
  private readonly losses = new Map<string, number[]>();

  constructor(readonly h: History) {
    this.v2 = h.format === HISTORY_FORMAT_V2;
    for (const s of h.stores) this.stores.set(s.name, s);
    for (const p of h.partitions) this.replicas.set(pkey(p.store, p.partition), p.replicas);
    h.ownership.forEach((s) => {
      const k = pkey(s.store, s.partition);
      let list = this.samples.get(k);
      if (list === undefined) this.samples.set(k, (list = []));
      list.push(s);
    });
    for (const list of this.samples.values()) {
      const order = new Map(list.map((s, i) => [s, i]));
      list.sort((a, b) => a.t - b.t || order.get(a)! - order.get(b)!);
    }
    this.crashes = h.faults.filter(isCrash);
    this.rules = contractRules(h.run?.contract ?? letterContract(h.run ?? { asyncLagMaxMs: 0 }, h.stores));
    this.lag = this.rules.asyncLagMs ?? 0;
    this.amnesia = this.v2 && h.run?.beyondBudget === true;
    for (const s of h.ownership) {
      if (s.active === null) continue;
      const ek = `${pkey(s.store, s.partition)}\u0000${this.lifeAt(s.store, s.partition, s.t)}\u0000${s.epoch}`;
      let set = this.actives.get(ek);
      if (set === undefined) this.actives.set(ek, (set = new Set()));
      set.add(s.active);
    }
  }

  /**
   * v2 "down" for partition p: per kill/stop fault on `node`, [c, back) with back the first
   * sample of p after the fault's end that lists the node in `inSync` and (our reading), when it
   * carries `revisions`, records a revision for it; when no sample of p carries `inSync`:
   * [c, caughtUp or end). No end: to infinity. Unmerged, in fault order.
   */
  downV2(store: string, partition: number, node: string): Array<[number, number]> {
    const samples = this.samplesOf(store, partition);
    const withInSync = samples.some((s) => s.inSync !== undefined);
    return this.crashes
      .filter((f) => f.nodes.includes(node))
      .map((f): [number, number] => {
        if (!withInSync) return [crashAt(f), f.caughtUp ?? endOf(f)];
        if (f.end === undefined || f.end === null) return [crashAt(f), INF];
        const back = samples.find((s) => s.t > f.end! && s.inSync !== undefined && s.inSync.includes(node) && (s.revisions === undefined || s.revisions[node] !== undefined));
        return [crashAt(f), back === undefined ? INF : back.t];
      });
  }

  /**
   * Our reading (total amnesia, only when `run.beyondBudget`): the instants at which a total loss
   * of the partition began, ascending: the starts of the maximal intervals during which every
   * node that was ever its replica (`partitions[].replicas` and every sample's `replicas`) is
   * down for it. [] within the budget.
   */
  private lossStarts(store: string, partition: number): number[] {
    const k = pkey(store, partition);
    const cached = this.losses.get(k);
    if (cached !== undefined) return cached;
    let out: number[] = [];
    if (this.amnesia) {
      const ever = new Set(this.replicasOf(store, partition));
      for (const s of this.samplesOf(store, partition)) for (const n of s.replicas ?? []) ever.add(n);
      let acc: Array<[number, number]> | null = null;
      for (const n of ever) {
        const down = mergeIntervals(this.downV2(store, partition, n));
        acc = acc === null ? down : intersectIntervals(acc, down);
        if (acc.length === 0) break;
      }
      out = (acc ?? []).map(([from]) => from);
    }
    this.losses.set(k, out);
    return out;
  }

  /** The life of the partition at instant x: how many of its total losses began before x (0 within the budget). */
  lifeAt(store: string, partition: number, x: number): number {
    let n = 0;
    for (const s of this.lossStarts(store, partition)) if (s < x) n++;
    return n;
  }

  /** The partition's samples, by time. */
  samplesOf(store: string, partition: number): HistoryOwnership[] {
    return this.samples.get(pkey(store, partition)) ?? [];
  }

  /**
   * The partition's replicas at instant t (v2): those of the latest sample at or before t that
   * carries `replicas` (the partition map of that moment, after a regeneration or a move), else
   * the partition's replicas at the start.
   */
  replicasAt(store: string, partition: number, t: number): string[] {
    if (this.v2) {
      let at: string[] | undefined;
      for (const s of this.samplesOf(store, partition)) {
        if (s.t > t) break;
        if (s.replicas !== undefined) at = s.replicas;
      }
      if (at !== undefined) return at;
    }
    return this.replicasOf(store, partition);
  }

  /**
   * v2 rf1 across moves (issue 14): the only copy moves with the partition, so a kill or stop at
   * c >= t of a node listed in the replicas of the moment c (each sample's replicas are the rules'
   * for that sample) lost it too. The earliest such crash, or undefined.
   */
  laterHolderCrash(store: string, partition: number, t: number): { fault: string; node: string; at: number } | undefined {
    let best: { fault: string; node: string; at: number } | undefined;
    for (const f of this.crashes) {
      const c = crashAt(f);
      if (c < t || (best !== undefined && c >= best.at)) continue;
      const listed = this.replicasAt(store, partition, c);
      const node = f.nodes.find((n) => listed.includes(n));
      if (node !== undefined) best = { fault: f.id, node, at: c };
    }
    return best;
  }

  /** The partition's replicas at the start (`partitions[].replicas`). */
  replicasOf(store: string, partition: number): string[] {
    return this.replicas.get(pkey(store, partition)) ?? [];
  }

  /** Kill/stop faults on `node` whose crash instant is at or after t, earliest first. */
  crashedAfter(node: string, t: number): HistoryFault[] {
    return this.crashes.filter((f) => f.nodes.includes(node) && crashAt(f) >= t).sort((a, b) => crashAt(a) - crashAt(b));
  }
}
