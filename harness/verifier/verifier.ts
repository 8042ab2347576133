import type Database from 'better-sqlite3';
import { META, writeId } from '../../ledger/schema.js';
import { CrashTimeline } from './crash-timeline.js';

/** Finding classes, in report order (DESIGN.md §5, history-format.md). */
export const FINDING_CLASSES = ['violation', 'rf1', 'async-ack', 'beyond-budget', 'info'] as const;
/** violation, or one of the losses the store's contract allows, or info (recovered, unverified). */
export type FindingClass = (typeof FINDING_CLASSES)[number];

/** Finding kinds, in the order the rules try them (history-format.md "first that applies"). */
export const FINDING_KINDS = ['unverified', 'unexpected', 'lost', 'phantom', 'version-regression', 'recovered'] as const;
/** unverified, unexpected, lost, phantom, version-regression or recovered. */
export type FindingKind = (typeof FINDING_KINDS)[number];

/** The run's verdict (DESIGN.md §5). */
export type Verdict = 'CERTIFIED' | 'FAILED' | 'INCONCLUSIVE';

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
  /** Findings per class. */
  summary: ClassSummary;
  /** Findings per kind. */
  kinds: Record<FindingKind, number>;
  counts: WriteCounts;
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
}

/** Empty per-class counts. */
export function emptySummary(): ClassSummary {
  return { violation: 0, rf1: 0, 'async-ack': 0, 'beyond-budget': 0, info: 0 };
}

function emptyCounts(): WriteCounts {
  return { attempted: 0, acknowledged: 0, failed: 0, indeterminate: 0 };
}

const REGRESSION_UDF = 'zaris_first_regression';

/**
 * Per key of a key_id range, in one ordered pass over the writes table (clustered by
 * (key_id, seq)): write and outcome counts, the last `ok` seq, the latest `delete` whose outcome
 * is ok or info (a write still in flight counts as info), and the first version regression among
 * `ok` non-delete writes. Then, per key, the rules of history-format.md, first that applies:
 * `mw` is the write the final value names (same key only); an absent value matches the latest
 * ok/info delete, else the initial state (seq 0). `kind` is NULL when the key has no finding.
 */
const CHUNK_SQL = `
  SELECT k.store, a.n, a.n_ok, a.n_fail,
    CASE
      WHEN fr.key_id IS NULL OR fr.unreadable <> 0 THEN 'unverified'
      WHEN fr.value IS NOT NULL AND mw.seq IS NULL THEN 'unexpected'
      WHEN a.last_ok > (CASE WHEN fr.value IS NULL THEN COALESCE(a.last_del, 0) ELSE mw.seq END) THEN 'lost'
      WHEN mw.outcome = 'fail' THEN 'phantom'
      WHEN a.first_reg IS NOT NULL THEN 'version-regression'
      WHEN mw.seq IS NOT NULL AND mw.outcome IS NOT 'ok' THEN 'recovered'
    END AS kind,
    a.key_id, a.last_ok, a.first_reg, (fr.key_id IS NOT NULL) AS has_read,
    CASE WHEN fr.value IS NULL THEN COALESCE(a.last_del, 0) ELSE mw.seq END AS matched_seq
  FROM (
    SELECT key_id, COUNT(*) AS n, COUNT(*) FILTER (WHERE outcome = 'ok') AS n_ok,
           COUNT(*) FILTER (WHERE outcome = 'fail') AS n_fail,
           MAX(seq) FILTER (WHERE outcome = 'ok') AS last_ok,
           MAX(seq) FILTER (WHERE op = 'delete' AND outcome IS NOT 'fail') AS last_del,
           ${REGRESSION_UDF}(seq, ack_version) FILTER (WHERE outcome = 'ok' AND op <> 'delete') AS first_reg
    FROM writes WHERE key_id >= @lo AND key_id < @hi GROUP BY key_id
  ) AS a
  JOIN keys k ON k.key_id = a.key_id
  LEFT JOIN final_reads fr ON fr.key_id = a.key_id
  LEFT JOIN writes mw ON fr.value IS NOT NULL AND fr.value_key_id = a.key_id AND mw.key_id = a.key_id AND mw.seq = fr.value_seq`;

/** Raw row of CHUNK_SQL. */
type ChunkRow = [
  store: string, n: number, nOk: number, nFail: number, kind: FindingKind | null,
  keyId: number, lastOk: number | null, firstReg: number | null, hasRead: number, matchedSeq: number | null,
];

/** Final reads of a key_id range whose key has no write: only `unexpected` can apply. */
const READ_ONLY_KEYS_SQL = `
  SELECT fr.key_id, k.store, k.key, fr.value, fr.unreadable FROM final_reads fr JOIN keys k ON k.key_id = fr.key_id
  WHERE fr.key_id >= @lo AND fr.key_id < @hi AND NOT EXISTS (SELECT 1 FROM writes w WHERE w.key_id = fr.key_id)`;

interface AckRow {
  seq: number;
  wid: string | null;
  complete_ms: number | null;
  ack_node: string | null;
  ack_epoch: number | null;
  ack_version: number | null;
  ack_revision: number | null;
  ack_mode: string | null;
}

/** What a lost write's classification rests on (stored as findings.detail JSON). */
interface LossEvidence {
  /** The rule that matched: rf1, async-ack, beyond-budget, or none (violation). */
  rule: FindingClass;
  /** Ack time t = L.complete, ms. */
  ackMs: number | null;
  faultId?: number;
  crashedNode?: string;
  crashMs?: number;
  epochChangeMs?: number;
  allDownMs?: number;
}

interface StoreInfo {
  replicationFactor: number;
  ackMode: string;
}

/** Classifies one lost write L of a key (history-format.md; first match wins). */
class LossClassifier {
  private readonly stores = new Map<string, StoreInfo>();
  private readonly replicas = new Map<string, string[]>();
  private readonly crashes: CrashTimeline;
  private readonly epochAbove: Database.Statement;
  private readonly replicatedIn: Database.Statement;

  constructor(db: Database.Database) {
    for (const s of db.prepare('SELECT name, replication_factor, ack_mode FROM stores').all() as { name: string; replication_factor: number; ack_mode: string }[]) {
      this.stores.set(s.name, { replicationFactor: s.replication_factor, ackMode: s.ack_mode });
    }
    for (const p of db.prepare('SELECT store, partition, replicas FROM partitions').all() as { store: string; partition: number; replicas: string }[]) {
      let list: unknown;
      try {
        list = JSON.parse(p.replicas);
      } catch {
        list = null;
      }
      if (!Array.isArray(list) || !list.every((n) => typeof n === 'string')) {
        throw new Error(`ledger: partitions(${p.store}, ${p.partition}).replicas is not a JSON array of node ids`);
      }
      this.replicas.set(`${p.store}\u0000${p.partition}`, list);
    }
    this.crashes = CrashTimeline.fromLedger(db);
    // both use samples_by_partition (store, partition, t_ms)
    this.epochAbove = db.prepare(
      'SELECT MIN(t_ms) FROM samples WHERE store = ? AND partition = ? AND t_ms >= ? AND t_ms <= ? AND epoch > ?',
    ).pluck();
    this.replicatedIn = db.prepare(
      'SELECT 1 FROM samples WHERE store = ? AND partition = ? AND t_ms >= ? AND t_ms <= ? AND epoch = ? AND replicated_revision >= ? LIMIT 1',
    ).pluck();
  }

  classify(store: string, partition: number, l: AckRow): LossEvidence {
    const t = l.complete_ms;
    if (t === null) return { rule: 'violation', ackMs: null };
    const replicas = this.replicas.get(`${store}\u0000${partition}`) ?? [];

    // 1. rf1: RF 1 and a node of the partition's replicas crashed after the ack
    if (this.stores.get(store)?.replicationFactor === 1) {
      const hit = this.crashes.firstCrashOfAnyAtOrAfter(replicas, t);
      if (hit !== null) return { rule: 'rf1', ackMs: t, faultId: hit.faultId, crashedNode: hit.node, crashMs: hit.start };
    }

    // 2. async-ack: acked async; its acking node crashed after the ack, or a sample at or after t
    //    shows a higher epoch; te the earliest; no sample in [t, te] at L's epoch shows L's
    //    revision replicated.
    if (l.ack_mode === 'async' && l.ack_node !== null && l.ack_epoch !== null && l.ack_revision !== null) {
      const crash = this.crashes.firstCrashAtOrAfter(l.ack_node, t);
      const bound = crash === null ? Infinity : crash.start;
      const epochMs = this.epochAbove.get(store, partition, t, bound, l.ack_epoch) as number | null;
      const te = epochMs !== null && epochMs < bound ? epochMs : crash !== null ? crash.start : null;
      if (te !== null && this.replicatedIn.get(store, partition, t, te, l.ack_epoch, l.ack_revision) === undefined) {
        const ev: LossEvidence = { rule: 'async-ack', ackMs: t };
        if (crash !== null && crash.start === te) {
          ev.faultId = crash.faultId;
          ev.crashedNode = crash.node;
          ev.crashMs = crash.start;
        } else {
          ev.epochChangeMs = te;
        }
        return ev;
      }
    }

    // 3. beyond-budget: at some instant >= t every replica was inside a crash interval
    if (replicas.length > 0) {
      const at = this.crashes.allDownAtOrAfter(replicas, t);
      if (at !== null) return { rule: 'beyond-budget', ackMs: t, allDownMs: at };
    }
    return { rule: 'violation', ackMs: t };
  }
}

/**
 * The first version regression of a key, as an SQL aggregate over (seq, version) of its `ok`
 * non-delete writes: the seq of the first write whose version is not above the one before
 * (null when none; a NULL version is skipped). It relies on receiving a key's rows in seq order,
 * which the GROUP BY over the writes table's (key_id, seq) primary key gives; it checks that
 * order and throws rather than answer from rows out of order. (An `ORDER BY seq` inside the
 * call would enforce it in SQL but costs ~20% of the pass: DESIGN.md §8.)
 */
function registerRegressionUdf(db: Database.Database): void {
  type State = [prevVersion: number, firstRegression: number | null, prevSeq: number] | null;
  const step = (state: State, seq: number, version: number | null): State => {
    if (version === null) return state;
    if (state === null) return [version, null, seq];
    if (seq <= state[2]) throw new Error(`verifier: writes were not scanned in (key_id, seq) order (seq ${seq} after ${state[2]})`);
    state[2] = seq;
    if (state[1] === null && version <= state[0]) state[1] = seq;
    state[0] = version;
    return state;
  };
  db.aggregate<State>(REGRESSION_UDF, {
    start: null,
    // the typings allow one argument per step; SQLite passes (seq, version)
    step: step as unknown as (state: State, next: unknown) => State,
    result: (state: State) => (state === null ? null : state[1]),
  });
}

/**
 * SQLite's query plan of the per-range statement (EXPLAIN QUERY PLAN details, in order), for
 * tests and diagnostics: it must read the writes through their primary key in a co-routine
 * (streaming) and never through a temporary B-tree (sorting or grouping in memory).
 */
export function explainChunkQuery(db: Database.Database): string[] {
  registerRegressionUdf(db);
  return (db.prepare(`EXPLAIN QUERY PLAN ${CHUNK_SQL}`).all({ lo: 0, hi: 1 }) as { detail: string }[]).map((r) => r.detail);
}

function metaValue(db: Database.Database, key: string): string | null {
  const v = db.prepare('SELECT value FROM meta WHERE key = ?').pluck().get(key);
  return typeof v === 'string' ? v : null;
}

/** The run config's selfTestBug (meta run_config), or null. */
export function selfTestBugOf(db: Database.Database): string | null {
  const raw = metaValue(db, META.runConfig);
  if (!raw) return null;
  try {
    const bug = (JSON.parse(raw) as { selfTestBug?: unknown }).selfTestBug;
    return typeof bug === 'string' && bug !== '' ? bug : null;
  } catch {
    return null;
  }
}

/**
 * Verifies a run's ledger by the rules of shared/cases/history-format.md, to the letter
 * (DESIGN.md §5): one finding per key, the first that applies of unverified, unexpected, lost,
 * phantom, version-regression, recovered; a lost write (L = the key's last `ok` write ordered
 * after the matched write, acknowledged at t = L.complete) is classed rf1 > async-ack >
 * beyond-budget > violation. A key with writes but no final_reads row is unverified.
 *
 * Every finding is written into `findings` (earlier ones are deleted first), with `write` the
 * named write's id (writes.wid, or `w<key_id>.<seq>`), the read value for phantom, unexpected
 * and recovered, and '' for an unverified key that has no acknowledged write; `detail` is JSON
 * (seq, matched seq, and for a loss the evidence of its class).
 *
 * Verdict: FAILED if any violation; else INCONCLUSIVE if any key is unverified, the faults table
 * is empty, meta.status is 'interrupted' or meta.inconclusive_reason is set (the reasons are
 * carried in `inconclusiveReason`); else CERTIFIED. Exit codes 1 / 2 / 0.
 *
 * Work is done in SQL, one key_id range at a time (`chunkKeys` wide): one statement aggregates
 * the range's writes in a single ordered pass and applies the rules per key (returning one small
 * row per key: counts and the finding's kind); a finding's details and a loss's class come from
 * indexed point queries (writes, samples) and from the (small) set of crash faults. Memory is
 * bounded by the chunk width and the fault count, never by the number of writes. Runs in one
 * transaction.
 * @throws Error when the ledger is inconsistent (a JSON column that is not JSON).
 */
export function verifyLedger(db: Database.Database, opts: VerifyOptions = {}): Verification {
  const chunk = opts.chunkKeys ?? 8_192;
  if (!Number.isSafeInteger(chunk) || chunk < 1) throw new Error('verifyLedger: chunkKeys must be a positive integer');
  registerRegressionUdf(db);
  return db.transaction(() => verifyInTransaction(db, chunk))();
}

function verifyInTransaction(db: Database.Database, chunk: number): Verification {
  db.exec('DELETE FROM findings');
  const storeRows = db.prepare('SELECT name, replication_factor, ack_mode FROM stores ORDER BY rowid').all() as { name: string; replication_factor: number; ack_mode: string }[];
  const stores = new Map<string, StoreVerification>();
  for (const s of storeRows) {
    stores.set(s.name, { name: s.name, replicationFactor: s.replication_factor, ackMode: s.ack_mode, counts: emptyCounts(), summary: emptySummary() });
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

  const chunkQuery = db.prepare(CHUNK_SQL).raw();
  const readsInRange = db.prepare('SELECT COUNT(*) FROM final_reads WHERE key_id >= @lo AND key_id < @hi').pluck();
  const readOnlyKeys = db.prepare(READ_ONLY_KEYS_SQL);
  const keyAt = db.prepare('SELECT k.key, k.partition, fr.value FROM keys k LEFT JOIN final_reads fr ON fr.key_id = k.key_id WHERE k.key_id = ?');
  const writeAt = db.prepare(
    'SELECT seq, wid, complete_ms, ack_node, ack_epoch, ack_version, ack_revision, ack_mode FROM writes WHERE key_id = ? AND seq = ?',
  );
  const insert = db.prepare('INSERT INTO findings (class, kind, store, key, write, detail) VALUES (?, ?, ?, ?, ?, ?)');
  const classifier = new LossClassifier(db);

  const summary = emptySummary();
  const kinds = Object.fromEntries(FINDING_KINDS.map((k) => [k, 0])) as Record<FindingKind, number>;
  let keys = 0;
  const record = (store: string, key: string, kind: FindingKind, f: { cls: FindingClass; write: string; detail: Record<string, unknown> }): void => {
    insert.run(f.cls, kind, store, key, f.write, JSON.stringify(f.detail));
    summary[f.cls]++;
    kinds[kind]++;
    storeOf(store).summary[f.cls]++;
  };

  // key_id ranges: the writes and final reads of a range are read in one statement (.all():
  // at most `chunk` rows), so that findings can be written between statements
  const bounds = db.prepare(
    'SELECT MIN(lo) AS lo, MAX(hi) AS hi FROM (SELECT MIN(key_id) AS lo, MAX(key_id) AS hi FROM writes UNION ALL SELECT MIN(key_id), MAX(key_id) FROM final_reads)',
  ).get() as { lo: number | null; hi: number | null };
  if (bounds.lo !== null && bounds.hi !== null) {
    for (let lo = bounds.lo; lo <= bounds.hi; lo += chunk) {
      const range = { lo, hi: lo + chunk };
      const rows = chunkQuery.all(range) as ChunkRow[];
      let withRead = 0;
      const candidates: ChunkRow[] = [];
      for (const r of rows) {
        const c = storeOf(r[0]).counts;
        c.attempted += r[1];
        c.acknowledged += r[2];
        c.failed += r[3];
        c.indeterminate += r[1] - r[2] - r[3];
        withRead += r[8];
        if (r[4] !== null) candidates.push(r);
      }
      keys += rows.length;
      for (const r of candidates) {
        const k = keyAt.get(r[5]) as { key: string; partition: number; value: string | null };
        record(r[0], k.key, r[4] as FindingKind, findingOf(r, k, writeAt, classifier));
      }
      if ((readsInRange.get(range) as number) > withRead) {
        // keys read at the end that no write names: a value there names no write (unexpected)
        for (const r of readOnlyKeys.all(range) as { key_id: number; store: string; key: string; value: string | null; unreadable: number }[]) {
          keys++;
          if (r.unreadable === 0 && r.value !== null) record(r.store, r.key, 'unexpected', { cls: 'violation', write: r.value, detail: {} });
        }
      }
    }
  }
  const counts = emptyCounts();
  for (const s of stores.values()) {
    counts.attempted += s.counts.attempted;
    counts.acknowledged += s.counts.acknowledged;
    counts.failed += s.counts.failed;
    counts.indeterminate += s.counts.indeterminate;
  }

  const faultsInjected = db.prepare('SELECT COUNT(*) FROM faults').pluck().get() as number;
  const reasons: string[] = [];
  const status = metaValue(db, META.status);
  if (status === 'interrupted') reasons.push('the run was interrupted');
  if (status === 'running') reasons.push('the run did not finish (its harness stopped before the end phase)');
  const metaReason = metaValue(db, META.inconclusiveReason);
  if (metaReason !== null && metaReason.trim() !== '') reasons.push(metaReason.trim());
  if (kinds.unverified > 0) reasons.push(`${kinds.unverified} key${kinds.unverified === 1 ? '' : 's'} unverified`);
  if (faultsInjected === 0) reasons.push('no fault was injected');
  const bug = selfTestBugOf(db);
  if (bug && summary.violation === 0) reasons.push(`a self-test run (store started with the bug ${bug}) must come out FAILED, and the bug never showed`);
  const verdict: Verdict = summary.violation > 0 ? 'FAILED' : reasons.length > 0 ? 'INCONCLUSIVE' : 'CERTIFIED';
  return {
    verdict,
    exitCode: VERDICT_EXIT_CODE[verdict],
    inconclusiveReason: verdict === 'INCONCLUSIVE' ? reasons.join('; ') : null,
    summary,
    kinds,
    counts,
    stores: [...stores.values()],
    keys,
    faultsInjected,
  };
}

function idOf(row: AckRow | undefined, keyId: number, seq: number): string {
  return row?.wid ?? writeId(keyId, seq);
}

function findingOf(
  r: ChunkRow,
  k: { key: string; partition: number; value: string | null },
  writeAt: Database.Statement,
  classifier: LossClassifier,
): { cls: FindingClass; write: string; detail: Record<string, unknown> } {
  const [store, , , , kind, keyId, lastOk, firstReg, , matchedSeq] = r;
  const at = (seq: number): AckRow | undefined => writeAt.get(keyId, seq) as AckRow | undefined;
  switch (kind) {
    case 'unverified':
      return { cls: 'info', write: lastOk === null ? '' : idOf(at(lastOk), keyId, lastOk), detail: { seq: lastOk } };
    case 'unexpected':
      return { cls: 'violation', write: k.value ?? '', detail: {} };
    case 'phantom':
      return { cls: 'violation', write: k.value ?? '', detail: { seq: matchedSeq } };
    case 'recovered':
      return { cls: 'info', write: k.value ?? '', detail: { seq: matchedSeq } };
    case 'version-regression': {
      const seq = firstReg as number;
      const w = at(seq);
      return { cls: 'violation', write: idOf(w, keyId, seq), detail: { seq, version: w?.ack_version ?? null } };
    }
    case 'lost': {
      const seq = lastOk as number;
      const l = at(seq);
      if (l === undefined) throw new Error(`ledger: write (${keyId}, ${seq}) vanished during verification`);
      const { rule, ...evidence } = classifier.classify(store, k.partition, l);
      return {
        cls: rule,
        write: idOf(l, keyId, seq),
        detail: { seq, matchedSeq, ackNode: l.ack_node, ackEpoch: l.ack_epoch, ackRevision: l.ack_revision, ackMode: l.ack_mode, ...evidence },
      };
    }
    default:
      throw new Error(`verifier: unknown finding kind ${String(kind)}`);
  }
}
