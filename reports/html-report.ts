import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import escapeHtml from 'escape-html';
import { META, writeId } from '../ledger/schema.js';
import type { FindingClass } from '../harness/verifier/verifier.js';
import type { ResultFinding, Results } from './results.js';

/** Keys drilled down per class section (the rest are listed without drill-down). */
export const DRILL_DOWN_PER_CLASS = 100;
/** Writes shown per drilled-down key (the latest ones, always including the named write). */
export const WRITES_PER_KEY = 40;
/** Faults shown around an ack: those overlapping [t - before, t + after] ms. */
export const FAULT_WINDOW_MS = { before: 10_000, after: 60_000 } as const;

/** What every section renders from: the ledger (read-only use) and the built results. */
export interface ReportContext {
  db: Database.Database;
  results: Results;
}

/**
 * One section of report.html. Sections are rendered in order, each into its own
 * `<section id="…">`; another engineer adds charts by adding entries to {@link HTML_SECTIONS}.
 * `render` returns HTML in which every string from the store or the ledger is escaped (use
 * {@link esc}).
 */
export interface HtmlSection {
  id: string;
  title: string;
  render(ctx: ReportContext): string;
}

/** Escapes any value for HTML text or a quoted attribute (escape-html); null/undefined -> ''. */
export function esc(v: unknown): string {
  return v === null || v === undefined ? '' : escapeHtml(String(v));
}

/** A table of escaped cells; no header row when every header is empty. */
function table(headers: readonly string[], rows: readonly (readonly unknown[])[]): string {
  const head = headers.every((h) => h === '') ? '' : `<thead><tr>${headers.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead>`;
  const body = rows.map((r) => `<tr>${r.map((c) => `<td>${esc(c)}</td>`).join('')}</tr>`).join('\n');
  return `<table>${head}<tbody>\n${body}\n</tbody></table>`;
}

function meta(db: Database.Database, key: string): string | null {
  const v = db.prepare('SELECT value FROM meta WHERE key = ?').pluck().get(key);
  return typeof v === 'string' ? v : null;
}

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

const verdictSection: HtmlSection = {
  id: 'verdict',
  title: 'Verdict',
  render: ({ results: r }) => {
    const reason = r.inconclusiveReason === undefined ? '' : `<p class="reason">${esc(r.inconclusiveReason)}</p>`;
    return `<p class="verdict v-${esc(r.verdict)}">${esc(r.verdict)} <span class="exit">exit code ${esc(r.exitCode)}</span></p>${reason}
${table(['class', 'findings'], Object.entries(r.summary))}`;
  },
};

const runSection: HtmlSection = {
  id: 'run',
  title: 'Run',
  render: ({ db, results: r }) => {
    const rows: [string, unknown][] = [
      ['runtime', r.runtime ?? '(not recorded)'],
      ['seed', r.seed ?? '(not recorded)'],
      ['started (UTC)', meta(db, META.startedAtUtc) ?? '(not recorded)'],
      ['duration', r.durationMs === null ? '(not recorded)' : `${r.durationMs} ms`],
      ['status', meta(db, META.status) ?? '(not recorded)'],
      ['schedule digest', r.scheduleDigest ?? '(not recorded)'],
    ];
    const config = meta(db, META.runConfig);
    const versions = meta(db, META.versions);
    return `${table(['', ''], rows)}
${config === null ? '' : `<h3>Run config</h3><pre>${esc(prettyJson(config))}</pre>`}
${versions === null ? '' : `<h3>Versions</h3><pre>${esc(prettyJson(versions))}</pre>`}`;
  },
};

const countsSection: HtmlSection = {
  id: 'counts',
  title: 'Counts',
  render: ({ results: r }) => {
    const f = r.failover;
    const retries = Object.entries(r.retries);
    return `${table(['attempted', 'acknowledged', 'failed', 'indeterminate'], [[r.counts.attempted, r.counts.acknowledged, r.counts.failed, r.counts.indeterminate]])}
<h3>Stores</h3>
${table(
  ['store', 'RF', 'ack mode', 'acknowledged', 'violation', 'rf1', 'async-ack', 'beyond-budget', 'info'],
  r.stores.map((s) => [s.name, s.replicationFactor, s.ackMode, s.acknowledged, s.summary.violation, s.summary.rf1, s.summary['async-ack'], s.summary['beyond-budget'], s.summary.info]),
)}
<h3>Faults</h3>
${table(Object.keys(r.faults), [Object.values(r.faults)])}
<h3>Failover (kill of an active owner to first acked write)</h3>
${table(['count', 'p50 ms', 'p95 ms', 'max ms'], [[f.count, f.p50Ms, f.p95Ms, f.maxMs]])}
<h3>Client attempts by status</h3>
${retries.length === 0 ? '<p>(no per-second statistics recorded)</p>' : table(['status', 'attempts'], retries)}`;
  },
};

interface KeyRow {
  key_id: number;
  partition: number;
}
interface WriteRow {
  seq: number;
  wid: string | null;
  op: string;
  invoke_ms: number;
  complete_ms: number | null;
  outcome: string | null;
  status: string | null;
  attempts: number | null;
  ack_node: string | null;
  ack_epoch: number | null;
  ack_version: number | null;
  ack_revision: number | null;
  ack_mode: string | null;
  trace: string | null;
}

function clip(text: string | null, max = 300): string {
  if (text === null) return '';
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

function drillDown(db: Database.Database, f: ResultFinding): string {
  const k = db.prepare('SELECT key_id, partition FROM keys WHERE store = ? AND key = ?').get(f.store, f.key) as KeyRow | undefined;
  if (k === undefined) return '<p>(key not in the ledger)</p>';
  const detailText = db.prepare('SELECT detail FROM findings WHERE store = ? AND key = ? LIMIT 1').pluck().get(f.store, f.key) as string | null | undefined;
  let detail: Record<string, unknown> = {};
  try {
    detail = detailText ? (JSON.parse(detailText) as Record<string, unknown>) : {};
  } catch {
    detail = {};
  }
  const namedSeq = typeof detail.seq === 'number' ? detail.seq : null;
  const read = db.prepare('SELECT value, value_seq, unreadable FROM final_reads WHERE key_id = ?').get(k.key_id) as
    | { value: string | null; value_seq: number | null; unreadable: number }
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
    return `<tr${cls}><td>${esc(w.seq)}</td><td>${esc(w.wid ?? writeId(k.key_id, w.seq))}</td><td>${esc(w.op)}</td><td>${esc(w.invoke_ms)}</td><td>${esc(w.complete_ms)}</td><td>${esc(w.outcome ?? 'in flight')}</td><td>${esc(w.status)}</td><td>${esc(w.attempts)}</td><td>${ack}</td><td><code>${esc(clip(w.trace))}</code></td></tr>`;
  });
  const writesTable = `<table><thead><tr><th>seq</th><th>write</th><th>op</th><th>invoke ms</th><th>complete ms</th><th>outcome</th><th>status</th><th>attempts</th><th>ack (node, epoch, version, revision, mode)</th><th>trace</th></tr></thead><tbody>
${rows.join('\n')}
</tbody></table>${total > writes.length ? `<p>${esc(total - writes.length)} earlier writes not shown.</p>` : ''}`;

  const t = typeof detail.ackMs === 'number' ? detail.ackMs : writes.find((w) => w.seq === namedSeq)?.complete_ms ?? null;
  let faults = '';
  if (t !== null) {
    const list = db
      .prepare(
        `SELECT id, kind, nodes, start_ms, end_ms, caught_up_ms FROM faults
         WHERE start_ms <= ? AND (end_ms IS NULL OR end_ms >= ?) ORDER BY start_ms, id LIMIT 50`,
      )
      .all(t + FAULT_WINDOW_MS.after, t - FAULT_WINDOW_MS.before) as { id: number; kind: string; nodes: string; start_ms: number; end_ms: number | null; caught_up_ms: number | null }[];
    faults = `<h4>Faults around the ack (t = ${esc(t)} ms)</h4>${
      list.length === 0
        ? '<p>(none)</p>'
        : table(['fault', 'kind', 'nodes', 'start ms', 'end ms', 'caught up ms'], list.map((x) => [x.id, x.kind, x.nodes, x.start_ms, x.end_ms ?? 'never', x.caught_up_ms ?? '']))
    }`;
  }
  const readText = read === undefined ? 'no final read recorded' : read.unreadable ? 'unreadable (the final read never succeeded)' : read.value === null ? 'absent' : read.value;
  return `<p>partition ${esc(k.partition)}; final read: <b>${esc(readText)}</b>; evidence: <code>${esc(detailText ?? '')}</code></p>
${writesTable}
${faults}`;
}

function classSection(cls: FindingClass): HtmlSection {
  return {
    id: `class-${cls}`,
    title: CLASS_TITLES[cls],
    render: ({ db, results: r }) => {
      const mine = r.findings.filter((f) => f.class === cls);
      const total = r.summary[cls];
      if (total === 0) return '<p>None.</p>';
      const items = mine.map((f, i) => {
        const head = `${esc(f.kind)} — ${esc(f.store)}/${esc(f.key)} — ${esc(f.write)}`;
        return i < DRILL_DOWN_PER_CLASS ? `<details><summary>${head}</summary>\n${drillDown(db, f)}\n</details>` : `<div class="plain">${head}</div>`;
      });
      const more = total > mine.length ? `<p>${esc(total - mine.length)} more in the ledger's findings table.</p>` : '';
      return `<p>${esc(total)} finding${total === 1 ? '' : 's'}.</p>\n${items.join('\n')}\n${more}`;
    },
  };
}

const faultsSection: HtmlSection = {
  id: 'faults',
  title: 'Fault timeline',
  render: ({ db }) => {
    const list = db.prepare('SELECT id, kind, nodes, target, start_ms, end_ms, caught_up_ms FROM faults ORDER BY start_ms, id LIMIT 1000').all() as {
      id: number; kind: string; nodes: string; target: string | null; start_ms: number; end_ms: number | null; caught_up_ms: number | null;
    }[];
    if (list.length === 0) return '<p>No fault was injected.</p>';
    return table(['fault', 'kind', 'nodes', 'target', 'start ms', 'end ms', 'caught up ms'], list.map((f) => [f.id, f.kind, f.nodes, f.target ?? '', f.start_ms, f.end_ms ?? 'never', f.caught_up_ms ?? '']));
  },
};

/** The report's sections, in order: verdict, run, counts, one per class (violations first), faults. */
export const HTML_SECTIONS: HtmlSection[] = [
  verdictSection,
  runSection,
  countsSection,
  classSection('violation'),
  classSection('rf1'),
  classSection('async-ack'),
  classSection('beyond-budget'),
  classSection('info'),
  faultsSection,
];

const STYLE = `body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top}
th{background:#f3f3f3}.verdict{font-size:2em;font-weight:bold}.v-CERTIFIED{color:#176f2c}.v-FAILED{color:#b00020}
.v-INCONCLUSIVE{color:#a15c00}.exit{font-size:.5em;color:#666}.reason{font-weight:bold}
tr.named{background:#ffe3e3}tr.read{background:#e3f0ff}details{margin:.3em 0}summary{cursor:pointer}
pre,code{font:12px ui-monospace,monospace;white-space:pre-wrap}nav a{margin-right:1em}`;

/**
 * Renders the self-contained report.html (DESIGN.md §6): no external resource, every string from
 * the store or the ledger escaped with escape-html. Sections come from `sections` (default
 * {@link HTML_SECTIONS}); the per-class sections drill down into the first
 * {@link DRILL_DOWN_PER_CLASS} keys: the key's latest writes with attempts and trace, the faults
 * around the ack, the final read and the verifier's evidence. Pure function of the ledger and
 * the results.
 */
export function renderHtmlReport(db: Database.Database, results: Results, sections: readonly HtmlSection[] = HTML_SECTIONS): string {
  const nav = sections.map((s) => `<a href="#${esc(s.id)}">${esc(s.title.split(' (')[0])}</a>`).join('');
  const body = sections.map((s) => `<section id="${esc(s.id)}">\n<h2>${esc(s.title)}</h2>\n${s.render({ db, results })}\n</section>`).join('\n');
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>zaris-certify: ${esc(results.verdict)}</title>
<style>${STYLE}</style></head>
<body><h1>zaris-certify report</h1><nav>${nav}</nav>
${body}
</body></html>
`;
}

/**
 * Writes `<dir>/report.html` (temporary file, then rename).
 * @returns the file's path.
 */
export function writeHtmlReport(db: Database.Database, results: Results, dir: string): string {
  const path = join(dir, 'report.html');
  writeFileSync(`${path}.tmp`, renderHtmlReport(db, results));
  renameSync(`${path}.tmp`, path);
  return path;
}
