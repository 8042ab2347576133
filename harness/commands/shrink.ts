import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type Database from 'better-sqlite3';
import { stringify } from 'yaml';
import type { StoreConfig } from '../../nodes/cluster-config.js';
import { META } from '../../ledger/schema.js';
import type { CertifyOutcome } from '../certify.js';
import { DEFAULT_STORES, type CertifyOptions } from '../certify/options.js';
import { parseScenario } from '../scenario/scenario.js';
import { UsageError } from '../usage-error.js';
import { analyzeRunDir } from './analyze.js';
import { openRunLedger } from './run-ledger.js';

/**
 * `make shrink RUN=runs/<failed run>` (issue 13): delta debugging over the run's RECORDED faults
 * (the ledger's faults, with the nodes they hit and when, and its admin events) until a smallest
 * subset still makes the store fail; written as a scenario beside the run (`shrunk.yaml`). Each
 * test is a short run of a scenario made of the subset: the run's seed, stores, timings, cluster
 * size, fault budget and self-test bug, every fault on the node it hit, the subset's relative
 * timings kept (its first fault 3 s into the phase). The simulation is not tried first (issue 13
 * lists it as where the run's bug reproduces there; this store's simulation does not take a
 * recorded schedule).
 */

/** One recorded fault (or a power failure's kills, a flapping cut's on-phases) as scenario steps. */
export interface ShrinkItem {
  /** Label for tables: `kill n1 @12.3s`. */
  label: string;
  /** Start on the run clock, ms. */
  startMs: number;
  /** Scenario steps, without name and `at` (added per subset), each with its offset from `startMs`. */
  steps: Array<Record<string, unknown> & { offsetMs: number }>;
}

/** What the failed run ran with (its run config), for the replays. */
export interface ShrinkConfig {
  seed: number;
  nodes: 3 | 5;
  stores: StoreConfig[];
  escalationMs: number;
  evictionMs: number;
  beyondBudget: boolean;
  bug: string | null;
  /** The run's spare nodes (issue 14; run config `spares`): the replays start as many, so that steps on them parse. Default 0. */
  spares?: number;
}

const sec = (ms: number): string => `${Math.max(0, Math.round(ms))}ms`;

type Row = { id: number; kind: string; nodes: string; start_ms: number; end_ms: number | null; detail: string | null };

/**
 * The recorded faults of a run as shrink items, in start order: kill, stop, pause and client-cut
 * on the node they hit; a power failure as one item of kills; a partition by its recorded
 * topology (isolate of its node; halves with the minority's first node; a one-way cut with its two
 * ends; a bridge split at random); a flapping partition as one flap step (its on-phases' first
 * start to last end); a clock fault by its node's mode (wall: the jump, monotonic: the rate); an
 * admin request (handoff, regenerate; join, leave, rebalance) as the same request, on the same node.
 */
export function recordedItems(db: Database.Database): { items: ShrinkItem[]; phaseStartMs: number; phaseEndMs: number } {
  const phase = (name: string): number | null => {
    const v = db.prepare(`SELECT t_ms FROM events WHERE kind = 'phase' AND json_valid(detail) AND json_extract(detail, '$.phase') = ? ORDER BY t_ms LIMIT 1`).pluck().get(name);
    return typeof v === 'number' ? v : null;
  };
  const phaseStartMs = phase('faults') ?? 0;
  const phaseEndMs = phase('heal') ?? Number.MAX_SAFE_INTEGER;
  const rows = db.prepare('SELECT id, kind, nodes, start_ms, end_ms, detail FROM faults ORDER BY start_ms, id').all() as Row[];
  const items: ShrinkItem[] = [];
  const groups = new Map<string, ShrinkItem>();
  for (const r of rows) {
    const d = (r.detail ? JSON.parse(r.detail) : {}) as Record<string, any>;
    const node = (JSON.parse(r.nodes) as string[])[0];
    const end = r.end_ms ?? phaseEndMs;
    const dur = Math.max(100, end - r.start_ms);
    if (d.power !== undefined) {
      const key = `power:${d.power}`;
      let it = groups.get(key);
      if (!it) {
        it = { label: `power ${(d.group as string[] | undefined)?.join('+') ?? node} @${((r.start_ms - phaseStartMs) / 1000).toFixed(1)}s`, startMs: r.start_ms, steps: [] };
        groups.set(key, it);
        items.push(it);
      }
      it.steps.push({ fault: 'kill', target: `node ${node}`, duration: sec(dur), offsetMs: r.start_ms - it.startMs });
      continue;
    }
    if (r.kind === 'partition' && d.flap !== undefined) {
      const key = `flap:${d.index ?? d.flap.of ?? r.id}`;
      const it = groups.get(key);
      if (it) {
        const st = it.steps[0];
        st.duration = sec(end - it.startMs);
        continue;
      }
    }
    let step: Record<string, unknown>;
    let label = `${r.kind} ${node ?? ''}`;
    if (r.kind === 'partition') {
      const topo = d.topology as string;
      if (topo === 'one-way') {
        const g = d.grudge as Record<string, string[]>;
        const to = Object.keys(g)[0];
        const from = g[to][0];
        step = { fault: 'partition', topology: 'one-way', target: `node ${to}`, direction: 'in', peer: `node ${from}` };
        label = `one-way ${from}->${to}`;
      } else if (topo === 'halves') {
        const minority = (d.components as string[][])[1];
        step = { fault: 'partition', topology: 'halves', target: `node ${minority[0]}` };
        label = `halves ${minority.join('+')}|rest`;
      } else if (topo === 'bridge') {
        step = { fault: 'partition', topology: 'bridge' };
        label = 'bridge';
      } else {
        step = { fault: 'partition', topology: 'isolate', target: `node ${d.node ?? node}` };
        label = `isolate ${d.node ?? node}`;
      }
      if (d.flap !== undefined) {
        step.flap = { on: sec(d.flap.onMs), off: sec(d.flap.offMs) };
        label += ' (flapping)';
      }
    } else if (r.kind === 'clock') {
      step = { fault: 'clock', target: `node ${node}`, clock: d.mode === 'wall' ? { jump: `${Math.round((d.offsetMs as number) / 1000)}s` } : { rate: d.rate } };
      label = `clock ${node} ${d.mode === 'wall' ? `${Math.round(d.offsetMs / 1000)}s` : `x${d.rate}`}`;
    } else {
      step = { fault: r.kind, target: `node ${node}` };
    }
    step.duration = sec(dur);
    const it: ShrinkItem = { label: `${label} @${((r.start_ms - phaseStartMs) / 1000).toFixed(1)}s`, startMs: r.start_ms, steps: [{ ...step, offsetMs: 0 }] };
    if (r.kind === 'partition' && d.flap !== undefined) groups.set(`flap:${d.index ?? d.flap.of ?? r.id}`, it);
    items.push(it);
  }
  // admin requests (handoff, regenerate; join, leave, rebalance) are events, not faults
  const admins = db.prepare(`SELECT t_ms, detail FROM events WHERE kind = 'admin' AND json_valid(detail) ORDER BY t_ms`).all() as Array<{ t_ms: number; detail: string }>;
  for (const a of admins) {
    const d = JSON.parse(a.detail) as { command?: string };
    const m = /^(handoff|regenerate) (\S+)(?: to (\S+))?$/.exec(d.command ?? '');
    const mm = /^(?:(join|leave) (\S+)|(rebalance))$/.exec(d.command ?? '');
    if (!m && !mm) continue;
    const step: Record<string, unknown> = m ? { fault: m[1], partition: m[2], ...(m[3] ? { to: `node ${m[3]}` } : {}) } : mm![3] ? { fault: 'rebalance' } : { fault: mm![1], target: `node ${mm![2]}` };
    items.push({ label: `${d.command} @${((a.t_ms - phaseStartMs) / 1000).toFixed(1)}s`, startMs: a.t_ms, steps: [{ ...step, offsetMs: 0 }] });
  }
  items.sort((x, y) => x.startMs - y.startMs);
  return { items, phaseStartMs, phaseEndMs };
}

/** Where a subset's first fault starts in its replay, ms into the fault phase. */
export const SUBSET_START_MS = 3_000;

/** The scenario (YAML text) of a subset of items. */
export function subsetScenario(items: readonly ShrinkItem[], cfg: ShrinkConfig, header: string[], name: string): string {
  const first = Math.min(...items.map((i) => i.startMs));
  const steps: Array<Record<string, unknown>> = [];
  let k = 0;
  for (const it of items) {
    for (const s of it.steps) {
      const { offsetMs, ...rest } = s;
      k++;
      steps.push({ name: `f${k}`, ...rest, at: sec(SUBSET_START_MS + it.startMs - first + offsetMs) });
    }
  }
  const doc: Record<string, unknown> = {
    name,
    nodes: cfg.nodes,
    ...(cfg.spares ? { spares: cfg.spares } : {}),
    stores: cfg.stores.map((s) => (['sync3', 'async3', 'rf1'].includes(s.name) && DEFAULT_STORES.some((d) => d.name === s.name && d.replicationFactor === s.replicationFactor && d.ackMode === s.ackMode) ? s.name : { name: s.name, replicationFactor: s.replicationFactor, ackMode: s.ackMode })),
    seed: cfg.seed,
    escalation: sec(cfg.escalationMs),
    eviction: sec(cfg.evictionMs),
    ...(cfg.beyondBudget ? { 'beyond-budget': true } : {}),
    ...(cfg.bug ? { bug: cfg.bug } : {}),
    expect: 'CERTIFIED',
    steps,
  };
  return `${header.map((l) => `# ${l}`.trimEnd()).join('\n')}\n${stringify(doc, { lineWidth: 0 })}`;
}

/**
 * Delta debugging (Zeller's ddmin): the smallest subset of `items` (1-minimal, as far as the
 * budget of tests allows) for which `fails` holds, testing subsets and complements at growing
 * granularity. `fails(items)` is assumed (the caller checks it). Stops after `maxTests` tests and
 * returns the smallest failing subset found so far.
 */
export async function ddmin<T>(items: readonly T[], fails: (subset: T[]) => Promise<boolean>, maxTests: number): Promise<{ result: T[]; tests: number; exhausted: boolean }> {
  let c = [...items];
  let n = 2;
  let tests = 0;
  const test = async (s: T[]): Promise<boolean | null> => {
    if (tests >= maxTests) return null;
    tests++;
    return fails(s);
  };
  while (c.length >= 2) {
    const size = Math.ceil(c.length / n);
    const chunks: T[][] = [];
    for (let i = 0; i < c.length; i += size) chunks.push(c.slice(i, i + size));
    let reduced = false;
    for (const d of chunks) {
      const r = await test(d);
      if (r === null) return { result: c, tests, exhausted: true };
      if (r) {
        c = d;
        n = 2;
        reduced = true;
        break;
      }
    }
    if (!reduced && chunks.length > 2) {
      for (const d of chunks) {
        const rest = c.filter((x) => !d.includes(x));
        const r = await test(rest);
        if (r === null) return { result: c, tests, exhausted: true };
        if (r) {
          c = rest;
          n = Math.max(n - 1, 2);
          reduced = true;
          break;
        }
      }
    }
    if (!reduced) {
      if (n >= c.length) break;
      n = Math.min(c.length, n * 2);
    }
  }
  return { result: c, tests, exhausted: false };
}

/** One replay of a subset. */
export interface ShrinkTest {
  faults: string[];
  verdict: string;
  violations: number;
  seconds: number;
  runDir: string | null;
}

/** What `make shrink` reports (and writes to `<run>/shrink.json`). */
export interface ShrinkReport {
  run: string;
  bug: string | null;
  recorded: string[];
  tests: ShrinkTest[];
  /** The smallest failing subset found. */
  result: string[];
  /** The scenario file written (null when the recorded faults did not reproduce the failure). */
  scenarioFile: string | null;
  /** The test budget ran out before the subset was 1-minimal. */
  exhausted: boolean;
}

/**
 * Shrinks a FAILED run (see the module doc).
 * @throws UsageError when the directory has no ledger, the run did not end FAILED, or it recorded no fault.
 */
export async function shrinkRun(o: {
  run: string;
  maxTests: number;
  base: Pick<CertifyOptions, 'runtime' | 'rate' | 'writersPerStore' | 'keysPerWriter' | 'signal'> & { log?: (line: string) => void };
  certify: (opts: CertifyOptions) => Promise<CertifyOutcome>;
  print: (line: string) => void;
}): Promise<ShrinkReport> {
  const run = path.resolve(o.run);
  const results = analyzeRunDir(run);
  if (results.verdict !== 'FAILED') throw new UsageError(`RUN=${o.run}: the run is ${results.verdict}, not FAILED: nothing to shrink`);
  const db = openRunLedger(run, { write: false });
  let items: ShrinkItem[];
  let cfg: ShrinkConfig;
  try {
    ({ items } = recordedItems(db));
    const rc = JSON.parse((db.prepare('SELECT value FROM meta WHERE key = ?').pluck().get(META.runConfig) as string | undefined) ?? '{}') as Record<string, any>;
    cfg = {
      seed: Number(rc.seed ?? results.seed ?? 1),
      nodes: rc.nodes === 5 ? 5 : 3,
      stores: Array.isArray(rc.stores) && rc.stores.length > 0 ? (rc.stores as StoreConfig[]) : DEFAULT_STORES,
      escalationMs: Number(rc.escalationTimeoutMs ?? 10_000),
      evictionMs: Number(rc.evictionTimeoutMs ?? 60_000),
      beyondBudget: rc.beyondBudget === true,
      bug: typeof rc.selfTestBug === 'string' ? rc.selfTestBug : null,
      ...(Array.isArray(rc.spares) && rc.spares.length > 0 ? { spares: rc.spares.length } : {}),
    };
  } finally {
    db.close();
  }
  if (items.length === 0) throw new UsageError(`RUN=${o.run}: the run recorded no fault: nothing to shrink`);
  const report: ShrinkReport = { run, bug: cfg.bug, recorded: items.map((i) => i.label), tests: [], result: [], scenarioFile: null, exhausted: false };
  const replays = path.join(run, 'shrink');
  mkdirSync(replays, { recursive: true });
  o.print(`shrink ${o.run}: ${items.length} recorded faults${cfg.bug ? `, self-test bug ${cfg.bug}` : ''}; at most ${o.maxTests} replays`);
  const fails = async (subset: ShrinkItem[]): Promise<boolean> => {
    const text = subsetScenario(subset, cfg, [], `shrink-${report.tests.length + 1}`);
    const sc = parseScenario(text, `shrink-${report.tests.length + 1}.yaml`);
    const t0 = performance.now();
    const test: ShrinkTest = { faults: subset.map((i) => i.label), verdict: 'ERROR', violations: 0, seconds: 0, runDir: null };
    try {
      const out = await o.certify({ ...o.base, scenario: sc, runsDir: replays, seed: cfg.seed, durationMs: sc.maxDurationMs, faults: [], faultsExplicit: true, beyondBudget: sc.beyondBudget, escalationTimeoutMs: sc.escalationTimeoutMs });
      test.runDir = out.runDir;
      test.verdict = out.results?.verdict ?? 'ERROR';
      test.violations = out.results?.summary.violation ?? 0;
    } catch (e) {
      test.verdict = `ERROR (${(e as Error).message.split('\n')[0]})`;
    }
    test.seconds = (performance.now() - t0) / 1000;
    report.tests.push(test);
    o.print(`  replay ${report.tests.length}: ${subset.length} fault${subset.length === 1 ? '' : 's'} [${test.faults.join('; ')}] -> ${test.verdict}${test.violations ? ` (${test.violations} violations)` : ''} in ${test.seconds.toFixed(0)} s`);
    return test.verdict === 'FAILED';
  };
  const write = (name: string, text: string): string => {
    const f = path.join(run, name);
    writeFileSync(`${f}.tmp`, text);
    renameSync(`${f}.tmp`, f);
    return f;
  };
  if (!(await fails(items))) {
    write('shrink.json', `${JSON.stringify(report, null, 2)}\n`);
    o.print(`the recorded faults, replayed as a scenario, did not make the store fail (${report.tests[0].verdict}): nothing written`);
    return report;
  }
  const { result, exhausted } = await ddmin(items, fails, Math.max(0, o.maxTests - 1));
  report.result = result.map((i) => i.label);
  report.exhausted = exhausted;
  const failing = [...report.tests].reverse().find((t) => t.verdict === 'FAILED' && t.faults.length === result.length);
  const header = [
    `Shrunk from ${path.relative(process.cwd(), run) || run} by make shrink: ${result.length} of ${items.length} recorded faults still make the store fail`,
    `(${report.tests.length} replays${exhausted ? ', stopped by the replay budget' : ''}; the smallest failing replay: ${failing?.runDir ? path.relative(process.cwd(), failing.runDir) : '?'}).`,
    `Pattern: ${result.map((i) => i.label.replace(/ @.*$/, '')).join(', then ')}, each on the node the original run's fault hit, with its relative timing.`,
    `Expected: CERTIFIED: what a correct store must do. ${cfg.bug ? `This scenario runs the store with the self-test bug ${cfg.bug}, so it comes out FAILED: the regression the bug stands for.` : 'It failed on the store of that run: keep it as a regression.'}`,
    '',
  ];
  const file = write('shrunk.yaml', subsetScenario(result, cfg, header, 'shrunk'));
  report.scenarioFile = file;
  write('shrink.json', `${JSON.stringify(report, null, 2)}\n`);
  // the failed run's report names it (report.html, meta `shrunk`)
  const wdb = openRunLedger(run, { write: true });
  try {
    wdb.prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)').run(META.shrunk, JSON.stringify({ file, faults: report.result, replays: report.tests.length }));
  } finally {
    wdb.close();
  }
  analyzeRunDir(run);
  o.print(`smallest failing schedule: ${result.length} fault${result.length === 1 ? '' : 's'} [${report.result.join('; ')}]`);
  o.print(`scenario written: ${path.relative(process.cwd(), file) || file} (make certify SCENARIO=${path.relative(process.cwd(), file) || file})`);
  return report;
}

/** Does a directory look like a run directory (has a ledger). */
export function isRunDir(dir: string): boolean {
  return existsSync(path.join(dir, 'ledger.sqlite'));
}
