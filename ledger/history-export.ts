import { closeSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import type Database from 'better-sqlite3';
import { HISTORY_FORMAT } from '../harness/verifier/history.js';
import type { HistoryFault, HistoryFinalRead, HistoryOwnership, HistoryWrite } from '../harness/verifier/history.js';
import { writeId, type WritesRow } from './schema.js';

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
  }
  if (r.status !== null) w.status = r.status;
  if (r.attempts !== null) w.attempts = r.attempts;
  if (r.trace !== null) w.trace = r.trace;
  return w;
}

/**
 * Writes a run's ledger as `zaris-history/1` (shared/cases/history-format.md) to `outPath`,
 * streaming: writes and samples are read with SQLite iterators and written through a 1 MiB
 * buffer, so memory does not grow with the run. The file is written to `<outPath>.tmp` and
 * renamed at the end: on failure nothing half-written is left.
 *
 * Mapping (the inverse of ledger/history-import.ts): write ids are `writes.wid` or
 * `w<key_id>.<seq>`; a write still in flight (outcome NULL) is exported as `info`; fault ids
 * are detail.historyId or `f<id>`; a fault with end_ms NULL has no `end`; `caughtUp` is kept for
 * kill/stop faults that ended (and not before their end); the extension fields status, attempts
 * and trace are kept. Order: stores and nodes as stored, partitions by (store, partition),
 * faults by id, ownership by time, writes by (key_id, seq), final reads by key_id.
 * @returns the number of writes exported.
 * @throws Error (one line) when the ledger is inconsistent (an `ok` write without ack, a JSON
 *   column that is not JSON) or the file cannot be written.
 */
export function exportHistory(db: Database.Database, outPath: string): number {
  const tmp = `${outPath}.tmp`;
  const out = new BufferedFile(tmp);
  let exported = 0;
  try {
    const j = JSON.stringify;
    out.write(`{"format":${j(HISTORY_FORMAT)},\n"nodes":`);
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
    type FaultRow = { id: number; kind: string; nodes: string; start_ms: number; end_ms: number | null; caught_up_ms: number | null; detail: string | null };
    for (const f of db.prepare('SELECT id, kind, nodes, COALESCE(effective_ms, start_ms) AS start_ms, end_ms, caught_up_ms, detail FROM faults ORDER BY id').iterate() as Iterable<FaultRow>) {
      const fault: HistoryFault = {
        id: faultHistoryId(f.id, f.detail),
        kind: f.kind as HistoryFault['kind'],
        nodes: parseJsonArray(f.nodes, `faults(${f.id}).nodes`),
        start: f.start_ms,
      };
      if (f.end_ms !== null) fault.end = f.end_ms;
      if ((f.kind === 'kill' || f.kind === 'stop') && f.end_ms !== null && f.caught_up_ms !== null && f.caught_up_ms >= f.end_ms) {
        fault.caughtUp = f.caught_up_ms;
      }
      out.write(`${i++ ? ',' : ''}\n${j(fault)}`);
    }

    out.write('],\n"ownership":[');
    i = 0;
    type SampleRow = { t_ms: number; store: string; partition: number; active: string | null; epoch: number; health: string; replicated_revision: number };
    for (const s of db.prepare('SELECT t_ms, store, partition, active, epoch, health, replicated_revision FROM samples ORDER BY t_ms, store, partition').iterate() as Iterable<SampleRow>) {
      const o: HistoryOwnership = { t: s.t_ms, store: s.store, partition: s.partition, active: s.active, epoch: s.epoch, health: s.health, replicatedRevision: s.replicated_revision };
      out.write(`${i++ ? ',' : ''}\n${j(o)}`);
    }

    out.write('],\n"writes":[');
    const writes = db.prepare(
      `SELECT w.key_id, w.seq, w.op, w.invoke_ms, w.complete_ms, w.outcome, w.status, w.attempts, w.ack_node, w.ack_epoch,
              w.ack_version, w.ack_revision, w.ack_mode, w.trace, w.wid, k.store, k.key, k.partition
       FROM writes w JOIN keys k ON k.key_id = w.key_id ORDER BY w.key_id, w.seq`,
    );
    for (const r of writes.iterate() as Iterable<WriteRow>) {
      out.write(`${exported++ ? ',' : ''}\n${j(writeToHistory(r))}`);
    }

    out.write('],\n"finalReads":[');
    i = 0;
    type ReadRow = { store: string; key: string; value: string | null; unreadable: number };
    for (const r of db.prepare('SELECT k.store, k.key, f.value, f.unreadable FROM final_reads f JOIN keys k ON k.key_id = f.key_id ORDER BY f.key_id').iterate() as Iterable<ReadRow>) {
      const read: HistoryFinalRead = { store: r.store, key: r.key, value: r.unreadable ? null : r.value };
      if (r.unreadable) read.unreadable = true;
      out.write(`${i++ ? ',' : ''}\n${j(read)}`);
    }
    out.write(']}\n');
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
