/**
 * The rules of shared/cases/history-format.md, versions 1 and 2, as ONE pure function over a
 * parsed history: the reference model of the verifier (CONTRACT.md "Ledger"). No SQL, no I/O,
 * nothing above ledger/: the SQL verifier (harness/verifier/verifier.ts) is property-tested
 * against it and the store's simulation (nodes/sim) uses it as its judge.
 *
 * It is written to be read against the letter of the rules, clause by clause, rather than to be
 * fast; it indexes what it scans by key and by partition so that a history of ~10,000 writes is
 * judged in milliseconds.
 *
 * A v2 history is judged by the contract its store declares (`run.contract`, ledger/contract.ts;
 * absent: the letter, {@link letterContract}): a loss class it does not claim excuses no loss
 * (rf1, async-ack, beyond-budget); its async lag bound (none: async-ack condition 4 looks at
 * [t, te] and replication-lag is not judged), owner lease (none: condition 6 is not judged) and
 * fencing (false: the "not deposed" clause is not judged); stale-read only for linearizable
 * reads; under-replicated-ack only for stores whose acks are durable on a majority.
 *
 * Beyond the letter (DESIGN.md §5, the verifier's run record), a v2 history is also INCONCLUSIVE
 * when `run.inconclusiveReason` says why (the harness's own statement that the run cannot
 * certify, e.g. the cluster never healed) and when `run.selfTestBug` is set but no violation was
 * found (a self-test run must come out FAILED).
 *
 * Our readings of the v2 rules where the letter assumes one continuous memory (both verifiers):
 * - epoch-regression: a crash (kill/stop) of the node between two of its samples starts a new
 *   view (a restarted process remembers nothing and may first learn an older entry).
 * - "down" ends at the first sample after the fault's end that lists the node in `inSync` AND,
 *   when that sample carries `revisions`, records a revision for it: a member listed without a
 *   revision is the committed entry naming the node's dead incarnation (the harness records no
 *   revision for it), not a copy known to hold anything.
 * - total amnesia (only when `run.beyondBudget`): a partition's life ends at a total loss, an
 *   instant at which every node that was ever its replica (`partitions[].replicas` and every
 *   sample's `replicas`) is down for it; the store, memory-only, then bootstraps again (epoch 1,
 *   versions from the start). {@link lifeAt}: the number of total losses that began before an
 *   instant. version-regression compares two consecutive ok writes of a key only within one life
 *   (of their acks), epoch-conflict compares samples only within one life, ack-not-from-active
 *   compares an ack only with the samples of its own life. Within the budget nothing changes:
 *   a total loss must not happen there, and what it causes stays a violation.
 */
import type { History, HistoryFault, HistoryOwnership, HistoryRead, HistoryStore, HistoryWrite } from './history-format.js';
import { HISTORY_FORMAT_V2 } from './history-format.js';
import { contractRules, letterContract, type ContractRules } from './contract.js';
import { earliestAllDown, firstIndex, intersectIntervals, mergeIntervals, stalledDuring } from './intervals.js';

/** Finding classes, in report order (DESIGN.md §5, history-format.md). */
export const FINDING_CLASSES = ['violation', 'rf1', 'async-ack', 'beyond-budget', 'info'] as const;
/** violation, or one of the losses the store's contract allows, or info (recovered, unverified). */
export type FindingClass = (typeof FINDING_CLASSES)[number];

/** A key's own finding kinds, in the order the v2 rules try them ("first that applies"). */
export const KEY_FINDING_KINDS = [
  'unverified',
  'unexpected',
  'lost',
  'phantom',
  'under-replicated-ack',
  'ack-not-from-active',
  'version-regression',
  'recovered',
] as const;
/** Read findings (v2): at most one per key, besides the key's own finding. */
export const READ_FINDING_KINDS = ['unexpected-read', 'phantom-read', 'stale-read'] as const;
/** Findings of the runtime map (v2): at most one per partition and kind. */
export const PARTITION_FINDING_KINDS = ['epoch-conflict', 'epoch-regression', 'false-healthy', 'replication-lag'] as const;
/** Every finding kind, in report order. */
export const FINDING_KINDS = [...KEY_FINDING_KINDS, ...READ_FINDING_KINDS, ...PARTITION_FINDING_KINDS] as const;
/** Any finding kind. */
export type FindingKind = (typeof FINDING_KINDS)[number];
/** A key's own finding kind. */
export type KeyFindingKind = (typeof KEY_FINDING_KINDS)[number];
/** A read finding kind. */
export type ReadFindingKind = (typeof READ_FINDING_KINDS)[number];
/** A partition finding kind. */
export type PartitionFindingKind = (typeof PARTITION_FINDING_KINDS)[number];

/** The run's verdict (DESIGN.md §5). */
export type Verdict = 'CERTIFIED' | 'FAILED' | 'INCONCLUSIVE';

/**
 * One finding as history-format.md's `expected` lists it. A key finding: `key`, and `write` (the
 * named write's id; '' for an unverified key with no acknowledged write). A read finding also
 * `read` (the read's id), `write` being the value read (null: absent). A partition finding:
 * `partition`, with `key` and `write` null.
 */
export interface RuleFinding {
  class: FindingClass;
  kind: FindingKind;
  store: string;
  key: string | null;
  write: string | null;
  partition?: number;
  read?: string;
}

/** The judgement of a history. */
export interface Judgement {
  verdict: Verdict;
  /** Key findings by key (first appearance in writes, then final reads), then read, then partition findings. */
  findings: RuleFinding[];
  /** Why the run is INCONCLUSIVE, in the verifier's words and order; [] for another verdict. */
  reasons: string[];
}

/** The reason texts the verdict gives (shared with the SQL verifier so both say the same). */
export const REASONS = {
  interrupted: 'the run was interrupted',
  running: 'the run did not finish (its harness stopped before the end phase)',
  unverified: (n: number): string => `${n} key${n === 1 ? '' : 's'} unverified`,
  noFaults: 'no fault was injected',
  nothingAcknowledged: 'no write was acknowledged',
  selfTest: (bug: string): string => `a self-test run (store started with the bug ${bug}) must come out FAILED, and the bug never showed`,
} as const;

const INF = Number.POSITIVE_INFINITY;
const isCrash = (f: HistoryFault): boolean => f.kind === 'kill' || f.kind === 'stop';
/** Crash instant c (v2; also v1's "start", which histories without `effective` equal). */
const crashAt = (f: HistoryFault): number => f.effective ?? f.start;
const endOf = (f: HistoryFault): number => f.end ?? INF;
/** A fault is in effect from `start` to `end` (no end: to the end of the history). */
const inEffectDuring = (f: HistoryFault, from: number, to: number): boolean => f.start <= to && endOf(f) >= from;
const pkey = (store: string, partition: number): string => `${store}\u0000${partition}`;

/** The key's writes and reads, in seq / invoke order. */
interface KeyData {
  store: string;
  key: string;
  writes: HistoryWrite[];
  reads: HistoryRead[];
  final: History['finalReads'][number] | undefined;
}

/** What a lost write's class rests on (the SQL verifier's findings.detail carries the same). */
export interface LossEvidence {
  cls: FindingClass;
  /** rf1 / async-ack by crash: the crash. */
  crash?: { fault: string; node: string; at: number };
  /** async-ack: when the takeover happened, and by what. */
  takeoverMs?: number;
  /** async-ack by a sample: the node that took over. */
  takeoverNode?: string;
  /** async-ack: the fault that disrupted replication within the lag bound. */
  disruptedBy?: string;
  /** beyond-budget: the instant every replica was down (or out of sync). */
  allDownMs?: number;
}

class Judge {
  private readonly v2: boolean;
  private readonly stores = new Map<string, HistoryStore>();
  private readonly replicas = new Map<string, string[]>();
  /** Samples per partition, by time (stable: input order among equal times). */
  private readonly samples = new Map<string, HistoryOwnership[]>();
  /** (partition, life, epoch) -> the non-null actives of its samples. */
  private readonly actives = new Map<string, Set<string>>();
  private readonly crashes: HistoryFault[];
  private readonly lag: number;
  /** v2: the rules the contract declares (`run.contract`, else the letter: ledger/contract.ts). */
  private readonly rules: ContractRules;
  /** v2 and `run.beyondBudget`: a partition may lose every copy at once (our total-amnesia reading). */
  private readonly amnesia: boolean;
  /** Partition -> the starts of its total losses ({@link lossStarts}). */
  private readonly losses = new Map<string, number[]>();

  constructor(private readonly h: History) {
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
  private downV2(store: string, partition: number, node: string): Array<[number, number]> {
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
  private lifeAt(store: string, partition: number, x: number): number {
    let n = 0;
    for (const s of this.lossStarts(store, partition)) if (s < x) n++;
    return n;
  }

  private samplesOf(store: string, partition: number): HistoryOwnership[] {
    return this.samples.get(pkey(store, partition)) ?? [];
  }

  /**
   * The partition's replicas at instant t (v2): those of the latest sample at or before t that
   * carries `replicas` (the partition map of that moment, after a regeneration or a move), else
   * the partition's replicas at the start.
   */
  private replicasAt(store: string, partition: number, t: number): string[] {
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
  private laterHolderCrash(store: string, partition: number, t: number): { fault: string; node: string; at: number } | undefined {
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

  private replicasOf(store: string, partition: number): string[] {
    return this.replicas.get(pkey(store, partition)) ?? [];
  }

  /** Kill/stop faults on `node` whose crash instant is at or after t, earliest first. */
  private crashedAfter(node: string, t: number): HistoryFault[] {
    return this.crashes.filter((f) => f.nodes.includes(node) && crashAt(f) >= t).sort((a, b) => crashAt(a) - crashAt(b));
  }

  judge(): Judgement {
    const keys = new Map<string, KeyData>();
    const keyOf = (store: string, key: string): KeyData => {
      const k = `${store}\u0000${key}`;
      let d = keys.get(k);
      if (d === undefined) keys.set(k, (d = { store, key, writes: [], reads: [], final: undefined }));
      return d;
    };
    for (const w of this.h.writes) keyOf(w.store, w.key).writes.push(w);
    for (const r of this.h.finalReads) keyOf(r.store, r.key).final = r;
    const readOrder = new Map<HistoryRead, number>();
    (this.h.reads ?? []).forEach((r, i) => {
      readOrder.set(r, i);
      keyOf(r.store, r.key).reads.push(r);
    });
    for (const d of keys.values()) {
      d.writes.sort((a, b) => a.seq - b.seq);
      d.reads.sort((a, b) => a.invoke - b.invoke || readOrder.get(a)! - readOrder.get(b)!);
    }

    const findings: RuleFinding[] = [];
    let unverified = 0;
    for (const d of keys.values()) {
      const f = this.keyFinding(d);
      if (f !== null) {
        findings.push(f);
        if (f.kind === 'unverified') unverified++;
      }
    }
    if (this.v2) {
      for (const d of keys.values()) {
        const f = this.readFinding(d);
        if (f !== null) findings.push(f);
      }
      findings.push(...this.partitionFindings());
    }

    const reasons: string[] = [];
    const run = this.h.run;
    if (run?.status === 'interrupted') reasons.push(REASONS.interrupted);
    if (run?.status === 'running') reasons.push(REASONS.running);
    if (run?.inconclusiveReason != null && run.inconclusiveReason.trim() !== '') reasons.push(run.inconclusiveReason.trim());
    if (unverified > 0) reasons.push(REASONS.unverified(unverified));
    if (this.h.faults.length === 0) reasons.push(REASONS.noFaults);
    if (this.v2 && !this.h.writes.some((w) => w.outcome === 'ok')) reasons.push(REASONS.nothingAcknowledged);
    const failed = findings.some((f) => f.class === 'violation');
    if (run?.selfTestBug != null && run.selfTestBug !== '' && !failed) reasons.push(REASONS.selfTest(run.selfTestBug));
    const verdict: Verdict = failed ? 'FAILED' : reasons.length > 0 ? 'INCONCLUSIVE' : 'CERTIFIED';
    return { verdict, findings, reasons: verdict === 'INCONCLUSIVE' ? reasons : [] };
  }

  /** The seq the final read matches: its write, else the latest ok/info delete, else 0; null when it names no write of the key or is missing/unreadable. */
  private matchedSeq(d: KeyData): number | null {
    const fr = d.final;
    if (fr === undefined || fr.unreadable) return null;
    if (fr.value !== null) return d.writes.find((w) => w.id === fr.value)?.seq ?? null;
    return this.latestDelete(d)?.seq ?? 0;
  }

  /** "An absent final value matches the latest delete whose outcome is ok or info." */
  private latestDelete(d: KeyData): HistoryWrite | undefined {
    let del: HistoryWrite | undefined;
    for (const w of d.writes) if (w.op === 'delete' && w.outcome !== 'fail') del = w;
    return del;
  }

  private keyFinding(d: KeyData): RuleFinding | null {
    const { store, key, writes: ws } = d;
    const out = (cls: FindingClass, kind: KeyFindingKind, write: string): RuleFinding => ({ class: cls, kind, store, key, write });
    const fr = d.final;
    if (ws.length === 0) {
      if (fr !== undefined && !fr.unreadable && fr.value !== null) return out('violation', 'unexpected', fr.value);
      return null;
    }
    const oks = ws.filter((w) => w.outcome === 'ok');
    const lastOk = oks[oks.length - 1];
    // unverified
    if (fr === undefined || fr.unreadable) return out('info', 'unverified', lastOk?.id ?? '');
    // unexpected
    const m = fr.value === null ? undefined : ws.find((w) => w.id === fr.value);
    if (fr.value !== null && m === undefined) return out('violation', 'unexpected', fr.value);
    const del = fr.value === null ? this.latestDelete(d) : undefined;
    const matched = m !== undefined ? m.seq : (del?.seq ?? 0);
    // lost: some ok write ordered after the matched write; L the last of them
    if (lastOk !== undefined && lastOk.seq > matched) return out(this.classify(lastOk).cls, 'lost', lastOk.id);
    // phantom
    if (m?.outcome === 'fail') return out('violation', 'phantom', m.id);
    if (this.v2) {
      const s = this.stores.get(store);
      // under-replicated ack: sync, RF > 1, an ok write whose ack.copies is below 2
      if (s !== undefined && this.rules.majorityAck(s)) {
        const w = oks.find((x) => x.ack!.copies !== undefined && x.ack!.copies < 2);
        if (w !== undefined) return out('violation', 'under-replicated-ack', w.id);
      }
      // ack not from the active of the epoch it named
      // (our reading: compared with the samples of the life of its ack only)
      const w = oks.find((x) => {
        const set = this.actives.get(`${pkey(x.store, x.partition)}\u0000${this.lifeAt(x.store, x.partition, x.complete as number)}\u0000${x.ack!.epoch}`);
        if (set === undefined) return false;
        for (const a of set) if (a !== x.ack!.node) return true;
        return false;
      });
      if (w !== undefined) return out('violation', 'ack-not-from-active', w.id);
    }
    // version regression among ok non-delete writes, in seq order (our reading: two acks of
    // different lives of the partition are not compared)
    let prev: { version: number; life: number } | null = null;
    for (const w of oks) {
      if (w.op === 'delete') continue;
      const life = this.lifeAt(w.store, w.partition, w.complete as number);
      if (prev !== null && prev.life === life && w.ack!.version <= prev.version) return out('violation', 'version-regression', w.id);
      prev = { version: w.ack!.version, life };
    }
    // recovered: the final value is an info write (v2 also: an absent value matching an info delete)
    if (m !== undefined && m.outcome === 'info') return out('info', 'recovered', m.id);
    if (this.v2 && del !== undefined && del.outcome === 'info') return out('info', 'recovered', del.id);
    return null;
  }

  /**
   * The class of a lost write L (first match wins): rf1, async-ack, beyond-budget, violation, by
   * the rules of the history's version; with the evidence it rests on.
   */
  classify(l: HistoryWrite): LossEvidence {
    const t = l.complete as number;
    const store = this.stores.get(l.store)!;
    const replicas = this.replicasAt(l.store, l.partition, t);
    // rf1: RF 1 and the node holding it crashed after the ack (DESIGN.md §5): a node of the
    // partition's replicas, or (v2, our reading) the acking node itself: an RF1 write's only copy
    // is the acking owner's, also when the write was acknowledged in the first moments of a new
    // tenure (a regeneration onto another node) before any sample showed that map (a 150 s run,
    // seed 4040: two writes acked 58 ms before the sample naming the new replica were violations)
    if (store.replicationFactor === 1 && (!this.v2 || this.rules.rf1)) {
      const holders = this.v2 && l.ack !== undefined && !replicas.includes(l.ack.node) ? [...replicas, l.ack.node] : replicas;
      const hit =
        holders.flatMap((n) => this.crashedAfter(n, t).slice(0, 1).map((f) => ({ fault: f.id, node: n, at: crashAt(f) }))).sort((a, b) => a.at - b.at)[0] ??
        (this.v2 ? this.laterHolderCrash(l.store, l.partition, t) : undefined);
      if (hit !== undefined) return { cls: 'rf1', crash: hit };
    }
    if (this.v2) {
      const a = this.asyncAckV2(l, t);
      if (a !== null) return a;
      if (this.h.run!.beyondBudget && this.rules.beyondBudget) {
        const at = this.allDownV2(l, t, replicas);
        if (at !== null) return { cls: 'beyond-budget', allDownMs: at };
      }
      return { cls: 'violation' };
    }
    const a = this.asyncAckV1(l, t);
    if (a !== null) return a;
    const at = this.allDownV1(t, replicas);
    if (at !== null) return { cls: 'beyond-budget', allDownMs: at };
    return { cls: 'violation' };
  }

  /** v1 async-ack: the ack's own mode; a crash after the ack or any higher epoch; not replicated by te. */
  private asyncAckV1(l: HistoryWrite, t: number): LossEvidence | null {
    const ack = l.ack!;
    if (ack.ackMode !== 'async') return null;
    const crash = this.crashedAfter(ack.node, t)[0];
    const samples = this.samplesOf(l.store, l.partition);
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
  private allDownV1(t: number, replicas: string[]): number | null {
    const down = (n: string): Array<[number, number]> =>
      this.crashes.filter((f) => f.nodes.includes(n)).map((f) => [crashAt(f), f.caughtUp ?? endOf(f)] as [number, number]);
    return earliestAllDown(replicas.map(down), t);
  }

  /** v2 async-ack: all six conditions and not deposed (history-format.md v2). */
  private asyncAckV2(l: HistoryWrite, t: number): LossEvidence | null {
    const ack = l.ack!;
    const owner = ack.node;
    // 1. the store's ack mode is async (and its contract claims async-ack)
    if (this.stores.get(l.store)!.ackMode !== 'async' || !this.rules.asyncAck) return null;
    // 2. takeover: the owner crashed after the ack, or a sample at or after t shows a higher
    //    epoch and another active; te the earlier
    const samples = this.samplesOf(l.store, l.partition);
    const crash = this.crashedAfter(owner, t)[0];
    const crashTe = crash === undefined ? INF : crashAt(crash);
    const taker = samples.find((s) => s.t >= t && s.epoch > ack.epoch && s.active !== null && s.active !== owner);
    const sampleTe = taker === undefined ? INF : taker.t;
    const te = Math.min(crashTe, sampleTe);
    if (te === INF) return null;
    const byCrash = crashTe <= sampleTe;
    // the node(s) that took over: the active of the sample at te; after a crash, any member other than the owner
    const takers = (n: string): boolean => (byCrash ? n !== owner : n === taker!.active);
    // 3. not yet held by the node that took over
    for (const s of samples) {
      if (s.t < t || s.t > te || s.epoch !== ack.epoch) continue;
      if (s.revisions === undefined) {
        if (s.replicatedRevision >= ack.revision) return null;
      } else if (Object.entries(s.revisions).some(([n, rev]) => takers(n) && rev >= ack.revision)) {
        return null;
      }
    }
    // 4. disrupted in time: a fault on the owner or the node that took over, in effect within
    //    [t, t + lag] (no lag bound declared: within [t, te])
    const replicas = this.replicasAt(l.store, l.partition, t);
    const touches = (f: HistoryFault): boolean => f.nodes.includes(owner) || f.nodes.some((n) => takers(n) && (!byCrash || replicas.includes(n)));
    const disrupting = this.h.faults.find((f) => touches(f) && inEffectDuring(f, t, this.rules.asyncLagMs === null ? te : t + this.lag));
    if (disrupting === undefined) return null;
    // 5. not a planned handoff: a takeover shown by a sample needs a fault on the owner within [t, te]
    if (!byCrash && !this.h.faults.some((f) => f.nodes.includes(owner) && inEffectDuring(f, t, te))) return null;
    // 6. within the lease: no partition isolating the owner began more than leaseMs before the
    //    invoke and was still in effect at it
    if (this.rules.leaseMs !== null) {
      const lease = this.rules.leaseMs;
      const cutOff = this.h.faults.some(
        (f) => f.kind === 'partition' && (f.isolated ?? f.nodes).includes(owner) && f.start < l.invoke - lease && inEffectDuring(f, l.invoke, l.invoke),
      );
      if (cutOff) return null;
    }
    // not deposed (when the contract declares fencing): no sample before the invoke shows a higher epoch with another active
    if (this.rules.fencing && samples.some((s) => s.t < l.invoke && s.epoch > ack.epoch && s.active !== null && s.active !== owner)) return null;
    const ev: LossEvidence = { cls: 'async-ack', takeoverMs: te, disruptedBy: disrupting.id };
    if (byCrash) ev.crash = { fault: crash!.id, node: owner, at: crashTe };
    else ev.takeoverNode = taker!.active!;
    return ev;
  }

  /**
   * v2 beyond-budget: the earliest instant s >= t at which every replica is down for the
   * partition or was out of the in-sync set in the latest sample at or before t.
   */
  private allDownV2(l: HistoryWrite, t: number, replicas: string[]): number | null {
    const samples = this.samplesOf(l.store, l.partition);
    let prior: HistoryOwnership | undefined;
    for (const s of samples) if (s.t <= t) prior = s;
    const outOfSync = (n: string): boolean => prior?.inSync !== undefined && !prior.inSync.includes(n);
    const lists = replicas.filter((n) => !outOfSync(n)).map((n) => this.downV2(l.store, l.partition, n));
    if (lists.length === 0) return replicas.length === 0 ? null : t;
    return earliestAllDown(lists, t);
  }

  /** The key's read finding (v2): of its ok reads, the earliest by invoke that has one. */
  private readFinding(d: KeyData): RuleFinding | null {
    const ws = d.writes;
    const byId = new Map(ws.map((w) => [w.id, w]));
    const matched = this.matchedSeq(d);
    for (const r of d.reads) {
      if (r.outcome !== 'ok') continue;
      const out = (kind: ReadFindingKind): RuleFinding => ({ class: 'violation', kind, store: d.store, key: d.key, write: r.value, read: r.id });
      const named = r.value === null ? undefined : byId.get(r.value);
      if (r.value !== null && named === undefined) return out('unexpected-read');
      if (named?.outcome === 'fail') return out('phantom-read');
      // W: the last ok write with W.complete < R.invoke
      let w: HistoryWrite | undefined;
      for (const x of ws) if (x.outcome === 'ok' && x.complete !== undefined && x.complete !== null && x.complete < r.invoke) w = x;
      if (w === undefined) continue;
      const older = named !== undefined && named.seq < w.seq;
      const wSeq = w.seq;
      const absent =
        r.value === null && w.op !== 'delete' && !ws.some((x) => x.op === 'delete' && x.seq > wSeq && x.invoke < (r.complete as number));
      // ... and the final read holds W or a write ordered after W
      if (this.rules.staleReads && (older || absent) && matched !== null && matched >= w.seq) {
        if (this.staleReadExcused(ws, named, w)) continue;
        return out('stale-read');
      }
    }
    return null;
  }

  /**
   * Our reading of DESIGN.md §5 ("a read that returns a value older than a write acknowledged
   * before the read began, while that write survives"): a stale read is no violation when every
   * acknowledged write it missed was itself lost to a class the contract allows (rf1, async-ack,
   * beyond-budget: the loss rules applied to that write at its own ack). The letter's "the final
   * read holds W or later" is also true when W was lost to such a class and a later write of the
   * key survived; the read then only shows W's allowed loss. The missed writes: the `ok` writes
   * ordered after the value read (an absent value: after the latest ok or info delete at or before
   * W) up to W.
   */
  private staleReadExcused(ws: HistoryWrite[], named: HistoryWrite | undefined, w: HistoryWrite): boolean {
    let base = 0;
    if (named !== undefined) base = named.seq;
    else for (const x of ws) if (x.op === 'delete' && x.outcome !== 'fail' && x.seq <= w.seq && x.seq > base) base = x.seq;
    const missed = ws.filter((x) => x.outcome === 'ok' && x.seq > base && x.seq <= w.seq);
    return missed.length > 0 && missed.every((x) => this.classify(x).cls !== 'violation');
  }

  /** The runtime map judged (v2): at most one finding per partition and kind. */
  private partitionFindings(): RuleFinding[] {
    const out: RuleFinding[] = [];
    const keys = [...this.samples.keys()];
    for (const k of keys) {
      const samples = this.samples.get(k)!;
      const { store, partition } = samples[0];
      const add = (kind: PartitionFindingKind): void => void out.push({ class: 'violation', kind, store, key: null, write: null, partition });
      const replicasAt = (s: HistoryOwnership): string[] => s.replicas ?? this.replicasOf(store, partition);
      // epoch-conflict: two samples with the same epoch and different non-null actives (our
      // reading: of one life of the partition)
      const activeOf = new Map<string, string>();
      let conflict = false;
      for (const s of samples) {
        if (s.active === null) continue;
        const ek = `${this.lifeAt(store, partition, s.t)}\u0000${s.epoch}`;
        const seen = activeOf.get(ek);
        if (seen === undefined) activeOf.set(ek, s.active);
        else if (seen !== s.active) conflict = true;
      }
      if (conflict) add('epoch-conflict');
      // epoch-regression: one node's samples whose epoch goes down over time; a crash (kill or
      // stop) of the node between two of its samples starts a new view (a restarted process
      // remembers nothing and may first learn an older entry)
      const lastByNode = new Map<string, { epoch: number; t: number }>();
      let regression = false;
      for (const s of samples) {
        if (s.node === undefined) continue;
        let prev = lastByNode.get(s.node);
        if (prev !== undefined && this.crashes.some((f) => f.nodes.includes(s.node!) && crashAt(f) > prev!.t && crashAt(f) <= s.t)) prev = undefined;
        if (prev !== undefined && s.epoch < prev.epoch) regression = true;
        lastByNode.set(s.node, { epoch: prev === undefined ? s.epoch : Math.max(prev.epoch, s.epoch), t: s.t });
      }
      if (regression) add('epoch-regression');
      // false-healthy: Healthy while the in-sync set lacks a replica
      if (samples.some((s) => s.health === 'Healthy' && s.inSync !== undefined && replicasAt(s).some((n) => !s.inSync!.includes(n)))) add('false-healthy');
      // replication-lag (async stores)
      if (this.stores.get(store)?.ackMode === 'async' && this.rules.replicationLag && samples.some((s) => this.lagging(samples, s))) add('replication-lag');
    }
    return out;
  }

  /**
   * replication-lag at sample s (time T): s has revisions; no fault on a replica is in effect
   * within [T - lag, T] and no stall (extension `stalls`) of a replica or the active meets it; every sample of the partition in that window shows s's active and epoch;
   * and a member of s.inSync holds a revision below the active's revision in the latest sample at
   * or before T - lag.
   */
  private lagging(samples: HistoryOwnership[], s: HistoryOwnership): boolean {
    if (s.revisions === undefined || s.inSync === undefined || s.active === null) return false;
    const T = s.t;
    const from = T - this.lag;
    // samples are sorted by time: the window [from, T] is samples[lo, hi); the reference is the
    // last sample at or before `from`
    const lo = firstIndex(samples, (x) => x.t >= from);
    const hi = firstIndex(samples, (x) => x.t > T);
    const ref = samples[firstIndex(samples, (x) => x.t > from) - 1] as HistoryOwnership | undefined;
    const target = ref?.revisions?.[s.active];
    if (target === undefined) return false;
    if (!s.inSync.some((m) => s.revisions![m] !== undefined && s.revisions![m] < target)) return false;
    for (let i = lo; i < hi; i++) if (samples[i].active !== s.active || samples[i].epoch !== s.epoch) return false;
    const replicas = s.replicas ?? this.replicasOf(s.store, s.partition);
    // a node of the partition observed not running in the window (extension `stalls`) excuses it
    if (stalledDuring(this.h.stalls ?? [], [...replicas, s.active], from, T)) return false;
    return !this.h.faults.some((f) => f.nodes.some((n) => replicas.includes(n)) && inEffectDuring(f, from, T));
  }
}

/**
 * Judges a parsed history (ledger/history-format.ts) by the rules of its version
 * (history-format.md "The rules, to the letter" for v1, "The rules of version 2" for v2):
 * verdict, the exact findings (key, read and partition findings), and the reasons of an
 * INCONCLUSIVE verdict. Pure and deterministic.
 */
export function judgeHistory(h: History): Judgement {
  return new Judge(h).judge();
}

/**
 * The class of a history's lost write and the evidence it rests on (the rules of the history's
 * version; `l` must be an `ok` write of `h`).
 */
export function classifyLoss(h: History, l: HistoryWrite): LossEvidence {
  return new Judge(h).classify(l);
}
