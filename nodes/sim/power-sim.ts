#!/usr/bin/env node
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Command, InvalidArgumentError } from 'commander';
import { SELF_TEST_BUGS, type SelfTestBug } from '../cluster-config.js';
import { powerScheduleOfRun, runChecked } from './sim-batch.js';

/**
 * `make power-sim [RUNS=100] [SEED=S]` (issue 12): the simulation's catch rate of every
 * deliberate store bug. For each bug of cluster-config.ts SELF_TEST_BUGS, RUNS schedules of the
 * dense family (the same schedules for every bug: run i of the batch seed), counting those that
 * end in a violation; then the correct store over 10 x RUNS schedules (the first RUNS are the
 * bugs' schedules). Prints a table (bug, caught k of N, the invariants that caught it, wall
 * seconds) and writes `{ "<bug>": { runs, failed }, "none": { runs, failed } }` to
 * runs/power-sim.json (--out); --only measures a subset (e.g. `none` alone, to split a long
 * measurement over processes: every process with the same seed runs the same schedules), --part k/m
 * only every m-th schedule from the k-th (m processes share one measurement). A violation of the correct store is printed on stderr with its
 * schedule. Exit code: 0 when the correct store had no violation, 1 otherwise, 64 bad arguments.
 */

/** One row of runs/power-sim.json. */
export interface PowerRow {
  runs: number;
  failed: number;
}

function positiveInt(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be an integer >= 1');
  return n;
}

function int32(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < -0x80000000 || n > 0xffffffff) throw new InvalidArgumentError('must be a 32-bit integer');
  return n | 0;
}

function onlyList(v: string): Set<string> {
  const names = v.split(',').map((x) => x.trim()).filter((x) => x.length > 0);
  const known = new Set<string>([...SELF_TEST_BUGS, 'none']);
  const bad = names.filter((x) => !known.has(x));
  if (names.length === 0 || bad.length > 0) throw new InvalidArgumentError(`unknown name ${bad.join(', ') || '(empty)'}: choose from ${[...known].join(', ')}`);
  return new Set(names);
}

/** `k/m` (1 <= k <= m): this process runs the schedules i with i mod m = k - 1. */
function partOf(v: string): { k: number; m: number } {
  const m = /^(\d+)\/(\d+)$/.exec(v.trim());
  const k = m ? Number(m[1]) : NaN;
  const of = m ? Number(m[2]) : NaN;
  if (!(k >= 1 && of >= k)) throw new InvalidArgumentError('must be k/m with 1 <= k <= m');
  return { k, m: of };
}

/**
 * Runs the schedules 0..n-1 of the batch with `bug` (undefined: the correct store), or of them
 * those of `part` (i mod m = k - 1): a long measurement split over processes.
 */
function measure(seed: number, n: number, bug: SelfTestBug | undefined, part = { k: 1, m: 1 }): { row: PowerRow; by: Map<string, number>; wallS: number } {
  const t0 = performance.now();
  const by = new Map<string, number>();
  let failed = 0;
  let runs = 0;
  for (let i = part.k - 1; i < n; i += part.m) {
    runs++;
    const s = powerScheduleOfRun(seed, i);
    const out = runChecked(s, bug);
    // progress, so that a measurement stopped early still says how far it got
    if (runs % 50 === 0 && i + part.m < n) process.stderr.write(`  ${bug ?? 'none'}: ${failed + (out.violation ? 1 : 0)} / ${runs} so far\n`);
    if (!out.violation) {
      if (bug) process.stderr.write(`  ${bug}: not caught in run ${i} of seed ${seed}; schedule: ${JSON.stringify({ ...s, selfTestBug: bug })}\n`);
      continue;
    }
    failed++;
    by.set(out.violation.invariant, (by.get(out.violation.invariant) ?? 0) + 1);
    if (!bug) process.stderr.write(`VIOLATION of the correct store, run ${i} of seed ${seed}: ${out.violation.message}\nschedule: ${JSON.stringify(s)}\n`);
  }
  return { row: { runs, failed }, by, wallS: (performance.now() - t0) / 1000 };
}

function caughtBy(by: Map<string, number>): string {
  return [...by.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
}

function main(argv: string[]): number {
  const program = new Command()
    .name('power-sim')
    .description('Counts, per deliberate store bug, the simulated schedules that end in a violation.')
    .option('--runs <n>', 'schedules per bug (the correct store runs 10 times as many)', positiveInt, 100)
    .option('--seed <s>', 'seed of the batch (default: random; printed)', int32)
    .option('--out <file>', 'where to write the JSON', 'runs/power-sim.json')
    .option('--only <names>', `measure only these, comma-separated (${SELF_TEST_BUGS.join(', ')}, none): a long measurement split over several processes`, onlyList)
    .option('--part <k/m>', 'run only the schedules i with i mod m = k-1 (of every bug and the correct store): one of m processes splitting a measurement', partOf)
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) });
  try {
    program.parse(argv);
  } catch (e) {
    const code = (e as { code?: string }).code;
    return code === 'commander.helpDisplayed' || code === 'commander.version' ? 0 : 64;
  }
  const o = program.opts<{ runs: number; seed?: number; out: string; only?: Set<string>; part?: { k: number; m: number } }>();
  const wanted = (name: string): boolean => !o.only || o.only.has(name);
  const seed = o.seed ?? (Math.floor(Math.random() * 0x100000000) | 0);
  process.stdout.write(`power-sim: ${o.runs} dense schedules per bug, ${o.runs * 10} for the correct store, seed=${seed}${o.part ? `, part ${o.part.k}/${o.part.m} of them` : ''}\n`);
  const result: Record<string, PowerRow> = {};
  const lines: string[][] = [];
  for (const bug of SELF_TEST_BUGS) {
    if (!wanted(bug)) continue;
    const m = measure(seed, o.runs, bug, o.part);
    result[bug] = m.row;
    lines.push([bug, `${m.row.failed} / ${m.row.runs}`, caughtBy(m.by) || '-', m.wallS.toFixed(1)]);
    process.stdout.write(`  ${bug}: ${m.row.failed} / ${m.row.runs}\n`);
  }
  const none = wanted('none') ? measure(seed, o.runs * 10, undefined, o.part) : null;
  if (none) {
    result.none = none.row;
    lines.push(['none (correct store)', `${none.row.failed} / ${none.row.runs}`, caughtBy(none.by) || '-', none.wallS.toFixed(1)]);
  }
  const head = ['bug', 'caught', 'by invariant', 'wall s'];
  const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const fmt = (cells: string[]): string => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  process.stdout.write(`\n${fmt(head)}\n|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|\n${lines.map(fmt).join('\n')}\n`);
  mkdirSync(dirname(o.out), { recursive: true });
  writeFileSync(o.out, `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(`wrote ${o.out} (seed=${seed})\n`);
  return none && none.row.failed > 0 ? 1 : 0;
}

process.exitCode = main(process.argv);
