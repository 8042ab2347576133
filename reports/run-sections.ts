import { META } from '../ledger/schema.js';
import type { HtmlSection } from './html-kit.js';
import { esc, fmtClock, fmtMs, htmlTable, metaValue, parseJson } from './html-kit.js';
import { describeReadback } from '../harness/targets/final-readback.js';
import type { Results } from './results.js';

/**
 * The report's run and counts sections (DESIGN.md §6): what ran (target, runtime, seed, the
 * run's config and versions) and what it did (writes, stores, faults, membership changes, the
 * store nodes' counters, admin requests).
 */

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

/** The workload client's options as a line: each option, and which ZARIS_* variables set them. */
function clientOptionsText(v: unknown): string {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return JSON.stringify(v);
  return Object.entries(v as Record<string, unknown>)
    .map(([k, x]) => `${k}: ${typeof x === 'object' ? JSON.stringify(x) : String(x)}`)
    .join('; ');
}

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
  add('spare nodes (outside the member set at start)', c.spares, (x) => (Array.isArray(x) ? (x.length === 0 ? '(none)' : x.join(', ')) : x));
  add('past the fault budget', c.beyondBudget, (x) => (x === true ? 'yes' : x === false ? 'no' : x));
  add('escalation timeout', c.escalationTimeoutMs, (x) => `${String(x)} ms`);
  add('client options', c.clientOptions, (x) => clientOptionsText(x));
  add('replay of', c.replay);
  add('self-test bug (BUG=)', c.selfTestBug);
  return rows.map(([k, v]) => [k, typeof v === 'object' ? JSON.stringify(v) : v]);
}

/** The run: target, runtime and why, seed, times, config, rules, versions. */
export const runSection: HtmlSection = {
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
      ...(r.target ? ([['target', r.target.name], ['target version', r.target.version], ['client library', r.target.clientLibrary]] as [string, unknown][]) : []),
      ['runtime', r.runtime ?? '(not recorded)'],
      ['why this runtime', reason],
      ['seed', r.seed ?? '(not recorded)'],
      ['started (UTC)', meta(db, META.startedAtUtc) ?? '(not recorded)'],
      ['fault phase', r.durationMs === null ? '(not recorded)' : `${fmtClock(r.durationMs)} (${r.durationMs} ms)`],
      ...configRows(config),
      ['cluster up in', typeof upMs === 'number' ? `${fmtMs(upMs)} ms` : '(not recorded)'],
      ['status', meta(db, META.status) ?? '(not recorded)'],
      ['rules', `${r.rules} (shared/cases/history-format.md)`],
      ['reads checked', r.readsChecked],
      ['schedule digest', r.scheduleDigest ?? '(not recorded)'],
      ...versionRows,
    ];
    return `${table(['', ''], rows)}
${configText === null ? '' : `<details><summary>Run config (JSON)</summary><pre>${esc(prettyJson(configText))}</pre></details>`}`;
  },
};

/** Writes by outcome, the stores' findings, faults by kind, membership and admin requests. */
export const countsSection: HtmlSection = {
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
${table(Object.keys(r.faults), [Object.values(r.faults)], 'num')}${adminHtml(r)}${scopeHtml(r)}`;
  },
};

/**
 * The admin requests and membership changes (issue 14): the run's totals of migrations and
 * Migrating answers (the nodes' counters), then every admin request the nemesis made, in time order.
 * Empty when the run made none and sampled no counter.
 */
/**
 * A stream target's whole-store final read (counts, duplicates, each node's copy) and what the
 * run tested and could not test (the target's scope). Empty for a run with neither.
 */
export function scopeHtml(r: Results): string {
  const out: string[] = [];
  if (r.readback) out.push(`<h3>Final read of the whole store</h3>\n<p>${esc(describeReadback(r.readback))}</p>`);
  if (r.scope) {
    const list = (xs: string[]): string => `<ul>${xs.map((x) => `<li>${esc(x)}</li>`).join('')}</ul>`;
    out.push(`<h3>What this run tested</h3>\n${list(r.scope.tested)}\n<h3>What it could not test</h3>\n${list(r.scope.notTested)}`);
  }
  return out.length === 0 ? '' : `\n${out.join('\n')}`;
}

function adminHtml(r: Results): string {
  const out: string[] = [];
  const n = (v: number | null | undefined): string | number => (v === null || v === undefined ? 'not exported' : v);
  if (r.membership) {
    const m = r.membership;
    out.push(`<h3>Membership changes</h3>
<p>${m.joins} join${m.joins === 1 ? '' : 's'}, ${m.leaves} leave${m.leaves === 1 ? '' : 's'}, ${m.rebalances} rebalance${m.rebalances === 1 ? '' : 's'}: ${typeof m.migrations === 'number' ? `${m.migrations} partition move${m.migrations === 1 ? '' : 's'} (migrations)` : 'migrations not exported by the nodes'}, ${typeof m.migratingAnswers === 'number' ? `${m.migratingAnswers} Migrating answer${m.migratingAnswers === 1 ? '' : 's'}` : 'Migrating answers not sampled'}. A move is no fault: no loss is excused because of one.</p>`);
  }
  if (r.nodeCounters) {
    const c = r.nodeCounters;
    out.push(`<h3>Store node counters (run totals)</h3>
${table(['failovers', 'promotions', 'stale-epoch refusals', 'Migrating answers', 'migrations', 'invalid multi-key policy values'], [[n(c.failovers), n(c.promotions), n(c.staleEpochRefusals), n(c.migratingAnswers), n(c.migrations), n(c.invalidPolicyValues)]], 'num')}`);
  }
  if (r.adminRequests && r.adminRequests.length > 0) {
    out.push(`<h3>Admin requests</h3>
${table(['t', 'request', 'node', 'step', 'answer'], r.adminRequests.map((a) => [fmtClock(a.tMs), a.command, a.node ?? '-', a.step ?? '-', `${a.status}: ${a.message}`]))}`);
  }
  return out.length === 0 ? '' : `\n${out.join('\n')}`;
}

