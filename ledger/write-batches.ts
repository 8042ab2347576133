import type Database from 'better-sqlite3';
import type { Outcome, WriteOp } from './ledger-writer.js';

/**
 * Packed write rows (DESIGN.md §4, §8): during a run the hot path stores each group commit's
 * invokes and completions as ONE row of `write_batches` (two number arrays and a little JSON),
 * so that the ledger's cost per write is a few numbers, not two SQLite rows. The seal unpacks
 * them into `invokes` / `completions` and then into the clustered `writes` table.
 *
 * Layouts (float64, little-endian, field by field):
 * - inv: [w, key_id, seq, op, invoke_ms] per write; op indexes {@link OPS}.
 * - cmp: [w, complete_ms, outcome, status, attempts, ack_node, ack_epoch, ack_version,
 *   ack_revision, ack_mode] per completion; outcome indexes {@link OUTCOMES}; status and ack_node
 *   are codes of the string table (-1 none); ack_mode 0 sync, 1 async, -1 none.
 * - dict: JSON [[code, text], ...], the string codes this batch introduces (codes are cumulative
 *   over the batches in id order).
 * - traces: JSON [[w, trace], ...] for completions that carry an attempt trace.
 */
export const OPS: readonly WriteOp[] = ['put', 'cas', 'create', 'delete'];
export const OUTCOMES: readonly Outcome[] = ['ok', 'fail', 'info'];
export const INV_FIELDS = 5;
export const CMP_FIELDS = 10;

/** One packed batch as stored. */
export interface WriteBatch {
  inv: Float64Array;
  cmp: Float64Array;
  dict: Array<[number, string]>;
  traces: Array<[number, string]>;
}

/** The bytes of a float64 array (a view, no copy). */
export function f64Bytes(a: Float64Array): Buffer {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength);
}

/** A float64 array over stored bytes (copied so that it is aligned). */
export function bytesF64(b: Buffer): Float64Array {
  const copy = new Uint8Array(b.byteLength);
  copy.set(b);
  return new Float64Array(copy.buffer);
}

/**
 * Unpacks every stored batch, in id order, into `invokes` and `completions` and deletes the
 * batches, in the caller's transaction. Streaming: one batch in memory at a time.
 * @returns the number of invokes and completions unpacked.
 */
export function unpackWriteBatches(db: Database.Database): { invokes: number; completions: number } {
  const dict = new Map<number, string>();
  const insInv = db.prepare('INSERT INTO invokes (w, key_id, seq, op, invoke_ms) VALUES (?, ?, ?, ?, ?)');
  const insCmp = db.prepare(
    'INSERT INTO completions (w, complete_ms, outcome, status, attempts, ack_node, ack_epoch, ack_version, ack_revision, ack_mode, trace) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  let invokes = 0;
  let completions = 0;
  const ids = db.prepare('SELECT id FROM write_batches ORDER BY id').pluck().all() as number[];
  const one = db.prepare('SELECT inv, cmp, dict, traces FROM write_batches WHERE id = ?');
  for (const id of ids) {
    const row = one.get(id) as { inv: Buffer; cmp: Buffer; dict: string; traces: string };
    for (const [c, text] of JSON.parse(row.dict) as Array<[number, string]>) dict.set(c, text);
    const traces = new Map(JSON.parse(row.traces) as Array<[number, string]>);
    const inv = bytesF64(row.inv);
    for (let b = 0; b < inv.length; b += INV_FIELDS) {
      insInv.run(inv[b], inv[b + 1], inv[b + 2], OPS[inv[b + 3]], inv[b + 4]);
      invokes++;
    }
    const cmp = bytesF64(row.cmp);
    for (let b = 0; b < cmp.length; b += CMP_FIELDS) {
      const w = cmp[b];
      const node = cmp[b + 5];
      const acked = node >= 0;
      insCmp.run(
        w,
        cmp[b + 1],
        OUTCOMES[cmp[b + 2]],
        cmp[b + 3] < 0 ? null : (dict.get(cmp[b + 3]) ?? null),
        cmp[b + 4],
        acked ? (dict.get(node) ?? null) : null,
        acked ? cmp[b + 6] : null,
        acked ? cmp[b + 7] : null,
        acked ? cmp[b + 8] : null,
        acked ? (cmp[b + 9] === 1 ? 'async' : 'sync') : null,
        traces.get(w) ?? null,
      );
      completions++;
    }
  }
  db.exec('DELETE FROM write_batches');
  return { invokes, completions };
}
