/**
 * A small seeded pseudo-random generator for the nemesis (DESIGN.md §3 "Nemesis": a seeded
 * schedule). mulberry32 over a 32-bit state, seeded through a splitmix32-style finalizer so that
 * nearby seeds (41, 42, 43) give unrelated streams. Not for cryptography: it only has to make the
 * same seed give the same schedule on every machine and Node version (integer arithmetic only).
 */

/** A deterministic stream of pseudo-random draws. Every method advances the stream. */
export interface Prng {
  /** A float in [0, 1) with 32 bits of randomness. */
  next(): number;
  /** An integer in [lo, hi] (both inclusive). @throws RangeError when hi < lo or either is not an integer. */
  int(lo: number, hi: number): number;
  /** true with probability p (0..1). */
  chance(p: number): boolean;
  /** One element of a non-empty array. @throws RangeError on an empty array. */
  pick<T>(items: readonly T[]): T;
  /** One element chosen with the given non-negative weights (same length, positive sum). @throws RangeError otherwise. */
  weighted<T>(items: readonly T[], weights: readonly number[]): T;
  /** A shuffled copy (Fisher-Yates); the input is not changed. */
  shuffle<T>(items: readonly T[]): T[];
}

/** splitmix32-style finalizer: a well-mixed unsigned 32-bit integer from any 32-bit input. */
function mix32(x: number): number {
  let z = (x + 0x9e3779b9) | 0;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return (z ^ (z >>> 16)) >>> 0;
}

/**
 * Folds a seed into 32 bits. Accepts any safe integer (negative too); the high bits are mixed in,
 * so 42 and 42 + 2^32 give different streams.
 * @throws RangeError when seed is not a safe integer.
 */
export function foldSeed(seed: number): number {
  if (!Number.isSafeInteger(seed)) throw new RangeError(`seed must be a safe integer, got ${seed}`);
  const lo = Number(BigInt.asUintN(32, BigInt(seed)));
  const hi = Number(BigInt.asUintN(32, BigInt(seed) >> 32n));
  return mix32(lo ^ mix32(hi));
}

/**
 * A seed for a sub-stream: the same (seed, index) always gives the same result, and streams for
 * different indexes are unrelated. The nemesis uses it to draw each fault's live choices (which
 * random node, which split) from the schedule's seed and the fault's position alone.
 */
export function deriveSeed(seed: number, index: number): number {
  return mix32(foldSeed(seed) ^ mix32(index >>> 0));
}

/** A mulberry32 generator for `seed` (any safe integer; see {@link foldSeed}). */
export function createPrng(seed: number): Prng {
  let state = foldSeed(seed);
  const next = (): number => {
    state = (state + 0x6d2b79f5) | 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (lo: number, hi: number): number => {
    if (!Number.isInteger(lo) || !Number.isInteger(hi) || hi < lo) throw new RangeError(`int(${lo}, ${hi}): need integers with lo <= hi`);
    return lo + Math.floor(next() * (hi - lo + 1));
  };
  return {
    next,
    int,
    chance: (p) => next() < p,
    pick<T>(items: readonly T[]): T {
      if (items.length === 0) throw new RangeError('pick: empty array');
      return items[int(0, items.length - 1)];
    },
    weighted<T>(items: readonly T[], weights: readonly number[]): T {
      if (items.length === 0 || items.length !== weights.length) throw new RangeError('weighted: need one weight per item and at least one item');
      const total = weights.reduce((a, w) => {
        if (!(w >= 0)) throw new RangeError('weighted: weights must be >= 0');
        return a + w;
      }, 0);
      if (!(total > 0)) throw new RangeError('weighted: weights sum to 0');
      let r = next() * total;
      for (let i = 0; i < items.length; i++) {
        r -= weights[i];
        if (r < 0 && weights[i] > 0) return items[i];
      }
      // rounding: the last item with a positive weight
      for (let i = items.length - 1; i >= 0; i--) if (weights[i] > 0) return items[i];
      throw new RangeError('weighted: unreachable');
    },
    shuffle<T>(items: readonly T[]): T[] {
      const out = items.slice();
      for (let i = out.length - 1; i > 0; i--) {
        const j = int(0, i);
        [out[i], out[j]] = [out[j], out[i]];
      }
      return out;
    },
  };
}
