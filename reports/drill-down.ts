import type Database from 'better-sqlite3';
import type { FindingClass } from '../harness/verifier/verifier.js';
import { FINDING_CLASSES } from '../ledger/history-findings.js';
import type { KeyLogReader } from '../ledger/key-log.js';
import type { WritesRow } from '../ledger/schema.js';
import { writeId } from '../ledger/schema.js';
import { traceHtml } from './attempt-trace.js';
import { transitionsBetween } from './epoch-history.js';
import { classGroups, INCIDENTS_DRILLED } from './finding-groups.js';
import { esc, fmtClock, fmtMs, htmlTable, nodeList, parseJson } from './html-kit.js';
import type { ResultFinding, Results } from './results.js';
import { transitionTable } from './timeline-sections.js';

/**
 * The report's per-key drill-down (DESIGN.md §6): the key's writes with attempts, the faults and
 * runtime map around the ack, the final read, and the verifier's evidence in one sentence.
 */

/** Writes shown per drilled-down key (the latest ones, always including the named write). */
export const WRITES_PER_KEY = 40;
/** Faults shown around an ack: those overlapping [t - before, t + after] ms. */
export const FAULT_WINDOW_MS = { before: 10_000, after: 60_000 } as const;

const table = htmlTable;

interface KeyRow {
  key_id: number;
  partition: number;
}
type WriteRow = Omit<WritesRow, 'key_id'>;

/**
 * The evidence (findings.detail) of a key's own finding (not a read's), for the keys the report
 * drills into: the first 100 incidents' examples and the keys each class section drills into
 * (finding-groups.ts classGroups: at most 20 per incident, 100 per class).
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
  for (const cls of FINDING_CLASSES) {
    for (const g of classGroups(r, cls)) for (const x of g.listed) if (x.drilled) set.add(`${x.finding.store}\u0000${x.finding.key}`);
  }
  return set;
}

/**
 * A key's drill-down: its latest {@link WRITES_PER_KEY} writes (always with the finding's own
 * write) with attempts and readable traces, the faults and runtime-map changes within
 * {@link FAULT_WINDOW_MS} of the ack, the final read and the verifier's evidence. Every string
 * from the store escaped.
 */
export function drillDown(db: Database.Database, f: ResultFinding, keyLog: KeyLogReader, details: DrillDetails): string {
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
