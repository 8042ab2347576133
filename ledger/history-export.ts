import { closeSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import type Database from 'better-sqlite3';
import { HISTORY_FORMAT_V2, READ_KINDS } from './history-format.js';
import type { HistoryFault, HistoryFinalRead, HistoryOwnership, HistoryRead, HistoryRun, HistoryWrite, ReadKind, RunStatus } from './history-format.js';
import { DEFAULT_ASYNC_LAG_MS, META, writeId, type WritesRow } from './schema.js';
import { iterateKeyLog } from './key-log.js';
import { parseContract, type Contract } from './contract.js';
import { observedNodeStalls } from './node-stalls.js';

/** Bytes buffered before a write to the file. */
const FLUSH_BYTES = 1 << 20;

/** Appends text to a file through a bounded buffer (synchronous, so rows stream from SQLite). */
class BufferedFile {
  private readonly fd: number;
  private parts: string[] = [];
  private size = 0;

  constructor(path: string) {
    this.fd = openSync(path, 'w');
  }

  write(text: string): void {
    this.parts.push(text);
    this.size += text.length;
    if (this.size >= FLUSH_BYTES) this.flush();
  }

  flush(): void {
    if (this.parts.length === 0) return;
    writeSync(this.fd, this.parts.join(''));
    this.parts = [];
    this.size = 0;
  }

  close(): void {
    closeSync(this.fd);
  }
}

interface WriteRow extends WritesRow {
  store: string;
  key: string;
  partition: number;
}

function parseJsonArray(text: string, where: string): string[] {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new Error(`ledger: ${where} is not JSON`);
  }
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) throw new Error(`ledger: ${where} is not a JSON array of node ids`);
  return v as string[];
}

function parseJsonObject(text: string, where: string): Record<string, number> {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new Error(`ledger: ${where} is not JSON`);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v) || !Object.values(v).every((x) => typeof x === 'number')) {
    throw new Error(`ledger: ${where} is not a JSON object of revisions`);
  }
  return v as Record<string, number>;
}

function faultHistoryId(id: number, detail: string | null): string {
  if (detail !== null) {
    try {
      const d = JSON.parse(detail) as unknown;
      if (typeof d === 'object' && d !== null && typeof (d as { historyId?: unknown }).historyId === 'string') {
        return (d as { historyId: string }).historyId;
      }
    } catch {
      // free-form detail from the harness: fall back to the row id
    }
  }
  return `f${id}`;
}

function writeToHistory(r: WriteRow): HistoryWrite {
  const outcome = r.outcome === 'ok' || r.outcome === 'fail' ? r.outcome : 'info';
  const id = r.wid ?? writeId(r.key_id, r.seq);
  const w: HistoryWrite = {
    id, store: r.store, key: r.key, partition: r.partition, seq: r.seq,
    op: r.op as HistoryWrite['op'], invoke: r.invoke_ms, outcome,
  };
  if (r.complete_ms !== null) w.complete = r.complete_ms;
  else if (outcome !== 'info') throw new Error(`ledger: write ${id} has outcome ${outcome} but no complete_ms`);
  if (outcome === 'ok') {
    if (r.ack_node === null || r.ack_epoch === null || r.ack_version === null || r.ack_revision === null || (r.ack_mode !== 'sync' && r.ack_mode !== 'async')) {
      throw new Error(`ledger: acknowledged write ${id} lacks its ack (node, epoch, version, revision, mode)`);
    }
    w.ack = { node: r.ack_node, epoch: r.ack_epoch, version: r.ack_version, revision: r.ack_revision, ackMode: r.ack_mode };
    if (r.ack_copies !== null) w.ack.copies = r.ack_copies;
  }
  if (r.status !== null) w.status = r.status;
  if (r.attempts !== null) w.attempts = r.attempts;
  if (r.trace !== null) w.trace = r.trace;
  return w;
}

function metaOf(db: Database.Database, key: string): string | null {
  const v = db.prepare('SELECT value FROM meta WHERE key = ?').pluck().get(key);
  return typeof v === 'string' ? v : null;
}

/**
 * The v2 `run` of a ledger: status and reason from meta (a ledger without a status is
 * `complete`), the budget mode, lag bound, lease and self-test bug from the run config
 * (asyncLagMaxMs defaults to 1,000 ms), the contract from meta `contract`, else `fallback` (the
 * declaration the harness judges such a ledger by), else none.
 * @throws ContractError when meta `contract` is not a valid contract.
 */
export function runOfLedger(db: Database.Database, fallback?: Contract): HistoryRun {
  let cfg: Record<string, unknown> = {};
  try {
    const v = JSON.parse(metaOf(db, META.runConfig) ?? '{}') as unknown;
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) cfg = v as Record<string, unknown>;
  } catch {
    // a run config that is not JSON: the defaults
  }
  const status = metaOf(db, META.status);
  const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null);
  const run: HistoryRun = {
    status: status === 'running' || status === 'interrupted' ? (status as RunStatus) : 'complete',
    inconclusiveReason: metaOf(db, META.inconclusiveReason),
    beyondBudget: cfg.beyondBudget === true,
    asyncLagMaxMs: num(cfg.asyncLagMaxMs) ?? DEFAULT_ASYNC_LAG_MS,
    selfTestBug: typeof cfg.selfTestBug === 'string' && cfg.selfTestBug !== '' ? cfg.selfTestBug : null,
  };
  const lease = num(cfg.leaseMs);
  if (lease !== null) run.leaseMs = lease;
  const contract = metaOf(db, META.contract);
  if (contract !== null) run.contract = parseContract(JSON.parse(contract) as unknown, 'meta contract');
  else if (fallback !== undefined) run.contract = fallback;
  return run;
}

/**
 * Writes a run's ledger as `zaris-history/2` (shared/cases/history-format.md) to `outPath`,
 * streaming: writes, reads and samples are read with SQLite iterators and written through a
 * 1 MiB buffer, so memory does not grow with the run. The file is written to `<outPath>.tmp` and
 * renamed at the end: on failure nothing half-written is left. A ledger judged by v1 (an
 * imported v1 history, a ledger from before v2) is exported as v2 too: its analysis then applies
 * the v2 rules (that is how an old run is re-judged).
 *
 * Mapping (the inverse of ledger/history-import.ts): `run` from meta and the run config
 * ({@link runOfLedger}: status and reason carried through; the contract, or `fallbackContract`
 * for a ledger that stores none); write ids are `writes.wid` or
 * `w<key_id>.<seq>`; a write still in flight (outcome NULL) is exported as `info`; `ack.copies`
 * when recorded; fault ids are detail.historyId or `f<id>`, `start` as recorded, `effective`,
 * `isolated` when recorded; a fault with end_ms NULL has no `end`; `caughtUp` is kept for
 * kill/stop faults that ended (and not before their end); samples with their node, in-sync set,
 * revisions and replicas; reads with ids `reads.id` or `r<rid>`, value null unless `ok`; the
 * extension fields status, attempts, trace (writes) and kind (reads) are kept. Order: stores and
 * nodes as stored, partitions by (store, partition), faults by id, ownership by time (then as
 * recorded), writes by (key_id, seq), reads by (key_id, invoke, as recorded), final reads by
 * key_id; the extension `stalls` from `node_samples` (ledger/node-stalls.ts) when there are any.
 * @returns the number of writes exported.
 * @throws Error (one line) when the ledger is inconsistent (an `ok` write without ack, a JSON
 *   column that is not JSON) or the file cannot be written.
 */
export function exportHistory(db: Database.Database, outPath: string, fallbackContract?: Contract): number {
  const tmp = `${outPath}.tmp`;
  const out = new BufferedFile(tmp);
  let exported = 0;
  try {
    const j = JSON.stringify;
    out.write(`{"format":${j(HISTORY_FORMAT_V2)},\n"run":${j(runOfLedger(db, fallbackContract))},\n"nodes":`);
    out.write(j((db.prepare('SELECT id FROM nodes ORDER BY rowid').pluck().all() as string[])));

    out.write(',\n"stores":[');
    const stores = db.prepare('SELECT name, replication_factor AS rf, ack_mode AS mode FROM stores ORDER BY rowid').all() as { name: string; rf: number; mode: string }[];
    stores.forEach((s, i) => out.write(`${i ? ',' : ''}\n${j({ name: s.name, replicationFactor: s.rf, ackMode: s.mode })}`));

    out.write('],\n"partitions":[');
    let i = 0;
    for (const p of db.prepare('SELECT store, partition, replicas FROM partitions ORDER BY store, partition').iterate() as Iterable<{ store: string; partition: number; replicas: string }>) {
      const replicas = parseJsonArray(p.replicas, `partitions(${p.store}, ${p.partition}).replicas`);
      out.write(`${i++ ? ',' : ''}\n${j({ store: p.store, partition: p.partition, replicas })}`);
    }

    out.write('],\n"faults":[');
    i = 0;
    type FaultRow = { id: number; kind: string; nodes: string; start_ms: number; effective_ms: number | null; end_ms: number | null; caught_up_ms: number | null; detail: string | null; isolated: string | null };
    for (const f of db.prepare('SELECT id, kind, nodes, start_ms, effective_ms, end_ms, caught_up_ms, detail, isolated FROM faults ORDER BY id').iterate() as Iterable<FaultRow>) {
      const fault: HistoryFault = {
        id: faultHistoryId(f.id, f.detail),
        kind: f.kind as HistoryFault['kind'],
        nodes: parseJsonArray(f.nodes, `faults(${f.id}).nodes`),
        start: f.start_ms,
      };
      if (f.effective_ms !== null) fault.effective = Math.max(f.effective_ms, f.start_ms);
      if (f.end_ms !== null) fault.end = f.end_ms;
      if ((f.kind === 'kill' || f.kind === 'stop') && f.end_ms !== null && f.caught_up_ms !== null && f.caught_up_ms >= f.end_ms) {
        fault.caughtUp = f.caught_up_ms;
      }
      if (f.kind === 'partition' && f.isolated !== null) fault.isolated = parseJsonArray(f.isolated, `faults(${f.id}).isolated`);
      out.write(`${i++ ? ',' : ''}\n${j(fault)}`);
    }

    out.write('],\n"ownership":[');
    i = 0;
    type SampleRow = {
      t_ms: number; store: string; partition: number; active: string | null; epoch: number; health: string; replicated_revision: number;
      node: string | null; in_sync: string | null; revisions: string | null; replicas: string | null;
    };
    for (const s of db
      .prepare('SELECT t_ms, store, partition, active, epoch, health, replicated_revision, node, in_sync, revisions, replicas FROM samples ORDER BY t_ms, rowid')
      .iterate() as Iterable<SampleRow>) {
      const o: HistoryOwnership = { t: s.t_ms, store: s.store, partition: s.partition, active: s.active, epoch: s.epoch, health: s.health, replicatedRevision: s.replicated_revision };
      const where = `samples(${s.store}, ${s.partition}, ${s.t_ms})`;
      if (s.node !== null) o.node = s.node;
      if (s.in_sync !== null) o.inSync = parseJsonArray(s.in_sync, `${where}.in_sync`);
      if (s.revisions !== null) o.revisions = parseJsonObject(s.revisions, `${where}.revisions`);
      if (s.replicas !== null) o.replicas = parseJsonArray(s.replicas, `${where}.replicas`);
      out.write(`${i++ ? ',' : ''}\n${j(o)}`);
    }

    out.write('],\n"writes":[');
    // writes and reads from both forms (key-log.ts), in key order; a key with no keys row is left out
    const keyOf = db.prepare('SELECT store, key, partition FROM keys WHERE key_id = ?');
    for (const k of iterateKeyLog(db)) {
      if (k.writes.length === 0) continue;
      const info = keyOf.get(k.keyId) as { store: string; key: string; partition: number } | undefined;
      if (info === undefined) continue;
      for (const r of k.writes) out.write(`${exported++ ? ',' : ''}\n${j(writeToHistory({ ...r, ...info }))}`);
    }

    out.write('],\n"reads":[');
    i = 0;
    for (const k of iterateKeyLog(db)) {
      if (k.reads.length === 0) continue;
      const info = keyOf.get(k.keyId) as { store: string; key: string } | undefined;
      if (info === undefined) continue;
      for (const r of k.reads) {
        const outcome = r.outcome === 'ok' || r.outcome === 'fail' ? r.outcome : 'info';
        const read: HistoryRead = { id: r.id ?? `r${r.rid}`, store: info.store, key: info.key, invoke: r.invoke_ms, outcome, node: r.node, value: outcome === 'ok' ? r.value : null };
        if (r.complete_ms !== null) read.complete = Math.max(r.complete_ms, r.invoke_ms);
        else if (outcome !== 'info') throw new Error(`ledger: read ${read.id} has outcome ${outcome} but no complete_ms`);
        if (r.kind !== null && (READ_KINDS as readonly string[]).includes(r.kind)) read.kind = r.kind as ReadKind;
        out.write(`${i++ ? ',' : ''}\n${j(read)}`);
      }
    }

    out.write('],\n"finalReads":[');
    i = 0;
    type FinalRow = { store: string; key: string; value: string | null; unreadable: number };
    for (const r of db.prepare('SELECT k.store, k.key, f.value, f.unreadable FROM final_reads f JOIN keys k ON k.key_id = f.key_id ORDER BY f.key_id').iterate() as Iterable<FinalRow>) {
      const read: HistoryFinalRead = { store: r.store, key: r.key, value: r.unreadable ? null : r.value };
      if (r.unreadable) read.unreadable = true;
      out.write(`${i++ ? ',' : ''}\n${j(read)}`);
    }
    out.write(']');
    // extension: the stretches nodes were observed not running (the replication-lag rule's excuse)
    const stalls = observedNodeStalls(db);
    if (stalls.length > 0) out.write(`,\n"stalls":${j(stalls)}`);
    out.write('}\n');
    out.flush();
    out.close();
  } catch (e) {
    try {
      out.close();
    } catch {
      // already closed
    }
    rmSync(tmp, { force: true });
    throw e;
  }
  renameSync(tmp, outPath);
  return exported;
}
