#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Command, InvalidArgumentError } from 'commander';
import fc from 'fast-check';
import { runSimulation, SimViolation } from './failover-sim.js';
import { scheduleArb, survivorScheduleArb } from './sim-arbitraries.js';
import { validateSchedule, type SimSchedule } from './sim-schedule.js';

/**
 * `make sim RUNS=N [SEED=S]` (sim brief, issue 4): runs N generated schedules outside vitest —
 * the same generators as the properties of failover-sim.test.ts, mixed — and prints one summary
 * line on stdout: runs, events, violations, virtual seconds, wall seconds, and the seed that
 * replays the whole batch. Every violation is printed on stderr with its schedule as JSON
 * (replay one with --schedule FILE). Exit code: 0 clean, 1 any violation, 64 bad arguments.
 */

/** The mix of schedule families, by weight (the properties' proportions). */
export function mixedScheduleArb(): fc.Arbitrary<SimSchedule> {
  return fc.oneof(
    { weight: 8, arbitrary: scheduleArb({ budget: 'within' }) },
    { weight: 2, arbitrary: scheduleArb({ budget: 'within', clusters: ['n5'], maxWorkloadMs: 4_000 }) },
    { weight: 5, arbitrary: scheduleArb({ budget: 'beyond', clusters: ['n3', 'n3', 'n5'], crashWeight: 4 }) },
    { weight: 3, arbitrary: survivorScheduleArb() },
    { weight: 1, arbitrary: scheduleArb({ budget: 'amnesia', clusters: ['n3', 'n3', 'n5'], crashWeight: 8 }) },
  );
}

/** The schedule of run `i` of a batch seeded `seed`: reproducible one by one. */
export function scheduleOfRun(seed: number, i: number): SimSchedule {
  return fc.sample(mixedScheduleArb(), { numRuns: 1, seed: (Math.imul(seed, 0x9e3779b1) + i) | 0 })[0];
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

interface Summary {
  runs: number;
  events: number;
  violations: number;
  virtualMs: number;
}

function runOne(s: SimSchedule, label: string, sum: Summary): void {
  sum.runs++;
  try {
    const r = runSimulation(s);
    sum.events += r.events;
    sum.virtualMs += r.virtualMs;
    if (s.faults.some((f) => f.kind === 'strip') && r.stats.strips !== 1) {
      sum.violations++;
      process.stderr.write(`VIOLATION ${label}: sole-survivor: the strip never ran (${r.stats.faultsSkipped} skipped)\nschedule: ${JSON.stringify(s)}\n`);
    }
  } catch (e) {
    if (!(e instanceof SimViolation)) throw e;
    sum.violations++;
    sum.virtualMs += e.atMs;
    process.stderr.write(`VIOLATION ${label}: ${e.message}\nschedule: ${JSON.stringify(s)}\n`);
  }
}

function main(argv: string[]): number {
  const program = new Command()
    .name('sim-main')
    .description('Runs generated failover-simulation schedules and prints a one-line summary.')
    .option('--runs <n>', 'schedules to run', positiveInt, 1000)
    .option('--seed <s>', 'seed of the batch (default: random; printed in the summary)', int32)
    .option('--schedule <file>', 'replay one schedule (JSON, as printed with a violation) instead')
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) });
  try {
    program.parse(argv);
  } catch (e) {
    const code = (e as { exitCode?: number; code?: string }).code;
    return code === 'commander.helpDisplayed' || code === 'commander.version' ? 0 : 64;
  }
  const o = program.opts<{ runs: number; seed?: number; schedule?: string }>();
  const sum: Summary = { runs: 0, events: 0, violations: 0, virtualMs: 0 };
  const t0 = performance.now();
  let seedText = '';
  if (o.schedule) {
    let s: SimSchedule;
    try {
      s = validateSchedule(JSON.parse(readFileSync(o.schedule, 'utf8')) as SimSchedule);
    } catch (e) {
      process.stderr.write(`sim: cannot use schedule ${o.schedule}: ${(e as Error).message.split('\n')[0]}\n`);
      return 64;
    }
    runOne(s, o.schedule, sum);
    seedText = `schedule=${o.schedule}`;
  } else {
    const seed = o.seed ?? (Math.floor(Math.random() * 0x100000000) | 0);
    seedText = `seed=${seed}`;
    for (let i = 0; i < o.runs; i++) runOne(scheduleOfRun(seed, i), `run ${i} of seed ${seed}`, sum);
  }
  const wall = (performance.now() - t0) / 1000;
  process.stdout.write(`sim: runs=${sum.runs} events=${sum.events} violations=${sum.violations} virtual_s=${(sum.virtualMs / 1000).toFixed(1)} wall_s=${wall.toFixed(1)} ${seedText}\n`);
  return sum.violations > 0 ? 1 : 0;
}

process.exitCode = main(process.argv);
