import { packRows, unpackRows, type ColumnSpec } from './column-pack.js';
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
 * {@link CMP_FIELDS_V1} fields (no ack_copies), no reads. With `fmt` 3 ({@link BATCH_FMT}) inv,
 * cmp and rd hold the same fields packed by column-pack.ts ({@link packBatch}).
 */
export const OPS: readonly WriteOp[] = ['put', 'cas', 'create', 'delete'];
export const OUTCOMES: readonly Outcome[] = ['ok', 'fail', 'info'];
export const READ_KINDS: readonly ReadKind[] = ['get', 'getMany', 'probe'];
export const INV_FIELDS = 5;
export const CMP_FIELDS = 11;
/** Completion fields of a batch written before ack copies existed (fmt NULL). */
export const CMP_FIELDS_V1 = 10;
export const RD_FIELDS = 8;
/**
 * The layout this code writes (write_batches.fmt): 3 = inv, cmp and rd packed by column-pack.ts
 * (same fields as 2, each column in its narrowest exact form: times in µs, w and seq as deltas,
 * codes in a byte); 2 = raw float64 arrays.
 */
export const BATCH_FMT = 3;
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
  /** The recorded order (rid) of the batch's first read; absent: counted from the batches before. */
  rid0?: number;
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

/** Times of a write or read as the ledger records them: ms, rounded to the microsecond (exact in the packed forms). */
export function toMicros(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}

const INV_SPECS: ReadonlyArray<ColumnSpec | undefined> = [undefined, undefined, undefined, undefined, { micro: true }];
// cmp: complete in µs; the version relative to the epoch (the store's versions are epoch * 2^32 + n)
const CMP_SPECS: ReadonlyArray<ColumnSpec | undefined> = [undefined, { micro: true }, undefined, undefined, undefined, undefined, undefined, { rel: 6, scale: 2 ** 32 }];
const RD_SPECS: ReadonlyArray<ColumnSpec | undefined> = [undefined, { micro: true }, { micro: true, rel: 1 }];

/** The blobs of a batch in layout {@link BATCH_FMT} (rd null when the batch has no read). */
export function packBatch(b: Pick<WriteBatch, 'inv' | 'cmp' | 'rd'>): { inv: Buffer; cmp: Buffer; rd: Buffer | null } {
  return {
    inv: packRows(b.inv, INV_FIELDS, b.inv.length / INV_FIELDS, INV_SPECS),
    cmp: packRows(b.cmp, CMP_FIELDS, b.cmp.length / CMP_FIELDS, CMP_SPECS),
    rd: b.rd.length === 0 ? null : packRows(b.rd, RD_FIELDS, b.rd.length / RD_FIELDS, RD_SPECS),
  };
}

/** A stored batch row (write_batches). */
export interface BatchRow {
  inv: Buffer;
  cmp: Buffer;
  dict: string;
  traces: string;
  fmt: number | null;
  rd: Buffer | null;
  rdx: string | null;
}

/**
 * Reusable arrays for {@link decodeBatch} (grown as needed); with keysOnly, only the fields the
 * seal's first pass reads are decoded: inv key_id, cmp w, rd key_id.
 */
export interface BatchScratch {
  inv?: Float64Array;
  cmp?: Float64Array;
  rd?: Float64Array;
  keysOnly?: boolean;
}

/**
 * A stored batch as float64 rows (any layout): inv of INV_FIELDS, cmp of `cmpFields` (CMP_FIELDS,
 * or CMP_FIELDS_V1 for fmt NULL), rd of RD_FIELDS.
 * @throws Error when the blobs are corrupt or of an unknown layout.
 */
export function decodeBatch(row: BatchRow, scratch?: BatchScratch): WriteBatch & { cmpFields: number } {
  const dict = row.dict === '[]' ? [] : (JSON.parse(row.dict) as Array<[number, string]>);
  const traces = row.traces === '[]' ? [] : (JSON.parse(row.traces) as Array<[number, string]>);
  const rdx = row.rdx === null || row.rdx === '[]' ? [] : (JSON.parse(row.rdx) as Array<[number, string]>);
  if (row.fmt === BATCH_FMT) {
    const inv = unpackRows(row.inv, scratch?.inv, scratch?.keysOnly ? [1] : undefined);
    const cmp = unpackRows(row.cmp, scratch?.cmp, scratch?.keysOnly ? [0] : undefined);
    const rd = row.rd === null || row.rd.length === 0 ? null : unpackRows(row.rd, scratch?.rd, scratch?.keysOnly ? [0] : undefined);
    if (scratch !== undefined) {
      scratch.inv = inv.rows;
      scratch.cmp = cmp.rows;
      if (rd !== null) scratch.rd = rd.rows;
    }
    if (inv.fields !== INV_FIELDS || cmp.fields !== CMP_FIELDS || (rd !== null && rd.fields !== RD_FIELDS)) throw new Error('ledger: a write batch has the wrong number of fields');
    return {
      inv: inv.rows.subarray(0, inv.n * INV_FIELDS),
      cmp: cmp.rows.subarray(0, cmp.n * CMP_FIELDS),
      rd: rd === null ? new Float64Array(0) : rd.rows.subarray(0, rd.n * RD_FIELDS),
      dict,
      traces,
      rdx,
      cmpFields: CMP_FIELDS,
    };
  }
  if (row.fmt !== null && row.fmt !== 2) throw new Error(`ledger: a write batch of unknown layout ${row.fmt}`);
  return {
    inv: bytesF64(row.inv),
    cmp: bytesF64(row.cmp),
    rd: row.rd === null || row.rd.length === 0 ? new Float64Array(0) : bytesF64(row.rd),
    dict,
    traces,
    rdx,
    cmpFields: row.fmt === null ? CMP_FIELDS_V1 : CMP_FIELDS,
  };
}
