import type Database from 'better-sqlite3';
import { unpackWriteBatches } from './write-batches.js';
/**
 * The SQLite ledger schema (DESIGN.md §4). One file per run: `runs/<dir>/ledger.sqlite`.
 *
 * Conventions:
 * - Every time is milliseconds (REAL) since the run started, read from the harness's own
 *   monotonic clock (performance.now()); node clocks never appear here.
 * - A write is identified by (key_id, seq): seq orders one key's writes, from 1. The value a put
 *   stores is its write id `w<key_id>.<seq>` (see {@link writeId}), so a final read names the write
 *   it saw without any other lookup. Imported histories (zaris-history/1) keep their own write
 *   ids in `writes.wid`.
 * - outcome: NULL while in flight, then 'ok' (acknowledged), 'fail' (definitely not applied),
 *   'info' (indeterminate), as Jepsen names them.
 * - op: 'put' | 'cas' (put with ifMatchVersion) | 'create' (put with ifAbsent) | 'delete'.
 */
export const SCHEMA_VERSION = 1;

/** DDL applied to a new ledger, in order. Idempotent (IF NOT EXISTS). */
export const LEDGER_DDL: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS meta (
     key   TEXT PRIMARY KEY,
     value TEXT NOT NULL
   )`,
  `CREATE TABLE IF NOT EXISTS nodes (
     id                TEXT PRIMARY KEY,
     host              TEXT NOT NULL,
     client_port       INTEGER NOT NULL,
     cluster_port      INTEGER NOT NULL,
     preferred_primary INTEGER NOT NULL
   )`,
  `CREATE TABLE IF NOT EXISTS stores (
     name               TEXT PRIMARY KEY,
     replication_factor INTEGER NOT NULL,
     ack_mode           TEXT NOT NULL,
     segments           INTEGER NOT NULL
   )`,
  // replicas: JSON array of node ids, preferred primary first (the partition map at start)
  `CREATE TABLE IF NOT EXISTS partitions (
     store     TEXT NOT NULL,
     partition INTEGER NOT NULL,
     replicas  TEXT NOT NULL,
     PRIMARY KEY (store, partition)
   )`,
  `CREATE TABLE IF NOT EXISTS keys (
     key_id    INTEGER PRIMARY KEY,
     store     TEXT NOT NULL,
     key       TEXT NOT NULL,
     partition INTEGER NOT NULL,
     writer    INTEGER NOT NULL,
     UNIQUE (store, key)
   )`,
  // During the run the hot path only appends: a write is a row of `invokes` (committed before it
  // is sent) and, once it completed, a row of `completions` with the same write number w. At the
  // end (or at the first analysis of a run that crashed) sealLedger() moves them, in key order,
  // into `writes`, the table the verifier streams. A write with no completion is indeterminate.
  // the hot path's packed form of invokes and completions: one row per group commit (see
  // write-batches.ts); unpacked into `invokes` / `completions` by the seal
  `CREATE TABLE IF NOT EXISTS write_batches (
     id     INTEGER PRIMARY KEY,
     inv    BLOB NOT NULL,
     cmp    BLOB NOT NULL,
     dict   TEXT NOT NULL,
     traces TEXT NOT NULL
   )`,
  `CREATE TABLE IF NOT EXISTS invokes (
     w         INTEGER PRIMARY KEY,
     key_id    INTEGER NOT NULL,
     seq       INTEGER NOT NULL,
     op        TEXT NOT NULL,
     invoke_ms REAL NOT NULL
   )`,
  `CREATE TABLE IF NOT EXISTS completions (
     w            INTEGER PRIMARY KEY,
     complete_ms  REAL NOT NULL,
     outcome      TEXT NOT NULL,
     status       TEXT,
     attempts     INTEGER,
     ack_node     TEXT,
     ack_epoch    INTEGER,
     ack_version  INTEGER,
     ack_revision INTEGER,
     ack_mode     TEXT,
     trace        TEXT
   )`,
  // one row per write, clustered by key: (key_id, seq) orders one key's writes
  `CREATE TABLE IF NOT EXISTS writes (
     key_id       INTEGER NOT NULL,
     seq          INTEGER NOT NULL,
     op           TEXT NOT NULL,
     invoke_ms    REAL NOT NULL,
     complete_ms  REAL,
     outcome      TEXT,
     status       TEXT,
     attempts     INTEGER,
     ack_node     TEXT,
     ack_epoch    INTEGER,
     ack_version  INTEGER,
     ack_revision INTEGER,
     ack_mode     TEXT,
     trace        TEXT,
     wid          TEXT,
     PRIMARY KEY (key_id, seq)
   ) WITHOUT ROWID`,
  // kind: kill | stop | pause | partition. nodes: JSON array (for partition: the nodes cut off
  // from the rest). end_ms: restart (kill/stop), resume (pause) or heal (partition).
  // caught_up_ms: when a restarted node was back in sync (NULL if unknown).
  // start_ms is taken just before the fault is applied (it is recorded before it takes effect);
  // effective_ms when the runtime call that applies it returned (the fault is surely in effect).
  // The crash of a node happened somewhere in [start_ms, effective_ms]; an ack the node sent is
  // before its crash, so the verifier dates a crash at effective_ms ("crashed after the ack").
  `CREATE TABLE IF NOT EXISTS faults (
     id           INTEGER PRIMARY KEY,
     kind         TEXT NOT NULL,
     nodes        TEXT NOT NULL,
     target       TEXT,
     planned_ms   REAL,
     start_ms     REAL NOT NULL,
     effective_ms REAL,
     end_ms       REAL,
     caught_up_ms REAL,
     detail       TEXT
   )`,
  // runtime-map samples, at least every 500 ms
  `CREATE TABLE IF NOT EXISTS samples (
     t_ms                REAL NOT NULL,
     store               TEXT NOT NULL,
     partition           INTEGER NOT NULL,
     active              TEXT,
     epoch               INTEGER NOT NULL,
     health              TEXT NOT NULL,
     replicated_revision INTEGER NOT NULL
   )`,
  `CREATE INDEX IF NOT EXISTS samples_by_partition ON samples (store, partition, t_ms)`,
  // value: the write id read (absent: NULL); value_key_id/value_seq: the write it resolves to,
  // NULL when absent or when it names no write. unreadable: 1 when the read never succeeded.
  `CREATE TABLE IF NOT EXISTS final_reads (
     key_id       INTEGER PRIMARY KEY,
     value        TEXT,
     value_key_id INTEGER,
     value_seq    INTEGER,
     unreadable   INTEGER NOT NULL DEFAULT 0,
     t_ms         REAL
   )`,
  // per-second workload figures the harness aggregates as it runs (for the report's charts):
  // statuses: JSON object status name -> attempts that ended with it in that second
  `CREATE TABLE IF NOT EXISTS stats (
     t_s          INTEGER NOT NULL,
     store        TEXT NOT NULL,
     acked        INTEGER NOT NULL,
     failed       INTEGER NOT NULL,
     indeterminate INTEGER NOT NULL,
     p50_ms       REAL,
     p95_ms       REAL,
     p99_ms       REAL,
     max_ms       REAL,
     statuses     TEXT NOT NULL,
     PRIMARY KEY (t_s, store)
   )`,
  // free-form timeline: phases, failover measurements, node restarts, harness warnings
  `CREATE TABLE IF NOT EXISTS events (
     t_ms   REAL NOT NULL,
     kind   TEXT NOT NULL,
     detail TEXT
   )`,
  // the verifier's output (all of it; results.json keeps at most 1,000 per class)
  `CREATE TABLE IF NOT EXISTS findings (
     class  TEXT NOT NULL,
     kind   TEXT NOT NULL,
     store  TEXT NOT NULL,
     key    TEXT NOT NULL,
     write  TEXT NOT NULL,
     detail TEXT
   )`,
  // the verifier's report order: results.json and the HTML read findings class by class
  `CREATE INDEX IF NOT EXISTS findings_by_class ON findings (class, store, key)`,
];

/**
 * Columns added after a table first shipped: [table, column, type]. {@link applySchema} adds the
 * missing ones to an older ledger.
 */
export const ADDED_COLUMNS: ReadonlyArray<[string, string, string]> = [['faults', 'effective_ms', 'REAL']];

/** Applies the DDL and adds columns an older ledger lacks. Idempotent. */
export function applySchema(db: { exec(sql: string): unknown; prepare(sql: string): { all(...a: unknown[]): unknown[] } }): void {
  for (const ddl of LEDGER_DDL) db.exec(ddl);
  for (const [table, column, type] of ADDED_COLUMNS) {
    const cols = db.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string }>;
    if (!cols.some((c) => c.name === column)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${type}`);
  }
}

/**
 * Moves the run's packed batches and appended invokes and completions into `writes`, in key
 * order, in one transaction (all or nothing), then empties them. Idempotent: a sealed ledger has
 * nothing to move.
 * @returns the number of writes moved.
 */
export function sealLedger(db: Database.Database): number {
  const packed = db.prepare('SELECT count(*) AS n FROM write_batches').get() as { n: number };
  const pending = db.prepare('SELECT count(*) AS n FROM invokes').get() as { n: number };
  if (pending.n === 0 && packed.n === 0) return 0;
  return db.transaction(() => {
    unpackWriteBatches(db);
    const r = db
      .prepare(
        `INSERT INTO writes (key_id, seq, op, invoke_ms, complete_ms, outcome, status, attempts, ack_node, ack_epoch, ack_version, ack_revision, ack_mode, trace)
         SELECT i.key_id, i.seq, i.op, i.invoke_ms, c.complete_ms, c.outcome, c.status, c.attempts, c.ack_node, c.ack_epoch, c.ack_version, c.ack_revision, c.ack_mode, c.trace
         FROM invokes i LEFT JOIN completions c ON c.w = i.w
         ORDER BY i.key_id, i.seq`,
      )
      .run();
    db.exec('DELETE FROM invokes');
    db.exec('DELETE FROM completions');
    return r.changes;
  })();
}

/** One row of the `writes` table as better-sqlite3 returns it (`SELECT *`). */
export interface WritesRow {
  key_id: number;
  seq: number;
  op: string;
  invoke_ms: number;
  complete_ms: number | null;
  outcome: string | null;
  status: string | null;
  attempts: number | null;
  ack_node: string | null;
  ack_epoch: number | null;
  ack_version: number | null;
  ack_revision: number | null;
  ack_mode: string | null;
  trace: string | null;
  wid: string | null;
}

/** The write id (and stored value) of a key's seq-th write: `w<key_id>.<seq>`. */
export function writeId(keyId: number, seq: number): string {
  return `w${keyId}.${seq}`;
}

/** Parses a value written by the harness back into (keyId, seq); null if it is not one. */
export function parseWriteId(value: string): { keyId: number; seq: number } | null {
  const m = /^w(\d{1,15})\.(\d{1,15})$/.exec(value);
  if (!m) return null;
  return { keyId: Number(m[1]), seq: Number(m[2]) };
}

/** Meta keys the harness writes (values are strings; JSON where noted). */
export const META = {
  schemaVersion: 'schema_version',
  /** JSON: the run's resolved options (duration, seed, runtime, faults, workload). */
  runConfig: 'run_config',
  seed: 'seed',
  runtime: 'runtime',
  /** JSON: node, package and store versions. */
  versions: 'versions',
  startedAtUtc: 'started_at_utc',
  /** 'running' until the end phase finished; then 'complete'; 'interrupted' on SIGINT/crash. */
  status: 'status',
  scheduleDigest: 'schedule_digest',
  /** JSON: the planned fault schedule (kinds, targets, relative times), for replay. */
  schedule: 'schedule',
  durationMs: 'duration_ms',
  /** Why the run is inconclusive beyond the verifier's rules (e.g. the cluster never healed). */
  inconclusiveReason: 'inconclusive_reason',
} as const;
