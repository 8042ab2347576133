import type Database from 'better-sqlite3';
import type { FindingClass, FindingKind } from '../ledger/history-findings.js';
import { FINDING_CLASSES, PARTITION_FINDING_KINDS, READ_FINDING_KINDS } from '../ledger/history-findings.js';
import { KeyLogReader } from '../ledger/key-log.js';
import { incidentLine } from './incident-text.js';

export { causeText, firstViolationSentence, incidentLine } from './incident-text.js';

/**
 * Losses told as incidents (issue 11): the verifier's findings (every class) grouped by what
 * lost them, so that a run that lost 1,388 writes on one crash reads as one line, not 1,388.
 *
 * A finding's group is its store, its partition and its cause:
 * - a lost write: the crash (kill or stop) of a node after the ack that the loss rules name (rf1,
 *   async-ack), else the first of the ack node's crash after the ack and the partition's first
 *   ownership change after the ack (a runtime-map sample, harness view, at an epoch above the
 *   ack's); `none` when neither followed;
 * - a read finding: the ownership change that put the partition at the epoch the read saw
 *   (the last one at or before the read's invoke; `none` when the partition never changed);
 * - an ack finding that is no loss (under-replicated-ack, ack-not-from-active, version-regression):
 *   the ack's node and epoch (`epoch`);
 * - a runtime-map finding: its kind (`runtime-map`);
 * - anything else (unexpected, phantom, recovered, unverified): its kind (`none`).
 */

/** What an incident's findings followed. */
export interface IncidentCause {
  /** crash: a node's kill or stop after the acks; ownership-change: a higher epoch of the partition; epoch: acks of one node at one epoch; runtime-map: the map itself judged; none: nothing followed. */
  kind: 'crash' | 'ownership-change' | 'epoch' | 'runtime-map' | 'none';
  /** When it happened (run time, ms); null when unknown or for `none`. */
  atMs: number | null;
  /** crash: the crashed node; ownership-change: the new active; epoch: the acking node. */
  node: string | null;
  /** crash: the fault's history id and ledger id. */
  fault?: string;
  faultId?: number;
  /** ownership-change: the new epoch; epoch: the ack's epoch. */
  epoch?: number;
  /** runtime-map / none: the finding kind that groups them. */
  findingKind?: FindingKind;
}

/** The runtime map (harness view) of the partition before and after the incident's cause. */
export interface IncidentTransition {
  /** Active owner and epoch at the cause (a crash's instant, just before an ownership change), else at the start of the window (null: no sample before it). */
  from: { active: string | null; epoch: number } | null;
  /** The first sample after that with another active or epoch (null: none). */
  to: { active: string | null; epoch: number; atMs: number } | null;
}

/** One finding of an incident: a key's (key and write), a read's (also `read`) or a partition's (key and write null). */
export interface IncidentFinding {
  class: FindingClass;
  kind: FindingKind;
  key: string | null;
  write: string | null;
  read?: string;
}

/** Findings an incident lists inline ({@link Incident.firstFindings}); the report shows as many. */
export const INCIDENT_FINDINGS_LISTED = 20;

/** One incident of results.json `incidents`. */
export interface Incident {
  /** 1-based, in the order of the incidents' first instants. */
  id: number;
  store: string;
  /** null only for a key the ledger's keys table does not hold. */
  partition: number | null;
  /** The worst class among its findings (report order: violation first). */
  class: FindingClass;
  cause: IncidentCause;
  /** Findings in it. */
  count: number;
  /** Findings per class and per kind (only those present). */
  classes: Partial<Record<FindingClass, number>>;
  kinds: Partial<Record<FindingKind, number>>;
  /** The findings' instants (a loss's ack, a read's invoke, a runtime-map finding's sample), ms; null when none has one. */
  windowMs: { from: number; to: number } | null;
  /** The last fault that started at or before the window's start (or the cause's instant). */
  faultBefore: { fault: string; faultId: number; kind: string; nodes: string[]; startMs: number } | null;
  transition: IncidentTransition | null;
  /** One finding of it (the worst class, then the earliest), whose key the report drills into. */
  example: IncidentFinding;
  /**
   * Its first findings, at most {@link INCIDENT_FINDINGS_LISTED}: the worst class first (violations),
   * then by instant (as the window), then ledger order; findings without an instant last. The
   * report lists these inline; results.json `findings` tags each of its findings with its
   * incident (`incident`).
   */
  firstFindings: IncidentFinding[];
  /** The incident in one line (what the report lists). */
  line: string;
}

interface FaultRow {
  id: number;
  name: string;
  kind: string;
  nodes: string[];
  start: number;
  crash: number;
}

const READ_KINDS: ReadonlySet<string> = new Set(READ_FINDING_KINDS);
const PARTITION_KINDS: ReadonlySet<string> = new Set(PARTITION_FINDING_KINDS);
const ACK_KINDS: ReadonlySet<string> = new Set(['under-replicated-ack', 'ack-not-from-active', 'version-regression']);
const CLASS_RANK = new Map<FindingClass, number>(FINDING_CLASSES.map((c, i) => [c, i]));

function parse(text: string | null): Record<string, unknown> {
  if (text === null) return {};
  try {
    const v = JSON.parse(text) as unknown;
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** Index of the last element of ascending `xs` that is <= t (-1: none). */
function lastAtOrBefore(xs: readonly number[], t: number): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (xs[mid] <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

/** Reads the runtime map (merged samples) and faults the grouping needs, with caches. */
class IncidentFacts {
  readonly faults: FaultRow[];
  private readonly faultStarts: number[];
  /** node -> its crashes (kill, stop), by crash instant. */
  private readonly crashes = new Map<string, FaultRow[]>();
  private readonly st: Record<string, Database.Statement>;
  private readonly epochChange = new Map<string, { since: number; change: { active: string | null; epoch: number; atMs: number } | null }>();
  private readonly epochStart = new Map<string, number | null>();
  private readonly first = new Map<string, { active: string | null; epoch: number } | null>();
  private readonly keyLog: KeyLogReader;

  constructor(db: Database.Database) {
    type Row = { id: number; kind: string; nodes: string; start_ms: number; effective_ms: number | null; detail: string | null };
    this.faults = (db.prepare('SELECT id, kind, nodes, start_ms, effective_ms, detail FROM faults ORDER BY start_ms, id').all() as Row[]).map((r) => {
      let nodes: string[] = [];
      try {
        const v = JSON.parse(r.nodes) as unknown;
        if (Array.isArray(v)) nodes = v.map(String);
      } catch {
        nodes = [];
      }
      const historyId = str(parse(r.detail).historyId);
      return { id: r.id, name: historyId ?? `f${r.id}`, kind: r.kind, nodes, start: r.start_ms, crash: r.effective_ms ?? r.start_ms };
    });
    this.faultStarts = this.faults.map((f) => f.start);
    for (const f of this.faults) {
      if (f.kind !== 'kill' && f.kind !== 'stop') continue;
      for (const n of f.nodes) {
        let l = this.crashes.get(n);
        if (l === undefined) this.crashes.set(n, (l = []));
        l.push(f);
      }
    }
    for (const l of this.crashes.values()) l.sort((a, b) => a.crash - b.crash || a.id - b.id);
    this.keyLog = new KeyLogReader(db);
    this.st = {
      keyOf: db.prepare('SELECT key_id, partition FROM keys WHERE store = ? AND key = ?'),
      at: db.prepare('SELECT active, epoch, t_ms FROM samples WHERE store = ? AND partition = ? AND node IS NULL AND t_ms <= ? ORDER BY t_ms DESC, rowid DESC LIMIT 1'),
      firstAfter: db.prepare(
        'SELECT active, epoch, t_ms FROM samples WHERE store = ? AND partition = ? AND node IS NULL AND t_ms >= ? AND (epoch <> ? OR active IS NOT ?) ORDER BY t_ms, rowid LIMIT 1',
      ),
      epochAbove: db.prepare('SELECT active, epoch, t_ms FROM samples WHERE store = ? AND partition = ? AND node IS NULL AND t_ms >= ? AND epoch > ? ORDER BY t_ms, rowid LIMIT 1'),
      first: db.prepare('SELECT active, epoch FROM samples WHERE store = ? AND partition = ? AND node IS NULL ORDER BY t_ms, rowid LIMIT 1'),
      epochFirst: db.prepare('SELECT MIN(t_ms) FROM samples WHERE store = ? AND partition = ? AND node IS NULL AND epoch = ?').pluck(),
    };
  }

  key(store: string, key: string): { key_id: number; partition: number } | undefined {
    return this.st.keyOf.get(store, key) as { key_id: number; partition: number } | undefined;
  }

  /** The ack time of a write (complete_ms), null when unknown. */
  ackMs(keyId: number, seq: number): number | null {
    return this.keyLog.write(keyId, seq)?.complete_ms ?? null;
  }

  /** The first kill/stop of `node` with its crash instant at or after t. */
  crashAfter(node: string, t: number): FaultRow | null {
    const l = this.crashes.get(node);
    if (l === undefined) return null;
    for (const f of l) if (f.crash >= t) return f;
    return null;
  }

  /** The partition's first sample at or after t at an epoch above `epoch` (cached per epoch). */
  ownershipChangeAfter(store: string, partition: number, t: number, epoch: number): { active: string | null; epoch: number; atMs: number } | null {
    const k = `${store}\u0000${partition}\u0000${epoch}`;
    const c = this.epochChange.get(k);
    // the first change after c.since is also the first after any t in [c.since, its instant]
    if (c !== undefined && t >= c.since && (c.change === null || t <= c.change.atMs)) return c.change;
    const r = this.st.epochAbove.get(store, partition, t, epoch) as { active: string | null; epoch: number; t_ms: number } | undefined;
    const change = r === undefined ? null : { active: r.active, epoch: r.epoch, atMs: r.t_ms };
    this.epochChange.set(k, { since: t, change });
    return change;
  }

  /** The partition's sample at or before t (harness view). */
  stateAt(store: string, partition: number, t: number): { active: string | null; epoch: number; tMs: number } | null {
    const r = this.st.at.get(store, partition, t) as { active: string | null; epoch: number; t_ms: number } | undefined;
    return r === undefined ? null : { active: r.active, epoch: r.epoch, tMs: r.t_ms };
  }

  /** The partition's first sample (harness view), null when none. */
  firstState(store: string, partition: number): { active: string | null; epoch: number } | null {
    const k = `${store}\u0000${partition}`;
    if (!this.first.has(k)) this.first.set(k, (this.st.first.get(store, partition) as { active: string | null; epoch: number } | undefined) ?? null);
    return this.first.get(k) ?? null;
  }

  /** When the partition was first sampled at `epoch`. */
  epochStartMs(store: string, partition: number, epoch: number): number | null {
    const k = `${store}\u0000${partition}\u0000${epoch}`;
    if (!this.epochStart.has(k)) this.epochStart.set(k, (this.st.epochFirst.get(store, partition, epoch) as number | null) ?? null);
    return this.epochStart.get(k) ?? null;
  }

  transition(store: string, partition: number, t: number): IncidentTransition | null {
    const from = this.stateAt(store, partition, t);
    const r = this.st.firstAfter.get(store, partition, t, from?.epoch ?? -1, from?.active ?? null) as { active: string | null; epoch: number; t_ms: number } | undefined;
    if (from === null && r === undefined) return null;
    return { from: from === null ? null : { active: from.active, epoch: from.epoch }, to: r === undefined ? null : { active: r.active, epoch: r.epoch, atMs: r.t_ms } };
  }

  faultBefore(t: number): Incident['faultBefore'] {
    const i = lastAtOrBefore(this.faultStarts, t);
    if (i < 0) return null;
    const f = this.faults[i];
    return { fault: f.name, faultId: f.id, kind: f.kind, nodes: f.nodes, startMs: f.start };
  }
}

interface Group {
  store: string;
  partition: number | null;
  cause: IncidentCause;
  count: number;
  classes: Partial<Record<FindingClass, number>>;
  kinds: Partial<Record<FindingKind, number>>;
  from: number | null;
  to: number | null;
  example: IncidentFinding;
  exampleAt: number;
  /** The first findings by class, then instant, at most INCIDENT_FINDINGS_LISTED. */
  first: Array<{ f: IncidentFinding; at: number }>;
}

interface FindingRow {
  rowid: number;
  class: FindingClass;
  kind: FindingKind;
  store: string;
  key: string | null;
  write: string | null;
  partition: number | null;
  read: string | null;
  detail: string | null;
}

/** Findings read per statement (bounds memory; the findings table can hold millions). */
const PAGE = 5_000;

/**
 * Groups the ledger's `findings` (written by verifyLedger) into incidents (see the module
 * comment for the grouping). Reads findings, keys, faults, the merged runtime-map samples
 * (samples_by_partition) and, for acks that are no loss, the write's row. Pure function of the
 * ledger: incidents ordered by first instant (window start, else the cause's instant; none
 * last), then store, partition, cause; ids 1.. in that order.
 */
export function buildIncidents(db: Database.Database): Incident[] {
  return groupFindings(db, new Set()).incidents;
}

/**
 * {@link buildIncidents}, and the incident of each finding asked for: `tag` holds rowids of the
 * ledger's findings table (results.json's, at most 1,000 per class), `incidentOf` maps each of
 * them to its incident's id. Memory: the groups and the tagged rowids, never every finding.
 */
export function groupFindings(db: Database.Database, tag: ReadonlySet<number>): { incidents: Incident[]; incidentOf: Map<number, number> } {
  const facts = new IncidentFacts(db);
  const groups = new Map<string, Group>();
  const tagged = new Map<number, Group>();
  const page = db.prepare('SELECT rowid, class, kind, store, key, write, partition, read, detail FROM findings WHERE rowid > ? ORDER BY rowid LIMIT ?');
  for (let after = 0; ; ) {
    const rows = page.all(after, PAGE) as FindingRow[];
    if (rows.length === 0) break;
    after = rows[rows.length - 1].rowid;
    for (const f of rows) {
      const g = place(facts, groups, f);
      if (tag.has(f.rowid)) tagged.set(f.rowid, g);
    }
  }
  const ordered = [...groups.values()].sort((a, b) => {
    const ta = a.from ?? a.cause.atMs ?? Infinity;
    const tb = b.from ?? b.cause.atMs ?? Infinity;
    return ta - tb || a.store.localeCompare(b.store) || (a.partition ?? -1) - (b.partition ?? -1) || causeKey(a.cause).localeCompare(causeKey(b.cause));
  });
  const ids = new Map<Group, number>(ordered.map((g, i) => [g, i + 1]));
  const incidentOf = new Map<number, number>();
  for (const [rowid, g] of tagged) incidentOf.set(rowid, ids.get(g)!);
  return { incidents: ordered.map((g, i) => finish(facts, g, i + 1)), incidentOf };
}

function causeKey(c: IncidentCause): string {
  switch (c.kind) {
    case 'crash':
      return `crash:${c.faultId}:${c.node}`;
    case 'ownership-change':
      return `owner:${c.epoch}`;
    case 'epoch':
      return `epoch:${c.node}:${c.epoch}`;
    default:
      return `${c.kind}:${c.findingKind}`;
  }
}

function place(facts: IncidentFacts, groups: Map<string, Group>, f: FindingRow): Group {
  const d = parse(f.detail);
  const k = f.key === null ? undefined : facts.key(f.store, f.key);
  const partition = f.partition ?? k?.partition ?? null;
  let at: number | null = null;
  let cause: IncidentCause;
  if (PARTITION_KINDS.has(f.kind)) {
    at = num(d.tMs);
    cause = { kind: 'runtime-map', atMs: at, node: str(d.node) ?? str(d.active), findingKind: f.kind };
  } else if (READ_KINDS.has(f.kind)) {
    at = num(d.invokeMs);
    const state = at !== null && partition !== null ? facts.stateAt(f.store, partition, at) : null;
    const since = state === null || partition === null ? null : facts.epochStartMs(f.store, partition, state.epoch);
    const first = partition === null ? null : facts.firstState(f.store, partition);
    cause =
      state === null || (first !== null && first.epoch === state.epoch)
        ? { kind: 'none', atMs: null, node: null, findingKind: f.kind }
        : { kind: 'ownership-change', atMs: since, node: state.active, epoch: state.epoch };
  } else if (f.kind === 'lost') {
    at = num(d.ackMs);
    const faultId = num(d.faultId);
    if (faultId !== null && str(d.crashedNode) !== null) {
      cause = { kind: 'crash', atMs: num(d.crashMs), node: str(d.crashedNode), fault: str(d.fault) ?? `f${faultId}`, faultId };
    } else if (num(d.takeoverMs) !== null || num(d.epochChangeMs) !== null) {
      const change = partition !== null && at !== null ? facts.ownershipChangeAfter(f.store, partition, at, num(d.ackEpoch) ?? -1) : null;
      cause = { kind: 'ownership-change', atMs: num(d.takeoverMs) ?? num(d.epochChangeMs), node: str(d.takeoverNode) ?? change?.active ?? null, epoch: change?.epoch };
    } else {
      cause = lossCause(facts, f.store, partition, at, str(d.ackNode), num(d.ackEpoch));
    }
  } else if (ACK_KINDS.has(f.kind)) {
    const seq = num(d.seq);
    at = k !== undefined && seq !== null ? facts.ackMs(k.key_id, seq) : null;
    cause = { kind: 'epoch', atMs: null, node: str(d.ackNode), epoch: num(d.ackEpoch) ?? undefined, findingKind: f.kind };
  } else {
    cause = { kind: 'none', atMs: null, node: null, findingKind: f.kind };
  }
  const id = `${f.store}\u0000${partition ?? ''}\u0000${causeKey(cause)}`;
  let g = groups.get(id);
  if (g === undefined) {
    g = { store: f.store, partition, cause, count: 0, classes: {}, kinds: {}, from: null, to: null, example: exampleOf(f), exampleAt: at ?? Infinity, first: [] };
    groups.set(id, g);
  }
  keepFirst(g.first, exampleOf(f), at ?? Infinity);
  g.count++;
  g.classes[f.class] = (g.classes[f.class] ?? 0) + 1;
  g.kinds[f.kind] = (g.kinds[f.kind] ?? 0) + 1;
  if (at !== null) {
    if (g.from === null || at < g.from) g.from = at;
    if (g.to === null || at > g.to) g.to = at;
  }
  // the example: the worst class first, then the earliest
  const worse = (CLASS_RANK.get(f.class) ?? 9) - (CLASS_RANK.get(g.example.class) ?? 9);
  if (worse < 0 || (worse === 0 && (at ?? Infinity) < g.exampleAt)) {
    g.example = exampleOf(f);
    g.exampleAt = at ?? Infinity;
  }
  return g;
}

/** a before b in an incident's list: the worse class, then the earlier instant (a tie keeps ledger order). */
function listedBefore(a: { f: IncidentFinding; at: number }, b: { f: IncidentFinding; at: number }): boolean {
  const worse = (CLASS_RANK.get(a.f.class) ?? 9) - (CLASS_RANK.get(b.f.class) ?? 9);
  return worse < 0 || (worse === 0 && a.at < b.at);
}

/** Keeps the INCIDENT_FINDINGS_LISTED first of a group's findings by {@link listedBefore} (rows come in ledger order). */
function keepFirst(list: Array<{ f: IncidentFinding; at: number }>, f: IncidentFinding, at: number): void {
  const x = { f, at };
  if (list.length >= INCIDENT_FINDINGS_LISTED && !listedBefore(x, list[list.length - 1])) return;
  let i = list.length;
  while (i > 0 && listedBefore(x, list[i - 1])) i--;
  list.splice(i, 0, x);
  if (list.length > INCIDENT_FINDINGS_LISTED) list.pop();
}

function exampleOf(f: FindingRow): IncidentFinding {
  const e: IncidentFinding = { class: f.class, kind: f.kind, key: f.key, write: f.write };
  if (f.read !== null) e.read = f.read;
  return e;
}

/** A loss with no crash or takeover in its evidence: the first of the ack node's crash and the partition's ownership change after the ack. */
function lossCause(facts: IncidentFacts, store: string, partition: number | null, at: number | null, ackNode: string | null, ackEpoch: number | null): IncidentCause {
  if (at === null) return { kind: 'none', atMs: null, node: null, findingKind: 'lost' };
  const crash = ackNode === null ? null : facts.crashAfter(ackNode, at);
  const change = partition === null || ackEpoch === null ? null : facts.ownershipChangeAfter(store, partition, at, ackEpoch);
  if (crash !== null && (change === null || crash.crash <= change.atMs)) return { kind: 'crash', atMs: crash.crash, node: ackNode, fault: crash.name, faultId: crash.id };
  if (change !== null) return { kind: 'ownership-change', atMs: change.atMs, node: change.active, epoch: change.epoch };
  return { kind: 'none', atMs: null, node: null, findingKind: 'lost' };
}

function worstClass(classes: Partial<Record<FindingClass, number>>): FindingClass {
  for (const c of FINDING_CLASSES) if ((classes[c] ?? 0) > 0) return c;
  return 'info';
}

function finish(facts: IncidentFacts, g: Group, id: number): Incident {
  const start = g.from ?? g.cause.atMs;
  const faultBefore = start === null ? null : facts.faultBefore(start);
  // the map around the cause (a crash: from its instant; an ownership change: from just before
  // the sample that showed it), else from the window's start
  const anchor = g.cause.atMs !== null && g.cause.kind === 'crash' ? g.cause.atMs : g.cause.atMs !== null && g.cause.kind === 'ownership-change' ? g.cause.atMs - 1e-3 : start;
  const transition = g.partition === null || anchor === null ? null : facts.transition(g.store, g.partition, anchor);
  const cls = worstClass(g.classes);
  const inc: Incident = {
    id,
    store: g.store,
    partition: g.partition,
    class: cls,
    cause: g.cause,
    count: g.count,
    classes: g.classes,
    kinds: g.kinds,
    windowMs: g.from === null || g.to === null ? null : { from: g.from, to: g.to },
    faultBefore,
    transition,
    example: g.example,
    firstFindings: g.first.map((x) => x.f),
    line: '',
  };
  inc.line = incidentLine(inc);
  return inc;
}

