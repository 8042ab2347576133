import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BucketSeries, bucketIndex, bucketSeconds, bucketStarts, MAX_POINTS, timeGrid } from './downsample.js';

describe('timeGrid', () => {
  it('keeps one-second buckets up to the bound and widens them beyond', () => {
    expect(timeGrid(65)).toEqual({ widthS: 1, count: 65, endS: 65 });
    expect(timeGrid(2000)).toEqual({ widthS: 1, count: 2000, endS: 2000 });
    expect(timeGrid(2001)).toEqual({ widthS: 2, count: 1001, endS: 2001 });
    expect(timeGrid(14_400)).toEqual({ widthS: 8, count: 1800, endS: 14_400 }); // 4 hours
    expect(timeGrid(64.7)).toEqual({ widthS: 1, count: 65, endS: 65 });
    expect(timeGrid(0)).toEqual({ widthS: 1, count: 1, endS: 0 });
  });

  it('refuses a negative or infinite end and a bad bound', () => {
    expect(() => timeGrid(-1)).toThrow(/endS must be a finite number >= 0, got -1/);
    expect(() => timeGrid(Number.POSITIVE_INFINITY)).toThrow(RangeError);
    expect(() => timeGrid(10, 0)).toThrow(/maxPoints must be an integer >= 1, got 0/);
  });

  it('property: at most maxPoints buckets, covering the axis, with the smallest such width', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000_000 }), fc.integer({ min: 1, max: 5_000 }), (endS, maxPoints) => {
        const g = timeGrid(endS, maxPoints);
        expect(g.count).toBeLessThanOrEqual(maxPoints);
        expect(g.count * g.widthS).toBeGreaterThanOrEqual(endS);
        if (g.widthS > 1) expect(Math.ceil(endS / (g.widthS - 1))).toBeGreaterThan(maxPoints);
        expect(bucketStarts(g)).toHaveLength(g.count);
      }),
    );
  });
});

describe('BucketSeries', () => {
  it('rate: one-second buckets give the input back; wider buckets give the mean per second', () => {
    const g1 = timeGrid(4);
    const s1 = new BucketSeries(g1, 'rate');
    s1.add(0, 10);
    s1.add(2, 7);
    expect(s1.values()).toEqual([10, 0, 7, 0]);

    const g = timeGrid(10, 3); // width 4: [0,4) [4,8) [8,10)
    const s = new BucketSeries(g, 'rate');
    for (let t = 0; t < 10; t++) s.add(t, 100);
    s.add(9, 100);
    expect(s.values()).toEqual([100, 100, 150]); // last bucket covers 2 seconds
    expect(bucketSeconds(g, 2)).toBe(2);
  });

  it('max keeps spikes and leaves empty buckets null; last keeps the latest value', () => {
    const g = timeGrid(9, 3); // width 3
    const mx = new BucketSeries(g, 'max');
    mx.add(0, 2);
    mx.add(1, 250.123);
    mx.add(2, 3);
    mx.add(7, 1);
    expect(mx.values()).toEqual([250.12, null, 1]);
    const last = new BucketSeries(g, 'last');
    last.add(4.5, 7);
    last.add(3.1, 6);
    last.add(5, 9);
    last.add(5, 10);
    expect(last.values(0)).toEqual([null, 10, null]);
    expect(last.empty).toBe(false);
    expect(new BucketSeries(g, 'last').empty).toBe(true);
  });

  it('clamps times outside the axis and ignores non-finite values', () => {
    const g = timeGrid(3);
    const s = new BucketSeries(g, 'rate');
    s.add(-5, 1);
    s.add(99, 2);
    s.add(1, Number.NaN);
    expect(s.values()).toEqual([1, 0, 2]);
    expect(bucketIndex(g, 1e9)).toBe(2);
  });

  it('property: rate conserves the total, max the maximum, whatever the bucket width', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 20_000 }),
        fc.integer({ min: 1, max: MAX_POINTS }),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 100_000 })), { maxLength: 200 }),
        (endS, maxPoints, points) => {
          const g = timeGrid(endS, maxPoints);
          const rate = new BucketSeries(g, 'rate');
          const max = new BucketSeries(g, 'max');
          for (const [t, v] of points) {
            rate.add(t % endS, v);
            max.add(t % endS, v);
          }
          const total = points.reduce((a, [, v]) => a + v, 0);
          const back = rate.values(6).reduce<number>((a, v, i) => a + (v ?? 0) * bucketSeconds(g, i), 0);
          // each bucket's mean is rounded to 6 decimals: at most 0.5e-6 x its seconds off
          expect(Math.abs(back - total)).toBeLessThanOrEqual(g.count * g.widthS * 0.5e-6 + 1e-6);
          const mv = max.values().filter((v): v is number => v !== null);
          expect(mv.length === 0 ? null : Math.max(...mv)).toBe(points.length === 0 ? null : Math.max(...points.map(([, v]) => v)));
          expect(rate.values()).toHaveLength(g.count);
        },
      ),
    );
  });
});
