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
 * - The times of writes and reads the harness records are rounded to the microsecond (the packed
 *   forms store them exactly as whole µs); imported histories keep theirs as given.
 * - A sealed harness ledger (schema 3) holds its writes and reads in `key_log`, one packed row
 *   per key (key-log.ts); `writes` and `reads` hold imported histories and ledgers sealed before.
 */
export const SCHEMA_VERSION = 3;

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
  // fmt: NULL = the first layout (completions of 10 fields, no reads); 2 = completions of 11
  // fields (ack_copies) and the reads of the batch in rd / rdx (write-batches.ts)
  // rid0: the recorded order (rid) of the batch's first read (NULL: count from the batches before)
  `CREATE TABLE IF NOT EXISTS write_batches (
     id     INTEGER PRIMARY KEY,
     inv    BLOB NOT NULL,
     cmp    BLOB NOT NULL,
     dict   TEXT NOT NULL,
     traces TEXT NOT NULL,
     fmt    INTEGER,
     rd     BLOB,
     rdx    TEXT,
     rid0   INTEGER
   )`,
  // the hot path's string codes (every batch's dict entries; batches are deleted once packed)
  `CREATE TABLE IF NOT EXISTS hot_strings (
     code INTEGER PRIMARY KEY,
     text TEXT NOT NULL
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
     trace        TEXT,
     ack_copies   INTEGER
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
     ack_copies   INTEGER,
     PRIMARY KEY (key_id, seq)
   ) WITHOUT ROWID`,
  // The sealed form (schema 3, key-log.ts): per key, its writes and reads as packed columns,
  // strings as codes of `strings`, attempt traces and non-write-id read values in extra (JSON).
  `CREATE TABLE IF NOT EXISTS strings (
     code INTEGER PRIMARY KEY,
     text TEXT NOT NULL
   )`,
  `CREATE TABLE IF NOT EXISTS key_log (
     key_id INTEGER PRIMARY KEY,
     writes BLOB,
     reads  BLOB,
     extra  TEXT
   )`,
  // Reads the workload made during the run (history-format.md v2 `reads[]`). The hot path packs
  // them into write_batches.rd; the seal unpacks them into read_log (rid = the order recorded) and
  // then moves them, in (key_id, invoke_ms, rid) order, into `reads`, the table the verifier scans.
  // outcome: ok | fail | info. value: the write id read (NULL = absent, or no value: fail/info);
  // value_key_id / value_seq: the write it names (parsed `w<key_id>.<seq>`, or resolved by id on
  // import), NULL when it names none. kind: get | getMany | probe. id: an imported read's own id
  // (NULL: `r<rid>`).
  `CREATE TABLE IF NOT EXISTS read_log (
     rid          INTEGER PRIMARY KEY,
     key_id       INTEGER NOT NULL,
     invoke_ms    REAL NOT NULL,
     complete_ms  REAL,
     outcome      TEXT NOT NULL,
     node         TEXT,
     value        TEXT,
     value_key_id INTEGER,
     value_seq    INTEGER,
     kind         TEXT,
     id           TEXT
   )`,
  `CREATE TABLE IF NOT EXISTS reads (
     key_id       INTEGER NOT NULL,
     invoke_ms    REAL NOT NULL,
     rid          INTEGER NOT NULL,
     complete_ms  REAL,
     outcome      TEXT NOT NULL,
     node         TEXT,
     value        TEXT,
     value_key_id INTEGER,
     value_seq    INTEGER,
     kind         TEXT,
     id           TEXT,
     PRIMARY KEY (key_id, invoke_ms, rid)
   ) WITHOUT ROWID`,
  // kind: kill | stop | pause | partition. nodes: JSON array (for partition: the nodes cut off
  // from the rest). end_ms: restart (kill/stop), resume (pause) or heal (partition).
  // caught_up_ms: when a restarted node was back in sync (NULL if unknown).
  // start_ms is taken just before the fault is applied (it is recorded before it takes effect);
  // effective_ms when the runtime call that applies it returned (the fault is surely in effect).
  // The crash of a node happened somewhere in [start_ms, effective_ms]; an ack the node sent is
  // before its crash, so the verifier dates a crash at effective_ms ("crashed after the ack").
  // isolated: JSON array, partition faults: the nodes that cannot reach a majority while it lasts
  // (NULL: unknown, the rules then use `nodes`).
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
     detail       TEXT,
     isolated     TEXT
   )`,
  // per node and runtime-map sample (issue 11, stall findings): whether the node answered the
  // harness's metadata request, and its own event-loop delay over its rolling window (metadata
  // `loop`: the longest delay and the highest slice p99, ms; NULL when it did not answer or does
  // not measure)
  `CREATE TABLE IF NOT EXISTS node_samples (
     t_ms        REAL NOT NULL,
     node        TEXT NOT NULL,
     answered    INTEGER NOT NULL,
     loop_max_ms REAL,
     loop_p99_ms REAL
   )`,
  // runtime-map samples, at least every 500 ms. node: NULL = the harness's merged view, else the
  // node whose own committed entry the row is. in_sync: JSON array of node ids (active included),
  // NULL unknown. revisions: JSON object node -> last revision that node reported holding, NULL
  // unknown. replicas: JSON array, the partition's replicas in the partition map of that moment
  // (NULL: as in `partitions`).
  `CREATE TABLE IF NOT EXISTS samples (
     t_ms                REAL NOT NULL,
     store               TEXT NOT NULL,
     partition           INTEGER NOT NULL,
     active              TEXT,
     epoch               INTEGER NOT NULL,
     health              TEXT NOT NULL,
     replicated_revision INTEGER NOT NULL,
     node                TEXT,
     in_sync             TEXT,
     revisions           TEXT,
     replicas            TEXT
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
  // the verifier's output (all of it; results.json keeps at most 1,000 per class). A key's finding
  // has key and (but for a stale read of an absent value) write; a read finding also names the
  // read (its id); a partition finding has key and write NULL and names the partition.
  `CREATE TABLE IF NOT EXISTS findings (
     class     TEXT NOT NULL,
     kind      TEXT NOT NULL,
     store     TEXT NOT NULL,
     key       TEXT,
     write     TEXT,
     detail    TEXT,
     partition INTEGER,
     read      TEXT
   )`,
  // the verifier's report order: results.json and the HTML read findings class by class
  `CREATE INDEX IF NOT EXISTS findings_by_class ON findings (class, store, key)`,
];

/**
 * Columns added after a table first shipped: [table, column, type]. {@link applySchema} adds the
 * missing ones to an older ledger.
 */
export const ADDED_COLUMNS: ReadonlyArray<[string, string, string]> = [
  ['faults', 'effective_ms', 'REAL'],
  ['faults', 'isolated', 'TEXT'],
  ['samples', 'node', 'TEXT'],
  ['samples', 'in_sync', 'TEXT'],
  ['samples', 'revisions', 'TEXT'],
  ['samples', 'replicas', 'TEXT'],
  ['completions', 'ack_copies', 'INTEGER'],
  ['writes', 'ack_copies', 'INTEGER'],
  ['write_batches', 'fmt', 'INTEGER'],
  ['write_batches', 'rd', 'BLOB'],
  ['write_batches', 'rdx', 'TEXT'],
  ['write_batches', 'rid0', 'INTEGER'],
];

/**
 * Applies the DDL and brings an older ledger up to this schema: adds the columns it lacks
 * ({@link ADDED_COLUMNS}) and rebuilds an old-shaped `findings` table (key and write NOT NULL, no
 * partition or read column; its rows are the verifier's output, which every verification
 * rewrites). Idempotent.
 */
export function applySchema(db: { exec(sql: string): unknown; prepare(sql: string): { all(...a: unknown[]): unknown[] } }): void {
  const columns = (table: string): string[] => (db.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string }>).map((c) => c.name);
  const oldFindings = columns('findings');
  if (oldFindings.length > 0 && !oldFindings.includes('partition')) db.exec('DROP TABLE findings');
  for (const ddl of LEDGER_DDL) {
    // an index over a column an older table lacks is made after the column is added
    if (/^CREATE INDEX/.test(ddl)) continue;
    db.exec(ddl);
  }
  for (const [table, column, type] of ADDED_COLUMNS) {
    if (!columns(table).includes(column)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${type}`);
  }
  for (const ddl of LEDGER_DDL) if (/^CREATE INDEX/.test(ddl)) db.exec(ddl);
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
  /** Copies holding the write at its ack (sync at RF > 1), the active included; NULL unknown. */
  ack_copies: number | null;
}

/** The write id (and stored value) of a key's seq-th write: `w<key_id>.<seq>`. */
export function writeId(keyId: number, seq: number): string {
  return `w${keyId}.${seq}`;
}

/**
 * Parses a value written by the harness back into (keyId, seq); null if it is not one. Only the
 * exact form {@link writeId} writes is one (no leading zeros): `writeId(parsed) === value`.
 */
export function parseWriteId(value: string): { keyId: number; seq: number } | null {
  const m = /^w(0|[1-9]\d{0,14})\.(0|[1-9]\d{0,14})$/.exec(value);
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
  /** JSON: the scenario of a scenario run (harness/scenario: name, file, expect, step names, YAML source). */
  scenario: 'scenario',
  /** JSON: where `make shrink` wrote the smallest failing schedule of this run ({ file, faults, replays }). */
  shrunk: 'shrunk',
  durationMs: 'duration_ms',
  /** Why the run is inconclusive beyond the verifier's rules (e.g. the cluster never healed). */
  inconclusiveReason: 'inconclusive_reason',
  /**
   * Which rules judge this ledger: the tag of the history format whose rules apply
   * ('zaris-history/1' or 'zaris-history/2', shared/cases/history-format.md). A ledger the harness
   * writes is judged by v2; an imported history by its own version; a ledger without the key
   * (written before v2 existed) by v1.
   */
  rules: 'rules',
  /**
   * JSON: the contract the run is judged by (ledger/contract.ts, `zaris-contract/1`): the
   * allowed-loss classes the store claims and every rule's parameter with its source. A ledger
   * without it is judged by its target's declaration (harness/targets/contracts.ts).
   */
  contract: 'contract',
} as const;

/** The history-format tag whose rules judge a ledger (meta `rules`). */
export type RulesVersion = 'zaris-history/1' | 'zaris-history/2';

/**
 * What the rules read from the run config (meta `run_config`, JSON) besides the harness's own
 * settings (history-format.md v2 `run`). The harness writes these fields into the run config.
 */
export interface RunRulesConfig {
  /** The nemesis was allowed past the fault budget (beyond-budget losses are allowed only then). */
  beyondBudget?: boolean;
  /** ms: how long the store may keep an acknowledged async write unreplicated (ASYNC_LAG; default 1,000). */
  asyncLagMaxMs?: number;
  /** ms: the longest an owner cut off from a majority may go on acknowledging (declared by the store); null unknown. */
  leaseMs?: number | null;
  /** The deliberate store bug of a self-test run, or null. */
  selfTestBug?: string | null;
  /** The workload client's retry options and which ZARIS_* variables set them (free-form object). */
  clientOptions?: Record<string, unknown> | null;
}

/** ASYNC_LAG's default, ms (issue 10: `ASYNC_LAG=` default 1 s). */
export const DEFAULT_ASYNC_LAG_MS = 1000;
