import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { packRows, packedShape, unpackRows, type ColumnSpec } from './column-pack.js';

/** Bitwise equality of two number arrays (NaN equals NaN, -0 differs from 0). */
function same(a: ArrayLike<number>, b: ArrayLike<number>, n: number): boolean {
  for (let i = 0; i < n; i++) if (!Object.is(a[i], b[i])) return false;
  return true;
}

const anyNumber = fc.oneof(
  fc.double(),
  fc.integer({ min: -200, max: 200 }),
  fc.integer(),
  fc.maxSafeInteger(),
  fc.constantFrom(NaN, -0, 0, 4294967297, 2 ** 53 - 1, -(2 ** 53) + 1),
  fc.integer({ min: 0, max: 2 ** 40 }).map((us) => us / 1000),
);

describe('column codec', () => {
  it('gives back every number bit for bit, whatever the specs (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }).chain((fields) =>
          fc.record({
            fields: fc.constant(fields),
            rows: fc.array(fc.array(anyNumber, { minLength: fields, maxLength: fields }), { maxLength: 40 }),
            specs: fc.array(fc.record({ micro: fc.boolean(), rel: fc.integer({ min: -1, max: fields }), scale: fc.constantFrom(1, 1, 2 ** 32, 0.5, -3) }), { minLength: fields, maxLength: fields }),
          }),
        ),
        ({ fields, rows, specs }) => {
          const flat = Float64Array.from(rows.flat());
          const bytes = packRows(flat, fields, rows.length, specs as ColumnSpec[]);
          const back = unpackRows(bytes);
          expect(back.n).toBe(rows.length);
          expect(back.fields).toBe(fields);
          expect(same(back.rows, flat, flat.length)).toBe(true);
        },
      ),
      { seed: 1105, numRuns: 2000 },
    );
  });

  it('stores a ledger-like column set in a few bytes per row', () => {
    // 100 writes of one key: seq 1..100, op put, invoke every ~400 ms in µs, latency 2-9 ms, ok,
    // status code 0, one attempt, node 1, epoch 3, version epoch<<32 | n, revision growing by ~45
    const n = 100;
    const rows = new Float64Array(n * 11);
    for (let i = 0; i < n; i++) {
      const invoke = Math.round((1_000_000 + i * 400.123 + (i % 7) * 0.011) * 1000) / 1000;
      rows.set([i + 1, 0, invoke, Math.round((invoke + 2 + (i % 8)) * 1000) / 1000, 0, 0, 1, 1, 3, 3 * 2 ** 32 + i, 1000 + i * 45 + (i % 3)], i * 11);
    }
    const bytes = packRows(rows, 11, n, [undefined, undefined, { micro: true }, { micro: true, rel: 2 }, undefined, undefined, undefined, undefined, undefined, { rel: 8, scale: 2 ** 32 }]);
    // invoke deltas in 4 bytes, latencies in 2, revision deltas in 1, the rest constant or a step
    expect(bytes.length / n).toBeLessThan(9);
    expect(same(unpackRows(bytes).rows, rows, rows.length)).toBe(true);
    expect(packedShape(bytes)).toEqual({ fields: 11, n });
  });

  it('keeps nulls inside a delta column, and decodes only the fields asked for', () => {
    const rows = Float64Array.from([1, 100_000, 2, NaN, 3, 100_002, 4, 100_003, 5, NaN, 6, 100_005]);
    const bytes = packRows(rows, 2, 6);
    expect(same(unpackRows(bytes).rows, rows, rows.length)).toBe(true);
    // the first column in a byte per row; the second a delta column with nulls: 8 bytes of base
    // and one byte per row (4 per row as plain integers)
    expect(bytes.length).toBe(6 + (1 + 6) + (1 + 8 + 6));
    const only = unpackRows(bytes, new Float64Array(12).fill(-1), [1]).rows;
    expect([...only]).toEqual([-1, 100_000, -1, NaN, -1, 100_002, -1, 100_003, -1, NaN, -1, 100_005]);
  });

  it('refuses bytes that are not packed rows', () => {
    expect(() => unpackRows(Buffer.from([9, 1, 0, 0, 0, 0]))).toThrow(/unknown codec/);
    expect(() => unpackRows(Buffer.from([2, 1, 1, 0, 0, 0, 7]))).toThrow(/truncated or corrupt/);
    const good = packRows(Float64Array.from([1.5, 2.5, 3.25]), 1, 3);
    expect(() => unpackRows(good.subarray(0, good.length - 1))).toThrow(/truncated or corrupt/);
    expect(() => packRows(new Float64Array(2), 0, 1)).toThrow(RangeError);
  });
});
