/**
 * Figures of `make bench`'s interleaved rounds (issue 11: two rounds gave ratios 0.81 and 1.18;
 * the ratio is only worth something with its spread).
 */

/** The per-round ledger-on/off ratios and what they say together. */
export interface RatioStats {
  rounds: number;
  /** on[i] / off[i], in round order. */
  ratios: number[];
  /** Median of the per-round ratios. */
  median: number;
  /** Smallest and largest per-round ratio. */
  min: number;
  max: number;
  /** Lower and upper quartile of the per-round ratios (nearest rank). */
  q1: number;
  q3: number;
  /** (max - min) / median: the spread relative to the median. */
  relativeSpread: number;
  /** Medians of the rates themselves (writes/s). */
  onMedian: number;
  offMedian: number;
}

/** Median of numbers (mean of the middle two for an even count). @throws Error on an empty list. */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) throw new Error('median of no values');
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Nearest-rank quantile (p in (0, 1]) of ascending values. */
function rank(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length, Math.max(1, Math.ceil(p * sorted.length))) - 1];
}

/**
 * The ratio figures of paired rounds: round i ran ledger on at on[i] and ledger off at off[i]
 * writes/s, one right after the other (their order alternating between rounds, so that a drift of
 * the machine's load weighs on both sides alike). Pairing each round cancels what the two runs of
 * a round share; the median of the per-round ratios resists an outlier round.
 * @throws Error when the lists differ in length, are empty, or hold a rate that is not positive.
 */
export function ratioStats(on: readonly number[], off: readonly number[]): RatioStats {
  if (on.length !== off.length || on.length === 0) throw new Error('ratioStats: one ledger-on and one ledger-off rate per round');
  if ([...on, ...off].some((x) => !(x > 0))) throw new Error('ratioStats: rates must be positive');
  const ratios = on.map((x, i) => x / off[i]);
  const sorted = [...ratios].sort((a, b) => a - b);
  const med = median(ratios);
  return {
    rounds: ratios.length,
    ratios,
    median: med,
    min: sorted[0],
    max: sorted[sorted.length - 1],
    q1: rank(sorted, 0.25),
    q3: rank(sorted, 0.75),
    relativeSpread: (sorted[sorted.length - 1] - sorted[0]) / med,
    onMedian: median(on),
    offMedian: median(off),
  };
}

/** Which runs first in round i (0-based): ledger on in even rounds, off in odd ones. */
export function roundOrder(i: number): ['on', 'off'] | ['off', 'on'] {
  return i % 2 === 0 ? ['on', 'off'] : ['off', 'on'];
}
