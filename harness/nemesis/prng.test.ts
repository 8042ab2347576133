import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createPrng, deriveSeed, foldSeed } from './prng.js';

const seed = fc.integer({ min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER });

describe('prng', () => {
  it('the same seed gives the same stream', () => {
    fc.assert(
      fc.property(seed, (s) => {
        const a = createPrng(s);
        const b = createPrng(s);
        for (let i = 0; i < 20; i++) expect(a.next()).toBe(b.next());
      }),
    );
  });

  it('a fixed seed gives fixed values on every machine (replay depends on it)', () => {
    const r = createPrng(42);
    expect([r.int(0, 999), r.int(0, 999), r.int(0, 999)]).toEqual([26, 346, 673]);
    expect(foldSeed(42)).toBe(3420838842);
    expect(foldSeed(42)).not.toBe(foldSeed(43));
    expect(foldSeed(42)).not.toBe(foldSeed(42 + 2 ** 32));
  });

  it('int stays in [lo, hi], next in [0, 1)', () => {
    fc.assert(
      fc.property(seed, fc.integer({ min: -1000, max: 1000 }), fc.nat(5000), (s, lo, w) => {
        const r = createPrng(s);
        for (let i = 0; i < 10; i++) {
          const v = r.int(lo, lo + w);
          expect(v).toBeGreaterThanOrEqual(lo);
          expect(v).toBeLessThanOrEqual(lo + w);
          const x = r.next();
          expect(x >= 0 && x < 1).toBe(true);
        }
      }),
    );
  });

  it('nearby seeds and derived sub-streams differ', () => {
    const first = new Set(Array.from({ length: 100 }, (_, s) => createPrng(s).next()));
    expect(first.size).toBe(100);
    const derived = new Set(Array.from({ length: 100 }, (_, i) => deriveSeed(42, i)));
    expect(derived.size).toBe(100);
    expect(deriveSeed(42, 3)).toBe(deriveSeed(42, 3));
  });

  it('weighted never picks a zero weight; shuffle keeps the elements', () => {
    fc.assert(
      fc.property(seed, (s) => {
        const r = createPrng(s);
        for (let i = 0; i < 50; i++) expect(r.weighted(['a', 'b', 'c'], [1, 0, 2])).not.toBe('b');
        expect(r.shuffle([1, 2, 3, 4, 5]).sort()).toEqual([1, 2, 3, 4, 5]);
      }),
    );
    expect(() => createPrng(1).weighted(['a'], [0])).toThrow('weights sum to 0');
    expect(() => createPrng(1).pick([])).toThrow('empty array');
    expect(() => createPrng(1.5)).toThrow('seed must be a safe integer');
  });
});
