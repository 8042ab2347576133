import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_BATCH_GET_TABLE,
  MAX_DELAY_MS,
  MAX_KEY_BOUND,
  SERVER_PROPERTY_NAME,
  parseRetryRangeTable,
  parseRetryRangeTableOrThrow,
  validateServerProperty,
  type RetryRange,
} from './retry-range-table.js';

/** A range whose fields are decimal strings, so mutations can hold numbers past any bound. */
interface RawRange {
  lower: string;
  upper: string | null;
  delay: string;
}

const toRaw = (r: RetryRange): RawRange => ({ lower: String(r.lower), upper: r.upper === null ? null : String(r.upper), delay: String(r.delayMs) });
const format = (rs: readonly RawRange[]): string => rs.map((r) => `${r.lower}-${r.upper ?? ''}:${r.delay}`).join(',');

/** Brute-force reference: scan every range for the one holding n. */
function referenceDelay(ranges: readonly RetryRange[], n: number): number {
  const hits = ranges.filter((r) => r.lower <= n && (r.upper === null || n <= r.upper));
  if (hits.length !== 1) throw new Error(`reference: ${hits.length} ranges hold ${n}`);
  return hits[0].delayMs;
}

/** Sorted valid ranges: 1..8 ranges, contiguous from 1, last open-ended. */
const sortedValidRanges: fc.Arbitrary<RetryRange[]> = fc
  .tuple(
    fc.uniqueArray(fc.oneof(fc.integer({ min: 1, max: 600 }), fc.integer({ min: 1, max: MAX_KEY_BOUND - 1 })), { maxLength: 7 }),
    fc.array(fc.oneof(fc.integer({ min: 1, max: 600 }), fc.integer({ min: 1, max: MAX_DELAY_MS })), { minLength: 8, maxLength: 8 }),
  )
  .map(([cuts, delays]) => {
    const uppers = [...cuts].sort((a, b) => a - b);
    const ranges: RetryRange[] = [];
    let lower = 1;
    uppers.forEach((u, i) => {
      ranges.push({ lower, upper: u, delayMs: delays[i] });
      lower = u + 1;
    });
    ranges.push({ lower, upper: null, delayMs: delays[uppers.length] });
    return ranges;
  });

/** Valid ranges plus a shuffled order of them for the text. */
const validTable = sortedValidRanges.chain((sorted) =>
  fc.shuffledSubarray(sorted, { minLength: sorted.length, maxLength: sorted.length }).map((shuffled) => ({ sorted, shuffled })),
);

/** Key counts worth probing: every boundary and its neighbours, random ones, and past the int range. */
function probes(ranges: readonly RetryRange[], extra: readonly number[]): number[] {
  const out = new Set<number>(extra);
  for (const r of ranges) {
    for (const n of [r.lower - 1, r.lower, r.lower + 1]) if (n >= 1) out.add(n);
    if (r.upper !== null) for (const n of [r.upper - 1, r.upper, r.upper + 1]) if (n >= 1) out.add(n);
  }
  out.add(MAX_KEY_BOUND);
  out.add(MAX_KEY_BOUND + 1);
  return [...out];
}

function expectInvalid(text: string, reason: RegExp): void {
  const p = parseRetryRangeTable(text);
  expect(p.kind).toBe('invalid');
  if (p.kind !== 'invalid') return;
  expect(p.error.message).toMatch(reason);
  expect(p.error.message).not.toMatch(/[\r\n]/);
}

describe('parseRetryRangeTable: generated valid tables', () => {
  it('round-trip in any order and delayMsFor equals a brute-force scan', () => {
    fc.assert(
      fc.property(validTable, fc.array(fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), { maxLength: 20 }), ({ sorted, shuffled }, extra) => {
        const p = parseRetryRangeTable(format(shuffled.map(toRaw)));
        expect(p.kind).toBe('table');
        if (p.kind !== 'table') return;
        expect(p.table.ranges).toEqual(sorted);
        expect(p.table.toString()).toBe(format(sorted.map(toRaw)));
        const again = parseRetryRangeTable(p.table.toString());
        expect(again.kind === 'table' && again.table.ranges).toEqual(sorted);
        for (const n of probes(sorted, extra)) expect([n, p.table.delayMsFor(n)]).toEqual([n, referenceDelay(shuffled, n)]);
      }),
    );
  });

  it('is immutable', () => {
    const t = parseRetryRangeTableOrThrow(DEFAULT_BATCH_GET_TABLE);
    expect(Object.isFrozen(t)).toBe(true);
    expect(Object.isFrozen(t.ranges)).toBe(true);
    expect(Object.isFrozen(t.ranges[0])).toBe(true);
    expect(() => {
      (t.ranges as RetryRange[]).push({ lower: 1, upper: null, delayMs: 1 });
    }).toThrow(TypeError);
    expect(() => {
      (t.ranges[0] as { delayMs: number }).delayMs = 99;
    }).toThrow(TypeError);
    expect(t.delayMsFor(1)).toBe(8);
  });

  it('delayMsFor refuses a count that is not a positive integer', () => {
    const t = parseRetryRangeTableOrThrow('1-:5');
    for (const n of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) expect(() => t.delayMsFor(n)).toThrow(RangeError);
  });
});

describe('parseRetryRangeTable: mutations of valid tables are rejected', () => {
  const mutated = (mutate: (rs: RawRange[], pick: number) => RegExp | null) =>
    fc.property(sortedValidRanges, fc.nat(), fc.nat(), (sorted, pick, seed) => {
      const raw = sorted.map(toRaw);
      const reason = mutate(raw, pick);
      fc.pre(reason !== null);
      // shuffle deterministically from the seed: the order must not matter
      const order = raw.map((r, i) => ({ r, k: (i * 7919 + seed) % 104729 })).sort((a, b) => a.k - b.k).map((x) => x.r);
      expectInvalid(format(order), reason!);
    });

  it('a gap (a range removed, not the open end)', () => {
    fc.assert(
      mutated((rs, pick) => {
        if (rs.length < 2) return null;
        const i = pick % (rs.length - 1);
        rs.splice(i, 1);
        return i === 0 ? /must start at 1/ : /gap between/;
      }),
    );
  });

  it('an overlap (a lower bound moved down, or a range repeated)', () => {
    fc.assert(
      mutated((rs, pick) => {
        if (rs.length >= 2 && pick % 2 === 0) {
          const i = 1 + (pick % (rs.length - 1));
          const prev = rs[i - 1];
          const prevLower = Number(prev.lower);
          rs[i] = { ...rs[i], lower: String(prevLower + (pick % (Number(prev.upper) - prevLower + 1))) };
          return /overlap/;
        }
        rs.push({ ...rs[pick % rs.length] });
        return /overlap/;
      }),
    );
  });

  it('no open-ended range (open end closed or removed)', () => {
    fc.assert(
      mutated((rs, pick) => {
        const last = rs[rs.length - 1];
        if (pick % 2 === 0 && rs.length >= 2) {
          rs.pop();
          return /no open-ended range/;
        }
        const lower = Number(last.lower);
        const upper = lower + (pick % (MAX_KEY_BOUND - lower + 1));
        rs[rs.length - 1] = { ...last, upper: String(upper) };
        return upper === MAX_KEY_BOUND ? /ends at 2147483647/ : /no open-ended range/;
      }),
    );
  });

  it('a zero or oversized delay', () => {
    fc.assert(
      mutated((rs, pick) => {
        const i = pick % rs.length;
        if (pick % 3 === 0) {
          rs[i] = { ...rs[i], delay: '0' };
          return /delay must be at least 1 ms/;
        }
        rs[i] = { ...rs[i], delay: String(MAX_DELAY_MS + 1 + (pick % 1_000_000_000)) };
        return /exceeds 2147483 ms/;
      }),
    );
  });

  it('a bound past 2,147,483,647', () => {
    fc.assert(
      mutated((rs, pick) => {
        const i = pick % rs.length;
        const big = (BigInt(MAX_KEY_BOUND) + 1n + BigInt(pick) * 1_000_003n).toString();
        if (rs[i].upper !== null && pick % 2 === 0) rs[i] = { ...rs[i], upper: big };
        else rs[i] = { ...rs[i], lower: big };
        return /exceeds 2147483647/;
      }),
    );
  });

  it('whitespace or a sign anywhere', () => {
    fc.assert(
      fc.property(sortedValidRanges, fc.nat(), fc.constantFrom(' ', '\t', '\n', '+'), (sorted, pick, junk) => {
        const text = format(sorted.map(toRaw));
        const at = pick % (text.length + 1);
        expectInvalid(text.slice(0, at) + junk + text.slice(at), /is not lower-upper:ms or lower-:ms/);
      }),
    );
  });
});

describe('parseRetryRangeTable: arbitrary text', () => {
  it('never throws; only "" is empty; any table it accepts is canonical on re-parse', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.stringMatching(/^[0-9:,-]{0,24}$/)), (text) => {
        const p = parseRetryRangeTable(text);
        expect(p.kind === 'empty').toBe(text === '');
        if (p.kind === 'table') {
          const again = parseRetryRangeTable(p.table.toString());
          expect(again.kind === 'table' && again.table.ranges).toEqual(p.table.ranges);
        }
        if (p.kind === 'invalid') expect(p.error.message).not.toMatch(/[\r\n]/);
      }),
    );
  });
});

describe('validateServerProperty', () => {
  it('accepts the empty default and valid tables', () => {
    expect(validateServerProperty('')).toBeNull();
    expect(validateServerProperty(DEFAULT_BATCH_GET_TABLE)).toBeNull();
    expect(validateServerProperty('501-:500,1-500:100')).toBeNull();
  });

  it('names the property and the reason on one line', () => {
    expect(validateServerProperty(' ')).toBe(
      `${SERVER_PROPERTY_NAME}: invalid retry range table " ": entry 1 " " is not lower-upper:ms or lower-:ms`,
    );
    expect(validateServerProperty('1-10:8,12-:9')).toBe(`${SERVER_PROPERTY_NAME}: invalid retry range table "1-10:8,12-:9": gap between 10 and 12`);
    expect(validateServerProperty('1-10:8\n,11-:9')).not.toMatch(/\n/);
  });

  it('parseRetryRangeTableOrThrow refuses "" and invalid text', () => {
    expect(() => parseRetryRangeTableOrThrow('')).toThrow(/empty/);
    expect(() => parseRetryRangeTableOrThrow('1-10:8')).toThrow(/no open-ended range/);
  });
});
