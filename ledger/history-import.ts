import { existsSync, rmSync } from 'node:fs';
import Database from 'better-sqlite3';
import type { History } from './history-format.js';
import { HISTORY_FORMAT_V2 } from './history-format.js';
import { applySchema, META, SCHEMA_VERSION } from './schema.js';
import { insertNodeStalls } from './node-stalls.js';

/** Meta key an imported ledger carries: the format it was imported from (`zaris-history/1` or `/2`). */
export const META_HISTORY_FORMAT = 'history_format';

/** The partition recorded for a key that appears only in `finalReads` (no write names it). */
export const UNKNOWN_PARTITION = -1;

/**
 * Creates a ledger (ledger/schema.ts) and fills it from a validated history
 * (ledger/history-format.ts, v1 or v2; the mapping follows history-format.md):
 * - nodes: ids only (host '', ports 0); preferred_primary = 1 for a node heading a partition;
 * - stores: segments = the store's partition count; partitions: replicas as JSON;
 * - keys: key_id 1, 2, … in order of first appearance in `writes`, then keys only read in
 *   `finalReads` (partition {@link UNKNOWN_PARTITION}); writer 0;
 * - writes: keyed (key_id, seq), the history's write id kept in `writes.wid`, `ack` spread over
 *   the ack_* columns, the extensions status / attempts / trace kept;
 * - faults: id = position + 1, the history's id kept in detail `{"historyId": …}`; v2:
 *   effective_ms, isolated;
 * - samples from `ownership` (v2: node, in_sync, revisions, replicas as JSON); node_samples from
 *   the extension `stalls` (ledger/node-stalls.ts insertNodeStalls);
 * - reads (v2): rid = position + 1, the read's id kept in `reads.id`, the value resolved to
 *   (value_key_id, value_seq) by write id among the same key's writes;
 * - final_reads: the value resolved the same way; a value naming no write of that key stays
 *   unresolved (NULLs);
 * - meta: schema_version, duration_ms (the latest time in the history), history_format, rules
 *   (the history's version: its rules judge the ledger); v1: status 'complete'; v2: status and
 *   inconclusive_reason from `run`, contract from `run.contract` (when given), and run_config `{beyondBudget, asyncLagMaxMs, leaseMs,
 *   selfTestBug}`.
 * @param dbPath a file that must not exist yet, or ':memory:'.
 * @returns the open ledger (the caller closes it).
 * @throws Error when dbPath exists; on any failure a file created here is removed.
 */
export function importHistory(history: History, dbPath: string): Database.Database {
  const inMemory = dbPath === ':memory:';
  if (!inMemory && existsSync(dbPath)) throw new Error(`cannot import into ${dbPath}: the file already exists`);
  const db = new Database(dbPath);
  try {
    if (!inMemory) {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
    }
    applySchema(db);
    db.transaction(() => fill(db, history))();
    return db;
  } catch (e) {
    db.close();
    if (!inMemory) for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(dbPath + suffix, { force: true });
    throw e;
  }
}

function fill(db: Database.Database, h: History): void {
  let latest = 0;
  const seen = (t: number | null | undefined): void => {
    if (typeof t === 'number' && t > latest) latest = t;
  };

  const heads = new Set(h.partitions.map((p) => p.replicas[0]));
  const insNode = db.prepare('INSERT INTO nodes (id, host, client_port, cluster_port, preferred_primary) VALUES (?, ?, 0, 0, ?)');
  for (const n of h.nodes) insNode.run(n, '', heads.has(n) ? 1 : 0);

  const insStore = db.prepare('INSERT INTO stores (name, replication_factor, ack_mode, segments) VALUES (?, ?, ?, ?)');
  for (const s of h.stores) {
    const parts = h.partitions.filter((p) => p.store === s.name).length;
    insStore.run(s.name, s.replicationFactor, s.ackMode, Math.max(1, parts));
  }
  const insPart = db.prepare('INSERT INTO partitions (store, partition, replicas) VALUES (?, ?, ?)');
  for (const p of h.partitions) insPart.run(p.store, p.partition, JSON.stringify(p.replicas));

  const json = (v: unknown): string | null => (v === undefined || v === null ? null : JSON.stringify(v));
  const insFault = db.prepare(
    'INSERT INTO faults (id, kind, nodes, target, planned_ms, start_ms, effective_ms, end_ms, caught_up_ms, detail, isolated) VALUES (?, ?, ?, NULL, NULL, ?, ?, ?, ?, ?, ?)',
  );
  h.faults.forEach((f, i) => {
    insFault.run(i + 1, f.kind, JSON.stringify(f.nodes), f.start, f.effective ?? null, f.end ?? null, f.caughtUp ?? null, JSON.stringify({ historyId: f.id }), json(f.isolated));
    seen(f.start);
    seen(f.effective);
    seen(f.end);
    seen(f.caughtUp);
  });

  const insSample = db.prepare(
    'INSERT INTO samples (t_ms, store, partition, active, epoch, health, replicated_revision, node, in_sync, revisions, replicas) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  for (const s of h.ownership) {
    insSample.run(s.t, s.store, s.partition, s.active, s.epoch, s.health, s.replicatedRevision, s.node ?? null, json(s.inSync), json(s.revisions), json(s.replicas));
    seen(s.t);
  }

  // extension: the stalls as node_samples that read back as the same stretches
  if (h.stalls !== undefined) {
    insertNodeStalls(db, h.stalls);
    for (const st of h.stalls) seen(st.end);
  }

  // keys in order of first appearance; per key: write id -> seq
  const keyIds = new Map<string, { id: number; wids: Map<string, number> }>();
  const insKey = db.prepare('INSERT INTO keys (key_id, store, key, partition, writer) VALUES (?, ?, ?, ?, 0)');
  const keyOf = (store: string, key: string, partition: number): { id: number; wids: Map<string, number> } => {
    const kk = `${store}\u0000${key}`;
    let k = keyIds.get(kk);
    if (k === undefined) {
      k = { id: keyIds.size + 1, wids: new Map() };
      keyIds.set(kk, k);
      insKey.run(k.id, store, key, partition);
    }
    return k;
  };

  const insWrite = db.prepare(
    `INSERT INTO writes (key_id, seq, op, invoke_ms, complete_ms, outcome, status, attempts,
       ack_node, ack_epoch, ack_version, ack_revision, ack_mode, trace, wid, ack_copies)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  for (const w of h.writes) {
    const k = keyOf(w.store, w.key, w.partition);
    k.wids.set(w.id, w.seq);
    const a = w.ack;
    insWrite.run(
      k.id, w.seq, w.op, w.invoke, w.complete ?? null, w.outcome, w.status ?? null, w.attempts ?? null,
      a?.node ?? null, a?.epoch ?? null, a?.version ?? null, a?.revision ?? null, a?.ackMode ?? null,
      w.trace ?? null, w.id, a?.copies ?? null,
    );
    seen(w.invoke);
    seen(w.complete);
  }

  const insReadDuring = db.prepare(
    `INSERT INTO reads (key_id, invoke_ms, rid, complete_ms, outcome, node, value, value_key_id, value_seq, kind, id)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  (h.reads ?? []).forEach((r, i) => {
    const k = keyOf(r.store, r.key, UNKNOWN_PARTITION);
    const seq = r.value === null ? undefined : k.wids.get(r.value);
    insReadDuring.run(k.id, r.invoke, i + 1, r.complete ?? null, r.outcome, r.node, r.value, seq === undefined ? null : k.id, seq ?? null, r.kind ?? null, r.id);
    seen(r.invoke);
    seen(r.complete);
  });

  const insRead = db.prepare(
    'INSERT INTO final_reads (key_id, value, value_key_id, value_seq, unreadable, t_ms) VALUES (?, ?, ?, ?, ?, NULL)',
  );
  for (const r of h.finalReads) {
    const k = keyOf(r.store, r.key, UNKNOWN_PARTITION);
    const seq = r.value === null ? undefined : k.wids.get(r.value);
    insRead.run(k.id, r.value, seq === undefined ? null : k.id, seq ?? null, r.unreadable ? 1 : 0);
  }

  const insMeta = db.prepare('INSERT INTO meta (key, value) VALUES (?, ?)');
  insMeta.run(META.schemaVersion, String(SCHEMA_VERSION));
  insMeta.run(META.durationMs, String(latest));
  insMeta.run(META_HISTORY_FORMAT, h.format);
  insMeta.run(META.rules, h.format);
  if (h.format === HISTORY_FORMAT_V2 && h.run !== undefined) {
    const run = h.run;
    insMeta.run(META.status, run.status);
    if (run.inconclusiveReason !== null) insMeta.run(META.inconclusiveReason, run.inconclusiveReason);
    insMeta.run(
      META.runConfig,
      JSON.stringify({ beyondBudget: run.beyondBudget, asyncLagMaxMs: run.asyncLagMaxMs, leaseMs: run.leaseMs ?? null, selfTestBug: run.selfTestBug }),
    );
    if (run.contract !== undefined) insMeta.run(META.contract, JSON.stringify(run.contract));
  } else {
    insMeta.run(META.status, 'complete');
  }
}
