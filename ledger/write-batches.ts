import type Database from 'better-sqlite3';
import type { Outcome, ReadKind, WriteOp } from './ledger-writer.js';

/**
 * Packed write rows (DESIGN.md §4, §8): during a run the hot path stores each group commit's
 * invokes, completions and reads as ONE row of `write_batches` (number arrays and a little JSON),
 * so that the ledger's cost per write or read is a few numbers, not SQLite rows. The seal
 * unpacks them into `invokes` / `completions` / `read_log` and then into the clustered `writes`
 * and `reads` tables.
 *
 * Layouts (float64, little-endian, field by field), for `fmt` = {@link BATCH_FMT}:
 * - inv: [w, key_id, seq, op, invoke_ms] per write; op indexes {@link OPS}.
 * - cmp: [w, complete_ms, outcome, status, attempts, ack_node, ack_epoch, ack_version,
 *   ack_revision, ack_mode, ack_copies] per completion; outcome indexes {@link OUTCOMES}; status
 *   and ack_node are codes of the string table (-1 none); ack_mode 0 sync, 1 async, -1 none;
 *   ack_copies -1 when unknown.
 * - rd: [key_id, invoke_ms, complete_ms, outcome, node, value_key_id, value_seq, kind] per read;
 *   node a string code (-1 none); value_key_id -1 when the value is absent (null), -2 when it is
 *   not a harness write id (its text is then in rdx); kind indexes {@link READ_KINDS}.
 * - dict: JSON [[code, text], ...], the string codes this batch introduces (codes are cumulative
 *   over the batches in id order).
 * - traces: JSON [[w, trace], ...] for completions that carry an attempt trace.
 * - rdx: JSON [[index of the read in this batch, value text], ...].
 * A batch with `fmt` NULL was written before reads and ack copies existed: cmp of
 * {@link CMP_FIELDS_V1} fields (no ack_copies), no reads.
 */
export const OPS: readonly WriteOp[] = ['put', 'cas', 'create', 'delete'];
export const OUTCOMES: readonly Outcome[] = ['ok', 'fail', 'info'];
export const READ_KINDS: readonly ReadKind[] = ['get', 'getMany', 'probe'];
export const INV_FIELDS = 5;
export const CMP_FIELDS = 11;
/** Completion fields of a batch written before ack copies existed (fmt NULL). */
export const CMP_FIELDS_V1 = 10;
export const RD_FIELDS = 8;
/** The layout this code writes (write_batches.fmt). */
export const BATCH_FMT = 2;
/** rd value_key_id: the read found the key absent. */
export const RD_ABSENT = -1;
/** rd value_key_id: the value is not a harness write id; its text is in rdx. */
export const RD_TEXT = -2;

/** One packed batch as stored. */
export interface WriteBatch {
  inv: Float64Array;
  cmp: Float64Array;
  dict: Array<[number, string]>;
  traces: Array<[number, string]>;
  /** Packed reads (RD_FIELDS per read); empty when none. */
  rd: Float64Array;
  /** Values of reads that are not harness write ids: [index of the read in rd, text]. */
  rdx: Array<[number, string]>;
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
 * Unpacks every stored batch, in id order, into `invokes`, `completions` and `read_log` and
 * deletes the batches, in the caller's transaction. Streaming: one batch in memory at a time.
 * A read's value is stored as the write id `w<value_key_id>.<value_seq>` (or its rdx text).
 * @returns the number of invokes, completions and reads unpacked.
 */
export function unpackWriteBatches(db: Database.Database): { invokes: number; completions: number; reads: number } {
  const dict = new Map<number, string>();
  const insInv = db.prepare('INSERT INTO invokes (w, key_id, seq, op, invoke_ms) VALUES (?, ?, ?, ?, ?)');
  const insCmp = db.prepare(
    'INSERT INTO completions (w, complete_ms, outcome, status, attempts, ack_node, ack_epoch, ack_version, ack_revision, ack_mode, trace, ack_copies) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const insRead = db.prepare(
    'INSERT INTO read_log (key_id, invoke_ms, complete_ms, outcome, node, value, value_key_id, value_seq, kind) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  let invokes = 0;
  let completions = 0;
  let reads = 0;
  const ids = db.prepare('SELECT id FROM write_batches ORDER BY id').pluck().all() as number[];
  const one = db.prepare('SELECT inv, cmp, dict, traces, fmt, rd, rdx FROM write_batches WHERE id = ?');
  for (const id of ids) {
    const row = one.get(id) as { inv: Buffer; cmp: Buffer; dict: string; traces: string; fmt: number | null; rd: Buffer | null; rdx: string | null };
    for (const [c, text] of JSON.parse(row.dict) as Array<[number, string]>) dict.set(c, text);
    const traces = new Map(JSON.parse(row.traces) as Array<[number, string]>);
    const inv = bytesF64(row.inv);
    for (let b = 0; b < inv.length; b += INV_FIELDS) {
      insInv.run(inv[b], inv[b + 1], inv[b + 2], OPS[inv[b + 3]], inv[b + 4]);
      invokes++;
    }
    const width = row.fmt === null ? CMP_FIELDS_V1 : CMP_FIELDS;
    const cmp = bytesF64(row.cmp);
    for (let b = 0; b < cmp.length; b += width) {
      const w = cmp[b];
      const node = cmp[b + 5];
      const acked = node >= 0;
      const copies = width === CMP_FIELDS ? cmp[b + 10] : -1;
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
        acked && copies >= 0 ? copies : null,
      );
      completions++;
    }
    if (row.rd !== null && row.rd.length > 0) {
      const texts = new Map(JSON.parse(row.rdx ?? '[]') as Array<[number, string]>);
      const rd = bytesF64(row.rd);
      for (let b = 0, i = 0; b < rd.length; b += RD_FIELDS, i++) {
        const vk = rd[b + 5];
        const value = vk === RD_ABSENT ? null : vk === RD_TEXT ? (texts.get(i) ?? null) : `w${vk}.${rd[b + 6]}`;
        insRead.run(
          rd[b],
          rd[b + 1],
          rd[b + 2],
          OUTCOMES[rd[b + 3]],
          rd[b + 4] < 0 ? null : (dict.get(rd[b + 4]) ?? null),
          value,
          vk >= 0 ? vk : null,
          vk >= 0 ? rd[b + 6] : null,
          READ_KINDS[rd[b + 7]] ?? null,
        );
        reads++;
      }
    }
  }
  db.exec('DELETE FROM write_batches');
  return { invokes, completions, reads };
}
