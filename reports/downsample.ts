/**
 * Deterministic downsampling of per-second run figures for the report's charts (DESIGN.md §6:
 * a 4-hour run has 14,400 seconds per series; the page keeps at most {@link MAX_POINTS} points
 * per series). The run's time axis [0, endS) seconds is cut into equal buckets of `widthS`
 * whole seconds; each series keeps one value per bucket, aggregated by a fixed rule, so the
 * same input always gives the same points.
 */

/** Most points per chart series (the brief's bound for a small page). */
export const MAX_POINTS = 2_000;

/** The buckets of a run's time axis: bucket i covers seconds [i * widthS, (i + 1) * widthS). */
export interface TimeGrid {
  /** Bucket width, whole seconds, >= 1. */
  widthS: number;
  /** Number of buckets, 1..maxPoints. */
  count: number;
  /** End of the axis, whole seconds (>= 0); the last bucket may be shorter than widthS. */
  endS: number;
}

/**
 * The smallest whole-second bucket width that covers [0, endS) with at most `maxPoints`
 * buckets.
 * @param endS end of the axis in seconds (rounded up to a whole second).
 * @param maxPoints at most this many buckets (integer >= 1).
 * @throws RangeError when endS is negative or not finite, or maxPoints is not an integer >= 1.
 */
export function timeGrid(endS: number, maxPoints: number = MAX_POINTS): TimeGrid {
  if (!Number.isFinite(endS) || endS < 0) throw new RangeError(`timeGrid: endS must be a finite number >= 0, got ${endS}`);
  if (!Number.isInteger(maxPoints) || maxPoints < 1) throw new RangeError(`timeGrid: maxPoints must be an integer >= 1, got ${maxPoints}`);
  const end = Math.ceil(endS);
  const widthS = Math.max(1, Math.ceil(end / maxPoints));
  return { widthS, count: Math.max(1, Math.ceil(end / widthS)), endS: end };
}

/** The bucket holding second `tS` (clamped into 0..count-1). */
export function bucketIndex(grid: TimeGrid, tS: number): number {
  const i = Math.floor(tS / grid.widthS);
  return i < 0 ? 0 : i >= grid.count ? grid.count - 1 : i;
}

/** Seconds of the axis that bucket i covers: widthS, less for the last bucket; at least 1. */
export function bucketSeconds(grid: TimeGrid, i: number): number {
  return Math.max(1, Math.min(grid.widthS, grid.endS - i * grid.widthS));
}

/** The start second of every bucket: the charts' shared x values. */
export function bucketStarts(grid: TimeGrid): number[] {
  return Array.from({ length: grid.count }, (_, i) => i * grid.widthS);
}

/**
 * How a bucket's value is made from the seconds in it:
 * - `rate`: the mean per second (sum of the values / seconds the bucket covers; seconds
 *   without a value count as 0; an empty bucket is 0), for counts per second;
 * - `max`: the largest value (null when empty), for latency quantiles (a spike is never hidden);
 * - `last`: the value added at the latest time (a later add wins a tie; null when empty), for
 *   states such as an epoch.
 */
export type Aggregate = 'rate' | 'max' | 'last';

/** One downsampled series on a {@link TimeGrid}; memory is O(grid.count), whatever is added. */
export class BucketSeries {
  private readonly acc: Float64Array;
  private readonly seen: Uint8Array;
  private readonly at: Float64Array;

  constructor(
    readonly grid: TimeGrid,
    readonly mode: Aggregate,
  ) {
    this.acc = new Float64Array(grid.count);
    this.seen = new Uint8Array(grid.count);
    this.at = new Float64Array(grid.count);
  }

  /**
   * Adds value `v` at second `tS` (fractional seconds allowed; outside [0, endS) clamps to the
   * first or last bucket). Non-finite values are ignored.
   */
  add(tS: number, v: number): void {
    if (!Number.isFinite(v) || !Number.isFinite(tS)) return;
    const i = bucketIndex(this.grid, tS);
    if (this.mode === 'rate') {
      this.acc[i] += v;
    } else if (this.mode === 'max') {
      if (!this.seen[i] || v > this.acc[i]) this.acc[i] = v;
    } else if (!this.seen[i] || tS >= this.at[i]) {
      this.acc[i] = v;
      this.at[i] = tS;
    }
    this.seen[i] = 1;
  }

  /** True when no value was ever added. */
  get empty(): boolean {
    return !this.seen.some((s) => s === 1);
  }

  /**
   * The bucket values, rounded to `digits` decimals (default 2): one per bucket, null for an
   * empty `max`/`last` bucket.
   */
  values(digits = 2): (number | null)[] {
    const f = 10 ** digits;
    const out: (number | null)[] = new Array(this.grid.count);
    for (let i = 0; i < this.grid.count; i++) {
      if (this.mode === 'rate') out[i] = Math.round((this.acc[i] / bucketSeconds(this.grid, i)) * f) / f;
      else out[i] = this.seen[i] ? Math.round(this.acc[i] * f) / f : null;
    }
    return out;
  }
}
