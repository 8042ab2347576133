import { CHART_SCRIPT, FAULT_COLOR_OTHER, FAULT_COLORS, TIMELINE_DATA_ID, uplotAssets } from './chart-script.js';
import type { Transition } from './epoch-history.js';
import type { HtmlSection, ReportContext } from './html-kit.js';
import { esc, fmtClock, fmtMs, htmlTable, nodeList, parseJson } from './html-kit.js';
import type { TimelineScan } from './timeline-data.js';
import type { Results } from './results.js';
import { scanTimeline } from './timeline-data.js';

/**
 * The report's time-based sections (DESIGN.md §6): charts over time, the fault timeline with
 * failover times, the per-partition epoch history, client attempts by status. Each reads the
 * ledger through one shared {@link scanTimeline} pass per page.
 */

/** Faults listed in the fault timeline table (all of them are shaded in the charts). */
export const FAULTS_LISTED = 1_000;

/** The page's single pass over stats, samples, faults and phase events. */
export function timelineOf(ctx: ReportContext): TimelineScan {
  return ctx.memo('timeline', () => scanTimeline(ctx.db));
}

function swatches(): string {
  const kinds = Object.entries(FAULT_COLORS).map(([k, c]) => `<span class="sw" style="background:${esc(c)}"></span>${esc(k)}`);
  return `<p class="swatches">Shaded: ${kinds.join(' ')} <span class="sw" style="background:${esc(FAULT_COLOR_OTHER)}"></span>other; dashed lines: phases (faults, heal, final-reads, done).</p>`;
}

function chartDiv(id: string, hasLines: boolean): string {
  return `<div class="chart" id="${esc(id)}">${hasLines ? '' : '<p class="nodata">No data recorded.</p>'}</div>`;
}

/** Charts over time: writes/s, latency, statuses, epochs; fault bands and phase lines. */
export const chartsSection: HtmlSection = {
  id: 'charts',
  nav: 'Charts',
  title: 'Charts over time',
  render: (ctx) => {
    const { data } = timelineOf(ctx);
    const { js } = uplotAssets();
    const bucket =
      data.widthS === 1
        ? 'Each point is one second.'
        : `Each point is a ${esc(data.widthS)}-second bucket: the mean per second for counts, the worst second for latency, the last sample for epochs.`;
    const payload = { ...data, faultColors: FAULT_COLORS, faultColorOther: FAULT_COLOR_OTHER };
    const byPrefix = (p: string): string =>
      data.charts.filter((c) => c.id.startsWith(p)).map((c) => chartDiv(c.id, c.lines.length > 0)).join('\n');
    // charts that exist only when the ledger has their samples: a heading only then
    const titled = (title: string, p: string): string => (data.charts.some((c) => c.id.startsWith(p)) ? `<h3>${esc(title)}</h3>\n${byPrefix(p)}` : '');
    return `<p>Run time on the x axis (h:mm:ss since the run started). ${bucket} Hover a chart for the faults and phase at that moment; drag to zoom, double-click to reset.</p>
${swatches()}
<div id="${TIMELINE_DATA_ID}" hidden data-json="${esc(JSON.stringify(payload))}"></div>
<h3>Writes per second (acknowledged, failed, indeterminate)</h3>
${byPrefix('chart-writes-')}
<h3>Latency of acknowledged writes, invoke to ack (p50, p95, p99, max)</h3>
${byPrefix('chart-latency-')}
<h3>Client attempts by status</h3>
${byPrefix('chart-statuses')}
<h3>Epoch per partition</h3>
${byPrefix('chart-epochs')}
${titled('Store node counters (each node\'s metrics endpoint, sampled every 5 s)', 'chart-node-counters')}
${titled('Replication lag per node, ms (its active partitions\' oldest write not yet on every in-sync replica)', 'chart-replication-lag')}
${titled('Harness memory (RSS, heap)', 'chart-harness-memory')}
<noscript><p>The charts need JavaScript; the tables below hold the same facts.</p></noscript>
<script>${js}</script>
<script>${CHART_SCRIPT}</script>`;
  },
};

interface FaultRow {
  id: number;
  kind: string;
  nodes: string;
  target: string | null;
  planned_ms: number | null;
  start_ms: number;
  end_ms: number | null;
  caught_up_ms: number | null;
  detail: string | null;
}

interface Failover {
  store: string;
  partition: unknown;
  node: unknown;
  from: unknown;
  ms: number | null;
}

function seconds(ms: number | null): string {
  return ms === null ? '' : `${(Math.round(ms / 10) / 100).toFixed(2)} s`;
}

/** Fault timeline: every fault with its times and, for kill/stop, the failovers measured. */
/**
 * The stalls (results.json `availability`, issue 11) on the timeline: the availability verdict
 * and one row per stall (who, why, from, to, how long, the event-loop delay the node reported).
 */
export function stallsHtml(r: Results): string {
  const a = r.availability;
  if (a === undefined) return '';
  const head = `<h3 id="stalls">Stalls (availability ${esc(a.verdict)}: a node silent or its event loop blocked, or a partition Unavailable, longer than ${esc(fmtMs(a.boundMs))} ms with no fault touching it)</h3>`;
  if (!a.measured) return `${head}\n<p>Not measured: the ledger holds no per-node samples.</p>`;
  if (a.stalls.length === 0) return `${head}\n<p>None.</p>`;
  const rows = a.stalls.map((s) => [
    s.kind === 'node' ? `node ${s.node ?? '?'}` : `${s.store ?? '?'}/${s.partition ?? '?'}`,
    s.why,
    { html: `${esc(fmtClock(s.fromMs))}<br><span class="sub">${esc(fmtMs(s.fromMs))} ms</span>` },
    { html: `${esc(fmtClock(s.toMs))}<br><span class="sub">${esc(fmtMs(s.toMs))} ms</span>` },
    seconds(s.durationMs),
    s.loopMaxMs === undefined || s.loopMaxMs === null ? '' : `${fmtMs(s.loopMaxMs)} ms`,
  ]);
  return `${head}\n${htmlTable(['who', 'why', 'from', 'to', 'for', 'longest event-loop delay reported'], rows)}`;
}

export const faultTimelineSection: HtmlSection = {
  id: 'faults',
  nav: 'Faults',
  title: 'Fault timeline',
  render: ({ db, results: r }) => {
    const f = r.failover;
    const failoverSummary = `<h3>Failover (a killed or stopped active owner to the first acknowledged write on its partition)</h3>
${htmlTable(['measured', 'p50', 'p95', 'max'], [[f.count, `${fmtMs(f.p50Ms)} ms`, `${fmtMs(f.p95Ms)} ms`, `${fmtMs(f.maxMs)} ms`]])}`;
    const summary = `${failoverSummary}\n${stallsHtml(r)}`;
    const total = db.prepare('SELECT COUNT(*) FROM faults').pluck().get() as number;
    if (total === 0) return `${summary}\n<p>No fault was injected.</p>`;
    const list = db
      .prepare('SELECT id, kind, nodes, target, planned_ms, start_ms, end_ms, caught_up_ms, detail FROM faults ORDER BY start_ms, id LIMIT ?')
      .all(FAULTS_LISTED) as FaultRow[];
    const failovers = new Map<number, Failover[]>();
    for (const e of db.prepare("SELECT detail FROM events WHERE kind = 'failover' ORDER BY t_ms, rowid").pluck().iterate() as IterableIterator<string | null>) {
      const d = parseJson(e) as Record<string, unknown> | null;
      if (d === null || typeof d !== 'object' || typeof d.faultId !== 'number') continue;
      const list2 = failovers.get(d.faultId) ?? [];
      list2.push({ store: String(d.store ?? '?'), partition: d.partition, node: d.node, from: d.from, ms: typeof d.ms === 'number' ? d.ms : null });
      failovers.set(d.faultId, list2);
    }
    const rows = list.map((x) => {
      const detail = parseJson(x.detail) as Record<string, unknown> | null;
      const historyId = detail !== null && typeof detail === 'object' && detail.historyId !== undefined ? ` (${esc(detail.historyId)})` : '';
      const comps = detail !== null && typeof detail === 'object' && Array.isArray(detail.components) ? detail.components : null;
      const nodes = comps === null ? esc(nodeList(x.nodes)) : `${esc(nodeList(x.nodes))}<br><span class="sub">sides: ${comps.map((c) => esc(Array.isArray(c) ? c.join(', ') : c)).join(' | ')}</span>`;
      const fo = failovers.get(x.id) ?? [];
      const foHtml = fo.length === 0 ? (x.kind === 'kill' || x.kind === 'stop' ? '<span class="sub">none measured</span>' : '') : `<ul class="fo">${fo
        .map((o) => `<li>${esc(o.store)}/${esc(o.partition)}: ${esc(o.from)} → ${esc(o.node)} <b>${o.ms === null ? '?' : esc(fmtMs(o.ms))} ms</b></li>`)
        .join('')}</ul>`;
      const caught = x.caught_up_ms === null ? '' : `${fmtClock(x.caught_up_ms)} (+${seconds(x.end_ms === null ? null : x.caught_up_ms - x.end_ms)})`;
      return [
        { html: `${esc(x.id)}${historyId}` },
        { html: `<span class="k" style="background:${esc(FAULT_COLORS[x.kind] ?? FAULT_COLOR_OTHER)}">${esc(x.kind)}</span>` },
        x.target ?? '',
        { html: nodes },
        { html: `${esc(fmtClock(x.start_ms))}<br><span class="sub">${esc(fmtMs(x.start_ms))} ms</span>` },
        { html: x.end_ms === null ? '<b>never</b>' : `${esc(fmtClock(x.end_ms))}<br><span class="sub">${esc(fmtMs(x.end_ms))} ms</span>` },
        x.end_ms === null ? '' : seconds(x.end_ms - x.start_ms),
        caught,
        { html: foHtml },
      ];
    });
    const more = total > list.length ? `<p>${esc(total - list.length)} more faults in the ledger's faults table (all are shaded in the charts).</p>` : '';
    return `${summary}
<h3>Faults (${esc(total)})</h3>
<p>Times are run time (m:ss.s) with the ledger's ms below. Caught up: when a restarted node was back in sync. Failovers: the partitions whose active owner moved, with the time from the fault to the first acknowledged write there.</p>
${htmlTable(['fault', 'kind', 'target', 'nodes', 'start', 'end', 'duration', 'caught up', 'failovers'], rows, 'faults')}
${more}`;
  },
};

function transitionRows(list: readonly Transition[]): unknown[][] {
  return list.map((t) => [
    { html: `${esc(fmtClock(t.tMs))} <span class="sub">${esc(fmtMs(t.tMs))} ms</span>` },
    t.changed.join(', '),
    t.active ?? '(none)',
    t.epoch,
    { html: `<span class="h h-${esc(t.health)}">${esc(t.health)}</span>` },
    t.replicatedRevision,
  ]);
}

/** Transition table columns (shared with the drill-down). */
export const TRANSITION_HEADERS: readonly string[] = ['time', 'changed', 'active', 'epoch', 'health', 'replicated revision'];

/** Renders transitions as a table (times as run time and ms; every string escaped). */
export function transitionTable(list: readonly Transition[]): string {
  return htmlTable(TRANSITION_HEADERS, transitionRows(list), 'transitions');
}

/** Per-partition runtime-map history: an overview, then each partition's changes. */
export const epochHistorySection: HtmlSection = {
  id: 'epochs',
  nav: 'Epochs',
  title: 'Per-partition epoch history',
  render: (ctx) => {
    const { histories } = timelineOf(ctx);
    if (histories.length === 0) return '<p>No runtime-map samples recorded.</p>';
    const replicas = new Map(
      (ctx.db.prepare('SELECT store, partition, replicas FROM partitions').all() as { store: string; partition: number; replicas: string }[]).map((p) => [`${p.store}\u0000${p.partition}`, nodeList(p.replicas)]),
    );
    const overview = htmlTable(
      ['partition', 'replicas (preferred first)', 'samples', 'changes', 'epochs', 'active owners', 'samples per health'],
      histories.map((h) => [
        `${h.store}/${h.partition}`,
        replicas.get(`${h.store}\u0000${h.partition}`) ?? '',
        h.samples,
        h.transitions - 1,
        h.firstEpoch === h.lastEpoch ? String(h.firstEpoch) : `${h.firstEpoch} → ${h.lastEpoch}`,
        h.owners.join(', '),
        { html: Object.entries(h.healthSamples).map(([k, n]) => `<span class="h h-${esc(k)}">${esc(k)}</span> ${esc(n)}`).join(', ') },
      ]),
    );
    const details = histories.map((h) => {
      const omitted = h.transitions - h.head.length - h.tail.length;
      const gap = omitted > 0 ? `<p>… ${esc(omitted)} changes not shown …</p>` : '';
      const tail = h.tail.length > 0 ? transitionTable(h.tail) : '';
      return `<details><summary>${esc(h.store)}/${esc(h.partition)}: ${esc(h.transitions - 1)} change${h.transitions === 2 ? '' : 's'}</summary>
${transitionTable(h.head)}${gap}${tail}</details>`;
    });
    return `<p>From the runtime-map samples (at least every 500 ms): only the samples where the active owner, the epoch or the health changed; the first row is the first sample. The epoch chart is under <a href="#charts">Charts over time</a>.</p>
${overview}
${details.join('\n')}`;
  },
};

/** Client attempts by status, per store, with the run's totals (results.retries). */
export const retriesSection: HtmlSection = {
  id: 'retries',
  nav: 'Attempts',
  title: 'Client attempts by status',
  render: (ctx) => {
    const { statusesByStore } = timelineOf(ctx);
    const totals = ctx.results.retries;
    const names = Object.keys(totals).sort((a, b) => totals[b] - totals[a] || (a < b ? -1 : a > b ? 1 : 0));
    if (names.length === 0) return '<p>No per-second statistics recorded.</p>';
    const rows = names.map((n) => [n, ...statusesByStore.map((s) => s.statuses[n] ?? 0), totals[n]]);
    return `<p>Write attempts that ended with each status (a KvStatus or a transport failure), summed over the run's per-second statistics; <code>getMany-failed</code> counts failed batch reads. Every attempt of an operation but its last was retried (seed 000: the status decides whether the client retries and refreshes its map).</p>
${htmlTable(['status', ...statusesByStore.map((s) => s.store), 'total'], rows, 'num')}`;
  },
};
