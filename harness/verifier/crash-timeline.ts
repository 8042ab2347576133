import type Database from 'better-sqlite3';

/** A fault that lost a node's memory (kind kill or stop), as the verifier needs it. */
export interface CrashFault {
  /** faults.id in the ledger. */
  id: number;
  /** The nodes it crashed. */
  nodes: readonly string[];
  /** ms since the run started. */
  start: number;
  /** ms; restart; null = never ended. */
  end: number | null;
  /** ms; back in sync after the restart; null = unknown (then `end` counts). */
  caughtUp: number | null;
}

/** A half-open interval of run time [from, to) in ms; `to` may be Infinity. */
export interface Interval {
  from: number;
  to: number;
}

/** The first crash of a node at or after a time. */
export interface CrashHit {
  faultId: number;
  node: string;
  /** ms: the fault's start. */
  start: number;
}

interface NodeCrashes {
  /** Crash starts, ascending, with their fault ids (for "crashed after the ack"). */
  starts: { start: number; faultId: number }[];
  /** Union of the node's down intervals [start, caughtUp ?? end ?? +inf), sorted, disjoint. */
  down: Interval[];
}

/** Merges intervals into a sorted list of disjoint, non-empty ones. */
export function unionIntervals(list: readonly Interval[]): Interval[] {
  const sorted = list.filter((i) => i.to > i.from).sort((a, b) => a.from - b.from);
  const out: Interval[] = [];
  for (const i of sorted) {
    const last = out[out.length - 1];
    if (last !== undefined && i.from <= last.to) last.to = Math.max(last.to, i.to);
    else out.push({ from: i.from, to: i.to });
  }
  return out;
}

/** Intersects two sorted lists of disjoint half-open intervals. */
export function intersectIntervals(a: readonly Interval[], b: readonly Interval[]): Interval[] {
  const out: Interval[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const from = Math.max(a[i].from, b[j].from);
    const to = Math.min(a[i].to, b[j].to);
    if (to > from) out.push({ from, to });
    if (a[i].to < b[j].to) i++;
    else j++;
  }
  return out;
}

/**
 * The crash (kill/stop) faults of a run, indexed for the verifier's loss classes
 * (shared/cases/history-format.md "The rules, to the letter"):
 * - "crashed after the ack": a kill or stop fault on that node with start >= t;
 * - "down": inside a crash interval [start, caughtUp or end), end NULL meaning +infinity.
 * Memory is proportional to the number of faults, never to the number of writes.
 */
export class CrashTimeline {
  private readonly byNode = new Map<string, NodeCrashes>();
  private readonly allDownCache = new Map<string, Interval[]>();

  constructor(faults: readonly CrashFault[]) {
    const raw = new Map<string, { starts: { start: number; faultId: number }[]; down: Interval[] }>();
    for (const f of faults) {
      const to = f.caughtUp ?? f.end ?? Infinity;
      for (const node of f.nodes) {
        let n = raw.get(node);
        if (n === undefined) raw.set(node, (n = { starts: [], down: [] }));
        n.starts.push({ start: f.start, faultId: f.id });
        n.down.push({ from: f.start, to });
      }
    }
    for (const [node, n] of raw) {
      n.starts.sort((a, b) => a.start - b.start || a.faultId - b.faultId);
      this.byNode.set(node, { starts: n.starts, down: unionIntervals(n.down) });
    }
  }

  /**
   * Loads the kill and stop faults of a ledger (faults.nodes is a JSON array of node ids).
   * @throws Error when a fault's nodes column is not a JSON array of strings.
   */
  static fromLedger(db: Database.Database): CrashTimeline {
    type Row = { id: number; nodes: string; start_ms: number; end_ms: number | null; caught_up_ms: number | null };
    const rows = db.prepare("SELECT id, nodes, COALESCE(effective_ms, start_ms) AS start_ms, end_ms, caught_up_ms FROM faults WHERE kind IN ('kill', 'stop') ORDER BY id").all() as Row[];
    return new CrashTimeline(
      rows.map((r) => {
        let nodes: unknown;
        try {
          nodes = JSON.parse(r.nodes);
        } catch {
          nodes = null;
        }
        if (!Array.isArray(nodes) || !nodes.every((n) => typeof n === 'string')) {
          throw new Error(`ledger: faults(${r.id}).nodes is not a JSON array of node ids`);
        }
        return { id: r.id, nodes, start: r.start_ms, end: r.end_ms, caughtUp: r.caught_up_ms };
      }),
    );
  }

  /** The earliest crash of `node` with start >= t (ms), or null. */
  firstCrashAtOrAfter(node: string, t: number): CrashHit | null {
    const n = this.byNode.get(node);
    if (n === undefined) return null;
    let lo = 0;
    let hi = n.starts.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (n.starts[mid].start >= t) hi = mid;
      else lo = mid + 1;
    }
    const s = n.starts[lo];
    return s === undefined ? null : { faultId: s.faultId, node, start: s.start };
  }

  /** The earliest crash of any of `nodes` with start >= t (ms), or null. */
  firstCrashOfAnyAtOrAfter(nodes: readonly string[], t: number): CrashHit | null {
    let best: CrashHit | null = null;
    for (const node of nodes) {
      const hit = this.firstCrashAtOrAfter(node, t);
      if (hit !== null && (best === null || hit.start < best.start)) best = hit;
    }
    return best;
  }

  /**
   * The intervals during which every one of `nodes` was down, sorted and disjoint (cached per
   * node set). An empty node set is never "all down".
   */
  allDown(nodes: readonly string[]): Interval[] {
    const cacheKey = [...nodes].sort().join('\u0000');
    const cached = this.allDownCache.get(cacheKey);
    if (cached !== undefined) return cached;
    let acc: Interval[] | null = null;
    for (const node of nodes) {
      const down = this.byNode.get(node)?.down ?? [];
      acc = acc === null ? down.map((i) => ({ ...i })) : intersectIntervals(acc, down);
      if (acc.length === 0) break;
    }
    const result = acc ?? [];
    this.allDownCache.set(cacheKey, result);
    return result;
  }

  /** The earliest instant >= t (ms) at which every one of `nodes` was down, or null. */
  allDownAtOrAfter(nodes: readonly string[], t: number): number | null {
    for (const i of this.allDown(nodes)) {
      if (i.to > t) return Math.max(i.from, t);
    }
    return null;
  }
}
