import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { median, ratioStats, roundOrder } from './bench-stats.js';

describe('bench figures', () => {
  it('median of odd and even counts', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(() => median([])).toThrow('median of no values');
  });

  it('per-round ratios, their median, range, quartiles and relative spread', () => {
    // the two rounds (50.6k / 62.5k, 61.2k / 51.9k) and three more
    const s = ratioStats([50_600, 61_200, 58_000, 60_000, 57_000], [62_500, 51_900, 60_000, 60_000, 60_000]);
    expect(s.rounds).toBe(5);
    expect(s.ratios.map((r) => Math.round(r * 1000) / 1000)).toEqual([0.81, 1.179, 0.967, 1, 0.95]);
    expect(Math.round(s.median * 1000) / 1000).toBe(0.967);
    expect(Math.round(s.min * 1000) / 1000).toBe(0.81);
    expect(Math.round(s.max * 1000) / 1000).toBe(1.179);
    expect(Math.round(s.q1 * 1000) / 1000).toBe(0.95);
    expect(Math.round(s.q3 * 1000) / 1000).toBe(1);
    expect(Math.round(s.relativeSpread * 1000) / 1000).toBe(0.382);
    expect(s.onMedian).toBe(58_000);
    expect(s.offMedian).toBe(60_000);
    expect(() => ratioStats([1], [1, 2])).toThrow('one ledger-on and one ledger-off rate per round');
    expect(() => ratioStats([0], [1])).toThrow('rates must be positive');
  });

  it('property: the median lies within [q1, q3] and [min, max]; scaling both sides of every round leaves the ratios alone', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 1, max: 1e6 }), fc.integer({ min: 1, max: 1e6 }), fc.integer({ min: 1, max: 100 })), { minLength: 1, maxLength: 15 }), (rounds) => {
        const s = ratioStats(rounds.map((r) => r[0]), rounds.map((r) => r[1]));
        expect(s.min).toBeLessThanOrEqual(s.q1);
        expect(s.q1).toBeLessThanOrEqual(s.median + 1e-12);
        expect(s.median).toBeLessThanOrEqual(s.q3 + 1e-12);
        expect(s.q3).toBeLessThanOrEqual(s.max);
        const scaled = ratioStats(rounds.map((r) => r[0] * r[2]), rounds.map((r) => r[1] * r[2]));
        scaled.ratios.forEach((x, i) => expect(x).toBeCloseTo(s.ratios[i], 12));
      }),
      { seed: 4711, numRuns: 200 },
    );
  });

  it('alternates which side runs first', () => {
    expect([0, 1, 2, 3].map(roundOrder)).toEqual([['on', 'off'], ['off', 'on'], ['on', 'off'], ['off', 'on']]);
  });
});
