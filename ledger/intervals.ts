/**
 * Interval helpers of the reference verifier (ledger/history-rules.ts): instants in ms, intervals
 * half-open [from, to) unless a function says otherwise. Pure.
 */

/** The first index of a sorted array at which `pred` holds (pred monotone: false...true), or its length. */
export function firstIndex<T>(a: readonly T[], pred: (x: T) => boolean): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (pred(a[mid])) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** Sorted, disjoint, non-empty half-open intervals covering the same instants as `list` (touching ones merged). */
export function mergeIntervals(list: Array<[number, number]>): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (const [a, b] of list.filter(([x, y]) => y > x).sort((x, y) => x[0] - y[0])) {
    const last = out[out.length - 1];
    if (last !== undefined && a <= last[1]) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}

/** The intersection of two sorted lists of disjoint half-open intervals. */
export function intersectIntervals(a: Array<[number, number]>, b: Array<[number, number]>): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const from = Math.max(a[i][0], b[j][0]);
    const to = Math.min(a[i][1], b[j][1]);
    if (to > from) out.push([from, to]);
    if (a[i][1] < b[j][1]) i++;
    else j++;
  }
  return out;
}

/**
 * The earliest instant >= t inside every list's union of half-open intervals [from, to), or null.
 * Candidates: t and every interval start after t (an intersection of half-open intervals starts
 * at one of its members' starts).
 */
export function earliestAllDown(lists: Array<Array<[number, number]>>, t: number): number | null {
  if (lists.length === 0) return null;
  const inside = (list: Array<[number, number]>, x: number): boolean => list.some(([a, b]) => a <= x && x < b);
  const candidates = [t, ...lists.flat().map(([a]) => a).filter((a) => a > t)].sort((a, b) => a - b);
  for (const x of candidates) if (lists.every((list) => inside(list, x))) return x;
  return null;
}

/**
 * Whether a stall (a node observed not running over the closed [start, end], ms; history
 * extension `stalls`, ledger/node-stalls.ts) of one of `nodes` meets the closed window [from, to].
 */
export function stalledDuring(stalls: ReadonlyArray<{ node: string; start: number; end: number }>, nodes: readonly (string | null)[], from: number, to: number): boolean {
  return stalls.some((s) => nodes.includes(s.node) && s.start <= to && s.end >= from);
}
