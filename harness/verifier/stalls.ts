import type Database from 'better-sqlite3';
import { hasTable } from '../../ledger/key-log.js';
import { loadRunFacts, runConfigOf, type FaultFact } from './run-facts.js';

/** Default stall bound (issue 11; `STALL=` on make certify), ms. */
export const DEFAULT_STALL_BOUND_MS = 5_000;

/**
 * A stretch of unexplained unavailability (issue 11): a node that did not answer the harness's
 * metadata requests, or whose own event loop was blocked, or a partition the runtime map showed
 * Unavailable, for longer than the bound while no fault touched it. Not a loss: it fails the run's
 * availability, never its durability verdict.
 */
export interface Stall {
  /** node: a node's silence or blocked event loop; partition: Unavailable in the harness's view. */
  kind: 'node' | 'partition';
  /** no-answer: no metadata answer; loop-delay: the node's own event loop was blocked this long; unavailable: health Unavailable. */
  why: 'no-answer' | 'loop-delay' | 'unavailable';
  /** kind node: the node. */
  node?: string;
  /** kind partition: the store and partition. */
  store?: string;
  partition?: number;
  /** The stretch outside any fault's reach, run time ms. */
  fromMs: number;
  toMs: number;
  durationMs: number;
  /** kind node: the longest event-loop delay the node reported from the stretch's start through its first answer after it, ms (null: none reported). */
  loopMaxMs?: number | null;
}

/** results.json `availability`. */
export interface Availability {
  /** FAILED when any stall was found, else OK (a run without node samples is OK with `measured` false). */
  verdict: 'OK' | 'FAILED';
  /** The bound a stretch must exceed, ms. */
  boundMs: number;
  /** Whether the ledger holds the per-node samples the judgment needs (a ledger of an older harness or an imported history does not). */
  measured: boolean;
  /** Every stall, by start, node stalls before partition stalls at one instant. */
  stalls: Stall[];
}

type Interval = [number, number];

/** Intervals sorted and merged (overlapping or touching). */
function merge(list: Interval[]): Interval[] {
  const sorted = [...list].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const out: Interval[] = [];
  for (const [a, b] of sorted) {
    const last = out[out.length - 1];
    if (last !== undefined && a <= last[1]) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}

/** `list` minus `cut` (both merged). */
function subtract(list: Interval[], cut: Interval[]): Interval[] {
  const out: Interval[] = [];
  for (const [a0, b] of list) {
    let a = a0;
    for (const [c, d] of cut) {
      if (d <= a || c >= b) continue;
      if (c > a) out.push([a, c]);
      a = Math.max(a, d);
      if (a >= b) break;
    }
    if (a < b) out.push([a, b]);
  }
  return out;
}

/**
 * When a fault touches a node: from its start to its end (never ended: the end of time), or to
 * when the restarted node was back in sync if later, plus `graceMs` (a healed or restarted node
 * takes a moment to answer and to be judged again).
 */
function reach(f: FaultFact, graceMs: number): Interval {
  const end = f.end === null ? Infinity : Math.max(f.end, f.caughtUp ?? f.end);
  return [f.start, end + graceMs];
}

/** The nodes a fault touches: its nodes and, for a partition, the isolated ones. */
function touched(f: FaultFact): string[] {
  return [...new Set([...f.nodes, ...(f.isolated ?? [])])];
}

/** The stall bound of a run: run config `stallBoundMs`, else {@link DEFAULT_STALL_BOUND_MS}. */
export function stallBoundOf(db: Database.Database): number {
  const v = runConfigOf(db).stallBoundMs;
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : DEFAULT_STALL_BOUND_MS;
}

/**
 * Finds the stalls of a run (issue 11). Per node, from `node_samples` (one line per node per
 * runtime-map sample): the stretches from its first unanswered sample to its next answered one
 * (to its last sample when it never answered again), and for each new event-loop delay of at
 * least the bound it reported (loop_max_ms, a rolling window: a value is new when it differs from
 * the node's previous one) the stretch of that length ending at the sample, cut to begin at the
 * node's previous answer (a blocked loop answers nothing). Per partition, from
 * the merged `samples` (node NULL): the stretches from a sample showing Unavailable to the next
 * one that does not. From each stretch the reach of every fault touching it is taken away (a
 * node's own faults; for a partition, the faults touching any of its replicas: those of the
 * `partitions` table and of its samples), from the fault's start to its end or catch-up plus the
 * bound; what is left and longer than the bound is a stall.
 * Memory: one node's or partition's stretches at a time and the faults.
 */
export function findStalls(db: Database.Database, boundMs = stallBoundOf(db)): Availability {
  if (!(boundMs > 0)) throw new Error('findStalls: the bound must be a positive number of ms');
  const facts = loadRunFacts(db);
  const measured = hasTable(db, 'node_samples') && (db.prepare('SELECT 1 FROM node_samples LIMIT 1').pluck().get() as number | undefined) !== undefined;
  const reachOf = (nodes: ReadonlySet<string>): Interval[] =>
    merge(facts.faults.filter((f) => touched(f).some((n) => nodes.has(n))).map((f) => reach(f, boundMs)));
  const stalls: Stall[] = [];

  if (measured) {
    const nodes = db.prepare('SELECT DISTINCT node FROM node_samples ORDER BY node').pluck().all() as string[];
    const lines = db.prepare('SELECT t_ms, answered, loop_max_ms FROM node_samples WHERE node = ? ORDER BY t_ms, rowid').raw(true);
    for (const node of nodes) {
      const silent: Interval[] = [];
      const blocked: Array<Interval & { loop?: number }> = [];
      let since: number | null = null;
      let last = -Infinity;
      let prevLoop: number | null = null;
      let prevAnswered = -Infinity;
      const loops: Array<[number, number]> = [];
      for (const [t, answered, loop] of lines.iterate(node) as IterableIterator<[number, number, number | null]>) {
        last = t;
        if (answered === 0) {
          if (since === null) since = t;
          continue;
        }
        if (since !== null) silent.push([since, t]);
        since = null;
        if (loop !== null) {
          loops.push([t, loop]);
          // a loop blocked since t - loop answered nothing since then: the stretch starts after the
          // node's previous answer (a figure no silence backs, e.g. a clock fault's jump, is no stall)
          if (loop >= boundMs && loop !== prevLoop) blocked.push([Math.max(t - loop, prevAnswered), t]);
          prevLoop = loop;
        }
        prevAnswered = t;
      }
      if (since !== null && last > since) silent.push([since, last]);
      const cut = reachOf(new Set([node]));
      const loopNear = (a: number, b: number): number | null => {
        // the node reports a blocked stretch at its first answer after it: the figures from a
        // through that answer
        let m: number | null = null;
        for (const [t, l] of loops) {
          if (t < a) continue;
          if (m === null || l > m) m = l;
          if (t >= b) break;
        }
        return m;
      };
      const silentLeft = subtract(merge(silent), cut);
      const blockedLeft = subtract(merge(blocked), cut);
      for (const [a, b] of silentLeft) if (b - a > boundMs) stalls.push({ kind: 'node', why: 'no-answer', node, fromMs: a, toMs: b, durationMs: b - a, loopMaxMs: loopNear(a, b) });
      for (const [a, b] of blockedLeft) {
        if (b - a <= boundMs) continue;
        // a blocked loop the silence already shows is one stall
        if (silentLeft.some(([c, d]) => d - c > boundMs && c < b && d > a)) continue;
        stalls.push({ kind: 'node', why: 'loop-delay', node, fromMs: a, toMs: b, durationMs: b - a, loopMaxMs: loopNear(a, b) });
      }
    }
  }

  const partitions = db.prepare('SELECT store, partition, replicas FROM partitions ORDER BY store, partition').all() as Array<{ store: string; partition: number; replicas: string }>;
  const replicaSets = db.prepare('SELECT DISTINCT replicas FROM samples WHERE store = ? AND partition = ? AND replicas IS NOT NULL').pluck();
  const health = db.prepare('SELECT t_ms, health FROM samples WHERE store = ? AND partition = ? AND node IS NULL ORDER BY t_ms, rowid').raw(true);
  const list = (text: string | null): string[] => {
    try {
      const v = JSON.parse(text ?? '[]') as unknown;
      return Array.isArray(v) ? v.map(String) : [];
    } catch {
      return [];
    }
  };
  for (const p of partitions) {
    const down: Interval[] = [];
    let since: number | null = null;
    let last = -Infinity;
    for (const [t, h] of health.iterate(p.store, p.partition) as IterableIterator<[number, string]>) {
      last = t;
      if (h === 'Unavailable') {
        if (since === null) since = t;
      } else if (since !== null) {
        down.push([since, t]);
        since = null;
      }
    }
    if (since !== null && last > since) down.push([since, last]);
    if (down.length === 0) continue;
    const replicas = new Set(list(p.replicas));
    for (const r of replicaSets.all(p.store, p.partition) as string[]) for (const n of list(r)) replicas.add(n);
    for (const [a, b] of subtract(merge(down), reachOf(replicas))) {
      if (b - a > boundMs) stalls.push({ kind: 'partition', why: 'unavailable', store: p.store, partition: p.partition, fromMs: a, toMs: b, durationMs: b - a });
    }
  }
  stalls.sort((x, y) => x.fromMs - y.fromMs || (x.kind === y.kind ? 0 : x.kind === 'node' ? -1 : 1) || (x.node ?? x.store ?? '').localeCompare(y.node ?? y.store ?? '') || (x.partition ?? 0) - (y.partition ?? 0));
  return { verdict: stalls.length > 0 ? 'FAILED' : 'OK', boundMs, measured, stalls };
}

/** A stall in one line, run time in seconds. */
export function stallText(s: Stall): string {
  const sec = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
  const who = s.kind === 'node' ? `node ${s.node ?? '?'}` : `partition ${s.store ?? '?'}/${s.partition ?? '?'}`;
  const what = s.why === 'no-answer' ? 'did not answer' : s.why === 'loop-delay' ? 'had its event loop blocked' : 'was Unavailable';
  const loop = s.loopMaxMs !== undefined && s.loopMaxMs !== null ? ` (longest event-loop delay it reported: ${Math.round(s.loopMaxMs)} ms)` : '';
  return `${who} ${what} for ${sec(s.durationMs)}, from ${sec(s.fromMs)} to ${sec(s.toMs)}, with no fault touching it${loop}`;
}
