#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Command, InvalidArgumentError, Option } from 'commander';
import { SELF_TEST_BUGS, type SelfTestBug } from '../cluster-config.js';
import { runChecked, scheduleOfRun } from './sim-batch.js';
import { validateSchedule, type SimSchedule } from './sim-schedule.js';

/**
 * `make sim RUNS=N [SEED=S] [BUG=name] [MEMBERSHIP=1]` (sim brief, issue 4; issue 12; issue 14: with
 * MEMBERSHIP=1 the membership family only, and the summary counts membership changes and moves): runs N generated
 * schedules outside vitest — the same generators as the properties of failover-sim.test.ts, mixed
 * with the dense family (sim-batch.ts) — and prints one summary line on stdout: runs, events,
 * violations, virtual seconds, wall seconds, the batch's behaviour digest (equal digests: the store
 * behaved the same, message for message; a refactoring of the store keeps it), and the seed that
 * replays the whole batch. Every
 * violation is printed on stderr with its schedule as JSON (replay one with --schedule FILE).
 * `--bug` starts every node with that deliberate store bug (cluster-config.ts SELF_TEST_BUGS):
 * then violations are what is expected. Exit code: 0 clean, 1 any violation, 64 bad arguments.
 */

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
  /** FNV-1a over the runs' digests in order (a violation counts as 'violation'). */
  digest: number;
  membershipChanges: number;
  migrations: number;
}

function runOne(s: SimSchedule, label: string, sum: Summary, bug: SelfTestBug | undefined): void {
  sum.runs++;
  const out = runChecked(s, bug);
  sum.events += out.events;
  sum.virtualMs += out.virtualMs;
  sum.membershipChanges += out.membershipChanges;
  sum.migrations += out.migrations;
  for (const c of out.digest ?? 'violation') sum.digest = Math.imul(sum.digest ^ c.charCodeAt(0), 0x01000193);
  if (out.violation) {
    sum.violations++;
    process.stderr.write(`VIOLATION ${label}: ${out.violation.message}\nschedule: ${JSON.stringify(bug ? { ...s, selfTestBug: bug } : s)}\n`);
  }
}

function main(argv: string[]): number {
  const program = new Command()
    .name('sim-main')
    .description('Runs generated failover-simulation schedules and prints a one-line summary.')
    .option('--runs <n>', 'schedules to run', positiveInt, 1000)
    .option('--seed <s>', 'seed of the batch (default: random; printed in the summary)', int32)
    .option('--schedule <file>', 'replay one schedule (JSON, as printed with a violation) instead')
    .option('--membership', 'membership schedules only (issue 14): joins, leaves and rebalances mixed with crashes, pauses, partitions')
    .addOption(new Option('--bug <name>', 'start every node with this deliberate store bug (self-test)').choices([...SELF_TEST_BUGS]))
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) });
  try {
    program.parse(argv);
  } catch (e) {
    const code = (e as { exitCode?: number; code?: string }).code;
    return code === 'commander.helpDisplayed' || code === 'commander.version' ? 0 : 64;
  }
  const o = program.opts<{ runs: number; seed?: number; schedule?: string; bug?: SelfTestBug; membership?: boolean }>();
  const sum: Summary = { runs: 0, events: 0, violations: 0, virtualMs: 0, digest: 0x811c9dc5, membershipChanges: 0, migrations: 0 };
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
    runOne(s, o.schedule, sum, o.bug);
    seedText = `schedule=${o.schedule}`;
  } else {
    const seed = o.seed ?? (Math.floor(Math.random() * 0x100000000) | 0);
    seedText = `seed=${seed}`;
    for (let i = 0; i < o.runs; i++) runOne(scheduleOfRun(seed, i, o.membership === true), `run ${i} of seed ${seed}${o.membership ? ' (membership)' : ''}`, sum, o.bug);
  }
  const wall = (performance.now() - t0) / 1000;
  process.stdout.write(`sim: runs=${sum.runs} events=${sum.events} violations=${sum.violations} virtual_s=${(sum.virtualMs / 1000).toFixed(1)} wall_s=${wall.toFixed(1)} digest=${(sum.digest >>> 0).toString(16).padStart(8, '0')}${o.membership ? ` membership_changes=${sum.membershipChanges} migrations=${sum.migrations}` : ''} ${seedText}${o.bug ? ` bug=${o.bug}` : ''}\n`);
  return sum.violations > 0 ? 1 : 0;
}

process.exitCode = main(process.argv);
