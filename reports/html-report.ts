import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { META, writeId } from '../ledger/schema.js';
import type { FindingClass } from '../harness/verifier/verifier.js';
import { traceHtml } from './attempt-trace.js';
import { uplotAssets } from './chart-script.js';
import { transitionsBetween } from './epoch-history.js';
import type { HtmlSection } from './html-kit.js';
import { esc, fmtClock, fmtMs, htmlTable, metaValue, nodeList, parseJson, reportContext } from './html-kit.js';
import type { ResultFinding, Results } from './results.js';
import { chartsSection, epochHistorySection, faultTimelineSection, retriesSection, transitionTable } from './timeline-sections.js';
import type { WritesRow } from '../ledger/schema.js';

export type { HtmlSection, ReportContext } from './html-kit.js';
export { esc } from './html-kit.js';

/** Keys drilled down per class section (the rest are listed without drill-down). */
export const DRILL_DOWN_PER_CLASS = 100;
/** Writes shown per drilled-down key (the latest ones, always including the named write). */
export const WRITES_PER_KEY = 40;
/** Faults shown around an ack: those overlapping [t - before, t + after] ms. */
export const FAULT_WINDOW_MS = { before: 10_000, after: 60_000 } as const;

const table = htmlTable;
const meta = metaValue;

function prettyJson(text: string | null): string {
  if (text === null) return '';
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

const CLASS_TITLES: Readonly<Record<FindingClass, string>> = {
  violation: 'Violations',
  rf1: 'RF1 losses (allowed: replication factor 1, holder crashed after the ack)',
  'async-ack': 'Async-ack losses (allowed: owner gone before the revision was replicated)',
  'beyond-budget': 'Beyond-budget losses (every replica down at once)',
  info: 'Info (recovered indeterminate writes, unverified keys)',
};

/** How to read each class (DESIGN.md §5), one line each, shown in the verdict and class sections. */
export const CLASS_HELP: Readonly<Record<FindingClass, string>> = {
  violation:
    'An acknowledged write is missing from the final read (lost), or the final read holds a value never written (unexpected), a write that definitely failed (phantom), or acknowledged versions went backwards (version regression), and no allowance below explains it: a bug in the store.',
  rf1: 'A lost acknowledged write of a store with replication factor 1 whose holding node crashed (kill or stop) after the ack: the only copy was in memory. Allowed by the contract.',
  'async-ack':
    'A lost write acknowledged in async mode whose acking owner crashed, or lost ownership to a higher epoch, after the ack and before its revision was seen replicated. Allowed by the contract (the async-acknowledgement window).',
  'beyond-budget':
    'A lost write whose partition had every replica down (crashed, or restarted and not yet caught up) at one instant after the ack; only possible when the nemesis was allowed past the fault budget.',
  info: 'Not losses: indeterminate writes (timed out, transport failure) whose value the final read found (recovered), and keys that could not be verified (unverified).',
};

const VERDICT_TEXT: Readonly<Record<string, string>> = {
  CERTIFIED: 'No acknowledged write was lost beyond what the store\'s contract allows, every key was verified, and faults were really injected.',
  FAILED: 'At least one violation: an acknowledged write lost, or a value that should not exist. See Violations below.',
  INCONCLUSIVE: 'No violation was found, but the run cannot certify the store.',
};

const verdictSection: HtmlSection = {
  id: 'verdict',
  title: 'Verdict',
  render: ({ results: r }) => {
    const reason = r.inconclusiveReason === undefined ? '' : `<p class="reason">Why inconclusive: ${esc(r.inconclusiveReason)}</p>`;
    const rows = (Object.keys(CLASS_HELP) as FindingClass[]).map((c) => [{ html: `<a href="#class-${esc(c)}">${esc(c)}</a>` }, r.summary[c], CLASS_HELP[c]]);
    return `<div class="banner b-${esc(r.verdict)}"><p class="verdict">${esc(r.verdict)} <span class="exit">exit code ${esc(r.exitCode)}</span></p>
<p>${esc(VERDICT_TEXT[r.verdict] ?? '')}</p>${reason}</div>
<h3>Findings by class: how to read this report</h3>
${table(['class', 'findings', 'what it means'], rows)}`;
  },
};

function configRows(config: unknown): [string, unknown][] {
  if (config === null || typeof config !== 'object' || Array.isArray(config)) return [];
  const c = config as Record<string, unknown>;
  const rows: [string, unknown][] = [];
  const add = (label: string, v: unknown, fmt: (x: unknown) => unknown = (x) => x): void => {
    if (v !== undefined) rows.push([label, v === null ? '(none)' : fmt(v)]);
  };
  add('rate', c.rate, (x) => (x === 0 ? 'unthrottled' : `${String(x)} writes/s`));
  add('writers per store', c.writersPerStore);
  add('keys per writer', c.keysPerWriter);
  add('fault kinds', c.faults, (x) => (Array.isArray(x) ? (x.length === 0 ? '(none)' : x.join(', ')) : x));
  add('past the fault budget', c.beyondBudget, (x) => (x === true ? 'yes' : x === false ? 'no' : x));
  add('escalation timeout', c.escalationTimeoutMs, (x) => `${String(x)} ms`);
  add('replay of', c.replay);
  return rows.map(([k, v]) => [k, typeof v === 'object' ? JSON.stringify(v) : v]);
}

const runSection: HtmlSection = {
  id: 'run',
  title: 'Run',
  render: ({ db, results: r }) => {
    const configText = meta(db, META.runConfig);
    const config = parseJson(configText) as Record<string, unknown> | null;
    const reason = config !== null && typeof config === 'object' && typeof config.runtimeReason === 'string' ? config.runtimeReason : '(not recorded)';
    const versions = parseJson(meta(db, META.versions));
    const versionRows: [string, unknown][] =
      versions !== null && typeof versions === 'object' && !Array.isArray(versions)
        ? Object.entries(versions as Record<string, unknown>).map(([k, v]) => [`version: ${k}`, typeof v === 'object' ? JSON.stringify(v) : v])
        : [['versions', meta(db, META.versions) ?? '(not recorded)']];
    const up = db.prepare("SELECT detail FROM events WHERE kind = 'cluster-up' ORDER BY t_ms, rowid LIMIT 1").pluck().get() as string | undefined;
    const upMs = (parseJson(up) as { ms?: unknown } | null)?.ms;
    const rows: [string, unknown][] = [
      ['runtime', r.runtime ?? '(not recorded)'],
      ['why this runtime', reason],
      ['seed', r.seed ?? '(not recorded)'],
      ['started (UTC)', meta(db, META.startedAtUtc) ?? '(not recorded)'],
      ['fault phase', r.durationMs === null ? '(not recorded)' : `${fmtClock(r.durationMs)} (${r.durationMs} ms)`],
      ...configRows(config),
      ['cluster up in', typeof upMs === 'number' ? `${fmtMs(upMs)} ms` : '(not recorded)'],
      ['status', meta(db, META.status) ?? '(not recorded)'],
      ['schedule digest', r.scheduleDigest ?? '(not recorded)'],
      ...versionRows,
    ];
    return `${table(['', ''], rows)}
${configText === null ? '' : `<details><summary>Run config (JSON)</summary><pre>${esc(prettyJson(configText))}</pre></details>`}`;
  },
};

const countsSection: HtmlSection = {
  id: 'counts',
  title: 'Counts',
  render: ({ results: r }) => {
    return `${table(['attempted', 'acknowledged', 'failed', 'indeterminate'], [[r.counts.attempted, r.counts.acknowledged, r.counts.failed, r.counts.indeterminate]], 'num')}
<h3>Stores</h3>
${table(
  ['store', 'RF', 'ack mode', 'acknowledged', 'violation', 'rf1', 'async-ack', 'beyond-budget', 'info'],
  r.stores.map((s) => [s.name, s.replicationFactor, s.ackMode, s.acknowledged, s.summary.violation, s.summary.rf1, s.summary['async-ack'], s.summary['beyond-budget'], s.summary.info]),
  'num',
)}
<h3>Faults injected</h3>
${table(Object.keys(r.faults), [Object.values(r.faults)], 'num')}`;
  },
};

interface KeyRow {
  key_id: number;
  partition: number;
}
type WriteRow = Omit<WritesRow, 'key_id'>;

function drillDown(db: Database.Database, f: ResultFinding): string {
  const k = db.prepare('SELECT key_id, partition FROM keys WHERE store = ? AND key = ?').get(f.store, f.key) as KeyRow | undefined;
  if (k === undefined) return '<p>(key not in the ledger)</p>';
  const detailText = db.prepare('SELECT detail FROM findings WHERE store = ? AND key = ? LIMIT 1').pluck().get(f.store, f.key) as string | null | undefined;
  const parsed = parseJson(detailText);
  const detail: Record<string, unknown> = parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  const namedSeq = typeof detail.seq === 'number' ? detail.seq : null;
  const read = db.prepare('SELECT value, value_seq, unreadable, t_ms FROM final_reads WHERE key_id = ?').get(k.key_id) as
    | { value: string | null; value_seq: number | null; unreadable: number; t_ms: number | null }
    | undefined;

  const writes = (db
    .prepare(
      `SELECT seq, wid, op, invoke_ms, complete_ms, outcome, status, attempts, ack_node, ack_epoch, ack_version, ack_revision, ack_mode, trace
       FROM writes WHERE key_id = ? ORDER BY seq DESC LIMIT ?`,
    )
    .all(k.key_id, WRITES_PER_KEY) as WriteRow[]).reverse();
  if (namedSeq !== null && !writes.some((w) => w.seq === namedSeq)) {
    const named = db.prepare(
      `SELECT seq, wid, op, invoke_ms, complete_ms, outcome, status, attempts, ack_node, ack_epoch, ack_version, ack_revision, ack_mode, trace
       FROM writes WHERE key_id = ? AND seq = ?`,
    ).get(k.key_id, namedSeq) as WriteRow | undefined;
    if (named !== undefined) writes.unshift(named);
  }
  const total = db.prepare('SELECT COUNT(*) FROM writes WHERE key_id = ?').pluck().get(k.key_id) as number;
  const rows = writes.map((w) => {
    const cls = w.seq === namedSeq ? ' class="named"' : read?.value_seq === w.seq ? ' class="read"' : '';
    const ack = w.outcome === 'ok' ? `${esc(w.ack_node)} e${esc(w.ack_epoch)} v${esc(w.ack_version)} r${esc(w.ack_revision)} ${esc(w.ack_mode)}` : '';
    return `<tr${cls}><td>${esc(w.seq)}</td><td>${esc(w.wid ?? writeId(k.key_id, w.seq))}</td><td>${esc(w.op)}</td><td>${esc(fmtMs(w.invoke_ms))}</td><td>${esc(fmtMs(w.complete_ms))}</td><td>${esc(w.outcome ?? 'in flight')}</td><td>${esc(w.status)}</td><td>${esc(w.attempts)}</td><td>${ack}</td><td>${traceHtml(w.trace)}</td></tr>`;
  });
  const writesTable = `<table class="writes"><thead><tr><th>seq</th><th>write</th><th>op</th><th>invoke ms</th><th>complete ms</th><th>outcome</th><th>status</th><th>attempts</th><th>ack (node, epoch, version, revision, mode)</th><th>attempt trace (status · node · epoch · sent → ended ms)</th></tr></thead><tbody>
${rows.join('\n')}
</tbody></table>${total > writes.length ? `<p>${esc(total - writes.length)} earlier writes not shown.</p>` : ''}`;

  const t = typeof detail.ackMs === 'number' ? detail.ackMs : writes.find((w) => w.seq === namedSeq)?.complete_ms ?? null;
  let around = '';
  if (t !== null) {
    const from = t - FAULT_WINDOW_MS.before;
    const to = t + FAULT_WINDOW_MS.after;
    const list = db
      .prepare(
        `SELECT id, kind, nodes, start_ms, end_ms, caught_up_ms FROM faults
         WHERE start_ms <= ? AND (end_ms IS NULL OR end_ms >= ?) ORDER BY start_ms, id LIMIT 50`,
      )
      .all(to, from) as { id: number; kind: string; nodes: string; start_ms: number; end_ms: number | null; caught_up_ms: number | null }[];
    const window = `${esc(FAULT_WINDOW_MS.before / 1000)} s before to ${esc(FAULT_WINDOW_MS.after / 1000)} s after`;
    around = `<h4>Faults around the ack (t = ${esc(fmtMs(t))} ms, run time ${esc(fmtClock(t))}; ${window})</h4>${
      list.length === 0
        ? '<p>(none)</p>'
        : table(['fault', 'kind', 'nodes', 'start ms', 'end ms', 'caught up ms'], list.map((x) => [x.id, x.kind, nodeList(x.nodes), fmtMs(x.start_ms), x.end_ms === null ? 'never' : fmtMs(x.end_ms), fmtMs(x.caught_up_ms)]))
    }`;
    const changes = transitionsBetween(db, f.store, k.partition, from, to);
    around += `<h4>Runtime map of ${esc(f.store)}/${esc(k.partition)} around the ack (${window})</h4>${
      changes.length === 0 ? '<p>(no samples)</p>' : transitionTable(changes)
    }`;
  }
  const readText = read === undefined ? 'no final read recorded' : read.unreadable ? 'unreadable (the final read never succeeded)' : read.value === null ? 'absent' : read.value;
  const readAt = read?.t_ms === null || read?.t_ms === undefined ? '' : ` at ${esc(fmtMs(read.t_ms))} ms`;
  return `<p>partition ${esc(k.partition)}; final read: <b>${esc(readText)}</b>${readAt}; evidence: <code>${esc(detailText ?? '')}</code></p>
<p class="sub">Rows: <span class="named">the finding's write</span>, <span class="read">the write the final read returned</span>.</p>
${writesTable}
${around}`;
}

function classSection(cls: FindingClass): HtmlSection {
  return {
    id: `class-${cls}`,
    title: CLASS_TITLES[cls],
    render: ({ db, results: r }) => {
      const mine = r.findings.filter((f) => f.class === cls);
      const total = r.summary[cls];
      const help = `<p class="howto">${esc(CLASS_HELP[cls])}</p>`;
      if (total === 0) return `${help}\n<p>None.</p>`;
      const items = mine.map((f, i) => {
        const head = `${esc(f.kind)} — ${esc(f.store)}/${esc(f.key)} — ${esc(f.write)}`;
        return i < DRILL_DOWN_PER_CLASS ? `<details><summary>${head}</summary>\n${drillDown(db, f)}\n</details>` : `<div class="plain">${head}</div>`;
      });
      const more = total > mine.length ? `<p>${esc(total - mine.length)} more in the ledger's findings table.</p>` : '';
      const cut = mine.length > DRILL_DOWN_PER_CLASS ? ` The first ${DRILL_DOWN_PER_CLASS} open into the key's writes, the faults and runtime map around the ack, and the final read.` : ' Each opens into the key\'s writes, the faults and runtime map around the ack, and the final read.';
      return `${help}\n<p>${esc(total)} finding${total === 1 ? '' : 's'}.${cut}</p>\n${items.join('\n')}\n${more}`;
    },
  };
}

/**
 * The report's sections, in order: verdict (with how to read each class), run, counts, one per
 * class (violations first, then rf1, async-ack, beyond-budget, info), charts over time, the
 * fault timeline with failover times, the per-partition epoch history, client attempts by status.
 */
export const HTML_SECTIONS: HtmlSection[] = [
  verdictSection,
  runSection,
  countsSection,
  classSection('violation'),
  // the charts and the faults before the allowed losses, which can run to a thousand rows each
  chartsSection,
  faultTimelineSection,
  classSection('rf1'),
  classSection('async-ack'),
  classSection('beyond-budget'),
  classSection('info'),
  epochHistorySection,
  retriesSection,
];

const STYLE = `body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;max-width:1500px}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top}
th{background:#f3f3f3}table.num td{text-align:right}table.num td:first-child{text-align:left}
.banner{padding:.6em 1em;border-radius:6px;margin:.5em 0;color:#fff}.banner p{margin:.3em 0}
.b-CERTIFIED{background:#1e7b34}.b-FAILED{background:#b00020}.b-INCONCLUSIVE{background:#b86e00}
.verdict{font-size:2em;font-weight:bold}.exit{font-size:.5em;opacity:.85}.reason{font-size:1.2em;font-weight:bold}
.howto{color:#444;font-style:italic}
tr.named,span.named{background:#ffe3e3}tr.read,span.read{background:#e3f0ff}details{margin:.3em 0}summary{cursor:pointer}
pre,code{font:12px ui-monospace,monospace;white-space:pre-wrap}nav{position:sticky;top:0;background:#fff;padding:.3em 0;border-bottom:1px solid #ddd;z-index:10}nav a{margin-right:1em}
ol.trace{margin:0;padding-left:1.2em;font:12px ui-monospace,monospace}ul.fo{margin:0;padding-left:1.1em}.sub{color:#777;font-size:.85em}
.h-Healthy{color:#1e7b34}.h-Degraded,.h-Recovering{color:#b86e00;font-weight:bold}.h-Unavailable{color:#b00020;font-weight:bold}
.k{font-weight:bold;padding:0 .3em}.sw{display:inline-block;width:1.6em;height:.9em;margin:0 .3em 0 .8em;border:1px solid #bbb;vertical-align:middle}
section{scroll-margin-top:2.5em}td:first-child{white-space:nowrap}
.chart{margin:.4em 0 1em}.chart-info{font-size:12px;color:#444;min-height:1.3em}.nodata{color:#777}`;

/**
 * Renders the self-contained report.html (DESIGN.md §6): no external resource (the uPlot chart
 * library and its stylesheet are inlined), every string from the store or the ledger escaped
 * with escape-html. Sections come from `sections` (default {@link HTML_SECTIONS}); they share
 * one {@link ReportContext} (and its memo) per page. The per-class sections drill down into the
 * first {@link DRILL_DOWN_PER_CLASS} keys: the key's latest writes with attempts and readable
 * traces, the faults and runtime-map changes around the ack, the final read and the verifier's
 * evidence. A pure function of the ledger and the results (no clock): the same ledger and
 * results give the same bytes.
 * @throws Error when the uPlot package cannot be read (see uplotAssets).
 */
export function renderHtmlReport(db: Database.Database, results: Results, sections: readonly HtmlSection[] = HTML_SECTIONS): string {
  const ctx = reportContext(db, results);
  const nav = sections.map((s) => `<a href="#${esc(s.id)}">${esc(s.title.split(' (')[0])}</a>`).join('');
  const body = sections.map((s) => `<section id="${esc(s.id)}">\n<h2>${esc(s.title)}</h2>\n${s.render(ctx)}\n</section>`).join('\n');
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>zaris-certify: ${esc(results.verdict)}</title>
<style>${uplotAssets().css}</style>
<style>${STYLE}</style></head>
<body><h1>zaris-certify report</h1><nav>${nav}</nav>
${body}
</body></html>
`;
}

/**
 * Writes `<dir>/report.html` (rendered in full first, then a temporary file and a rename: never
 * half-written; the temporary file is removed when writing fails).
 * @returns the file's path.
 * @throws Error when rendering fails or the directory cannot be written.
 */
export function writeHtmlReport(db: Database.Database, results: Results, dir: string): string {
  const path = join(dir, 'report.html');
  const html = renderHtmlReport(db, results);
  try {
    writeFileSync(`${path}.tmp`, html);
    renameSync(`${path}.tmp`, path);
  } catch (e) {
    rmSync(`${path}.tmp`, { force: true });
    throw e;
  }
  return path;
}
