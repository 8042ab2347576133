import type Database from 'better-sqlite3';
import { BucketSeries, type TimeGrid } from './downsample.js';
import { parseJson } from './html-kit.js';
import type { ChartSpec } from './timeline-data.js';

/** The ledger event the harness writes every 10 s with its own memory (harness/run-monitor.ts). */
export const HARNESS_EVENT = 'harness';

/**
 * The report's chart of the harness's own memory (DESIGN.md §8: flat however long the run), from
 * the ledger's `harness` events (detail `{ rssMb, heapUsedMb }`, MB): RSS and V8 heap used, the
 * largest value per bucket of `grid` (a peak is never hidden). Returns null when the ledger has
 * no such event (e.g. an imported history): no chart rather than an empty one. Memory O(buckets).
 */
export function harnessMemoryChart(db: Database.Database, grid: TimeGrid): ChartSpec | null {
  const rss = new BucketSeries(grid, 'max');
  const heap = new BucketSeries(grid, 'max');
  const rows = db.prepare('SELECT t_ms, detail FROM events WHERE kind = ? ORDER BY t_ms').iterate(HARNESS_EVENT) as IterableIterator<{ t_ms: number; detail: string | null }>;
  for (const r of rows) {
    const d = parseJson(r.detail) as { rssMb?: unknown; heapUsedMb?: unknown } | null;
    if (typeof d?.rssMb === 'number') rss.add(r.t_ms / 1000, d.rssMb);
    if (typeof d?.heapUsedMb === 'number') heap.add(r.t_ms / 1000, d.heapUsedMb);
  }
  if (rss.empty && heap.empty) return null;
  return {
    id: 'chart-harness-memory',
    title: 'Harness memory (the certifier itself; flat over a long run)',
    unit: 'MB',
    lines: [{ label: 'RSS', step: true }, { label: 'heap used', step: true }],
    values: [holdBetweenSamples(rss.values(0)), holdBetweenSamples(heap.values(0))],
  };
}

/**
 * A sampled level (one sample every 10 s, buckets of 1 s or more): each empty bucket between two
 * samples holds the earlier sample's value, so the chart draws a line instead of isolated points;
 * before the first and after the last sample stays empty.
 */
export function holdBetweenSamples(values: (number | null)[]): (number | null)[] {
  let last = -1;
  for (let i = values.length - 1; i >= 0; i--) {
    if (values[i] !== null) {
      last = i;
      break;
    }
  }
  const out = [...values];
  for (let i = 1; i < last; i++) if (out[i] === null) out[i] = out[i - 1];
  return out;
}
