import type Database from 'better-sqlite3';
import { BucketSeries, bucketStarts, MAX_POINTS, timeGrid } from './downsample.js';
import type { TimeGrid } from './downsample.js';
import type { PartitionHistory } from './epoch-history.js';
import { scanEpochHistory } from './epoch-history.js';
import { harnessMemoryChart } from './harness-memory.js';
import { nodeMetricsCharts } from './node-metrics.js';
import { parseJson } from './html-kit.js';

/**
 * The data behind the report's time charts (DESIGN.md §6: acknowledged writes/s, latency
 * quantiles and statuses over time with fault intervals shaded; per-partition epochs), read
 * from the ledger's `stats` (per second per store), `samples`, `faults` and `events` (`phase`
 * rows). Times are seconds since the run started (harness clock). Every series is downsampled
 * onto one shared {@link TimeGrid} of at most {@link MAX_POINTS} buckets.
 */

/** A fault drawn as a shaded band: [start s, end s or null (never ended), kind, label, fault id]. */
export type FaultBand = [startS: number, endS: number | null, kind: string, label: string, id: number];
/** A phase boundary drawn as a marked line: [t s, phase name] (events kind 'phase'). */
export type PhaseMark = [tS: number, phase: string];

/** One line of a chart. `step`: drawn as steps (a state, e.g. an epoch), else a straight line. */
export interface ChartLine {
  label: string;
  step?: boolean;
}

/** One chart: a title, the y unit, its lines and one value per grid bucket per line. */
export interface ChartSpec {
  /** The element id the chart is drawn into (made from indexes, never from ledger strings). */
  id: string;
  title: string;
  unit: string;
  lines: ChartLine[];
  values: (number | null)[][];
}

/** Everything the page's chart script reads (JSON, in a data attribute). */
export interface TimelineData {
  /** Bucket width, s (1 for runs up to MAX_POINTS seconds). */
  widthS: number;
  /** End of the time axis, s. */
  endS: number;
  /** Bucket start times, s: the x values shared by every chart. */
  x: number[];
  faults: FaultBand[];
  phases: PhaseMark[];
  charts: ChartSpec[];
}

/** Attempts per status name for one store, summed over the run (from stats.statuses). */
export interface StoreStatuses {
  store: string;
  statuses: Record<string, number>;
}

/** What one pass over the timeline tables yields. */
export interface TimelineScan {
  data: TimelineData;
  /** Per-partition runtime-map histories (see epoch-history.ts). */
  histories: PartitionHistory[];
  /** Attempts per status per store, stores in ledger order, statuses by name. */
  statusesByStore: StoreStatuses[];
}

/** Statuses left out of the statuses chart: `Ok` attempts are the acknowledged-writes chart. */
export const STATUS_CHART_EXCLUDES: readonly string[] = ['Ok'];

interface StatsRow {
  t_s: number;
  store: string;
  acked: number;
  failed: number;
  indeterminate: number;
  p50_ms: number | null;
  p95_ms: number | null;
  p99_ms: number | null;
  max_ms: number | null;
  statuses: string;
}

function byName(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * End of the run's time axis, s: the latest of the last stats second (+1), the last sample, the
 * last phase event and the last fault start or end; 0 for an empty ledger.
 */
export function timelineEndS(db: Database.Database): number {
  const q = (sql: string): number => {
    const v = db.prepare(sql).pluck().get();
    return typeof v === 'number' && Number.isFinite(v) ? v : 0;
  };
  return Math.max(
    q('SELECT MAX(t_s) + 1 FROM stats'),
    q('SELECT MAX(t_ms) FROM samples') / 1000,
    q("SELECT MAX(t_ms) FROM events WHERE kind = 'phase'") / 1000,
    q('SELECT MAX(MAX(start_ms, COALESCE(end_ms, start_ms))) FROM faults') / 1000,
    0,
  );
}

/** Stores in ledger order (the stores table), then any store only the stats table names, by name. */
function storeOrder(db: Database.Database): string[] {
  const listed = db.prepare('SELECT name FROM stores ORDER BY rowid').pluck().all() as string[];
  const extra = (db.prepare('SELECT DISTINCT store FROM stats').pluck().all() as string[]).filter((s) => !listed.includes(s)).sort(byName);
  return [...listed, ...extra];
}

const r3 = (v: number): number => Math.round(v * 1000) / 1000;

/**
 * Reads the timeline tables once and builds the charts' data (bounded memory: O(stores x
 * statuses x buckets + partitions x buckets), whatever the run's length):
 * - per store `writes-<i>`: acknowledged, failed, indeterminate writes per second (bucket mean);
 * - per store `latency-<i>`: p50, p95, p99, max write latency, ms (the worst second per bucket);
 *   (a store without any stats row gets these two charts without lines: nothing was measured);
 * - `statuses`: client attempts per second by status over all stores, `Ok` left out, statuses
 *   by total (largest first), then name (bucket mean);
 * - `epochs`: each partition's epoch (the last sample per bucket), stepped;
 * - `harness-memory`: the harness's RSS and heap (harness-memory.ts), when the ledger has them.
 * - `node-counters`, `replication-lag`: the store nodes' sampled counters (node-metrics.ts), when
 *   the ledger has them.
 * Rows whose statuses are not a JSON object count no statuses. Deterministic: a function of
 * the ledger's rows only.
 */
export function scanTimeline(db: Database.Database, maxPoints: number = MAX_POINTS): TimelineScan {
  const grid = timeGrid(timelineEndS(db), maxPoints);
  const stores = storeOrder(db);
  const storeIndex = new Map(stores.map((s, i) => [s, i]));
  const perStore = stores.map(() => ({
    acked: new BucketSeries(grid, 'rate'),
    failed: new BucketSeries(grid, 'rate'),
    indeterminate: new BucketSeries(grid, 'rate'),
    p50: new BucketSeries(grid, 'max'),
    p95: new BucketSeries(grid, 'max'),
    p99: new BucketSeries(grid, 'max'),
    max: new BucketSeries(grid, 'max'),
    statuses: new Map<string, number>(),
    rows: 0,
  }));
  const statusSeries = new Map<string, BucketSeries>();
  const statusTotals = new Map<string, number>();

  const stats = db.prepare('SELECT t_s, store, acked, failed, indeterminate, p50_ms, p95_ms, p99_ms, max_ms, statuses FROM stats ORDER BY t_s, store');
  for (const r of stats.iterate() as IterableIterator<StatsRow>) {
    const s = perStore[storeIndex.get(r.store)!];
    s.rows++;
    s.acked.add(r.t_s, r.acked);
    s.failed.add(r.t_s, r.failed);
    s.indeterminate.add(r.t_s, r.indeterminate);
    if (r.p50_ms !== null) s.p50.add(r.t_s, r.p50_ms);
    if (r.p95_ms !== null) s.p95.add(r.t_s, r.p95_ms);
    if (r.p99_ms !== null) s.p99.add(r.t_s, r.p99_ms);
    if (r.max_ms !== null) s.max.add(r.t_s, r.max_ms);
    const st = parseJson(r.statuses);
    if (typeof st !== 'object' || st === null || Array.isArray(st)) continue;
    for (const [name, n] of Object.entries(st as Record<string, unknown>)) {
      if (typeof n !== 'number' || !Number.isFinite(n)) continue;
      s.statuses.set(name, (s.statuses.get(name) ?? 0) + n);
      statusTotals.set(name, (statusTotals.get(name) ?? 0) + n);
      if (STATUS_CHART_EXCLUDES.includes(name)) continue;
      let series = statusSeries.get(name);
      if (series === undefined) statusSeries.set(name, (series = new BucketSeries(grid, 'rate')));
      series.add(r.t_s, n);
    }
  }

  const epochSeries: BucketSeries[] = [];
  const histories = scanEpochHistory(db, {
    onSample: (index, tMs, epoch) => {
      (epochSeries[index] ??= new BucketSeries(grid, 'last')).add(tMs / 1000, epoch);
    },
  });

  const faults = (db.prepare('SELECT id, kind, nodes, start_ms, end_ms FROM faults ORDER BY start_ms, id').all() as {
    id: number; kind: string; nodes: string; start_ms: number; end_ms: number | null;
  }[]).map((f): FaultBand => {
    const nodes = parseJson(f.nodes);
    const label = Array.isArray(nodes) ? nodes.map(String).join(',') : f.nodes;
    return [r3(f.start_ms / 1000), f.end_ms === null ? null : r3(f.end_ms / 1000), f.kind, `${f.kind} ${label}`, f.id];
  });
  const phases = (db.prepare("SELECT t_ms, detail FROM events WHERE kind = 'phase' ORDER BY t_ms, rowid").all() as { t_ms: number; detail: string | null }[]).map(
    (e): PhaseMark => {
      const d = parseJson(e.detail) as { phase?: unknown } | null;
      return [r3(e.t_ms / 1000), typeof d?.phase === 'string' ? d.phase : String(e.detail ?? '?')];
    },
  );

  const charts: ChartSpec[] = [];
  stores.forEach((name, i) => {
    const s = perStore[i];
    const has = s.rows > 0; // a store without stats rows (e.g. an imported history) gets no lines, not zeros
    charts.push({
      id: `chart-writes-${i}`,
      title: `Writes per second: ${name}`,
      unit: 'writes/s',
      lines: has ? [{ label: 'acknowledged' }, { label: 'failed' }, { label: 'indeterminate' }] : [],
      values: has ? [s.acked.values(1), s.failed.values(1), s.indeterminate.values(1)] : [],
    });
  });
  stores.forEach((name, i) => {
    const s = perStore[i];
    const has = s.rows > 0;
    charts.push({
      id: `chart-latency-${i}`,
      title: `Write latency: ${name}`,
      unit: 'ms',
      lines: has ? [{ label: 'p50' }, { label: 'p95' }, { label: 'p99' }, { label: 'max' }] : [],
      values: has ? [s.p50.values(2), s.p95.values(2), s.p99.values(2), s.max.values(2)] : [],
    });
  });
  const statusNames = [...statusSeries.keys()].sort((a, b) => statusTotals.get(b)! - statusTotals.get(a)! || byName(a, b));
  charts.push({
    id: 'chart-statuses',
    title: 'Client attempts per second by status (all stores; Ok is in the writes charts)',
    unit: 'attempts/s',
    lines: statusNames.map((label) => ({ label })),
    values: statusNames.map((n) => statusSeries.get(n)!.values(1)),
  });
  charts.push({
    id: 'chart-epochs',
    title: 'Epoch per partition',
    unit: 'epoch',
    lines: histories.map((h) => ({ label: `${h.store}/${h.partition}`, step: true })),
    values: histories.map((_, i) => epochSeries[i]?.values(0) ?? new Array<number | null>(grid.count).fill(null)),
  });
  const memory = harnessMemoryChart(db, grid);
  if (memory) charts.push(memory);
  charts.push(...nodeMetricsCharts(db, grid));

  return {
    data: { widthS: grid.widthS, endS: grid.endS, x: bucketStarts(grid), faults, phases, charts },
    histories,
    statusesByStore: stores.map((store, i) => ({
      store,
      statuses: Object.fromEntries([...perStore[i].statuses.entries()].sort(([a], [b]) => byName(a, b))),
    })),
  };
}
