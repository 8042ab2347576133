import type Database from 'better-sqlite3';
import type { FindingClass } from '../../ledger/history-findings.js';
import { MAX_CHAINED_TAKEOVERS, type ChainedTakeover } from '../../ledger/history-loss-rules.js';
import { CrashTimeline, type CrashHit } from './crash-timeline.js';
import { ReplicaTimeline } from './replica-timeline.js';
import { SampleBlocks } from './sample-blocks.js';
import { crashInstant, inEffectDuring, pkey, type FaultFact, type RunFacts } from './run-facts.js';
import type { EpochOwner, SampleFacts } from './sample-pass.js';
import type { DownTimeline } from './total-loss.js';

/** The lost write L as the classifier reads it (a row of `writes`). */
export interface AckRow {
  seq: number;
  wid: string | null;
  invoke_ms: number;
  complete_ms: number | null;
  ack_node: string | null;
  ack_epoch: number | null;
  ack_version: number | null;
  ack_revision: number | null;
  ack_mode: string | null;
}

/** What a lost write's classification rests on (stored in findings.detail). */
export interface LossEvidence {
  /** The rule that matched: rf1, async-ack, beyond-budget, or violation (none). */
  rule: FindingClass;
  /** Ack time t = L.complete, ms. */
  ackMs: number | null;
  /** rf1, async-ack by a crash: the crash (faults.id, its history id, the node, its instant). */
  faultId?: number;
  fault?: string;
  crashedNode?: string;
  crashMs?: number;
  /** async-ack: when the takeover happened (te) and the node that took over (when known). */
  takeoverMs?: number;
  takeoverNode?: string;
  /** async-ack (v2): the fault that disrupted replication within the lag bound. */
  disruptedByFaultId?: number;
  disruptedBy?: string;
  disruptedByKind?: string;
  disruptedNodes?: string[];
  /** async-ack by a chained takeover (history-loss-rules.ts, chainedTakeover): the holders of the write that took over and lost the partition in turn, ms. */
  via?: ChainedTakeover['via'];
  /** v1 async-ack by an epoch change: when a higher epoch was first sampled. */
  epochChangeMs?: number;
  /** beyond-budget: the first instant every replica was down (v2: or out of sync at the ack). */
  allDownMs?: number;
  /** beyond-budget (v2): replicas out of the in-sync set at the ack. */
  outOfSync?: string[];
  /** A violation (v2): why no allowance applied, in the rules' words. */
  why?: string;
}

type Interval = [number, number];

/** A takeover seen in the samples: the first sample (t, ms) showing `active` at `epoch`. */
type Takeover = { t: number; active: string; epoch: number };

/**
 * Classifies a lost write L (history-format.md, first match wins: rf1, async-ack,
 * beyond-budget, violation) by the rules of the ledger's version, with the evidence. v1: the
 * ack's own mode, any higher epoch, replicatedRevision, crash intervals. v2: the store's mode,
 * the six async-ack conditions and not deposed, beyond-budget only in runs allowed past the
 * budget, with down intervals that end when a sample lists the node in sync again (and records a
 * revision for it, when the sample carries revisions: {@link DownTimeline}) and replicas out of
 * sync at the ack. Queries the samples through samples_by_partition; the replicas of the moment
 * come from {@link ReplicaTimeline} (each partition's samples read once) and the samples before a
 * takeover from {@link SampleBlocks}; memory is the faults, a cache of down intervals, the
 * instants where a partition's replicas changed and at most 64 blocks of 30 s of samples.
 */
export class LossClassifier {
  private readonly crashes: CrashTimeline;
  private readonly st: Record<string, Database.Statement>;
  private readonly replicaTimeline: ReplicaTimeline;
  private readonly sampleBlocks: SampleBlocks;

  constructor(
    db: Database.Database,
    private readonly facts: RunFacts,
    private readonly samples: SampleFacts | null,
    private readonly downs: DownTimeline,
  ) {
    this.crashes = new CrashTimeline(
      facts.faults.filter((f) => f.kind === 'kill' || f.kind === 'stop').map((f) => ({ id: f.id, nodes: f.nodes, start: crashInstant(f), end: f.end, caughtUp: f.caughtUp })),
    );
    this.replicaTimeline = new ReplicaTimeline(db);
    this.sampleBlocks = new SampleBlocks(db);
    this.st = {
      epochAbove: db.prepare('SELECT MIN(t_ms) FROM samples WHERE store = ? AND partition = ? AND t_ms >= ? AND t_ms <= ? AND epoch > ?').pluck(),
      replicatedIn: db
        .prepare('SELECT 1 FROM samples WHERE store = ? AND partition = ? AND t_ms >= ? AND t_ms <= ? AND epoch = ? AND replicated_revision >= ? LIMIT 1')
        .pluck(),
      sameInstant: db.prepare('SELECT active, epoch FROM samples WHERE store = ? AND partition = ? AND t_ms = ? AND epoch > ? AND active IS NOT NULL AND active <> ? ORDER BY rowid LIMIT 1'),
      firstShowing: db.prepare('SELECT t_ms FROM samples WHERE store = ? AND partition = ? AND t_ms >= ? AND epoch = ? AND active = ? ORDER BY t_ms, rowid LIMIT 1').pluck(),
      prior: db.prepare('SELECT in_sync FROM samples WHERE store = ? AND partition = ? AND t_ms <= ? ORDER BY t_ms DESC, rowid DESC LIMIT 1').pluck(),
    };
  }

  classify(store: string, partition: number, l: AckRow): LossEvidence {
    const t = l.complete_ms;
    if (t === null) return { rule: 'violation', ackMs: null };
    const replicas = this.replicasAt(store, partition, t);
    // 1. rf1: RF 1 and the node holding it crashed after the ack: a node of the partition's
    //    replicas, or (v2) the acking node itself, which held the only copy even when no sample
    //    showed the map of its tenure yet (history-loss-rules.ts, classifyLostWrite)
    if (this.facts.stores.get(store)?.replicationFactor === 1 && (!this.facts.v2 || this.facts.gates.rf1)) {
      const holders = this.facts.v2 && l.ack_node !== null && !replicas.includes(l.ack_node) ? [...replicas, l.ack_node] : replicas;
      const hit = this.crashes.firstCrashOfAnyAtOrAfter(holders, t) ?? (this.facts.v2 ? this.laterHolderCrash(store, partition, t) : null);
      if (hit !== null) return { rule: 'rf1', ackMs: t, faultId: hit.faultId, fault: this.name(hit.faultId), crashedNode: hit.node, crashMs: hit.start };
    }
    if (!this.facts.v2) return this.classifyV1(store, partition, l, t, replicas);
    const a = this.asyncAck(store, partition, l, t, replicas);
    if (a.rule === 'async-ack') return a;
    const past = this.facts.beyondBudget && this.facts.gates.beyondBudget;
    if (past) {
      const b = this.beyondBudget(store, partition, t, replicas);
      if (b !== null) return b;
    }
    return { rule: 'violation', ackMs: t, why: a.why ?? (past ? 'no allowance applies' : this.facts.beyondBudget ? 'no allowance applies (the contract does not claim beyond-budget)' : 'no allowance applies (the run stayed within the fault budget)') };
  }

  /**
   * v2 rf1 across moves (issue 14): the only copy moves with the partition, so the crash of a node
   * listed in the replicas of the moment it crashed, at or after t, lost it too (the replicas of
   * each sample are the rules' for that sample). The earliest such crash, or null.
   */
  private laterHolderCrash(store: string, partition: number, t: number): CrashHit | null {
    let best: CrashHit | null = null;
    for (const span of this.replicaTimeline.spansFrom(store, partition, t)) {
      for (const node of span.replicas) {
        const hit = this.crashes.firstCrashAtOrAfter(node, span.from);
        if (hit !== null && hit.start < span.until && (best === null || hit.start < best.start)) best = hit;
      }
    }
    return best;
  }

  /**
   * The partition's replicas at instant t: v2, those of the latest sample at or before t that
   * carries them (the partition map of that moment, after a regeneration or a move); else the
   * partition map at the start (history-index.ts, `replicasAt`).
   */
  private replicasAt(store: string, partition: number, t: number): string[] {
    if (this.facts.v2) {
      const list = this.replicaTimeline.at(store, partition, t);
      if (list !== undefined) return list;
    }
    return this.facts.replicas.get(pkey(store, partition)) ?? [];
  }

  private name(faultId: number): string {
    return this.facts.faults.find((f) => f.id === faultId)?.name ?? `f${faultId}`;
  }

  private classifyV1(store: string, partition: number, l: AckRow, t: number, replicas: string[]): LossEvidence {
    // 2. async-ack (v1): acked async; its acking node crashed after the ack, or a sample at or
    //    after t shows a higher epoch; te the earliest; no sample in [t, te] at L's epoch shows
    //    L's revision replicated
    if (l.ack_mode === 'async' && l.ack_node !== null && l.ack_epoch !== null && l.ack_revision !== null) {
      const crash = this.crashes.firstCrashAtOrAfter(l.ack_node, t);
      const bound = crash === null ? Infinity : crash.start;
      const epochMs = this.st.epochAbove.get(store, partition, t, bound, l.ack_epoch) as number | null;
      const te = epochMs !== null && epochMs < bound ? epochMs : crash !== null ? crash.start : null;
      if (te !== null && this.st.replicatedIn.get(store, partition, t, te, l.ack_epoch, l.ack_revision) === undefined) {
        const ev: LossEvidence = { rule: 'async-ack', ackMs: t, takeoverMs: te };
        if (crash !== null && crash.start === te) Object.assign(ev, { faultId: crash.faultId, fault: this.name(crash.faultId), crashedNode: crash.node, crashMs: crash.start });
        else ev.epochChangeMs = te;
        return ev;
      }
    }
    // 3. beyond-budget (v1): at some instant >= t every replica was inside a crash interval
    if (replicas.length > 0) {
      const at = this.crashes.allDownAtOrAfter(replicas, t);
      if (at !== null) return { rule: 'beyond-budget', ackMs: t, allDownMs: at };
    }
    return { rule: 'violation', ackMs: t };
  }

  /** v2 async-ack (history-format.md v2, all six conditions and not deposed); `why` when one fails. */
  private asyncAck(store: string, partition: number, l: AckRow, t: number, replicas: string[]): LossEvidence {
    const no = (why: string): LossEvidence => ({ rule: 'violation', ackMs: t, why });
    // 1. the store's ack mode is async
    if (this.facts.stores.get(store)?.ackMode !== 'async') return no('the store acknowledges in sync mode');
    if (!this.facts.gates.asyncAck) return no(`the contract of ${this.facts.contract.target} does not claim async-ack`);
    const owner = l.ack_node;
    const epoch = l.ack_epoch;
    const revision = l.ack_revision;
    if (owner === null || epoch === null || revision === null) return no('the ack does not name its node, epoch and revision');
    // 2. takeover: the owner crashed after the ack (te = c), or a sample at or after t shows a
    //    higher epoch and another active (te = its time); the earlier
    const crash = this.crashes.firstCrashAtOrAfter(owner, t);
    const crashTe = crash === null ? Infinity : crash.start;
    const owners = this.samples?.owners.get(pkey(store, partition)) ?? [];
    const taker = this.firstTakeover(store, partition, owners, t, crashTe, epoch, owner);
    const sampleTe = taker === null ? Infinity : taker.t;
    const te = Math.min(crashTe, sampleTe);
    if (te === Infinity) return no('its owner neither crashed nor lost the partition to another node at a higher epoch');
    const byCrash = crashTe <= sampleTe;
    const takes = (n: string): boolean => (byCrash ? n !== owner : n === taker!.active);
    // (the conditions are a conjunction: the cheap ones, on the faults in memory, come first)
    // 4. disrupted in time: a fault on the owner or the node that took over within [t, t + lag]
    //    (no lag bound declared: within [t, te], between the ack and the takeover)
    const touches = (f: FaultFact): boolean => f.nodes.includes(owner) || f.nodes.some((n) => takes(n) && (!byCrash || replicas.includes(n)));
    const lag = this.facts.gates.asyncLagMs;
    const disrupting = this.facts.faults.find((f) => touches(f) && inEffectDuring(f, t, lag === null ? te : t + lag));
    if (disrupting === undefined) return no(lag === null ? 'nothing disrupted replication between the ack and the takeover' : `nothing disrupted replication within ${lag} ms of the ack (the async lag bound)`);
    // 5. not a planned handoff
    if (!byCrash && !this.facts.faults.some((f) => f.nodes.includes(owner) && inEffectDuring(f, t, te))) {
      return no('another node took over while no fault touched the owner (a failback or handoff loses nothing)');
    }
    // 6. within the lease (counted from the moment the cut took effect, when recorded: the
    //    owner's lease runs from its last contact with a majority, and a cut installed in several
    //    network namespaces, one docker exec each, may take effect seconds after its row began)
    const lease = this.facts.gates.leaseMs;
    if (lease !== null) {
      const cut = this.facts.faults.find(
        (f) => f.kind === 'partition' && (f.isolated ?? f.nodes).includes(owner) && (f.effective ?? f.start) < l.invoke_ms - lease && inEffectDuring(f, l.invoke_ms, l.invoke_ms),
      );
      if (cut !== undefined) return no(`its owner had been cut off from a majority by ${cut.name} for longer than its lease (${lease} ms) when the write was invoked`);
    }
    // not deposed before the invoke
    const deposed = this.facts.gates.fencing ? owners.find((o) => o.firstMs < l.invoke_ms && o.epoch > epoch && o.active !== owner) : undefined;
    if (deposed !== undefined) return no(`its owner had been seen deposed (epoch ${deposed.epoch}, active ${deposed.active}) before the write was invoked`);
    // 3. not yet held by the node that took over (v1's replicatedRevision test for samples without
    //    revisions); or it was, and lost the partition in its turn before it passed the write on
    //    (a chained takeover: history-loss-rules.ts, chainedTakeover)
    //    (the samples in [t, te] at L's epoch, from blocks read once: SampleBlocks)
    let chain: ChainedTakeover | undefined;
    for (const row of this.sampleBlocks.window(store, partition, t, te, epoch)) {
      const revs = row.revisions();
      if (revs === null) {
        if (row.replicatedRevision >= revision) return no('a sample showed its revision replicated before the takeover');
      } else if (Object.entries(revs).some(([n, r]) => takes(n) && r >= revision)) {
        const c = this.chainedTakeover(store, partition, owners, replicas, { t, owner, epoch, revision }, te, byCrash ? null : taker);
        if (c === null) return no('the node that took over held its revision before the takeover');
        chain = c;
        break;
      }
    }
    const ev: LossEvidence = {
      rule: 'async-ack',
      ackMs: t,
      takeoverMs: te,
      disruptedByFaultId: disrupting.id,
      disruptedBy: disrupting.name,
      disruptedByKind: disrupting.kind,
      disruptedNodes: disrupting.nodes,
    };
    if (byCrash) {
      Object.assign(ev, { faultId: crash!.faultId, fault: this.name(crash!.faultId), crashedNode: owner, crashMs: crashTe });
      // the node that took over after the crash: the next active at a higher epoch, when sampled
      const next = this.firstTakeover(store, partition, owners, te, Infinity, epoch, owner);
      if (next !== null) ev.takeoverNode = next.active;
    } else {
      ev.takeoverNode = taker!.active;
    }
    if (chain !== undefined) {
      ev.via = chain.via;
      if (chain.takeoverNode !== undefined) ev.takeoverNode = chain.takeoverNode;
    }
    return ev;
  }

  /**
   * A chained takeover (the same rule as history-loss-rules.ts, chainedTakeover, on the ledger):
   * the node that took over from L's owner held L and lost the partition in its turn, disrupted
   * within the async lag bound of its takeover, and the node that took over from it never held L
   * in a sample of an epoch of the chain since the ack, nor a node of the chain at an epoch after its
   * own tenure (it came back with it); followed for at most
   * {@link MAX_CHAINED_TAKEOVERS} links. `taker`: the sample that showed the first takeover, or null
   * after a crash of L's owner at `te`. Null when it fails.
   */
  private chainedTakeover(
    store: string,
    partition: number,
    owners: EpochOwner[],
    replicas: string[],
    l: { t: number; owner: string; epoch: number; revision: number },
    te: number,
    taker: Takeover | null,
  ): ChainedTakeover | null {
    const epochs = new Set([l.epoch]);
    const tenure = new Map([[l.owner, l.epoch]]);
    const cameBack = (n: string, e: number): boolean => tenure.has(n) && e > tenure.get(n)!;
    const held = (who: (n: string, e: number) => boolean, until: number): boolean => {
      for (const e of epochs) {
        for (const row of this.sampleBlocks.window(store, partition, l.t, until, e)) {
          const revs = row.revisions();
          if (revs !== null && Object.entries(revs).some(([n, r]) => who(n, e) && r >= l.revision)) return true;
        }
      }
      return false;
    };
    const lag = this.facts.gates.asyncLagMs;
    let next = taker ?? this.firstTakeover(store, partition, owners, te, Infinity, l.epoch, l.owner);
    const via: ChainedTakeover['via'] = [];
    for (let link = 0; link < MAX_CHAINED_TAKEOVERS && next !== null; link++) {
      const a = next.active;
      const since = next.t;
      const epochA = next.epoch;
      if (!held((n) => n === a, since)) return null;
      epochs.add(epochA);
      tenure.set(a, epochA);
      // A's loss of the partition: its crash, or a sample at a higher epoch with another active
      const crash = this.crashes.firstCrashAtOrAfter(a, since);
      const crashTe = crash === null ? Infinity : crash.start;
      const tk = this.firstTakeover(store, partition, owners, since, Infinity, epochA, a);
      const lostMs = Math.min(crashTe, tk === null ? Infinity : tk.t);
      if (lostMs === Infinity) return null;
      const byCrash = crashTe <= (tk === null ? Infinity : tk.t);
      const takers = (n: string, e: number): boolean => cameBack(n, e) || (byCrash ? !tenure.has(n) : n === tk!.active);
      const touches = (f: FaultFact): boolean => f.nodes.includes(a) || f.nodes.some((n) => (byCrash ? !tenure.has(n) && replicas.includes(n) : n === tk!.active));
      if (!this.facts.faults.some((f) => touches(f) && inEffectDuring(f, since, lag === null ? lostMs : since + lag))) return null;
      if (!byCrash && !this.facts.faults.some((f) => f.nodes.includes(a) && inEffectDuring(f, since, lostMs))) return null;
      via.push({ node: a, fromMs: since, lostMs });
      next = byCrash ? this.firstTakeover(store, partition, owners, lostMs, Infinity, epochA, a) : tk;
      if (!held(takers, lostMs)) return next !== null ? { via, takeoverNode: next.active } : { via };
    }
    return null;
  }

  /**
   * The earliest sample in [from, until] showing an epoch above `epoch` and an active other than
   * `owner` (ties: the first recorded), found from the partition's (epoch, active) pairs and their
   * first and last sample times, with one indexed query per pair seen before `from` and after it.
   */
  private firstTakeover(
    store: string,
    partition: number,
    owners: EpochOwner[],
    from: number,
    until: number,
    epoch: number,
    owner: string,
  ): Takeover | null {
    let best: Takeover | null = null;
    owners.forEach((o) => {
      if (o.epoch <= epoch || o.active === owner || o.lastMs < from) return;
      const t = o.firstMs >= from ? o.firstMs : (this.st.firstShowing.get(store, partition, from, o.epoch, o.active) as number);
      if (t > until) return;
      if (best === null || t < best.t) best = { t, active: o.active, epoch: o.epoch };
    });
    if (best === null) return null;
    const b = best as Takeover;
    // two pairs first shown at the same instant: the one recorded first
    const tie = this.st.sameInstant.get(store, partition, b.t, epoch, owner) as { active: string; epoch: number } | undefined;
    return tie === undefined ? b : { t: b.t, active: tie.active, epoch: tie.epoch };
  }

  /** v2 beyond-budget: the earliest s >= t at which every replica is down or was out of sync at the ack. */
  private beyondBudget(store: string, partition: number, t: number, replicas: string[]): LossEvidence | null {
    if (replicas.length === 0) return null;
    const priorText = this.st.prior.get(store, partition, t) as string | null | undefined;
    const prior = priorText === null || priorText === undefined ? null : (JSON.parse(priorText) as string[]);
    const outOfSync = prior === null ? [] : replicas.filter((n) => !prior.includes(n));
    const cover = replicas.filter((n) => !outOfSync.includes(n));
    if (cover.length === 0) return { rule: 'beyond-budget', ackMs: t, allDownMs: t, outOfSync };
    let acc: Interval[] | null = null;
    for (const n of cover) {
      const down = this.downs.down(store, partition, n).map((d): Interval => [d.from, d.to]);
      acc = acc === null ? down : intersect(acc, down);
      if (acc.length === 0) return null;
    }
    for (const [from, to] of acc!) {
      if (to > t) return { rule: 'beyond-budget', ackMs: t, allDownMs: Math.max(from, t), outOfSync };
    }
    return null;
  }
}

function intersect(a: Interval[], b: Interval[]): Interval[] {
  const out: Interval[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const from = Math.max(a[i][0], b[j][0]);
    const to = Math.min(a[i][1], b[j][1]);
    if (to > from) out.push([from, to]);
    if (a[i][1] < b[j][1]) i++;
    else j++;
  }
  return out;
}
