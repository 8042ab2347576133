import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type Database from 'better-sqlite3';
import { SELF_TEST_BUGS, type SelfTestBug } from '../../nodes/cluster-config.js';
import type { CertifyOutcome } from '../certify.js';
import type { CertifyOptions } from '../certify/options.js';
import { PRESET_FOR_BUG, PRESETS, type PresetName } from '../nemesis/schedule.js';
import { openRunLedger } from './run-ledger.js';

/** Which fault mix `make power` runs: each bug's preset, or the default mix (`make power MIX=…`). */
export type PowerMix = 'preset' | 'default';

/** How a run's mix is named in the table: `default` (what `make certify` plays without FAULTS=) or `preset:<name>`. */
export function mixName(preset: PresetName): string {
  return preset === 'random' ? 'default' : `preset:${preset}`;
}

/** One bug's line of runs/power.json (issue 12). */
export interface PowerBugRow {
  runs: number;
  /** Runs whose verdict was FAILED. */
  failed: number;
  /** Median over the FAILED runs of the seconds from run start to the first violation; null when none failed. */
  medianSecondsToViolation: number | null;
}

/** The correct store's line of runs/power.json. */
export interface PowerNoneRow {
  runs: number;
  failed: number;
}

/** runs/power.json, exactly `{ "<bug>": { runs, failed, medianSecondsToViolation }, "none": { runs, failed } }` (issue 12). */
export type PowerReport = Record<string, PowerBugRow | PowerNoneRow>;

/** What one run came to, for the table. */
export interface PowerRun {
  bug: SelfTestBug | 'none';
  seed: number;
  preset: PresetName;
  verdict: string;
  /** Seconds from run start (the ledger's time 0) to the earliest violation; null without one. */
  secondsToViolation: number | null;
  runDir: string | null;
  /** A harness error's first line (the run counts as not FAILED). */
  error?: string;
}

/**
 * The time of the earliest violation a verified ledger holds, ms from run start (the ledger's
 * clock: 0 = the run's start), or null when it holds none. Each finding is dated by what shows
 * it: a runtime-map finding by the sample that showed it (detail.tMs), a read finding by the
 * read's completion, a lost write, an under-replicated or misattributed ack and a version
 * regression by the write's acknowledgement (the finding's own ackMs/invokeMs: a sealed ledger
 * keeps no `writes` rows; else the write's row), an unexpected or phantom final value by the final
 * read (else the run's duration). Reads the findings table (verifier output), keys, writes,
 * final_reads and meta.duration_ms.
 */
export function firstViolationMs(db: Database.Database): number | null {
  const times = db
    .prepare(
      `SELECT MIN(t) FROM (
         SELECT json_extract(f.detail, '$.tMs') AS t FROM findings f
          WHERE f.class = 'violation' AND f.key IS NULL
         UNION ALL
         SELECT COALESCE(json_extract(f.detail, '$.completeMs'), json_extract(f.detail, '$.invokeMs')) FROM findings f
          WHERE f.class = 'violation' AND f.read IS NOT NULL
         UNION ALL
         SELECT COALESCE(json_extract(f.detail, '$.ackMs'), json_extract(f.detail, '$.invokeMs')) FROM findings f
          WHERE f.class = 'violation' AND f.read IS NULL AND f.kind IN ('lost', 'under-replicated-ack', 'ack-not-from-active', 'version-regression')
         UNION ALL
         SELECT COALESCE(w.complete_ms, w.invoke_ms) FROM findings f
           JOIN keys k ON k.store = f.store AND k.key = f.key
           JOIN writes w ON w.key_id = k.key_id AND w.seq = json_extract(f.detail, '$.seq')
          WHERE f.class = 'violation' AND f.read IS NULL AND f.kind IN ('lost', 'under-replicated-ack', 'ack-not-from-active', 'version-regression')
         UNION ALL
         SELECT COALESCE(r.t_ms, (SELECT CAST(value AS REAL) FROM meta WHERE key = 'duration_ms')) FROM findings f
           JOIN keys k ON k.store = f.store AND k.key = f.key
           LEFT JOIN final_reads r ON r.key_id = k.key_id
          WHERE f.class = 'violation' AND f.read IS NULL AND f.kind IN ('unexpected', 'phantom')
       ) WHERE t IS NOT NULL`,
    )
    .pluck()
    .get() as number | null;
  if (times !== null) return times;
  // a violation none of the above dates (a kind added later): the end of the run
  const any = db.prepare("SELECT 1 FROM findings WHERE class = 'violation' LIMIT 1").get();
  if (any === undefined) return null;
  const d = db.prepare("SELECT value FROM meta WHERE key = 'duration_ms'").pluck().get() as string | undefined;
  return d === undefined ? null : Number(d);
}

/** {@link firstViolationMs} of a stored run directory, in seconds; null without a violation. */
export function secondsToViolationOfRun(runDir: string): number | null {
  const db = openRunLedger(runDir, { write: false });
  try {
    const ms = firstViolationMs(db);
    return ms === null ? null : ms / 1000;
  } finally {
    db.close();
  }
}

/** The median of numbers (the mean of the two middle ones for an even count); null for none. */
export function median(xs: readonly number[]): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/**
 * Parses `--only` (`make power ONLY=…`): a comma list of self-test bug names and/or `none`.
 * @throws Error with one line naming the unknown name and the choices (the CLI exits 64).
 */
export function parsePowerOnly(text: string): { bugs: SelfTestBug[]; none: boolean } {
  const names = text.split(',').map((x) => x.trim()).filter((x) => x.length > 0);
  if (names.length === 0) throw new Error(`--only is empty: give a comma list of ${SELF_TEST_BUGS.join(', ')}, none`);
  const bugs: SelfTestBug[] = [];
  let none = false;
  for (const n of names) {
    if (n === 'none') none = true;
    else if ((SELF_TEST_BUGS as readonly string[]).includes(n)) bugs.push(n as SelfTestBug);
    else throw new Error(`--only: unknown name "${n}" (choose from ${SELF_TEST_BUGS.join(', ')}, none)`);
  }
  return { bugs, none };
}

/** Aggregates runs into power.json's shape (bugs in `bugs` order, then none). */
export function aggregatePower(runs: readonly PowerRun[], bugs: readonly SelfTestBug[]): PowerReport {
  const out: PowerReport = {};
  for (const bug of bugs) {
    const mine = runs.filter((r) => r.bug === bug);
    const failed = mine.filter((r) => r.verdict === 'FAILED');
    const secs = failed.map((r) => r.secondsToViolation).filter((s): s is number => s !== null);
    const med = median(secs);
    out[bug] = { runs: mine.length, failed: failed.length, medianSecondsToViolation: med === null ? null : Math.round(med * 10) / 10 };
  }
  const none = runs.filter((r) => r.bug === 'none');
  out.none = { runs: none.length, failed: none.filter((r) => r.verdict === 'FAILED').length };
  return out;
}

/** The table `make power` prints: one line per bug, then the correct store. */
export function formatPowerTable(report: PowerReport, runs: readonly PowerRun[], seconds: number): string {
  const head = ['bug', 'faults', `FAILED runs (of ${seconds} s)`, 'median s to 1st violation', 'per run (verdict, s to 1st violation)'];
  const cells = Object.entries(report).map(([bug, row]) => {
    const mine = runs.filter((r) => r.bug === bug);
    const presets = [...new Set(mine.map((r) => mixName(r.preset)))].join(', ');
    const med = 'medianSecondsToViolation' in row ? (row.medianSecondsToViolation === null ? '-' : row.medianSecondsToViolation.toFixed(1)) : '';
    const per = mine.map((r) => `${r.verdict}${r.secondsToViolation === null ? '' : ` ${r.secondsToViolation.toFixed(1)}`}`).join('; ');
    return [bug === 'none' ? 'none (correct store)' : bug, presets || '-', `${row.failed} / ${row.runs}`, med, per];
  });
  const width = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (c: string[]): string => c.map((x, i) => x.padEnd(width[i])).join('  ').trimEnd();
  return [line(head), line(width.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n');
}

/** Options of {@link runPower}. */
export interface PowerOptions {
  /** Runs per bug (and of the correct store). */
  runs: number;
  /** Length of each run's fault phase, s. */
  seconds: number;
  /** Run i of every bug (and of the correct store) uses seed `seed + i`. */
  seed: number;
  /**
   * `preset`: each bug under its own FAULTS preset (nemesis PRESET_FOR_BUG), the correct store's
   * run i under the preset of bug i (mod the bugs); `default`: every run under the mix `make
   * certify` plays without FAULTS= (the `random` preset, every kind).
   */
  mix: PowerMix;
  bugs?: readonly SelfTestBug[];
  /**
   * Runs at a time (default 1). A certify run at the rate `make power` uses (3,000 writes/s) keeps
   * the nodes and the harness well under a core, so on 2 cores 3-4 runs share the machine; each
   * run has its own nodes, ports, partition chain and run directory. Runs start in plan order.
   */
  jobs?: number;
  /**
   * `make power ONLY=…`: run only these bugs (a subset of {@link bugs}), and the correct store's
   * runs only when `none` is set (then under the presets of these bugs in turn, or of every bug
   * when none is listed). Absent: every bug and the correct store.
   */
  only?: { bugs: readonly SelfTestBug[]; none: boolean };
  base: Omit<CertifyOptions, 'durationMs' | 'seed' | 'faults' | 'faultPreset' | 'faultsExplicit' | 'selfTestBug' | 'beyondBudget'>;
  certify: (o: CertifyOptions) => Promise<CertifyOutcome>;
  /** Seconds to the first violation of a finished run (default: read from its ledger). */
  secondsToViolation?: (runDir: string) => number | null;
  print: (line: string) => void;
}

/**
 * `make power [RUNS=10] [SECONDS=180]` (issue 12): for each self-test bug, then for the correct
 * store ("none"), `runs` seeded certify runs of `seconds` each, `jobs` at a time; counts the FAILED
 * runs and the median seconds from run start to the first violation (from each run's ledger);
 * writes `<runsDir>/power.json` ({@link PowerReport}) and prints a table. A run that ends in a
 * harness error counts as run, not FAILED, and its error is printed.
 * @returns the report and every run.
 */
export async function runPower(o: PowerOptions): Promise<{ report: PowerReport; runs: PowerRun[]; file: string }> {
  const all = o.bugs ?? SELF_TEST_BUGS;
  const bugs = o.only ? all.filter((b) => o.only!.bugs.includes(b)) : all;
  // the correct store runs under the presets of the bugs run (of every bug when only it runs)
  const noneBugs = bugs.length > 0 ? bugs : all;
  const withNone = !o.only || o.only.none;
  const toViolation = o.secondsToViolation ?? secondsToViolationOfRun;
  const plan: Array<{ bug: SelfTestBug | 'none'; i: number; preset: PresetName }> = [];
  const presetOf = (bug: SelfTestBug): PresetName => (o.mix === 'preset' ? (PRESET_FOR_BUG[bug] ?? 'random') : 'random');
  for (const bug of bugs) for (let i = 0; i < o.runs; i++) plan.push({ bug, i, preset: presetOf(bug) });
  if (withNone) for (let i = 0; i < o.runs; i++) plan.push({ bug: 'none', i, preset: noneBugs.length === 0 ? 'random' : presetOf(noneBugs[i % noneBugs.length]) });
  const slots: Array<PowerRun | undefined> = plan.map(() => undefined);
  const one = async (n: number): Promise<void> => {
    const p = plan[n];
    const seed = o.seed + p.i;
    o.print(`[${n + 1}/${plan.length}] ${p.bug === 'none' ? 'correct store' : `BUG=${p.bug}`} seed ${seed} ${p.preset === 'random' ? 'default mix' : `FAULTS=preset:${p.preset}`}, ${o.seconds} s ...`);
    const run: PowerRun = { bug: p.bug, seed, preset: p.preset, verdict: 'ERROR', secondsToViolation: null, runDir: null };
    try {
      const out = await o.certify({
        ...o.base,
        durationMs: o.seconds * 1000,
        seed,
        faults: [...PRESETS[p.preset].kinds],
        faultPreset: p.preset,
        faultsExplicit: false,
        beyondBudget: false,
        ...(p.bug === 'none' ? {} : { selfTestBug: p.bug }),
      });
      run.runDir = out.runDir;
      run.verdict = out.results?.verdict ?? 'ERROR';
      if (out.results && out.results.summary.violation > 0) run.secondsToViolation = toViolation(out.runDir);
    } catch (e) {
      run.error = (e as Error).message.split('\n')[0];
    }
    slots[n] = run;
    const tag = (o.jobs ?? 1) > 1 ? `[${n + 1}/${plan.length}] ` : '    ';
    o.print(`${tag}${run.verdict}${run.secondsToViolation === null ? '' : `, first violation at ${run.secondsToViolation.toFixed(1)} s`}${run.error ? `: harness error: ${run.error}` : ''} (${run.runDir ?? 'no run'})`);
  };
  // `jobs` lanes take the plan's runs in order; an interrupt lets the runs under way end, starts none
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < plan.length && !o.base.signal?.aborted) await one(next++);
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(o.jobs ?? 1, plan.length)) }, lane));
  const runs = slots.filter((r): r is PowerRun => r !== undefined);
  const report = aggregatePower(runs, bugs);
  mkdirSync(o.base.runsDir, { recursive: true });
  const file = path.join(o.base.runsDir, 'power.json');
  writeFileSync(`${file}.tmp`, `${JSON.stringify(report, null, 2)}\n`);
  renameSync(`${file}.tmp`, file);
  o.print('');
  o.print(formatPowerTable(report, runs, o.seconds));
  o.print(`wrote ${file}`);
  return { report, runs, file };
}
