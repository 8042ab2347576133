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
 *   versions from the start). {@link HistoryIndex.lifeAt}: the number of total losses that began before an
 *   instant. version-regression compares two consecutive ok writes of a key only within one life
 *   (of their acks), epoch-conflict compares samples only within one life, ack-not-from-active
 *   compares an ack only with the samples of its own life. Within the budget nothing changes:
 *   a total loss must not happen there, and what it causes stays a violation.
 *
 * Its parts: the findings' words (history-findings.ts), the history indexed with our readings of
 * "down" and of a partition's lives (history-index.ts), the class of a lost write
 * (history-loss-rules.ts), the runtime map's findings (history-map-rules.ts); here, a key's own
 * finding, its read finding and the verdict.
 */
import type { History, HistoryRead, HistoryWrite } from './history-format.js';
import { REASONS, type FindingClass, type Judgement, type KeyFindingKind, type LossEvidence, type ReadFindingKind, type RuleFinding, type Verdict } from './history-findings.js';
import { HistoryIndex, pkey } from './history-index.js';
import { classifyLostWrite } from './history-loss-rules.js';
import { partitionFindings } from './history-map-rules.js';

/** The key's writes and reads, in seq / invoke order. */
interface KeyData {
  store: string;
  key: string;
  writes: HistoryWrite[];
  reads: HistoryRead[];
  final: History['finalReads'][number] | undefined;
}

class Judge {
  private readonly ix: HistoryIndex;

  constructor(private readonly h: History) {
    this.ix = new HistoryIndex(h);
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
    if (this.ix.v2) {
      for (const d of keys.values()) {
        const f = this.readFinding(d);
        if (f !== null) findings.push(f);
      }
      findings.push(...partitionFindings(this.ix));
    }

    const reasons: string[] = [];
    const run = this.h.run;
    if (run?.status === 'interrupted') reasons.push(REASONS.interrupted);
    if (run?.status === 'running') reasons.push(REASONS.running);
    if (run?.inconclusiveReason != null && run.inconclusiveReason.trim() !== '') reasons.push(run.inconclusiveReason.trim());
    if (unverified > 0) reasons.push(REASONS.unverified(unverified));
    if (this.h.faults.length === 0) reasons.push(REASONS.noFaults);
    if (this.ix.v2 && !this.h.writes.some((w) => w.outcome === 'ok')) reasons.push(REASONS.nothingAcknowledged);
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
    if (lastOk !== undefined && lastOk.seq > matched) return out(classifyLostWrite(this.ix, lastOk).cls, 'lost', lastOk.id);
    // phantom
    if (m?.outcome === 'fail') return out('violation', 'phantom', m.id);
    if (this.ix.v2) {
      const s = this.ix.stores.get(store);
      // under-replicated ack: sync, RF > 1, an ok write whose ack.copies is below 2
      if (s !== undefined && this.ix.rules.majorityAck(s)) {
        const w = oks.find((x) => x.ack!.copies !== undefined && x.ack!.copies < 2);
        if (w !== undefined) return out('violation', 'under-replicated-ack', w.id);
      }
      // ack not from the active of the epoch it named
      // (our reading: compared with the samples of the life of its ack only)
      const w = oks.find((x) => {
        const set = this.ix.actives.get(`${pkey(x.store, x.partition)}\u0000${this.ix.lifeAt(x.store, x.partition, x.complete as number)}\u0000${x.ack!.epoch}`);
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
      const life = this.ix.lifeAt(w.store, w.partition, w.complete as number);
      if (prev !== null && prev.life === life && w.ack!.version <= prev.version) return out('violation', 'version-regression', w.id);
      prev = { version: w.ack!.version, life };
    }
    // recovered: the final value is an info write (v2 also: an absent value matching an info delete)
    if (m !== undefined && m.outcome === 'info') return out('info', 'recovered', m.id);
    if (this.ix.v2 && del !== undefined && del.outcome === 'info') return out('info', 'recovered', del.id);
    return null;
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
      if (this.ix.rules.staleReads && (older || absent) && matched !== null && matched >= w.seq) {
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
    return missed.length > 0 && missed.every((x) => classifyLostWrite(this.ix, x).cls !== 'violation');
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
  return classifyLostWrite(new HistoryIndex(h), l);
}
