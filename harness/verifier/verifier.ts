import type Database from 'better-sqlite3';
import type { FindingClass, FindingKind, KeyFindingKind, Verdict } from '../../ledger/history-findings.js';
import { FINDING_KINDS, REASONS } from '../../ledger/history-findings.js';
import { writeId, type RulesVersion } from '../../ledger/schema.js';
import { contractJudged, type ContractJudged } from '../../ledger/contract-judged.js';
import { hasTable, KeyLogReader } from '../../ledger/key-log.js';
import { ChunkScanner, type ChunkResult, type KeyCandidate, type ScanContext } from './chunk-scan.js';
import { LossClassifier, type AckRow } from './loss-classifier.js';
import { loadRunFacts, pkey, runConfigOf, type RunFacts } from './run-facts.js';
import { scanSamples, type PartitionFinding, type SampleFacts } from './sample-pass.js';
import { ParallelScan, parallelScanPossible } from './parallel-scan.js';
import type { ReadFindingRow } from './read-checks.js';
import { DownTimeline, lifeAt } from './total-loss.js';

export { FINDING_CLASSES, FINDING_KINDS } from '../../ledger/history-findings.js';
export type { FindingClass, FindingKind, Verdict } from '../../ledger/history-findings.js';

/** Exit code of each verdict (DESIGN.md §5): 0 CERTIFIED, 1 FAILED, 2 INCONCLUSIVE. */
export const VERDICT_EXIT_CODE: Readonly<Record<Verdict, 0 | 1 | 2>> = { CERTIFIED: 0, FAILED: 1, INCONCLUSIVE: 2 };

/** Per-class counts, every class present. */
export type ClassSummary = Record<FindingClass, number>;

/** Outcome counts of writes: attempted = all rows; indeterminate = info or still in flight. */
export interface WriteCounts {
  attempted: number;
  acknowledged: number;
  failed: number;
  indeterminate: number;
}

/** One store's figures in a verification. */
export interface StoreVerification {
  name: string;
  replicationFactor: number;
  ackMode: string;
  counts: WriteCounts;
  summary: ClassSummary;
}

/** The verifier's answer; the findings themselves are in the ledger's `findings` table. */
export interface Verification {
  verdict: Verdict;
  exitCode: 0 | 1 | 2;
  /** Why the run is INCONCLUSIVE ("; "-joined reasons); null for any other verdict. */
  inconclusiveReason: string | null;
  /** Which rules judged the ledger (history-format.md version). */
  rules: RulesVersion;
  /** v2: the async lag bound the rules used (the contract's), ms; null under v1 or when the contract declares none. */
  asyncLagMaxMs: number | null;
  /** v2: the owner lease the contract declares (async-ack rule 6), ms; null under v1 or when none was declared. */
  leaseMs: number | null;
  /** The contract judged by: its rules, their parameters and sources (ledger/contract-judged.ts). */
  contract: ContractJudged;
  /** Findings per class. */
  summary: ClassSummary;
  /** Findings per kind. */
  kinds: Record<FindingKind, number>;
  counts: WriteCounts;
  /** Reads recorded during the run (v2; 0 under v1). */
  reads: number;
  /** Stores in ledger order (stores.rowid). */
  stores: StoreVerification[];
  /** Keys examined (with writes or a final read). */
  keys: number;
  /** Rows of the faults table (every injected fault). */
  faultsInjected: number;
}

/** Tuning of {@link verifyLedger}. */
export interface VerifyOptions {
  /** Width of a key_id range aggregated at once (bounds memory); default 8,192. */
  chunkKeys?: number;
  /**
   * Scan key ranges on a worker thread too, with its own read-only connection (only for a WAL
   * ledger file whose key_id span is at least `parallelMinKeys`); default true.
   */
  parallel?: boolean;
  /** Smallest key_id span scanned in parallel; default 20,000 keys. */
  parallelMinKeys?: number;
}

/** Empty per-class counts. */
export function emptySummary(): ClassSummary {
  return { violation: 0, rf1: 0, 'async-ack': 0, 'beyond-budget': 0, info: 0 };
}

function emptyCounts(): WriteCounts {
  return { attempted: 0, acknowledged: 0, failed: 0, indeterminate: 0 };
}

/**
 * SQLite's query plan of the per-range statement (EXPLAIN QUERY PLAN details, in order), for
 * tests and diagnostics: it must read the writes through their primary key in a co-routine
 * (streaming) and never through a temporary B-tree (sorting or grouping in memory).
 */
export function explainChunkQuery(db: Database.Database, v2 = true): string[] {
  return new ChunkScanner(db, { v2, syncReplicated: [], actives: [], losses: [] }).explain();
}

/** The run config's selfTestBug (meta run_config), or null. */
export function selfTestBugOf(db: Database.Database): string | null {
  const bug = runConfigOf(db).selfTestBug;
  return typeof bug === 'string' && bug !== '' ? bug : null;
}

/**
 * Verifies a run's ledger by the rules of shared/cases/history-format.md, to the letter, of the
 * version the ledger records (meta `rules`: a harness ledger and an imported v2 history by v2,
 * an imported v1 history and a ledger written before v2 by v1; DESIGN.md §5).
 *
 * Per key, one finding, the first that applies of unverified, unexpected, lost, phantom,
 * (v2) under-replicated-ack, ack-not-from-active, then version-regression, recovered; a lost
 * write (L = the key's last `ok` write ordered after the matched write, acknowledged at
 * t = L.complete) is classed rf1 > async-ack > beyond-budget > violation (v2: the store's ack
 * mode, the six async-ack conditions and not deposed, beyond-budget only in runs allowed past the
 * budget). v2 also: per key at most one read finding (stale-read, phantom-read, unexpected-read:
 * the earliest read that has one) and per partition the runtime-map findings (epoch-conflict,
 * epoch-regression, false-healthy, replication-lag).
 *
 * Our readings (as ledger/history-rules.ts): epoch-regression within one process's life of the
 * node; "down" ends at a listing in sync that records a revision for the node; and, only in runs
 * allowed past the fault budget, total amnesia (total-loss.ts): a partition whose every replica
 * was down at once starts a new life, and version-regression, epoch-conflict and
 * ack-not-from-active compare only within one life.
 *
 * Every finding is written into `findings` (earlier ones are deleted first): `write` is the
 * named write's id (writes.wid, or `w<key_id>.<seq>`), the read value for phantom and
 * unexpected, '' for an unverified key with no acknowledged write, the value read for a read
 * finding (null: absent), null for a partition finding; `read` the read's id; `partition` for a
 * partition finding; `detail` JSON evidence (for a loss: the ack, the crash, the fault that
 * disrupted replication and the node that took over; for a violation why no allowance applied).
 *
 * Verdict: FAILED if any violation; else INCONCLUSIVE if the run did not complete (meta status
 * running or interrupted), the harness gave a reason (meta inconclusive_reason), a key is
 * unverified, no fault was injected, (v2) nothing was acknowledged, or a self-test run showed no
 * violation (the reasons are carried in `inconclusiveReason`); else CERTIFIED. Exit codes
 * 1 / 2 / 0.
 *
 * Work is done in SQL, one key_id range at a time (`chunkKeys` wide), half of them on a worker
 * thread for a large ledger file: one statement aggregates the range's writes in a single ordered
 * pass and one checks its reads, returning small rows for the keys with a finding; details and a
 * loss's class come from indexed point queries. The samples are read once, partition by
 * partition, in time order. Memory is bounded by the chunk width, the faults and the partitions'
 * epochs, never by the number of writes, reads or samples. Runs in one transaction.
 * @throws Error when the ledger is inconsistent (a JSON column that is not JSON).
 */
export function verifyLedger(db: Database.Database, opts: VerifyOptions = {}): Verification {
  const chunk = opts.chunkKeys ?? 8_192;
  if (!Number.isSafeInteger(chunk) || chunk < 1) throw new Error('verifyLedger: chunkKeys must be a positive integer');
  return db.transaction(() => verifyInTransaction(db, chunk, opts))();
}

function verifyInTransaction(db: Database.Database, chunk: number, opts: VerifyOptions): Verification {
  db.exec('DELETE FROM findings');
  const facts = loadRunFacts(db);
  // our total-amnesia reading (runs past the fault budget): the partitions' total losses
  const downs = new DownTimeline(db, facts);
  const losses = downs.losses();
  const sampleFacts = facts.v2 ? scanSamples(db, facts, new Map(losses.map(([store, partition, starts]) => [pkey(store, partition), starts]))) : null;
  const stores = new Map<string, StoreVerification>();
  for (const s of facts.stores.values()) {
    stores.set(s.name, { name: s.name, replicationFactor: s.replicationFactor, ackMode: s.ackMode, counts: emptyCounts(), summary: emptySummary() });
  }
  const storeOf = (name: string): StoreVerification => {
    let s = stores.get(name);
    if (s === undefined) {
      // a key of a store the stores table does not declare: still counted, listed last
      s = { name, replicationFactor: 0, ackMode: 'unknown', counts: emptyCounts(), summary: emptySummary() };
      stores.set(name, s);
    }
    return s;
  };

  const insert = db.prepare('INSERT INTO findings (class, kind, store, key, write, detail, partition, read) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
  const summary = emptySummary();
  const kinds = Object.fromEntries(FINDING_KINDS.map((k) => [k, 0])) as Record<FindingKind, number>;
  const record = (f: { cls: FindingClass; kind: FindingKind; store: string; key: string | null; write: string | null; detail: Record<string, unknown>; partition?: number; read?: string }): void => {
    insert.run(f.cls, f.kind, f.store, f.key, f.write, JSON.stringify(f.detail), f.partition ?? null, f.read ?? null);
    summary[f.cls]++;
    kinds[f.kind]++;
    storeOf(f.store).summary[f.cls]++;
  };

  const ctx: ScanContext = {
    v2: facts.v2,
    syncReplicated: [...facts.stores.values()].filter((s) => facts.v2 ? facts.gates.majorityAck(s) : s.ackMode === 'sync' && s.replicationFactor > 1).map((s) => s.name),
    staleReads: facts.gates.staleReads,
    actives: sampleFacts === null ? [] : activesList(sampleFacts),
    losses,
  };
  const details = new FindingDetails(db, facts, sampleFacts, downs);
  let keys = 0;
  let packedReads = 0;
  const take = (r: ChunkResult): void => {
    packedReads += r.packedReads;
    for (const [store, attempted, acknowledged, failed] of r.counts) {
      const c = storeOf(store).counts;
      c.attempted += attempted;
      c.acknowledged += acknowledged;
      c.failed += failed;
      c.indeterminate += attempted - acknowledged - failed;
    }
    keys += r.keys;
    for (const cand of r.candidates) record(details.keyFinding(cand));
    // per key, the first read finding that stands: a stale read whose missed writes were all lost
    // to allowed classes is excused, and the key's next read finding is looked at
    let doneKey = -1;
    for (const read of r.reads) {
      if (read.keyId === doneKey) continue;
      if (read.kind === 'stale-read' && details.staleReadExcused(read)) continue;
      record(details.readFinding(read));
      doneKey = read.keyId;
    }
  };

  // key_id ranges: the writes, reads and final reads of a range are read in one statement each
  // (.all(): at most `chunk` keys), so that findings can be written between statements
  // (MIN and MAX one table at a time: each is one B-tree descent; inside a UNION they scan it all)
  const bounds = { lo: null as number | null, hi: null as number | null };
  for (const table of ['writes', 'final_reads', 'reads', ...(hasTable(db, 'key_log') ? ['key_log'] : [])]) {
    const lo = db.prepare(`SELECT MIN(key_id) FROM ${table}`).pluck().get() as number | null;
    const hi = db.prepare(`SELECT MAX(key_id) FROM ${table}`).pluck().get() as number | null;
    if (lo !== null && (bounds.lo === null || lo < bounds.lo)) bounds.lo = lo;
    if (hi !== null && (bounds.hi === null || hi > bounds.hi)) bounds.hi = hi;
  }
  const scanner = new ChunkScanner(db, ctx);
  if (bounds.lo !== null && bounds.hi !== null) {
    const ranges: Array<[number, number]> = [];
    for (let lo = bounds.lo; lo <= bounds.hi; lo += chunk) ranges.push([lo, lo + chunk]);
    if (opts.parallel !== false && ranges.length > 1 && parallelScanPossible(db, opts.parallelMinKeys ?? 20_000)) {
      new ParallelScan(db.name, ctx).run(ranges, (lo, hi) => scanner.scan(lo, hi), take);
    } else {
      for (const [lo, hi] of ranges) take(scanner.scan(lo, hi));
    }
  }
  for (const p of sampleFacts?.findings ?? []) record(details.partitionFinding(p));

  const counts = emptyCounts();
  for (const s of stores.values()) {
    counts.attempted += s.counts.attempted;
    counts.acknowledged += s.counts.acknowledged;
    counts.failed += s.counts.failed;
    counts.indeterminate += s.counts.indeterminate;
  }
  const faultsInjected = facts.faults.length;
  const reads = facts.v2 ? (db.prepare('SELECT COUNT(*) FROM reads').pluck().get() as number) + packedReads : 0;
  const reasons = verdictReasons(facts, kinds.unverified, faultsInjected, counts.acknowledged, summary.violation);
  const verdict: Verdict = summary.violation > 0 ? 'FAILED' : reasons.length > 0 ? 'INCONCLUSIVE' : 'CERTIFIED';
  return {
    verdict,
    exitCode: VERDICT_EXIT_CODE[verdict],
    inconclusiveReason: verdict === 'INCONCLUSIVE' ? reasons.join('; ') : null,
    rules: facts.rules,
    asyncLagMaxMs: facts.v2 ? facts.gates.asyncLagMs : null,
    leaseMs: facts.v2 ? facts.gates.leaseMs : null,
    contract: contractJudged(facts.contract, facts.contractOrigin, { beyondBudget: facts.beyondBudget }),
    summary,
    kinds,
    counts,
    reads,
    stores: [...stores.values()],
    keys,
    faultsInjected,
  };
}

/** The reasons of an INCONCLUSIVE verdict, in the words and order of ledger/history-rules.ts. */
function verdictReasons(facts: RunFacts, unverified: number, faults: number, acknowledged: number, violations: number): string[] {
  const reasons: string[] = [];
  if (facts.status === 'interrupted') reasons.push(REASONS.interrupted);
  if (facts.status === 'running') reasons.push(REASONS.running);
  if (facts.inconclusiveReason !== null && facts.inconclusiveReason.trim() !== '') reasons.push(facts.inconclusiveReason.trim());
  if (unverified > 0) reasons.push(REASONS.unverified(unverified));
  if (faults === 0) reasons.push(REASONS.noFaults);
  if (facts.v2 && acknowledged === 0) reasons.push(REASONS.nothingAcknowledged);
  if (facts.selfTestBug !== null && violations === 0) reasons.push(REASONS.selfTest(facts.selfTestBug));
  return reasons;
}

function activesList(s: SampleFacts): ScanContext['actives'] {
  const out: ScanContext['actives'] = [];
  for (const [pk, lives] of s.actives) {
    const [store, partition] = pk.split('\u0000');
    for (const [life, epochs] of lives) for (const [epoch, set] of epochs) out.push([store, Number(partition), life, epoch, [...set]]);
  }
  return out;
}

type Finding = { cls: FindingClass; kind: FindingKind; store: string; key: string | null; write: string | null; detail: Record<string, unknown>; partition?: number; read?: string };

/** Looks up a finding's details (point queries) and classifies losses. */
class FindingDetails {
  private readonly keyAt: Database.Statement;
  private readonly writes: KeyLogReader;
  private readonly classifier: LossClassifier;

  constructor(
    db: Database.Database,
    facts: RunFacts,
    private readonly samples: SampleFacts | null,
    private readonly downs: DownTimeline,
  ) {
    this.keyAt = db.prepare('SELECT k.key, k.partition, fr.value FROM keys k LEFT JOIN final_reads fr ON fr.key_id = k.key_id WHERE k.key_id = ?');
    this.writes = new KeyLogReader(db);
    this.classifier = new LossClassifier(db, facts, samples, downs);
  }

  private at(keyId: number, seq: number): (AckRow & { ack_copies: number | null }) | undefined {
    return this.writes.write(keyId, seq);
  }

  private id(keyId: number, seq: number, row?: { wid: string | null }): string {
    return (row ?? this.at(keyId, seq))?.wid ?? writeId(keyId, seq);
  }

  keyFinding(c: KeyCandidate): Finding {
    const k = this.keyAt.get(c.keyId) as { key: string; partition: number; value: string | null };
    const kind: KeyFindingKind = c.kind;
    const base = { kind, store: c.store, key: k.key };
    switch (kind) {
      case 'unverified':
        return { ...base, cls: 'info', write: c.seq === null ? '' : this.id(c.keyId, c.seq), detail: { seq: c.seq } };
      case 'unexpected':
        return { ...base, cls: 'violation', write: k.value ?? '', detail: {} };
      case 'phantom':
        return { ...base, cls: 'violation', write: k.value ?? '', detail: { seq: c.matchedSeq } };
      case 'recovered':
        // the final value (an info write), or the info delete an absent value matches (v2)
        return { ...base, cls: 'info', write: k.value ?? this.id(c.keyId, c.seq as number), detail: { seq: c.matchedSeq, absent: k.value === null } };
      case 'version-regression':
      case 'under-replicated-ack':
      case 'ack-not-from-active': {
        const seq = c.seq as number;
        const w = this.at(c.keyId, seq);
        const detail: Record<string, unknown> = { seq, ackNode: w?.ack_node ?? null, ackEpoch: w?.ack_epoch ?? null, version: w?.ack_version ?? null };
        if (kind === 'under-replicated-ack') detail.copies = w?.ack_copies ?? null;
        if (kind === 'ack-not-from-active' && w?.ack_epoch != null) {
          const life = lifeAt(this.downs.lossStarts(c.store, k.partition), w.complete_ms ?? Infinity);
          detail.activesAtEpoch = [...(this.samples?.actives.get(`${c.store}\u0000${k.partition}`)?.get(life)?.get(w.ack_epoch) ?? [])];
          if (life > 0) detail.life = life;
        }
        return { ...base, cls: 'violation', write: this.id(c.keyId, seq, w), detail };
      }
      case 'lost': {
        const seq = c.seq as number;
        const l = this.at(c.keyId, seq);
        if (l === undefined) throw new Error(`ledger: write (${c.keyId}, ${seq}) vanished during verification`);
        const { rule, ...evidence } = this.classifier.classify(c.store, k.partition, l);
        return {
          ...base,
          cls: rule,
          write: this.id(c.keyId, seq, l),
          detail: { seq, matchedSeq: c.matchedSeq, ackNode: l.ack_node, ackEpoch: l.ack_epoch, ackRevision: l.ack_revision, ackMode: l.ack_mode, invokeMs: l.invoke_ms, ...evidence },
        };
      }
      default:
        throw new Error(`verifier: unknown finding kind ${String(kind)}`);
    }
  }

  /**
   * Our reading of DESIGN.md §5 ("while that write survives"; ledger/history-rules.ts,
   * `staleReadExcused`): a stale read is excused when every `ok` write it missed (ordered after
   * the value read, or for an absent value after the latest ok or info delete at or before W, up to
   * W) was itself lost to an allowed class (rf1, async-ack, beyond-budget) by the loss rules.
   */
  staleReadExcused(r: ReadFindingRow): boolean {
    if (r.wSeq === undefined) return false;
    const k = this.keyAt.get(r.keyId) as { partition: number };
    const all = this.writes.writes(r.keyId);
    const wSeq = r.wSeq;
    let lastDelete = 0;
    for (const w of all) if (w.seq <= wSeq && w.op === 'delete' && w.outcome !== 'fail' && w.seq > lastDelete) lastDelete = w.seq;
    const base = r.valueSeq ?? lastDelete;
    const missed: AckRow[] = all.filter((w) => w.seq > base && w.seq <= wSeq && w.outcome === 'ok');
    return missed.length > 0 && missed.every((l) => this.classifier.classify(r.store, k.partition, l).rule !== 'violation');
  }

  readFinding(r: ReadFindingRow): Finding {
    const k = this.keyAt.get(r.keyId) as { key: string };
    const detail: Record<string, unknown> = { read: r.read, invokeMs: r.invokeMs, completeMs: r.completeMs, node: r.node, value: r.value };
    if (r.wSeq !== undefined) {
      detail.wSeq = r.wSeq;
      detail.w = this.id(r.keyId, r.wSeq);
    }
    return { cls: 'violation', kind: r.kind, store: r.store, key: k.key, write: r.value, read: r.read, detail };
  }

  partitionFinding(p: PartitionFinding): Finding {
    return { cls: 'violation', kind: p.kind, store: p.store, key: null, write: null, partition: p.partition, detail: p.detail };
  }
}

