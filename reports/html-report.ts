import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { META, writeId } from '../ledger/schema.js';
import type { FindingClass, FindingKind } from '../harness/verifier/verifier.js';
import { PARTITION_FINDING_KINDS, READ_FINDING_KINDS } from '../ledger/history-rules.js';
import { traceHtml } from './attempt-trace.js';
import { uplotAssets } from './chart-script.js';
import { transitionsBetween } from './epoch-history.js';
import type { HtmlSection } from './html-kit.js';
import { esc, fmtClock, fmtMs, htmlTable, metaValue, nodeList, parseJson, reportContext } from './html-kit.js';
import type { ResultFinding, Results } from './results.js';
import { firstViolationSentence, type Incident } from './incidents.js';
import { stallText } from '../harness/verifier/stalls.js';
import { contractSection } from './contract-section.js';
import { chartsSection, epochHistorySection, faultTimelineSection, retriesSection, transitionTable } from './timeline-sections.js';
import type { WritesRow } from '../ledger/schema.js';
import { KeyLogReader } from '../ledger/key-log.js';

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
    'An acknowledged write is missing from the final read (lost) and no allowance below explains it, or the final read holds a value never written (unexpected) or of a write that definitely failed (phantom), a sync ack at RF > 1 named fewer than two copies (under-replicated-ack), an ack came from a node that was not the active of its epoch (ack-not-from-active), acknowledged versions went backwards (version regression); or a read during the run, or the runtime map itself, broke the rules (their own sections below): a bug in the store.',
  rf1: 'A lost acknowledged write of a store with replication factor 1 whose holding node crashed (kill or stop) after the ack: the only copy was in memory. Allowed by the contract.',
  'async-ack':
    "A lost write of an async store whose owner crashed, or lost the partition to another node at a higher epoch, before the node that took over held it, with replication disrupted by a fault within the lag bound after the ack, the owner touched by a fault before the takeover, within its lease and not already deposed. Allowed by the contract (the async-acknowledgement window); each names the fault and the node that took over.",
  'beyond-budget':
    'A lost write whose partition had every replica down (crashed, or restarted and not yet back in sync) or out of the in-sync set at the ack, at one instant after the ack; allowed only in a run whose nemesis may go past the fault budget.',
  info: 'Not losses: indeterminate writes (timed out, transport failure) whose value the final read found (recovered), and keys that could not be verified (unverified).',
};

const VERDICT_TEXT: Readonly<Record<string, string>> = {
  CERTIFIED: 'No acknowledged write was lost beyond what the store\'s contract allows, every key was verified, and faults were really injected.',
  FAILED: 'At least one violation: an acknowledged write lost, or a value that should not exist. See Violations below.',
  INCONCLUSIVE: 'No violation was found, but the run cannot certify the store.',
};

/** The availability line of the banner (issue 11): stalls fail it, apart from the durability verdict. */
function availabilityHtml(r: Results): string {
  const a = r.availability;
  if (a === undefined || !a.measured) return '';
  if (a.stalls.length === 0) return `<p>Availability OK: no node silent and no partition Unavailable longer than ${esc(fmtMs(a.boundMs))} ms with no fault touching it.</p>`;
  return `<p class="reason"><a href="#stalls">Availability FAILED: ${esc(a.stalls.length)} stall${a.stalls.length === 1 ? '' : 's'}; the first: ${esc(stallText(a.stalls[0]))}.</a></p>`;
}

const verdictSection: HtmlSection = {
  id: 'verdict',
  title: 'Verdict',
  render: ({ db, results: r }) => {
    const shrunkText = metaValue(db, META.shrunk);
    let shrunk = '';
    if (shrunkText !== null) {
      try {
        const sh = JSON.parse(shrunkText) as { file: string; faults: string[]; replays: number };
        shrunk = `<p class="reason">Shrunk by make shrink (${esc(sh.replays)} replays) to ${esc(sh.faults.length)} fault${sh.faults.length === 1 ? '' : 's'} (${esc(sh.faults.join('; '))}): scenario <code>${esc(sh.file)}</code></p>`;
      } catch {
        shrunk = '';
      }
    }
    const reason = r.inconclusiveReason === undefined ? '' : `<p class="reason">Why inconclusive: ${esc(r.inconclusiveReason)}</p>`;
    // a self-test run (BUG=, issue 12): the store was broken on purpose, said where the verdict is read
    const bug = r.selfTestBug === undefined ? '' : `<p class="reason">Self-test run: the store ran with the deliberate bug ${esc(r.selfTestBug)} (BUG=${esc(r.selfTestBug)}); the verdict must be FAILED</p>`;
    const sc = r.scenario;
    const expected = sc ? `${sc.expected.verdict}${sc.expected.allow === undefined ? '' : sc.expected.allow.length === 0 ? ' (no allowed losses)' : ` (allow ${sc.expected.allow.join(', ')})`}` : '';
    const scenario = sc
      ? `<p class="reason">Scenario <b>${esc(sc.name)}</b> (${esc(sc.file)}) expected ${esc(expected)}: ${sc.held ? '<b>held</b>' : `<b>did not hold</b>: ${esc(sc.reasons.join('; '))}`}</p>`
      : '';
    const first = firstViolationSentence(r.incidents ?? []);
    const firstHtml = first === null ? '' : `<p class="reason"><a href="#incident-${esc(r.incidents.find((i) => (i.classes.violation ?? 0) > 0)?.id)}">${esc(first)}</a></p>`;
    const rows = (Object.keys(CLASS_HELP) as FindingClass[]).map((c) => [{ html: `<a href="#class-${esc(c)}">${esc(c)}</a>` }, r.summary[c], CLASS_HELP[c]]);
    return `<div class="banner b-${esc(r.verdict)}"><p class="verdict">${esc(r.verdict)} <span class="exit">exit code ${esc(r.exitCode)}</span></p>
<p>${esc(VERDICT_TEXT[r.verdict] ?? '')}</p>${firstHtml}${reason}${bug}${scenario}${shrunk}${availabilityHtml(r)}</div>
<h3>Findings by class: how to read this report</h3>
${table(['class', 'findings', 'what it means'], rows)}`;
  },
};

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
${table(Object.keys(r.faults), [Object.values(r.faults)], 'num')}${adminHtml(r)}`;
  },
};

/**
 * The admin requests and membership changes (issue 14): the run's totals of migrations and
 * Migrating answers (the nodes' counters), then every admin request the nemesis made, in time order.
 * Empty when the run made none and sampled no counter.
 */
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

interface KeyRow {
  key_id: number;
  partition: number;
}
type WriteRow = Omit<WritesRow, 'key_id'>;

/**
 * The evidence (findings.detail) of a key's own finding (not a read's), for the keys the report
 * drills into: the first 100 incidents' examples and the first 100 key findings of each class.
 * Those are looked up in one pass over the findings table, on the first question, instead of one
 * scan of it per drill-down (the table has no index by key, and a long run's holds hundreds of
 * thousands of rows); the first row (rowid order) of a key wins, as the point query
 * `SELECT detail FROM findings WHERE store = ? AND key = ? AND read IS NULL LIMIT 1` answers. A
 * key outside that set is asked with that query.
 */
export class DrillDetails {
  private found: Map<string, string | null> | null = null;
  private wanted: Set<string> | null = null;
  private readonly one: Database.Statement;

  constructor(
    private readonly db: Database.Database,
    private readonly results: Results,
  ) {
    this.one = db.prepare('SELECT detail FROM findings WHERE store = ? AND key = ? AND read IS NULL LIMIT 1').pluck();
  }

  /** The detail text of the key's first own finding; undefined when it has none. */
  get(store: string, key: string | null): string | null | undefined {
    const id = `${store}\u0000${key}`;
    const found = (this.found ??= this.load());
    if (found.has(id)) return found.get(id);
    if (this.wanted!.has(id)) return undefined;
    return this.one.get(store, key) as string | null | undefined;
  }

  private load(): Map<string, string | null> {
    const wanted = (this.wanted = drilledKeys(this.results));
    const found = new Map<string, string | null>();
    if (wanted.size === 0) return found;
    const rows = this.db.prepare('SELECT store, key, detail FROM findings WHERE read IS NULL AND key IS NOT NULL ORDER BY rowid').raw(true);
    for (const [store, key, detail] of rows.iterate() as IterableIterator<[string, string, string | null]>) {
      const id = `${store}\u0000${key}`;
      if (!wanted.has(id) || found.has(id)) continue;
      found.set(id, detail);
      if (found.size === wanted.size) break;
    }
    return found;
  }
}

/** `store\0key` of every key the report drills into (see {@link DrillDetails}). */
function drilledKeys(r: Results): Set<string> {
  const set = new Set<string>();
  for (const inc of (r.incidents ?? []).slice(0, INCIDENTS_DRILLED)) if (inc.example.key !== null) set.add(`${inc.store}\u0000${inc.example.key}`);
  const perClass = new Map<FindingClass, number>();
  for (const f of r.findings) {
    if (!isKeyFinding(f)) continue;
    const n = perClass.get(f.class) ?? 0;
    if (n >= DRILL_DOWN_PER_CLASS) continue;
    perClass.set(f.class, n + 1);
    set.add(`${f.store}\u0000${f.key}`);
  }
  return set;
}

function drillDown(db: Database.Database, f: ResultFinding, keyLog: KeyLogReader, details: DrillDetails): string {
  const k = db.prepare('SELECT key_id, partition FROM keys WHERE store = ? AND key = ?').get(f.store, f.key) as KeyRow | undefined;
  if (k === undefined) return '<p>(key not in the ledger)</p>';
  const detailText = details.get(f.store, f.key);
  const parsed = parseJson(detailText);
  const detail: Record<string, unknown> = parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  const namedSeq = typeof detail.seq === 'number' ? detail.seq : null;
  const read = db.prepare('SELECT value, value_seq, unreadable, t_ms FROM final_reads WHERE key_id = ?').get(k.key_id) as
    | { value: string | null; value_seq: number | null; unreadable: number; t_ms: number | null }
    | undefined;

  const all = keyLog.writes(k.key_id);
  const writes: WriteRow[] = all.slice(-WRITES_PER_KEY);
  if (namedSeq !== null && !writes.some((w) => w.seq === namedSeq)) {
    const named = all.find((w) => w.seq === namedSeq);
    if (named !== undefined) writes.unshift(named);
  }
  const total = all.length;
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
  const story = evidenceText(f.class, f.kind, detail);
  return `<p>partition ${esc(k.partition)}; final read: <b>${esc(readText)}</b>${readAt}${story === '' ? '' : `</p>\n<p class="story">${esc(story)}`}</p>
<p class="sub">evidence: <code>${esc(detailText ?? '')}</code></p>
<p class="sub">Rows: <span class="named">the finding's write</span>, <span class="read">the write the final read returned</span>.</p>
${writesTable}
${around}`;
}

/** A loss's (or key violation's) evidence in one sentence: what happened, by the rules. */
export function evidenceText(cls: FindingClass, kind: string, d: Record<string, unknown>): string {
  const ms = (v: unknown): string => (typeof v === 'number' ? `${fmtMs(v)} ms` : '?');
  const fault = (name: unknown, kindText: unknown, nodes: unknown): string =>
    `fault ${String(name)}${typeof kindText === 'string' ? ` (${kindText}${Array.isArray(nodes) ? ` of ${nodes.join(', ')}` : ''})` : ''}`;
  if (kind !== 'lost') {
    if (kind === 'under-replicated-ack') return `acknowledged by ${String(d.ackNode)} with ${String(d.copies)} cop${d.copies === 1 ? 'y' : 'ies'} (a sync ack at RF > 1 needs at least 2)`;
    if (kind === 'ack-not-from-active') return `acknowledged by ${String(d.ackNode)} at epoch ${String(d.ackEpoch)}, whose active the runtime map showed as ${Array.isArray(d.activesAtEpoch) ? d.activesAtEpoch.join(' and ') : '?'}`;
    return '';
  }
  const ack = `acknowledged by ${String(d.ackNode)} at epoch ${String(d.ackEpoch)}, revision ${String(d.ackRevision)}, at ${ms(d.ackMs)}`;
  switch (cls) {
    case 'rf1':
      return `${ack}; its only copy's node ${String(d.crashedNode)} crashed at ${ms(d.crashMs)} (fault ${String(d.fault)})`;
    case 'async-ack': {
      const takeover =
        d.crashedNode !== undefined
          ? `its owner ${String(d.crashedNode)} crashed at ${ms(d.crashMs)} (fault ${String(d.fault)})${d.takeoverNode !== undefined ? ` and ${String(d.takeoverNode)} took over` : ''}`
          : `${d.takeoverNode !== undefined ? String(d.takeoverNode) : 'another node'} took over at a higher epoch at ${ms(d.takeoverMs ?? d.epochChangeMs)}`;
      const disrupted = d.disruptedBy !== undefined ? `; replication was disrupted by ${fault(d.disruptedBy, d.disruptedByKind, d.disruptedNodes)}` : '';
      return `${ack}; ${takeover} before it was replicated${disrupted}`;
    }
    case 'beyond-budget':
      return `${ack}; every replica was down${Array.isArray(d.outOfSync) && d.outOfSync.length > 0 ? ` or out of sync (${d.outOfSync.join(', ')})` : ''} at ${ms(d.allDownMs)}`;
    default:
      return `${ack}; no allowance applies${typeof d.why === 'string' ? `: ${d.why}` : ''}`;
  }
}

const INCIDENTS_HELP =
  'Every finding (all classes) grouped by what lost it: its store and partition, and the crash or ownership change after which the writes were missing (read findings: the ownership change that put the partition at the epoch the read saw; acks that are no loss: the node and epoch that acknowledged; runtime-map findings: their kind). One line each: the findings, the cause, the window of the lost acks, the last fault before it, the runtime-map transition. Each opens into one key of it.';

/** Incidents drilled down (the rest are listed as lines). */
export const INCIDENTS_DRILLED = 100;

function incidentDrill(db: Database.Database, inc: Incident, keyLog: KeyLogReader, details: DrillDetails): string {
  const e = inc.example;
  if (e.key === null) {
    const d = db.prepare('SELECT detail FROM findings WHERE kind = ? AND store = ? AND partition IS ? AND key IS NULL LIMIT 1').pluck().get(e.kind, inc.store, inc.partition) as string | undefined;
    return `<p class="story">${esc(partitionEvidenceText(e.kind, (parseJson(d) ?? {}) as Record<string, unknown>))}</p>`;
  }
  const f: ResultFinding = { class: e.class, kind: e.kind, store: inc.store, key: e.key, write: e.write };
  return `<p>Key ${esc(inc.store)}/${esc(e.key)} (${esc(e.kind)}, ${esc(e.class)}${e.read === undefined ? '' : `, read ${esc(e.read)}`}):</p>\n${drillDown(db, f, keyLog, details)}`;
}

const incidentsSection: HtmlSection = {
  id: 'incidents',
  title: 'Incidents (findings grouped by what lost them)',
  render: ({ db, results: r, memo }) => {
    const list = r.incidents ?? [];
    const help = `<p class="howto">${esc(INCIDENTS_HELP)}</p>`;
    if (list.length === 0) return `${help}\n<p>None.</p>`;
    const keyLog = memo('key-log', () => new KeyLogReader(db));
    const details = memo('drill-details', () => new DrillDetails(db, r));
    const items = list.map((inc, i) => {
      const head = `<span class="c-${esc(inc.class)}">${esc(inc.line)}</span>`;
      return i < INCIDENTS_DRILLED
        ? `<details id="incident-${esc(inc.id)}"><summary>${head}</summary>\n${incidentDrill(db, inc, keyLog, details)}\n</details>`
        : `<div class="plain" id="incident-${esc(inc.id)}">${head}</div>`;
    });
    return `${help}\n<p>${esc(list.length)} incident${list.length === 1 ? '' : 's'} of ${esc(list.reduce((n, i) => n + i.count, 0))} findings.</p>\n${items.join('\n')}`;
  },
};

const READ_KINDS: ReadonlySet<string> = new Set(READ_FINDING_KINDS);
const PARTITION_KINDS: ReadonlySet<string> = new Set(PARTITION_FINDING_KINDS);
/** A key's own finding (not a read's, not the runtime map's). */
const isKeyFinding = (f: ResultFinding): boolean => !READ_KINDS.has(f.kind) && !PARTITION_KINDS.has(f.kind);

function kindTotal(r: Results, kinds: ReadonlySet<string>): number {
  let n = 0;
  for (const [k, v] of Object.entries(r.kinds ?? {})) if (kinds.has(k)) n += v;
  return n;
}

/** Rows of the findings table of some kinds, with their evidence (at most `limit`). */
function findingRows(db: Database.Database, kinds: ReadonlySet<string>, limit: number): Array<{ kind: FindingKind; store: string; key: string | null; write: string | null; partition: number | null; read: string | null; detail: string | null }> {
  const list = [...kinds];
  return db
    .prepare(`SELECT kind, store, key, write, partition, read, detail FROM findings WHERE kind IN (${list.map(() => '?').join(', ')}) ORDER BY store, partition, length(key), key, kind LIMIT ?`)
    .all(...list, limit) as Array<{ kind: FindingKind; store: string; key: string | null; write: string | null; partition: number | null; read: string | null; detail: string | null }>;
}

const READ_HELP =
  'Reads the workload made during the run, checked against the writes (history-format.md v2): a read that returned a value older than a write acknowledged before the read began while that write survived (stale-read), a value of a write that definitely failed (phantom-read), or a value never written (unexpected-read). At most one per key, the earliest.';

const readFindingsSection: HtmlSection = {
  id: 'reads',
  title: 'Read findings (violations: stale, phantom and unexpected reads)',
  render: ({ db, results: r }) => {
    const total = kindTotal(r, READ_KINDS);
    const help = `<p class="howto">${esc(READ_HELP)} ${esc(r.readsChecked)} reads checked.</p>`;
    if (total === 0) return `${help}\n<p>None.</p>`;
    const rows = findingRows(db, READ_KINDS, DRILL_DOWN_PER_CLASS).map((f) => {
      const d = (parseJson(f.detail) ?? {}) as Record<string, unknown>;
      const final = db.prepare('SELECT fr.value, fr.unreadable FROM final_reads fr JOIN keys k ON k.key_id = fr.key_id WHERE k.store = ? AND k.key = ?').get(f.store, f.key) as
        | { value: string | null; unreadable: number }
        | undefined;
      const finalText = final === undefined ? '(none)' : final.unreadable ? 'unreadable' : (final.value ?? 'absent');
      return [f.kind, `${f.store}/${f.key ?? ''}`, f.read ?? '', fmtMs(d.invokeMs), fmtMs(d.completeMs), d.node ?? '', f.write ?? 'absent', d.w ?? '', finalText];
    });
    const more = total > rows.length ? `<p>${esc(total - rows.length)} more in the ledger's findings table.</p>` : '';
    return `${help}
<p>${esc(total)} read finding${total === 1 ? '' : 's'}.</p>
${table(['kind', 'key', 'read', 'invoke ms', 'complete ms', 'node', 'value read', 'acknowledged before the read (W)', 'final read'], rows)}
${more}`;
  },
};

const PARTITION_HELP =
  'The runtime map judged (history-format.md v2): two actives at one epoch (epoch-conflict), an epoch going back in one node\'s own entry (epoch-regression), Healthy while a replica is out of the in-sync set (false-healthy), an async replica left behind longer than the lag bound with nothing in the way (replication-lag). At most one per partition and kind.';

/** A partition finding's evidence in one sentence. */
export function partitionEvidenceText(kind: string, d: Record<string, unknown>): string {
  const ms = (v: unknown): string => (typeof v === 'number' ? `${fmtMs(v)} ms` : '?');
  const list = (v: unknown): string => (Array.isArray(v) ? v.join(', ') : '?');
  switch (kind) {
    case 'epoch-conflict':
      return `epoch ${String(d.epoch)} had the actives ${list(d.actives)} (seen at ${ms(d.tMs)})`;
    case 'epoch-regression':
      return `node ${String(d.node)}'s own entry went from epoch ${String(d.fromEpoch)} back to ${String(d.toEpoch)} at ${ms(d.tMs)}`;
    case 'false-healthy':
      return `Healthy at ${ms(d.tMs)}${d.node ? ` (in ${String(d.node)}'s entry)` : ''} with in-sync set [${list(d.inSync)}], missing ${list(d.missing)}`;
    case 'replication-lag':
      return `at ${ms(d.tMs)} the in-sync member ${String(d.member)} held revision ${String(d.revision)} while the active ${String(d.active)} (epoch ${String(d.epoch)}) had held ${String(d.activeRevision)} since ${ms(d.referenceMs)}, with no fault in the ${String(d.lagMs)} ms before`;
    default:
      return '';
  }
}

const runtimeMapSection: HtmlSection = {
  id: 'runtime-map',
  title: 'Runtime-map findings (violations: epoch conflicts and regressions, false Healthy, replication lag)',
  render: ({ db, results: r }) => {
    const total = kindTotal(r, PARTITION_KINDS);
    const help = `<p class="howto">${esc(PARTITION_HELP)}${r.asyncLagMaxMs === null ? '' : ` Lag bound: ${esc(r.asyncLagMaxMs)} ms.`}</p>`;
    if (total === 0) return `${help}\n<p>None.</p>`;
    const rows = findingRows(db, PARTITION_KINDS, 1_000).map((f) => [f.kind, `${f.store}/${f.partition ?? '?'}`, partitionEvidenceText(f.kind, (parseJson(f.detail) ?? {}) as Record<string, unknown>)]);
    return `${help}
<p>${esc(total)} runtime-map finding${total === 1 ? '' : 's'}.</p>
${table(['kind', 'partition', 'evidence'], rows)}`;
  },
};

function classSection(cls: FindingClass): HtmlSection {
  return {
    id: `class-${cls}`,
    title: CLASS_TITLES[cls],
    render: ({ db, results: r, memo }) => {
      const keyLog = memo('key-log', () => new KeyLogReader(db));
      const details = memo('drill-details', () => new DrillDetails(db, r));
      // the violations section lists the keys' own findings; reads and the runtime map have theirs
      const mine = r.findings.filter((f) => f.class === cls && isKeyFinding(f));
      const total = cls === 'violation' ? r.summary[cls] - kindTotal(r, READ_KINDS) - kindTotal(r, PARTITION_KINDS) : r.summary[cls];
      const help = `<p class="howto">${esc(CLASS_HELP[cls])}</p>`;
      const other = cls === 'violation' && total < r.summary[cls] ? `<p>Read and runtime-map violations: see <a href="#reads">Read findings</a> and <a href="#runtime-map">Runtime-map findings</a>.</p>` : '';
      if (total === 0) return `${help}\n<p>None${cls === 'violation' ? " among the keys' own findings" : ''}.</p>${other}`;
      const items = mine.map((f, i) => {
        const head = `${esc(f.kind)} — ${esc(f.store)}/${esc(f.key)} — ${esc(f.write)}`;
        return i < DRILL_DOWN_PER_CLASS ? `<details><summary>${head}</summary>\n${drillDown(db, f, keyLog, details)}\n</details>` : `<div class="plain">${head}</div>`;
      });
      const more = total > mine.length ? `<p>${esc(total - mine.length)} more in the ledger's findings table.</p>` : '';
      const cut = mine.length > DRILL_DOWN_PER_CLASS ? ` The first ${DRILL_DOWN_PER_CLASS} open into the key's writes, the faults and runtime map around the ack, and the final read.` : ' Each opens into the key\'s writes, the faults and runtime map around the ack, and the final read.';
      return `${help}\n<p>${esc(total)} finding${total === 1 ? '' : 's'}.${cut}</p>\n${items.join('\n')}\n${more}${other}`;
    },
  };
}

/**
 * The report's sections, in order: verdict (with how to read each class), incidents, run, contract judged, counts, one per
 * class (violations first, then rf1, async-ack, beyond-budget, info), charts over time, the
 * fault timeline with failover times, the per-partition epoch history, client attempts by status.
 */
export const HTML_SECTIONS: HtmlSection[] = [
  verdictSection,
  incidentsSection,
  runSection,
  contractSection,
  countsSection,
  classSection('violation'),
  readFindingsSection,
  runtimeMapSection,
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
.story{font-weight:bold}.c-violation{color:#b00020;font-weight:bold}.chart{margin:.4em 0 1em}.chart-info{font-size:12px;color:#444;min-height:1.3em}.nodata{color:#777}`;

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
<html lang="en"><head><meta charset="utf-8"><title>zaris-certify: ${esc(results.target ? `${results.target.name}: ` : '')}${esc(results.verdict)}</title>
<style>${uplotAssets().css}</style>
<style>${STYLE}</style></head>
<body><h1>zaris-certify report${results.target ? `: ${esc(results.target.version)}` : ''}</h1><nav>${nav}</nav>
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
