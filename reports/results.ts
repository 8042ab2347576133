import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { META } from '../ledger/schema.js';
import type { ClassSummary, FindingClass, FindingKind, Verdict, Verification, WriteCounts } from '../harness/verifier/verifier.js';
import { FINDING_CLASSES, FINDING_KINDS, selfTestBugOf } from '../harness/verifier/verifier.js';
import { runConfigOf } from '../harness/verifier/run-facts.js';
import { FINAL_READBACK_EVENT } from '../harness/targets/final-readback.js';
import type { FinalReadback } from '../harness/targets/target.js';
import { groupFindings, type Incident } from './incidents.js';
import { findStalls, type Availability } from '../harness/verifier/stalls.js';
import { judgeScenario, type ScenarioResult } from '../harness/scenario/expectation.js';
import type { ScenarioRecord } from '../harness/scenario/scenario.js';
import type { RuleFinding } from '../ledger/history-findings.js';
import { nodeCounterTotals, type NodeCounterTotals } from './node-metrics.js';
import type { ContractJudged } from '../ledger/contract-judged.js';

/** results.json holds at most this many findings per class (DESIGN.md §7; the ledger holds all). */
export const FINDINGS_PER_CLASS = 1_000;

/**
 * One finding as results.json lists it (DESIGN.md §7, history-format.md `expected`): a key's
 * finding names its key and write; a read finding also the read (`write` the value read, null
 * when absent); a partition finding the partition (key and write null). `incident`: the id of
 * the incident it belongs to (results.json `incidents`), so that an incident's full list is the
 * findings with its id (as far as the 1,000 per class go).
 */
export type ResultFinding = RuleFinding & { incident?: number };

/** One store's line in results.json. */
export interface ResultStore {
  name: string;
  replicationFactor: number;
  ackMode: string;
  /** Acknowledged (`ok`) writes of the store. */
  acknowledged: number;
  /** Findings of the store per class. */
  summary: ClassSummary;
}

/** Failover measurements (events of kind 'failover', detail.ms = kill to first ack), ms. */
export interface FailoverSummary {
  count: number;
  p50Ms: number;
  p95Ms: number;
  maxMs: number;
}

/**
 * The store a run certified (issue 15, `TARGET=`): its name, its version as its binary reports it
 * (`etcd 3.4.23`, `redis 7.0.15 (sentinel)`, `zaris 0.1.0 ...`) and the client library the
 * workload wrote through. From the ledger meta `versions`.
 */
export interface ResultTarget {
  name: string;
  version: string;
  clientLibrary: string;
}

/**
 * One admin request the nemesis made (ledger events `admin`: handoff and regenerate, issue 13;
 * join, leave and rebalance, issue 14), in time order. None is a fault: the verifier excuses no
 * loss because of one.
 */
export interface ResultAdminRequest {
  /** When it was accepted, ms on the run clock. */
  tMs: number;
  /** handoff, regenerate, join, leave, rebalance (the command's first word). */
  kind: string;
  /** The admin command line sent to the leader. */
  command: string;
  /** The node joining or leaving, the node handed to; absent for rebalance and regenerate. */
  node?: string;
  /** The scenario step it played, when one. */
  step?: string;
  /** The store's answer (KvStatus name) and message. */
  status: string;
  message: string;
}

/**
 * Membership changes in a run (issue 14): how many were made, and what the store's counters say
 * moved (totals over the nodes from the metrics samples; null when no node exported the counter).
 */
export interface ResultMembership {
  joins: number;
  leaves: number;
  rebalances: number;
  /** Partition moves finished (zaris_migrations_total), the run's total. */
  migrations: number | null;
  /** Client requests answered Migrating (zaris_migrating_answers_total), the run's total. */
  migratingAnswers: number | null;
}

/** results.json (DESIGN.md §7), plus `retries`, `inconclusiveReason` and the v2 figures. */
export interface Results {
  verdict: Verdict;
  exitCode: 0 | 1 | 2;
  /** Present only when the verdict is INCONCLUSIVE: why. */
  inconclusiveReason?: string;
  /** The rules that judged the run (history-format.md version). */
  rules: string;
  /** v2: how long an acknowledged async write may stay unreplicated with nothing in the way (ASYNC_LAG), ms; null under v1. */
  asyncLagMaxMs: number | null;
  /** v2: the owner lease the store declared (async-ack rule 6: an owner cut off longer than this acknowledges nothing it may lose), ms; null under v1 or when none. */
  leaseMs: number | null;
  /**
   * The contract judged (ledger/contract-judged.ts): the store that declared it, where the verifier
   * found it, each rule with whether it was applied, its parameter and source, and the declaration.
   * Optional only in results written before contracts.
   */
  contract?: ContractJudged;
  /** The store under test; absent for a ledger from before targets (or an imported history). */
  target?: ResultTarget;
  /** meta.runtime ('process' | 'docker'); null for an imported history. */
  runtime: string | null;
  /** meta.seed (a number when it is an integer); null when absent. */
  seed: number | string | null;
  /** meta.duration_ms; null when absent. */
  durationMs: number | null;
  /** meta.schedule_digest (sha256 of the planned fault schedule); null when absent. */
  scheduleDigest: string | null;
  counts: WriteCounts;
  /** Faults per kind: kill, stop, pause, partition always present, any other kind after them. */
  faults: Record<string, number>;
  failover: FailoverSummary;
  summary: ClassSummary;
  /** Findings per kind (every kind present): lost writes, read findings, runtime-map findings... */
  kinds: Record<FindingKind, number>;
  /** Reads recorded during the run and checked (v2). */
  readsChecked: number;
  stores: ResultStore[];
  /** At most {@link FINDINGS_PER_CLASS} per class; by class (report order), store, partition findings first, key. */
  findings: ResultFinding[];
  /** The findings (all of them, every class) grouped by what lost them (reports/incidents.ts), in time order. */
  incidents: Incident[];
  /**
   * Availability apart from losses (issue 11): every stretch longer than the bound (STALL=) where a
   * node did not answer or a partition was Unavailable while no fault touched it is a stall; any
   * stall makes it FAILED. The durability verdict and the exit code do not depend on it.
   */
  availability: Availability;
  /** Client attempts per status name, summed over stats.statuses, keys sorted. */
  retries: Record<string, number>;
  /** The workload client's retry options and the ZARIS_* variables that set them (run config), when recorded. */
  clientOptions?: Record<string, unknown>;
  /** The deliberate bug the store ran with (a self-test run); absent for a real certification. */
  selfTestBug?: string;
  /** A scenario run (SCENARIO=): its expectation and whether the run held to it. */
  scenario?: ScenarioResult;
  /** The store nodes' counters, each a total over the nodes for the whole run (metrics endpoints, issue 14); absent when none was sampled. */
  nodeCounters?: NodeCounterTotals;
  /** The admin requests the nemesis made (handoff, regenerate, join, leave, rebalance), in time order; absent when none. */
  adminRequests?: ResultAdminRequest[];
  /** Membership changes (issue 14): present when the run made one, or ran with membership kinds. */
  membership?: ResultMembership;
  /** A target that declares it (run config `scope`): what the run tested and what it could not. */
  scope?: { tested: string[]; notTested: string[] };
  /** A stream target's final read of the whole store (ledger event `final-readback`): counts, duplicates, each node's copy. */
  readback?: FinalReadback;
}

/** The last whole-store final read a ledger records (event {@link FINAL_READBACK_EVENT}), or null. */
export function readbackOf(db: Database.Database): FinalReadback | null {
  const row = db.prepare('SELECT detail FROM events WHERE kind = ? AND json_valid(detail) ORDER BY t_ms DESC, rowid DESC LIMIT 1').get(FINAL_READBACK_EVENT) as { detail: string } | undefined;
  return row ? (JSON.parse(row.detail) as FinalReadback) : null;
}

/**
 * One line on a run's membership changes (the run summary, issue 14): `membership: 3 joins, 2
 * leaves, 1 rebalance; 12 migrations, 40 Migrating answers (no loss excused by a move)`; a counter
 * no node exported reads `migrations not exported`.
 */
export function describeMembership(m: ResultMembership): string {
  const n = (k: number, one: string, many = `${one}s`): string => `${k} ${k === 1 ? one : many}`;
  const moves = m.migrations === null ? 'migrations not exported' : n(m.migrations, 'migration');
  const answers = m.migratingAnswers === null ? 'Migrating answers not sampled' : n(m.migratingAnswers, 'Migrating answer');
  return `membership: ${n(m.joins, 'join')}, ${n(m.leaves, 'leave')}, ${n(m.rebalances, 'rebalance')}; ${moves}, ${answers} (no loss excused by a move)`;
}

/** The nemesis's admin requests of a ledger (events `admin`), in time order. */
export function adminRequestsOf(db: Database.Database): ResultAdminRequest[] {
  const out: ResultAdminRequest[] = [];
  for (const r of db.prepare(`SELECT t_ms, detail FROM events WHERE kind = 'admin' AND json_valid(detail) ORDER BY t_ms, rowid`).all() as Array<{ t_ms: number; detail: string }>) {
    const d = JSON.parse(r.detail) as Record<string, unknown>;
    const command = typeof d.command === 'string' ? d.command : '?';
    out.push({
      tMs: r.t_ms,
      kind: typeof d.kind === 'string' ? d.kind : command.split(' ')[0],
      command,
      ...(typeof d.node === 'string' ? { node: d.node } : /^handoff \S+ to (\S+)$/.test(command) ? { node: /^handoff \S+ to (\S+)$/.exec(command)![1] } : {}),
      ...(typeof d.step === 'string' ? { step: d.step } : {}),
      status: typeof d.status === 'string' ? d.status : '?',
      message: typeof d.message === 'string' ? d.message : '',
    });
  }
  return out;
}

/**
 * Nearest-rank percentile of ascending values: the value at rank ceil(p * n) (1-based);
 * 0 for no values. p in (0, 1].
 */
export function nearestRank(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(p * sorted.length)));
  return sorted[rank - 1];
}

function meta(db: Database.Database, key: string): string | null {
  const v = db.prepare('SELECT value FROM meta WHERE key = ?').pluck().get(key);
  return typeof v === 'string' ? v : null;
}

/** The target named in meta `versions` (`target`, `targetVersion`, `clientLibrary`), or null when not recorded. */
export function targetOf(db: Database.Database): ResultTarget | null {
  const raw = meta(db, META.versions);
  if (raw === null) return null;
  try {
    const v = JSON.parse(raw) as Record<string, unknown>;
    if (typeof v.target !== 'string') return null;
    return { name: v.target, version: String(v.targetVersion ?? '(not recorded)'), clientLibrary: String(v.clientLibrary ?? '(not recorded)') };
  } catch {
    return null;
  }
}

function seedOf(v: string | null): number | string | null {
  if (v === null) return null;
  return /^-?\d{1,15}$/.test(v) ? Number(v) : v;
}

function numberOf(v: string | null): number | null {
  if (v === null || v.trim() === '') return null;
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
}

/**
 * Builds results.json (DESIGN.md §7) from a ledger and its verification. A pure function of the
 * ledger's contents (no clock, no randomness; findings ordered by class in report order, then
 * store, key, kind, write; stores in ledger order; faults and retries with fixed key order), so
 * that re-analysis reproduces the file byte for byte.
 * Reads: meta, faults, events (kind 'failover', detail JSON {"ms": n}), stats.statuses (JSON
 * objects; rows that are not valid JSON are skipped), findings.
 */
export function buildResults(db: Database.Database, v: Verification): Results {
  const faults: Record<string, number> = { kill: 0, stop: 0, pause: 0, partition: 0 };
  for (const r of db.prepare('SELECT kind, COUNT(*) AS n FROM faults GROUP BY kind ORDER BY kind').all() as { kind: string; n: number }[]) {
    faults[r.kind] = r.n;
  }

  const failoverMs = db
    .prepare(
      `SELECT ms FROM (SELECT json_extract(detail, '$.ms') AS ms FROM events WHERE kind = 'failover' AND json_valid(detail))
       WHERE typeof(ms) IN ('integer', 'real') ORDER BY ms`,
    )
    .pluck()
    .all() as number[];
  const failover: FailoverSummary = {
    count: failoverMs.length,
    p50Ms: nearestRank(failoverMs, 0.5),
    p95Ms: nearestRank(failoverMs, 0.95),
    maxMs: failoverMs.length === 0 ? 0 : failoverMs[failoverMs.length - 1],
  };

  const retries: Record<string, number> = {};
  const retryRows = db
    .prepare(
      `SELECT j.key AS status, SUM(j.value) AS n FROM stats, json_each(stats.statuses) AS j
       WHERE json_valid(stats.statuses) AND json_type(stats.statuses) = 'object' AND j.type IN ('integer', 'real')
       GROUP BY j.key ORDER BY j.key`,
    )
    .all() as { status: string; n: number }[];
  for (const r of retryRows) retries[r.status] = r.n;

  // key order: shorter names first, so that k9 comes before k10 (natural order of k<n> names)
  const byClass = db.prepare(
    'SELECT rowid, class, kind, store, key, write, partition, read FROM findings WHERE class = ? ORDER BY store, key IS NOT NULL, partition, length(key), key, kind, write, read LIMIT ?',
  );
  type Row = { rowid: number; class: FindingClass; kind: FindingKind; store: string; key: string | null; write: string | null; partition: number | null; read: string | null };
  const rows: Row[] = [];
  for (const cls of FINDING_CLASSES) rows.push(...(byClass.all(cls, FINDINGS_PER_CLASS) as Row[]));
  const { incidents, incidentOf } = groupFindings(db, new Set(rows.map((f) => f.rowid)));
  const findings: ResultFinding[] = rows.map((f) => {
    const out: ResultFinding = { class: f.class, kind: f.kind, store: f.store, key: f.key, write: f.write };
    if (f.partition !== null) out.partition = f.partition;
    if (f.read !== null) out.read = f.read;
    const incident = incidentOf.get(f.rowid);
    if (incident !== undefined) out.incident = incident;
    return out;
  });

  const results: Results = {
    verdict: v.verdict,
    exitCode: v.exitCode,
    ...(v.inconclusiveReason !== null ? { inconclusiveReason: v.inconclusiveReason } : {}),
    rules: v.rules,
    asyncLagMaxMs: v.asyncLagMaxMs,
    leaseMs: v.leaseMs,
    contract: v.contract,
    ...(targetOf(db) ? { target: targetOf(db)! } : {}),
    runtime: meta(db, META.runtime),
    seed: seedOf(meta(db, META.seed)),
    durationMs: numberOf(meta(db, META.durationMs)),
    scheduleDigest: meta(db, META.scheduleDigest),
    counts: { ...v.counts },
    faults,
    failover,
    summary: { ...v.summary },
    kinds: Object.fromEntries(FINDING_KINDS.map((k) => [k, v.kinds[k] ?? 0])) as Record<FindingKind, number>,
    readsChecked: v.reads,
    stores: v.stores.map((s) => ({
      name: s.name,
      replicationFactor: s.replicationFactor,
      ackMode: s.ackMode,
      acknowledged: s.counts.acknowledged,
      summary: { ...s.summary },
    })),
    findings,
    incidents,
    availability: findStalls(db),
    retries,
  };
  const client = runConfigOf(db).clientOptions;
  if (typeof client === 'object' && client !== null && !Array.isArray(client)) results.clientOptions = client as Record<string, unknown>;
  const bug = selfTestBugOf(db);
  if (bug) results.selfTestBug = bug;
  const scope = runConfigOf(db).scope as Results['scope'] | undefined;
  if (scope && Array.isArray(scope.tested) && Array.isArray(scope.notTested)) results.scope = { tested: scope.tested.map(String), notTested: scope.notTested.map(String) };
  const readback = readbackOf(db);
  if (readback) results.readback = readback;
  const sc = scenarioOf(db, results);
  if (sc) results.scenario = sc;
  const counters = nodeCounterTotals(db);
  if (counters) results.nodeCounters = counters;
  const admin = adminRequestsOf(db);
  if (admin.length > 0) results.adminRequests = admin;
  const kinds = runConfigOf(db).faults;
  const moves = admin.filter((a) => a.kind === 'join' || a.kind === 'leave' || a.kind === 'rebalance');
  if (moves.length > 0 || (Array.isArray(kinds) && kinds.some((k) => k === 'join' || k === 'leave' || k === 'rebalance'))) {
    results.membership = {
      joins: moves.filter((a) => a.kind === 'join').length,
      leaves: moves.filter((a) => a.kind === 'leave').length,
      rebalances: moves.filter((a) => a.kind === 'rebalance').length,
      migrations: counters?.migrations ?? null,
      migratingAnswers: counters?.migratingAnswers ?? null,
    };
  }
  return results;
}

/** The scenario's verdict on the run (meta `scenario` and the nemesis's `fault-skipped` events), or null. */
function scenarioOf(db: Database.Database, r: Results): ScenarioResult | null {
  const text = meta(db, META.scenario);
  if (text === null) return null;
  let rec: ScenarioRecord;
  try {
    rec = JSON.parse(text) as ScenarioRecord;
  } catch {
    return null;
  }
  const skipped: Array<{ step: string; reason: string }> = [];
  const rows = db.prepare(`SELECT detail FROM events WHERE kind = 'fault-skipped' AND json_valid(detail) ORDER BY rowid`).pluck().all() as string[];
  for (const d of rows) {
    const e = JSON.parse(d) as { index?: number; step?: string; reason?: string };
    skipped.push({ step: e.step ?? rec.steps[e.index ?? -1] ?? `#${e.index}`, reason: e.reason ?? '?' });
  }
  return judgeScenario(rec, r.verdict, r.summary as unknown as Record<string, number>, skipped);
}

/** results.json as written: 2-space JSON and a final newline. */
export function formatResults(results: Results): string {
  return `${JSON.stringify(results, null, 2)}\n`;
}

/**
 * Writes `<dir>/results.json` (through a temporary file and a rename: never half-written).
 * @returns the file's path.
 * @throws Error when the directory cannot be written.
 */
export function writeResultsJson(results: Results, dir: string): string {
  const path = join(dir, 'results.json');
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, formatResults(results));
  renameSync(tmp, path);
  return path;
}
