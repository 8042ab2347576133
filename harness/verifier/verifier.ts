import type Database from 'better-sqlite3';
import { META, writeId } from '../../ledger/schema.js';
import { CrashTimeline } from './crash-timeline.js';

/** Finding classes, in report order (DESIGN.md §5, history-format.md). */
export const FINDING_CLASSES = ['violation', 'rf1', 'async-ack', 'beyond-budget', 'info'] as const;
/** violation, or one of the losses the store's contract allows, or info (recovered, unverified). */
export type FindingClass = (typeof FINDING_CLASSES)[number];

/** Finding kinds, in the order the rules try them (history-format.md "first that applies"). */
export const FINDING_KINDS = ['unverified', 'unexpected', 'lost', 'phantom', 'version-regression', 'recovered'] as const;
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
  /** Width of a key_id range aggregated at once (bounds memory); default 65,536. */
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
const AGG_TABLE = 'temp.zaris_key_agg';

/**
 * Per key, in one ordered pass over the writes table (clustered by (key_id, seq)): write count,
 * outcome counts, the last `ok` seq, the latest `delete` whose outcome is ok or info (a write
 * still in flight counts as info), and the first version regression among `ok` non-delete writes.
 */
const AGGREGATE_SQL = `
  INSERT INTO ${AGG_TABLE} (key_id, n, n_ok, n_fail, last_ok, last_del, first_reg)
  SELECT key_id, COUNT(*), SUM(outcome = 'ok'), SUM(outcome = 'fail'),
         MAX(seq) FILTER (WHERE outcome = 'ok'),
         MAX(seq) FILTER (WHERE op = 'delete' AND outcome IS NOT 'fail'),
         ${REGRESSION_UDF}(seq, ack_version ORDER BY seq) FILTER (WHERE outcome = 'ok' AND op <> 'delete')
  FROM writes WHERE key_id >= @lo AND key_id < @hi GROUP BY key_id`;

/**
 * The rules of history-format.md, first that applies, for the keys of one chunk. `mw` is the
 * write the final value names (same key only); an absent value matches the latest ok/info delete,
 * else the initial state (seq 0).
 */
const FINDINGS_SQL = `
  SELECT * FROM (
    SELECT k.key_id, k.store, k.key, k.partition, a.last_ok, a.first_reg, fr.value,
           CASE WHEN fr.value IS NULL THEN COALESCE(a.last_del, 0) ELSE mw.seq END AS matched_seq,
           CASE
             WHEN a.key_id IS NULL THEN
               CASE WHEN fr.unreadable = 0 AND fr.value IS NOT NULL THEN 'unexpected' END
             WHEN fr.key_id IS NULL OR fr.unreadable <> 0 THEN 'unverified'
             WHEN fr.value IS NOT NULL AND mw.seq IS NULL THEN 'unexpected'
             WHEN a.last_ok > (CASE WHEN fr.value IS NULL THEN COALESCE(a.last_del, 0) ELSE mw.seq END) THEN 'lost'
             WHEN mw.outcome = 'fail' THEN 'phantom'
             WHEN a.first_reg IS NOT NULL THEN 'version-regression'
             WHEN mw.seq IS NOT NULL AND mw.outcome IS NOT 'ok' THEN 'recovered'
           END AS kind
    FROM keys k
    LEFT JOIN ${AGG_TABLE} a ON a.key_id = k.key_id
    LEFT JOIN final_reads fr ON fr.key_id = k.key_id
    LEFT JOIN writes mw ON fr.value IS NOT NULL AND fr.value_key_id = k.key_id
                       AND mw.key_id = k.key_id AND mw.seq = fr.value_seq
    WHERE k.key_id >= @lo AND k.key_id < @hi AND (a.key_id IS NOT NULL OR fr.key_id IS NOT NULL)
  ) WHERE kind IS NOT NULL`;

interface CandidateRow {
  key_id: number;
  store: string;
  key: string;
  partition: number;
  last_ok: number | null;
  first_reg: number | null;
  value: string | null;
  matched_seq: number | null;
  kind: FindingKind;
}

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

function registerRegressionUdf(db: Database.Database): void {
  type State = [prevVersion: number, firstRegression: number | null] | null;
  const step = (state: State, seq: number, version: number | null): State => {
    if (version === null) return state;
    if (state === null) return [version, null];
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

function metaValue(db: Database.Database, key: string): string | null {
  const v = db.prepare('SELECT value FROM meta WHERE key = ?').pluck().get(key);
  return typeof v === 'string' ? v : null;
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
 * Work is done in SQL, one key_id range at a time (`chunkKeys` wide): one ordered aggregate pass
 * over the range's writes into a temporary table, then one query that applies the rules and
 * returns only the keys with a finding; a loss's class comes from indexed point queries on
 * samples and from the (small) set of crash faults. Memory is bounded by the chunk width and the
 * fault count, never by the number of writes. Runs in one transaction.
 * @throws Error when the ledger is inconsistent (a JSON column that is not JSON).
 */
export function verifyLedger(db: Database.Database, opts: VerifyOptions = {}): Verification {
  const chunk = opts.chunkKeys ?? 65_536;
  if (!Number.isSafeInteger(chunk) || chunk < 1) throw new Error('verifyLedger: chunkKeys must be a positive integer');
  registerRegressionUdf(db);
  return db.transaction(() => verifyInTransaction(db, chunk))();
}

function verifyInTransaction(db: Database.Database, chunk: number): Verification {
  db.exec('DELETE FROM findings');
  db.exec(`DROP TABLE IF EXISTS ${AGG_TABLE}`);
  db.exec(`CREATE TABLE ${AGG_TABLE} (key_id INTEGER PRIMARY KEY, n INTEGER NOT NULL, n_ok INTEGER NOT NULL,
             n_fail INTEGER NOT NULL, last_ok INTEGER, last_del INTEGER, first_reg INTEGER)`);
  try {
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

    const aggregate = db.prepare(AGGREGATE_SQL);
    const storeTotals = db.prepare(
      `SELECT k.store, COUNT(*) AS keys, SUM(a.n) AS n, SUM(a.n_ok) AS ok, SUM(a.n_fail) AS fail
       FROM ${AGG_TABLE} a JOIN keys k ON k.key_id = a.key_id GROUP BY k.store`,
    );
    const readOnlyKeys = db.prepare(
      `SELECT COUNT(*) FROM final_reads fr WHERE fr.key_id >= @lo AND fr.key_id < @hi
         AND NOT EXISTS (SELECT 1 FROM ${AGG_TABLE} a WHERE a.key_id = fr.key_id)`,
    ).pluck();
    const candidates = db.prepare(FINDINGS_SQL);
    const clear = db.prepare(`DELETE FROM ${AGG_TABLE}`);
    const writeAt = db.prepare(
      'SELECT seq, wid, complete_ms, ack_node, ack_epoch, ack_version, ack_revision, ack_mode FROM writes WHERE key_id = ? AND seq = ?',
    );
    const insert = db.prepare('INSERT INTO findings (class, kind, store, key, write, detail) VALUES (?, ?, ?, ?, ?, ?)');
    const classifier = new LossClassifier(db);

    const summary = emptySummary();
    const kinds = Object.fromEntries(FINDING_KINDS.map((k) => [k, 0])) as Record<FindingKind, number>;
    const counts = emptyCounts();
    let keys = 0;

    const bounds = db.prepare('SELECT MIN(key_id) AS lo, MAX(key_id) AS hi FROM keys').get() as { lo: number | null; hi: number | null };
    if (bounds.lo !== null && bounds.hi !== null) {
      for (let lo = bounds.lo; lo <= bounds.hi; lo += chunk) {
        const range = { lo, hi: lo + chunk };
        aggregate.run(range);
        for (const t of storeTotals.all() as { store: string; keys: number; n: number; ok: number; fail: number }[]) {
          const c = storeOf(t.store).counts;
          c.attempted += t.n;
          c.acknowledged += t.ok;
          c.failed += t.fail;
          c.indeterminate += t.n - t.ok - t.fail;
          keys += t.keys;
        }
        keys += readOnlyKeys.get(range) as number;
        for (const row of candidates.all(range) as CandidateRow[]) {
          const f = findingOf(row, writeAt, classifier);
          insert.run(f.cls, row.kind, row.store, row.key, f.write, JSON.stringify(f.detail));
          summary[f.cls]++;
          kinds[row.kind]++;
          storeOf(row.store).summary[f.cls]++;
        }
        clear.run();
      }
    }
    for (const s of stores.values()) {
      counts.attempted += s.counts.attempted;
      counts.acknowledged += s.counts.acknowledged;
      counts.failed += s.counts.failed;
      counts.indeterminate += s.counts.indeterminate;
    }

    const faultsInjected = db.prepare('SELECT COUNT(*) FROM faults').pluck().get() as number;
    const reasons: string[] = [];
    if (metaValue(db, META.status) === 'interrupted') reasons.push('the run was interrupted');
    const metaReason = metaValue(db, META.inconclusiveReason);
    if (metaReason !== null && metaReason.trim() !== '') reasons.push(metaReason.trim());
    if (kinds.unverified > 0) reasons.push(`${kinds.unverified} key${kinds.unverified === 1 ? '' : 's'} unverified`);
    if (faultsInjected === 0) reasons.push('no fault was injected');
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
  } finally {
    db.exec(`DROP TABLE IF EXISTS ${AGG_TABLE}`);
  }
}

function idOf(row: AckRow | undefined, keyId: number, seq: number): string {
  return row?.wid ?? writeId(keyId, seq);
}

function findingOf(
  row: CandidateRow,
  writeAt: Database.Statement,
  classifier: LossClassifier,
): { cls: FindingClass; write: string; detail: Record<string, unknown> } {
  const at = (seq: number): AckRow | undefined => writeAt.get(row.key_id, seq) as AckRow | undefined;
  switch (row.kind) {
    case 'unverified':
      return {
        cls: 'info',
        write: row.last_ok === null ? '' : idOf(at(row.last_ok), row.key_id, row.last_ok),
        detail: { seq: row.last_ok },
      };
    case 'unexpected':
      return { cls: 'violation', write: row.value ?? '', detail: {} };
    case 'phantom':
      return { cls: 'violation', write: row.value ?? '', detail: { seq: row.matched_seq } };
    case 'recovered':
      return { cls: 'info', write: row.value ?? '', detail: { seq: row.matched_seq } };
    case 'version-regression': {
      const seq = row.first_reg as number;
      const w = at(seq);
      return { cls: 'violation', write: idOf(w, row.key_id, seq), detail: { seq, version: w?.ack_version ?? null } };
    }
    case 'lost': {
      const seq = row.last_ok as number;
      const l = at(seq);
      if (l === undefined) throw new Error(`ledger: write (${row.key_id}, ${seq}) vanished during verification`);
      const ev = classifier.classify(row.store, row.partition, l);
      const { rule, ...evidence } = ev;
      return {
        cls: rule,
        write: idOf(l, row.key_id, seq),
        detail: { seq, matchedSeq: row.matched_seq, ackNode: l.ack_node, ackEpoch: l.ack_epoch, ackRevision: l.ack_revision, ackMode: l.ack_mode, ...evidence },
      };
    }
  }
}
