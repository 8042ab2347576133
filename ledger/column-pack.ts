/**
 * A small columnar codec for the ledger's numeric rows (issue 11: a ledger under 100 bytes per
 * write). Rows are given row-major in a Float64Array (`fields` numbers per row, NaN = null);
 * each field is stored as one column, in the narrowest exact form among:
 * - a constant (every row the same number, or every row null);
 * - integers of 1, 2 or 4 bytes, or float64;
 * each optionally after exact transforms:
 * - `micro`: the values are whole microseconds (`v * 1000` rounds to an integer that gives `v`
 *   back by `/ 1000`, as the ledger's times are recorded: ms with µs resolution);
 * - `rel`: minus the same row's value of an earlier field (a completion time minus its invoke);
 * - delta: minus the previous row's value (times, revisions, sequence numbers).
 * Decoding gives back every number bit for bit (NaN as NaN; -0 and non-integers stay float64),
 * whatever the input: the transforms are used only where they are exact.
 *
 * Layout (little-endian): u8 codec version (1), u8 fields, u32 rows; then per field a tag byte and
 * its payload. Tag: bits 0-2 width (0 constant, 1 i8, 2 i16, 3 i32, 4 f64), 0x08 delta, 0x10
 * micro, 0x20 rel (the reference field's index follows the tag as u8). A constant's payload is
 * one f64 (with delta: the first value and the step, two f64). A delta column's payload starts
 * with the first value as f64, then rows - 1 deltas. Integer widths keep their smallest value as
 * the null marker (-128, -32768, -2^31); a delta column has no null (it is not chosen then).
 */

/** How a field may be transformed (all optional; the codec checks that each one is exact). */
export interface ColumnSpec {
  /** Try whole microseconds (ms values with µs resolution). */
  micro?: boolean;
  /** Try the difference to this earlier field of the same row. */
  rel?: number;
}

const W_CONST = 0;
const W_I8 = 1;
const W_I16 = 2;
const W_I32 = 3;
const W_F64 = 4;
const DELTA = 0x08;
const MICRO = 0x10;
const REL = 0x20;
const CODEC_VERSION = 1;
const NULL_I8 = -128;
const NULL_I16 = -32768;
const NULL_I32 = -2147483648;
const BYTES = [0, 1, 2, 4, 8];

/** Whole microseconds of v when that is exact (v === us / 1000), else NaN. */
function microOf(v: number): number {
  const us = Math.round(v * 1000);
  return Number.isSafeInteger(us) && us / 1000 === v && !Object.is(v, -0) ? us : NaN;
}

function isInt(v: number): boolean {
  return Number.isSafeInteger(v) && !Object.is(v, -0);
}

interface Plan {
  tag: number;
  rel: number;
  /** Transformed values (NaN null), or for delta: [first, d1, d2, ...]. */
  values: Float64Array;
  bytes: number;
}

/** The width that holds every value (NaN = null) exactly, and the bytes it takes. */
function widthOf(values: Float64Array, from: number, allowConst: boolean): { w: number; bytes: number } {
  const n = values.length - from;
  if (n <= 0) return { w: W_CONST, bytes: 8 };
  let min = Infinity;
  let max = -Infinity;
  let ints = true;
  let same = true;
  const first = values[from];
  for (let i = from; i < values.length; i++) {
    const v = values[i];
    if (!Object.is(v, first)) same = false;
    if (v !== v) continue;
    if (!isInt(v)) ints = false;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  if (same && allowConst) return { w: W_CONST, bytes: 8 };
  if (ints && min > NULL_I8 && max <= 127) return { w: W_I8, bytes: n };
  if (ints && min > NULL_I16 && max <= 32767) return { w: W_I16, bytes: 2 * n };
  if (ints && min > NULL_I32 && max <= 2147483647) return { w: W_I32, bytes: 4 * n };
  return { w: W_F64, bytes: 8 * n };
}

/** The column of field f, transformed; null when a transform is not exact. */
function transformed(rows: Float64Array, fields: number, n: number, f: number, micro: boolean, rel: number, base: Float64Array | null): Float64Array | null {
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let v = rows[i * fields + f];
    if (v !== v) {
      out[i] = NaN;
      continue;
    }
    if (micro) {
      v = microOf(v);
      if (v !== v) return null;
    }
    if (rel >= 0) {
      const r = base![i];
      if (r !== r) return null;
      const d = v - r;
      // exact both ways: the difference is an integer and adding the reference gives v back
      if (!isInt(d) || (!micro && !Object.is(d + r, v))) return null;
      v = d;
    }
    out[i] = v;
  }
  return out;
}

function deltaOf(values: Float64Array): Float64Array | null {
  const n = values.length;
  if (n < 2) return null;
  const out = new Float64Array(n);
  out[0] = values[0];
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (!isInt(v)) return null;
    if (i > 0) {
      const d = v - values[i - 1];
      if (!isInt(d)) return null;
      out[i] = d;
    }
  }
  return out;
}

function plansFor(rows: Float64Array, fields: number, n: number, f: number, spec: ColumnSpec | undefined, micros: Array<Float64Array | null>): Plan[] {
  const plans: Plan[] = [];
  const consider = (values: Float64Array, flags: number, rel: number): void => {
    const { w, bytes } = widthOf(values, 0, true);
    plans.push({ tag: w | flags, rel, values, bytes: bytes + (rel >= 0 ? 1 : 0) });
    const d = deltaOf(values);
    if (d !== null) {
      const dw = widthOf(d, 1, true);
      // a constant delta: the first value and the step
      plans.push({ tag: dw.w | DELTA | flags, rel, values: d, bytes: 8 + dw.bytes + (rel >= 0 ? 1 : 0) });
    }
  };
  const plain = transformed(rows, fields, n, f, false, -1, null)!;
  consider(plain, 0, -1);
  const wantMicro = spec?.micro === true;
  const microPlain = wantMicro ? transformed(rows, fields, n, f, true, -1, null) : null;
  micros[f] = microPlain;
  if (microPlain !== null) consider(microPlain, MICRO, -1);
  const rel = spec?.rel;
  if (rel !== undefined && rel >= 0 && rel < f) {
    const base = wantMicro ? micros[rel] : transformed(rows, fields, n, rel, false, -1, null);
    if (base !== null && base !== undefined) {
      const r = transformed(rows, fields, n, f, wantMicro, rel, base);
      if (r !== null) consider(r, REL | (wantMicro ? MICRO : 0), rel);
    }
  }
  return plans;
}

/**
 * Packs `n` rows of `fields` numbers (row-major; NaN = null) into bytes that
 * {@link unpackRows} gives back exactly.
 * @throws RangeError when fields is not 1..255 or rows is shorter than n * fields.
 */
export function packRows(rows: Float64Array, fields: number, n: number, specs: ReadonlyArray<ColumnSpec | undefined> = []): Buffer {
  if (!Number.isInteger(fields) || fields < 1 || fields > 255) throw new RangeError(`packRows: fields must be 1..255, got ${fields}`);
  if (rows.length < n * fields) throw new RangeError(`packRows: ${rows.length} numbers for ${n} rows of ${fields}`);
  const chosen: Plan[] = [];
  const micros: Array<Float64Array | null> = new Array(fields).fill(null);
  let size = 6;
  for (let f = 0; f < fields; f++) {
    let best: Plan | null = null;
    for (const p of plansFor(rows, fields, n, f, specs[f], micros)) if (best === null || p.bytes < best.bytes) best = p;
    chosen.push(best!);
    size += 1 + best!.bytes;
  }
  const buf = Buffer.allocUnsafe(size);
  buf.writeUInt8(CODEC_VERSION, 0);
  buf.writeUInt8(fields, 1);
  buf.writeUInt32LE(n, 2);
  let o = 6;
  for (const p of chosen) {
    buf.writeUInt8(p.tag, o++);
    if (p.tag & REL) buf.writeUInt8(p.rel, o++);
    const w = p.tag & 7;
    const v = p.values;
    let from = 0;
    if (p.tag & DELTA) {
      buf.writeDoubleLE(v[0], o);
      o += 8;
      from = 1;
    }
    if (w === W_CONST) {
      buf.writeDoubleLE(v.length > from ? v[from] : 0, o);
      o += 8;
      continue;
    }
    for (let i = from; i < v.length; i++) {
      const x = v[i];
      switch (w) {
        case W_I8:
          buf.writeInt8(x !== x ? NULL_I8 : x, o);
          o += 1;
          break;
        case W_I16:
          buf.writeInt16LE(x !== x ? NULL_I16 : x, o);
          o += 2;
          break;
        case W_I32:
          buf.writeInt32LE(x !== x ? NULL_I32 : x, o);
          o += 4;
          break;
        default:
          buf.writeDoubleLE(x, o);
          o += 8;
      }
    }
  }
  return buf;
}

/** Rows and fields of packed bytes, without decoding them. @throws Error when they are not packed rows. */
export function packedShape(bytes: Uint8Array): { fields: number; n: number } {
  if (bytes.length < 6 || bytes[0] !== CODEC_VERSION) throw new Error('ledger: packed rows of an unknown codec version');
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return { fields: bytes[1], n: dv.getUint32(2, true) };
}

/**
 * Unpacks bytes of {@link packRows} into `out` (row-major, NaN = null; grown when too small) and
 * returns the rows, fields and the array holding them.
 * @throws Error when the bytes are not packed rows (a corrupt ledger).
 */
export function unpackRows(bytes: Uint8Array, out?: Float64Array): { fields: number; n: number; rows: Float64Array } {
  const { fields, n } = packedShape(bytes);
  const rows = out !== undefined && out.length >= n * fields ? out : new Float64Array(n * fields);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let o = 6;
  try {
    for (let f = 0; f < fields; f++) {
      const tag = bytes[o++];
      const rel = tag & REL ? bytes[o++] : -1;
      const w = tag & 7;
      const delta = (tag & DELTA) !== 0;
      let prev = 0;
      let i = 0;
      if (delta) {
        prev = dv.getFloat64(o, true);
        o += 8;
        if (n > 0) rows[f] = prev;
        i = 1;
      }
      if (w === W_CONST) {
        const c = dv.getFloat64(o, true);
        o += 8;
        for (; i < n; i++) {
          if (delta) prev += c;
          rows[i * fields + f] = delta ? prev : c;
        }
      } else {
        for (; i < n; i++) {
          let x: number;
          switch (w) {
            case W_I8:
              x = dv.getInt8(o);
              o += 1;
              if (x === NULL_I8) x = NaN;
              break;
            case W_I16:
              x = dv.getInt16(o, true);
              o += 2;
              if (x === NULL_I16) x = NaN;
              break;
            case W_I32:
              x = dv.getInt32(o, true);
              o += 4;
              if (x === NULL_I32) x = NaN;
              break;
            case W_F64:
              x = dv.getFloat64(o, true);
              o += 8;
              break;
            default:
              throw new Error(`width ${w}`);
          }
          if (delta) {
            prev += x;
            x = prev;
          }
          rows[i * fields + f] = x;
        }
      }
      // rel and micro: back to the stored values (the reference field is decoded, in µs when micro)
      if (rel >= 0 || tag & MICRO) {
        for (let r = 0; r < n; r++) {
          const k = r * fields + f;
          let x = rows[k];
          if (x !== x) continue;
          if (rel >= 0) {
            const ref = rows[r * fields + rel];
            x += tag & MICRO ? Math.round(ref * 1000) : ref;
          }
          rows[k] = tag & MICRO ? x / 1000 : x;
        }
      }
    }
  } catch (e) {
    if (e instanceof RangeError || (e as Error).message.startsWith('width')) throw new Error('ledger: packed rows are truncated or corrupt');
    throw e;
  }
  if (o !== bytes.length) throw new Error('ledger: packed rows are truncated or corrupt');
  return { fields, n, rows };
}

/** Bytes per value of each width (for tests and diagnostics). */
export const WIDTH_BYTES: readonly number[] = BYTES;
