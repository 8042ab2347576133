import { uniformFloat64 } from 'pure-rand/distribution/uniformFloat64';
import { uniformInt } from 'pure-rand/distribution/uniformInt';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';
import type { RandomGenerator } from 'pure-rand/types/RandomGenerator';

/**
 * The simulation's only source of randomness: a seeded xoroshiro128+ generator (pure-rand), so
 * that one seed gives one run, bit for bit (sim brief: "Everything seeded"). Never mix in
 * Math.random, Date or performance.now.
 */
export class SimRandom {
  private readonly rng: RandomGenerator;

  /** @param seed any integer (taken modulo 2^32 by the generator). */
  constructor(seed: number) {
    this.rng = xoroshiro128plus(seed | 0);
  }

  /** Uniform in [0, 1). */
  next(): number {
    return uniformFloat64(this.rng);
  }

  /** Uniform integer in [lo, hi], both included. @throws RangeError when hi < lo. */
  int(lo: number, hi: number): number {
    if (hi < lo) throw new RangeError(`SimRandom.int: empty range [${lo}, ${hi}]`);
    return uniformInt(this.rng, lo, hi);
  }

  /** Uniform real in [lo, hi). */
  between(lo: number, hi: number): number {
    return lo + (hi - lo) * this.next();
  }

  /** True with probability p (0..1). */
  chance(p: number): boolean {
    return p > 0 && this.next() < p;
  }

  /** One element of a non-empty array. @throws RangeError on an empty array. */
  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('SimRandom.pick: empty array');
    return items[this.int(0, items.length - 1)];
  }

  /** An independent generator seeded from this one (one per node, so nodes do not share a stream). */
  fork(): SimRandom {
    return new SimRandom(this.int(-0x80000000, 0x7fffffff));
  }
}

/**
 * A 32-bit hash of three integers (unsigned), for fixed per-run draws that leave the random
 * stream alone (an incarnation's clock origin, a link's skew): adding such a draw changes no
 * other event of a kept schedule.
 */
export function hash32(seed: number, a: number, b: number): number {
  let h = Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(a + 1, 0xc2b2ae35) ^ Math.imul(b + 1, 0x27d4eb2f);
  h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d);
  h = Math.imul(h ^ (h >>> 12), 0x297a2d39);
  return (h ^ (h >>> 15)) >>> 0;
}
