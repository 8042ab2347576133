import type Database from 'better-sqlite3';
import { BucketSeries, type TimeGrid } from './downsample.js';
import { holdBetweenSamples } from './harness-memory.js';
import { parseJson } from './html-kit.js';
import type { ChartSpec } from './timeline-data.js';

/** The ledger event of one node's sampled counters (harness/metrics-sampler.ts; duplicated here: reports import no harness code). */
export const NODE_METRICS_EVENT = 'node-metrics';

/** The counters the report charts, by their `node-metrics` detail field, with their labels. */
const COUNTERS = [
  ['failovers', 'failovers'],
  ['promotions', 'promotions'],
  ['staleEpochRefusals', 'stale-epoch refusals'],
  ['migratingAnswers', 'Migrating answers'],
  ['invalidPolicyValues', 'invalid multi-key policy values'],
  ['migrations', 'migrations (partition moves)'],
] as const;

/** A counter of {@link NodeCounterTotals}, by its `node-metrics` detail field. */
export type NodeCounter = (typeof COUNTERS)[number][0];

/**
 * Each counter's total over the nodes since the cluster started (restarts included: see
 * {@link nodeMetricsCharts}), from the run's last samples; a counter no sample carried as a number
 * (e.g. `migrations` from a store that does not export it) is null.
 */
export type NodeCounterTotals = Record<NodeCounter, number | null>;

/**
 * The totals of the nodes' counters over the whole run (results.json `nodeCounters`, issue 14:
 * migrations and Migrating answers counted): per node the sum of its increases between samples (a
 * value lower than the node's previous sample means it restarted: its whole value is the
 * increase), summed over the nodes. Null when the ledger has no `node-metrics` event.
 */
export function nodeCounterTotals(db: Database.Database): NodeCounterTotals | null {
  const rows = db.prepare('SELECT detail FROM events WHERE kind = ? ORDER BY t_ms, rowid').pluck().iterate(NODE_METRICS_EVENT) as IterableIterator<string | null>;
  const raw = new Map<string, Record<string, number>>();
  const total = Object.fromEntries(COUNTERS.map(([k]) => [k, null])) as NodeCounterTotals;
  let any = false;
  for (const text of rows) {
    const d = parseJson(text) as Record<string, unknown> | null;
    if (!d || typeof d.node !== 'string') continue;
    any = true;
    const prev = raw.get(d.node) ?? {};
    const now: Record<string, number> = {};
    for (const [k] of COUNTERS) {
      const v = d[k];
      if (typeof v !== 'number' || !Number.isFinite(v)) continue;
      now[k] = v;
      const p = prev[k] ?? 0;
      total[k] = (total[k] ?? 0) + (v >= p ? v - p : v);
    }
    raw.set(d.node, { ...prev, ...now });
  }
  return any ? total : null;
}

/**
 * The report's charts of the store nodes' own counters (issue 14: each node's metrics endpoint,
 * sampled into the ledger as `node-metrics` events every 5 s):
 * - `chart-node-counters`: each counter's total over the nodes since the cluster started: per
 *   node the sum of its increases between samples (a counter lower than the node's previous sample
 *   means the node restarted and counts from 0: its whole value is the increase), summed over the
 *   nodes; the largest total per bucket, held between samples;
 * - `chart-replication-lag`: per node, the largest replication lag over the partitions it is the
 *   active of (ms), the largest per bucket.
 * Both null when the ledger has no such event (a run before issue 14, an imported history).
 * Memory O(buckets x nodes).
 */
export function nodeMetricsCharts(db: Database.Database, grid: TimeGrid): ChartSpec[] {
  const rows = db.prepare('SELECT t_ms, detail FROM events WHERE kind = ? ORDER BY t_ms, rowid').iterate(NODE_METRICS_EVENT) as IterableIterator<{ t_ms: number; detail: string | null }>;
  /** Per node: the last raw value of each counter, and its running total (restarts handled). */
  const raw = new Map<string, Record<string, number>>();
  const totals = new Map<string, Record<string, number>>();
  const sums = COUNTERS.map(() => new BucketSeries(grid, 'max'));
  const lag = new Map<string, BucketSeries>();
  let any = false;
  for (const r of rows) {
    const d = parseJson(r.detail) as Record<string, unknown> | null;
    if (!d || typeof d.node !== 'string') continue;
    any = true;
    const prev = raw.get(d.node);
    const tot = totals.get(d.node) ?? {};
    const now: Record<string, number> = {};
    for (const [k] of COUNTERS) {
      const v = typeof d[k] === 'number' && Number.isFinite(d[k]) ? (d[k] as number) : 0;
      now[k] = v;
      const p = prev?.[k] ?? 0;
      tot[k] = (tot[k] ?? 0) + (v >= p ? v - p : v);
    }
    raw.set(d.node, now);
    totals.set(d.node, tot);
    const tS = r.t_ms / 1000;
    COUNTERS.forEach(([k], i) => sums[i].add(tS, [...totals.values()].reduce((a, v) => a + (v[k] ?? 0), 0)));
    if (typeof d.lagMaxMs === 'number') {
      let s = lag.get(d.node);
      if (!s) lag.set(d.node, (s = new BucketSeries(grid, 'max')));
      s.add(tS, d.lagMaxMs);
    }
  }
  if (!any) return [];
  const nodes = [...lag.keys()].sort();
  return [
    {
      id: 'chart-node-counters',
      title: 'Store node counters (metrics endpoints; totals over the nodes since the cluster started, restarts included)',
      unit: 'count',
      lines: COUNTERS.map(([, label]) => ({ label, step: true })),
      values: sums.map((s) => holdBetweenSamples(s.values(0))),
    },
    {
      id: 'chart-replication-lag',
      title: "Replication lag per node (its active partitions' oldest write not yet on every in-sync replica)",
      unit: 'ms',
      lines: nodes.map((label) => ({ label, step: true })),
      values: nodes.map((n) => holdBetweenSamples(lag.get(n)!.values(0))),
    },
  ];
}
