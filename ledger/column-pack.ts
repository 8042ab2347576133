/**
 * A small columnar codec for the ledger's numeric rows (issue 11: a ledger under 100 bytes per
 * write, a seal of millions of writes per second). Rows are given row-major in a Float64Array
 * (`fields` numbers per row, NaN = null); each field is stored as one column, in the narrowest
 * exact form among:
 * - a constant (every row the same number, or every row null);
 * - integers of 1, 2 or 4 bytes, or float64;
 * each optionally after exact transforms:
 * - `micro`: the values are whole microseconds (`v * 1000` rounds to an integer that gives `v`
 *   back by `/ 1000`, as the ledger's times are recorded: ms with µs resolution);
 * - `rel`: minus `scale` times the same row's value of an earlier field (a completion time minus
 *   its invoke; a version minus its epoch * 2^32);
 * - delta: minus the previous non-null value of the column (times, revisions, sequence numbers).
 * Decoding gives back every number bit for bit (NaN as NaN; -0 and non-integers stay float64),
 * whatever the input: a transform is used only where it is exact for every row.
 *
 * Layout (little-endian): u8 codec version (2), u8 fields, u32 rows; then per field a tag byte and
 * its payload. Tag: bits 0-2 width (0 constant, 1 i8, 2 i16, 3 i32, 4 f64), 0x08 delta, 0x10
 * micro, 0x20 rel (the reference field's index follows as u8, then the scale as f64).
 * Payloads: a constant is one f64; a constant delta (no null) is the first value and the step
 * (two f64); any other delta is the first non-null value (f64) and then per row the difference to
 * the previous non-null value (the first non-null row's is 0); plain widths one value per row.
 * Integer widths keep their smallest value as the null marker (-128, -32768, -2^31).
 */

/** How a field may be transformed (all optional; the codec uses each only where it is exact). */
export interface ColumnSpec {
  /** Try whole microseconds (ms values with µs resolution). */
  micro?: boolean;
  /** Try the difference to `scale` times this earlier field of the same row. */
  rel?: number;
  /** The multiplier of `rel` (default 1). */
  scale?: number;
}

const W_CONST = 0;
const W_I8 = 1;
const W_I16 = 2;
const W_I32 = 3;
const W_F64 = 4;
const DELTA = 0x08;
const MICRO = 0x10;
const REL = 0x20;
const CODEC_VERSION = 2;
const NULL_I8 = -128;
const NULL_I16 = -32768;
const NULL_I32 = -2147483648;
const WIDTH_BYTES = [0, 1, 2, 4, 8];

function isInt(v: number): boolean {
  return Number.isSafeInteger(v) && !Object.is(v, -0);
}

/** The narrowest width holding integers in [min, max] (null markers excluded), given they are ints. */
function intWidth(min: number, max: number): number {
  if (min > NULL_I8 && max <= 127) return W_I8;
  if (min > NULL_I16 && max <= 32767) return W_I16;
  if (min > NULL_I32 && max <= 2147483647) return W_I32;
  return W_F64;
}

/** Scratch of the transformed column (reused between calls). */
let scratch = new Float64Array(1024);

/**
 * Fills `scratch` with field f's values after a transform; false when the transform is not
 * exact for some row. mode: 0 plain, 1 micro, 2 rel, 3 rel + micro.
 */
function transform(rows: Float64Array, fields: number, n: number, f: number, mode: number, rel: number, scale: number): boolean {
  if (scratch.length < n) scratch = new Float64Array(Math.max(n, scratch.length * 2));
  const out = scratch;
  const micro = (mode & 1) !== 0;
  const useRel = (mode & 2) !== 0;
  for (let i = 0, k = f; i < n; i++, k += fields) {
    let v = rows[k];
    if (v !== v) {
      out[i] = NaN;
      continue;
    }
    if (micro) {
      const us = Math.round(v * 1000);
      if (!(Number.isSafeInteger(us) && us / 1000 === v) || Object.is(v, -0)) return false;
      v = us;
    }
    if (useRel) {
      let r = rows[i * fields + rel];
      if (r !== r) return false;
      if (micro) {
        const us = Math.round(r * 1000);
        if (!Number.isSafeInteger(us)) return false;
        r = us;
      }
      const d = v - r * scale;
      // exact both ways: an integer difference that gives v back
      if (!isInt(d) || !Object.is(d + r * scale, v)) return false;
      v = d;
    }
    out[i] = v;
  }
  return true;
}

interface Choice {
  tag: number;
  bytes: number;
}

/** The best width of the scratch column, plain or delta, with its size. */
function bestOf(n: number, flags: number, extra: number): Choice {
  const v = scratch;
  let same = true;
  let ints = true;
  let min = Infinity;
  let max = -Infinity;
  const first = v[0];
  // delta stats
  let prev = NaN;
  let firstNonNull = -1;
  let dOk = true;
  let dMin = Infinity;
  let dMax = -Infinity;
  let nulls = false;
  let step = NaN;
  let dSame = true;
  for (let i = 0; i < n; i++) {
    const x = v[i];
    if (same && !Object.is(x, first)) same = false;
    if (x !== x) {
      nulls = true;
      continue;
    }
    if (ints && !isInt(x)) ints = false;
    if (x < min) min = x;
    if (x > max) max = x;
    if (firstNonNull < 0) {
      firstNonNull = i;
      prev = x;
      if (dOk && !isInt(x)) dOk = false;
      continue;
    }
    if (!dOk) continue;
    const d = x - prev;
    if (!isInt(x) || !isInt(d)) {
      dOk = false;
      continue;
    }
    prev = x;
    if (d < dMin) dMin = d;
    if (d > dMax) dMax = d;
    if (step !== step) step = d;
    else if (d !== step) dSame = false;
  }
  let best: Choice;
  if (same) best = { tag: W_CONST | flags, bytes: 8 };
  else {
    const w = ints ? intWidth(min, max) : W_F64;
    best = { tag: w | flags, bytes: WIDTH_BYTES[w] * n };
  }
  if (dOk && firstNonNull >= 0 && n > 1) {
    if (!nulls && dSame) {
      if (16 < best.bytes) best = { tag: W_CONST | DELTA | flags, bytes: 16 };
    } else {
      const w = intWidth(Math.min(dMin, 0), Math.max(dMax, 0));
      const bytes = 8 + WIDTH_BYTES[w] * n;
      if (w !== W_F64 && bytes < best.bytes) best = { tag: w | DELTA | flags, bytes };
    }
  }
  best.bytes += extra;
  return best;
}

/**
 * Packs `n` rows of `fields` numbers (row-major; NaN = null) into bytes that
 * {@link unpackRows} gives back exactly.
 * @throws RangeError when fields is not 1..255 or rows is shorter than n * fields.
 */
export function packRows(rows: Float64Array, fields: number, n: number, specs: ReadonlyArray<ColumnSpec | undefined> = []): Buffer {
  if (!Number.isInteger(fields) || fields < 1 || fields > 255) throw new RangeError(`packRows: fields must be 1..255, got ${fields}`);
  if (rows.length < n * fields) throw new RangeError(`packRows: ${rows.length} numbers for ${n} rows of ${fields}`);
  const tags = new Array<number>(fields);
  const modes = new Array<number>(fields);
  let size = 6;
  for (let f = 0; f < fields; f++) {
    const spec = specs[f];
    const rel = spec?.rel !== undefined && spec.rel >= 0 && spec.rel < f ? spec.rel : -1;
    const scale = spec?.scale ?? 1;
    let best: Choice | null = null;
    let bestMode = 0;
    // the spec's own transform first (rel and micro when asked): when it is exact, it is taken
    // without trying the others (one pass to check and size it; the seal packs millions of rows)
    const preferred = (spec?.micro === true ? 1 : 0) | (rel >= 0 ? 2 : 0);
    for (const mode of preferred === 0 ? [0] : [preferred, 3, 2, 1, 0]) {
      if (mode & 1 && spec?.micro !== true) continue;
      if (mode & 2 && rel < 0) continue;
      if (!transform(rows, fields, n, f, mode, rel, scale)) continue;
      const c = bestOf(n, (mode & 1 ? MICRO : 0) | (mode & 2 ? REL : 0), mode & 2 ? 9 : 0);
      if (best === null || c.bytes < best.bytes) {
        best = c;
        bestMode = mode;
      }
      if (mode === preferred) break;
    }
    tags[f] = best!.tag;
    modes[f] = bestMode;
    size += 1 + best!.bytes;
  }
  const buf = Buffer.allocUnsafe(size);
  buf[0] = CODEC_VERSION;
  buf[1] = fields;
  buf.writeUInt32LE(n, 2);
  let o = 6;
  for (let f = 0; f < fields; f++) {
    const tag = tags[f];
    const spec = specs[f];
    const rel = modes[f] & 2 ? spec!.rel! : -1;
    const scale = spec?.scale ?? 1;
    transform(rows, fields, n, f, modes[f], rel, scale);
    const v = scratch;
    buf[o++] = tag;
    if (tag & REL) {
      buf[o++] = rel;
      buf.writeDoubleLE(scale, o);
      o += 8;
    }
    const w = tag & 7;
    if (tag & DELTA) {
      if (w === W_CONST) {
        buf.writeDoubleLE(v[0], o);
        buf.writeDoubleLE(v[1] - v[0], o + 8);
        o += 16;
        continue;
      }
      let i0 = 0;
      while (v[i0] !== v[i0]) i0++;
      let prev = v[i0];
      buf.writeDoubleLE(prev, o);
      o += 8;
      for (let i = 0; i < n; i++) {
        const x = v[i];
        let d = NaN;
        if (x === x) {
          d = x - prev;
          prev = x;
        }
        o = writeWidth(buf, o, w, d);
      }
      continue;
    }
    if (w === W_CONST) {
      buf.writeDoubleLE(n > 0 ? v[0] : 0, o);
      o += 8;
      continue;
    }
    for (let i = 0; i < n; i++) o = writeWidth(buf, o, w, v[i]);
  }
  return buf;
}

function writeWidth(buf: Buffer, o: number, w: number, x: number): number {
  switch (w) {
    case W_I8:
      buf.writeInt8(x !== x ? NULL_I8 : x, o);
      return o + 1;
    case W_I16:
      buf.writeInt16LE(x !== x ? NULL_I16 : x, o);
      return o + 2;
    case W_I32:
      buf.writeInt32LE(x !== x ? NULL_I32 : x, o);
      return o + 4;
    default:
      buf.writeDoubleLE(x, o);
      return o + 8;
  }
}

/** Rows and fields of packed bytes, without decoding them. @throws Error when they are not packed rows. */
export function packedShape(bytes: Uint8Array): { fields: number; n: number } {
  if (bytes.length < 6 || bytes[0] !== CODEC_VERSION) throw new Error('ledger: packed rows of an unknown codec version');
  return { fields: bytes[1], n: (bytes[2] | (bytes[3] << 8) | (bytes[4] << 16)) + bytes[5] * 16777216 };
}

const CORRUPT = 'ledger: packed rows are truncated or corrupt';

/**
 * Unpacks bytes of {@link packRows} into `out` (row-major, NaN = null; a new array when `out` is
 * too small) and returns the rows, fields and the array holding them. With `only`, the other
 * fields are skipped (left as they were in `out`).
 * @throws Error when the bytes are not packed rows (a corrupt ledger).
 */
export function unpackRows(bytes: Uint8Array, out?: Float64Array, only?: readonly number[]): { fields: number; n: number; rows: Float64Array } {
  const { fields, n } = packedShape(bytes);
  const rows = out !== undefined && out.length >= n * fields ? out : new Float64Array(n * fields);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const end = bytes.length;
  let o = 6;
  for (let f = 0; f < fields; f++) {
    if (o >= end) throw new Error(CORRUPT);
    const tag = bytes[o++];
    let rel = -1;
    let scale = 1;
    if (tag & REL) {
      rel = bytes[o++];
      if (o + 8 > end) throw new Error(CORRUPT);
      scale = dv.getFloat64(o, true);
      o += 8;
    }
    const w = tag & 7;
    if (w > W_F64) throw new Error(CORRUPT);
    const delta = (tag & DELTA) !== 0;
    const size = w === W_CONST ? (delta ? 16 : 8) : (delta ? 8 : 0) + WIDTH_BYTES[w] * n;
    if (o + size > end) throw new Error(CORRUPT);
    if (only !== undefined && !only.includes(f)) {
      o += size;
      continue;
    }
    if (w === W_CONST) {
      if (delta) {
        let x = dv.getFloat64(o, true);
        const step = dv.getFloat64(o + 8, true);
        for (let i = 0, k = f; i < n; i++, k += fields) {
          rows[k] = x;
          x += step;
        }
      } else {
        const c = dv.getFloat64(o, true);
        for (let i = 0, k = f; i < n; i++, k += fields) rows[k] = c;
      }
      o += size;
    } else {
      let prev = 0;
      if (delta) {
        prev = dv.getFloat64(o, true);
        o += 8;
      }
      switch (w) {
        case W_I8:
          for (let i = 0, k = f; i < n; i++, k += fields, o++) {
            const x = dv.getInt8(o);
            rows[k] = x === NULL_I8 ? NaN : delta ? (prev += x) : x;
          }
          break;
        case W_I16:
          for (let i = 0, k = f; i < n; i++, k += fields, o += 2) {
            const x = dv.getInt16(o, true);
            rows[k] = x === NULL_I16 ? NaN : delta ? (prev += x) : x;
          }
          break;
        case W_I32:
          for (let i = 0, k = f; i < n; i++, k += fields, o += 4) {
            const x = dv.getInt32(o, true);
            rows[k] = x === NULL_I32 ? NaN : delta ? (prev += x) : x;
          }
          break;
        default:
          for (let i = 0, k = f; i < n; i++, k += fields, o += 8) rows[k] = dv.getFloat64(o, true);
      }
    }
    // rel and micro: back to the stored values (the reference field is decoded first)
    if (rel >= 0 || tag & MICRO) {
      if (rel >= f) throw new Error(CORRUPT);
      const micro = (tag & MICRO) !== 0;
      for (let i = 0, k = f; i < n; i++, k += fields) {
        let x = rows[k];
        if (x !== x) continue;
        if (rel >= 0) {
          const r = rows[k - f + rel];
          x += (micro ? Math.round(r * 1000) : r) * scale;
        }
        rows[k] = micro ? x / 1000 : x;
      }
    }
  }
  if (only === undefined && o !== end) throw new Error(CORRUPT);
  return { fields, n, rows };
}
