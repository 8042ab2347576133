#!/usr/bin/env node
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import ms from 'ms';
import { parseFaults as parseFaultSelection, ScheduleError, FAULT_KINDS, PRESET_NAMES } from './nemesis/schedule.js';
import { UsageError, USAGE_EXIT_CODE } from './usage-error.js';
import { TARGET_NAMES } from './targets/targets.js';
import type { TargetName } from './targets/target.js';
import { SELF_TEST_BUGS, type SelfTestBug } from '../nodes/cluster-config.js';

/** Exit code of a harness error (DESIGN.md §5). */
const HARNESS_ERROR = 3;

/**
 * Parses a duration such as "60s", "10m", "4h" (the `ms` package) into ms.
 * @throws InvalidArgumentError (one line) for anything else, including a bare number.
 */
export function parseDuration(text: string): number {
  const v = /^\s*\d+(\.\d+)?\s*[a-zA-Z]+\s*$/.test(text) ? ms(text as ms.StringValue) : undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) {
    throw new InvalidArgumentError(`"${text}" is not a duration; use a number with a unit, e.g. 60s, 10m, 4h`);
  }
  if (v <= 0) throw new InvalidArgumentError(`"${text}" is not more than zero`);
  return v;
}

function parseIntArg(name: string, min: number) {
  return (text: string): number => {
    const n = Number(text);
    if (!/^\d+$/.test(text.trim()) || n < min || !Number.isSafeInteger(n)) {
      throw new InvalidArgumentError(`${name} must be an integer from ${min} to ${Number.MAX_SAFE_INTEGER}, got "${text}"`);
    }
    return n;
  };
}

function parseFaults(text: string): string {
  try {
    parseFaultSelection(text);
  } catch (e) {
    throw new InvalidArgumentError((e as Error).message);
  }
  return text;
}

/** Prints one line (newlines inside a message folded) and exits. */
function fail(message: string, code: number): never {
  const line = message.replace(/\s*\n\s*/g, ' ').trim();
  process.stderr.write(`zaris-certify: ${line.length > 500 ? `${line.slice(0, 500)}…` : line}\n`);
  process.exit(code);
}

/** Builds the `zaris-certify` command line (DESIGN.md §7). */
export function buildCli(): Command {
  const program = new Command('zaris-certify')
    .description('Chaos certification of the Zaris key-value store: no acknowledged write lost.')
    .exitOverride()
    // errors are printed once, as one line, by main()
    .configureOutput({ writeErr: () => undefined })
    .showHelpAfterError(false);

  program
    .command('certify')
    .description('run the store under faults, verify, write results.json, junit.xml and report.html')
    .addOption(new Option('--target <name>', 'the store under test').choices([...TARGET_NAMES]).default('zaris'))
    .addOption(new Option('--nats-reads', 'nats-jetstream: reads of each key during the run, judged as linearizable (off: the contract judged is at-least-once durability only)'))
    .addOption(new Option('--patroni-sync <mode>', "postgres-patroni: off (asynchronous replication, the default) or strict (Patroni's synchronous_mode_strict)"))
    .addOption(new Option('--redis-min-replicas <n>', "redis-sentinel: Redis's min-replicas-to-write (0 = Redis's own default: an isolated master acknowledges on)").argParser(parseIntArg('--redis-min-replicas', 0)))
    .addOption(new Option('--duration <duration>', 'length of the fault phase (e.g. 60s, 10m, 4h)').argParser(parseDuration).default(60_000, '60s'))
    .addOption(new Option('--seed <n>', 'seed of the fault schedule and workload').argParser(parseIntArg('--seed', 0)))
    .addOption(new Option('--runtime <kind>', 'where nodes run').choices(['auto', 'process', 'docker']).default('auto'))
    .addOption(new Option('--faults <kinds>', `comma-separated fault kinds (${FAULT_KINDS.join(',')}, and membership: join, leave, rebalance), or all / none, or preset:<name> (${PRESET_NAMES.join(', ')})`).argParser(parseFaults))
    .addOption(new Option('--nodes <n>', 'cluster size (default 3)').choices(['3', '5']))
    .addOption(new Option('--spares <n>', 'spare nodes started outside the member set, for membership changes to join and drain (default: 1 with membership changes, else 0)').argParser(parseIntArg('--spares', 0)))
    .option('--beyond-budget', 'let faults overlap past the fault budget', false)
    .option('--replay <run-dir>', 're-apply the planned schedule of a recorded run')
    .option('--scenario <file>', 'play a scenario (scenarios/<name>.yaml) instead of a random schedule; it names the cluster, stores, timings and what it expects')
    .option('--runs-dir <dir>', 'parent folder of run directories', 'runs')
    .addOption(new Option('--rate <writes-per-sec>', 'target write rate over all stores (0 = unthrottled)').argParser(parseIntArg('--rate', 0)).default(3000))
    .addOption(new Option('--writers <n>', 'writers per store').argParser(parseIntArg('--writers', 1)).default(8))
    .addOption(new Option('--keys <n>', 'keys each writer writes at a time (each its own sequential loop)').argParser(parseIntArg('--keys', 1)).default(16))
    .addOption(new Option('--escalation <duration>', 'nodes\' suspicion escalation timeout (seed 002)').argParser(parseDuration).default(10_000, '10s'))
    .addOption(new Option('--async-lag <duration>', 'how long the store may leave an acknowledged async write unreplicated with nothing in the way').argParser(parseDuration).default(1_000, '1s'))
    .addOption(new Option('--stall <duration>', 'longest a node may stay silent (or a partition Unavailable) with no fault touching it before it is a stall finding (availability)').argParser(parseDuration).default(5_000, '5s'))
    .addOption(new Option('--self-test-bug <bug>', 'start the store with a deliberate bug (self-test: the verdict must be FAILED)').choices([...SELF_TEST_BUGS]))
    .action(async (opts: { target: TargetName; natsReads?: boolean; redisMinReplicas?: number; patroniSync?: string; selfTestBug?: SelfTestBug; duration: number; seed?: number; runtime: 'auto' | 'process' | 'docker'; faults?: string; nodes?: string; spares?: number; beyondBudget: boolean; replay?: string; scenario?: string; runsDir: string; rate: number; writers: number; keys: number; escalation: number; asyncLag: number; stall: number }, cmd: Command) => {
      let scenario;
      if (opts.scenario !== undefined) {
        // a scenario names its cluster, faults and timings: the same options beside it are a mistake
        const clash = (['faults', 'nodes', 'beyondBudget', 'escalation', 'replay'] as const).filter((k) => cmd.getOptionValueSource(k) === 'cli');
        if (clash.length > 0) throw new UsageError(`--scenario names its own cluster, faults and timings: drop ${clash.map((k) => `--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`).join(', ')}`);
        const { loadScenario } = await import('./scenario/scenario.js');
        scenario = loadScenario(opts.scenario);
      }
      const { certify } = await import('./certify.js');
      const { createProgressOutput } = await import('./run-progress.js');
      // the harness's self-test of a run the world fails (runtime/injected-runtime-errors.ts)
      const { INJECT_ENV, parseInjections } = await import('./runtime/injected-runtime-errors.js');
      let injectRuntimeErrors;
      try {
        injectRuntimeErrors = parseInjections(process.env[INJECT_ENV] ?? '');
      } catch (e) {
        throw new UsageError((e as Error).message);
      }
      // on a terminal the progress line is redrawn in place, the run's lines printed above it
      const output = createProgressOutput({ stream: process.stderr, prefix: 'zaris-certify: ' });
      const ac = new AbortController();
      let interrupts = 0;
      const onSignal = (sig: string): void => {
        interrupts++;
        if (interrupts === 1) {
          output.log(`${sig}: stopping faults, healing, cleaning up (again to force)`);
          ac.abort();
        } else fail(`${sig} again: forced exit; the next run sweeps what is left`, 130);
      };
      process.on('SIGINT', () => onSignal('SIGINT'));
      process.on('SIGTERM', () => onSignal('SIGTERM'));
      const seed = opts.seed ?? Math.floor(Math.random() * 1_000_000);
      const out = await certify({
        target: opts.target,
        ...(opts.redisMinReplicas !== undefined ? { redisMinReplicas: opts.redisMinReplicas } : {}),
        ...(opts.patroniSync !== undefined ? { patroniSync: opts.patroniSync } : {}),
        ...(opts.natsReads ? { natsReads: true } : {}),
        durationMs: opts.duration,
        seed,
        runtime: opts.runtime,
        faults: parseFaultSelection(opts.faults ?? 'all').kinds,
        faultPreset: parseFaultSelection(opts.faults ?? 'all').preset,
        faultsExplicit: opts.faults !== undefined,
        ...(opts.nodes !== undefined ? { nodes: Number(opts.nodes) } : {}),
        ...(opts.spares !== undefined ? { spares: opts.spares } : {}),
        beyondBudget: opts.beyondBudget,
        replay: opts.replay,
        ...(scenario ? { scenario } : {}),
        runsDir: opts.runsDir,
        rate: opts.rate,
        writersPerStore: opts.writers,
        keysPerWriter: opts.keys,
        escalationTimeoutMs: opts.escalation,
        ...(cmd.getOptionValueSource('asyncLag') === 'cli' ? { asyncLagMaxMs: opts.asyncLag } : {}),
        stallBoundMs: opts.stall,
        selfTestBug: opts.selfTestBug,
        ...(injectRuntimeErrors.length > 0 ? { injectRuntimeErrors } : {}),
        signal: ac.signal,
        log: (line) => output.log(line),
        output,
      });
      const r = out.results;
      process.stdout.write(`${out.runDir}\n`);
      if (r) {
        process.stdout.write(
          `${r.verdict}${r.target ? ` (${r.target.version})` : ''}: ${r.counts.acknowledged} acknowledged writes, faults ${JSON.stringify(r.faults)}, ` +
            `violations ${r.summary.violation}, rf1 ${r.summary.rf1}, async-ack ${r.summary['async-ack']}, beyond-budget ${r.summary['beyond-budget']}` +
            `${r.inconclusiveReason ? ` (${r.inconclusiveReason})` : ''}${r.selfTestBug ? ` [self-test: ${r.selfTestBug}]` : ''}\n`,
        );
        if (r.membership) process.stdout.write(`${(await import('../reports/results.js')).describeMembership(r.membership)}\n`);
        if (r.scenario) {
          const e = r.scenario.expected;
          process.stdout.write(`scenario ${r.scenario.name}: expected ${e.verdict}${e.allow ? ` (allow ${e.allow.join(', ') || 'none'})` : ''}: ${r.scenario.held ? 'held' : `did NOT hold: ${r.scenario.reasons.join('; ')}`}\n`);
        }
      }
      process.exitCode = out.exitCode;
    });

  program
    .command('scenarios')
    .description('play every scenario of a folder, one at a time; print a table and write runs/scenarios.json')
    .option('--dir <dir>', 'the folder of scenario files', 'scenarios')
    .option('--only <names>', 'only the files whose names contain one of these (comma-separated)')
    .addOption(new Option('--runtime <kind>', 'where nodes run').choices(['auto', 'process', 'docker']).default('auto'))
    .option('--runs-dir <dir>', 'parent folder of run directories', 'runs')
    .addOption(new Option('--seed <n>', 'seed of scenarios that name none').argParser(parseIntArg('--seed', 0)))
    .addOption(new Option('--rate <writes-per-sec>', 'target write rate over all stores').argParser(parseIntArg('--rate', 0)).default(3000))
    .action(async (opts: { dir: string; only?: string; runtime: 'auto' | 'process' | 'docker'; runsDir: string; seed?: number; rate: number }) => {
      const { runScenarios } = await import('./commands/scenarios.js');
      const { certify } = await import('./certify.js');
      const ac = new AbortController();
      process.on('SIGINT', () => (ac.signal.aborted ? fail('SIGINT again: forced exit', 130) : ac.abort()));
      const report = await runScenarios({
        dir: opts.dir,
        ...(opts.only ? { only: opts.only } : {}),
        base: { runtime: opts.runtime, runsDir: opts.runsDir, rate: opts.rate, writersPerStore: 8, keysPerWriter: 16, signal: ac.signal, ...(opts.seed !== undefined ? { seed: opts.seed } : {}) },
        certify,
        print: (l) => process.stdout.write(`${l}\n`),
      });
      process.exitCode = report.failed > 0 ? 1 : 0;
    });

  program
    .command('shrink')
    .description('shrink a FAILED run to the fewest recorded faults that still make it fail (delta debugging), written as a scenario beside the run')
    .argument('<run-dir>', 'a FAILED run directory (runs/<utc>-<seed>)')
    .addOption(new Option('--max-runs <n>', 'at most this many replays').argParser(parseIntArg('--max-runs', 1)).default(16))
    .addOption(new Option('--runtime <kind>', 'where nodes run').choices(['auto', 'process', 'docker']).default('auto'))
    .addOption(new Option('--rate <writes-per-sec>', 'target write rate over all stores').argParser(parseIntArg('--rate', 0)).default(3000))
    .action(async (runDir: string, opts: { maxRuns: number; runtime: 'auto' | 'process' | 'docker'; rate: number }) => {
      const { shrinkRun } = await import('./commands/shrink.js');
      const { certify } = await import('./certify.js');
      const ac = new AbortController();
      process.on('SIGINT', () => (ac.signal.aborted ? fail('SIGINT again: forced exit', 130) : ac.abort()));
      const r = await shrinkRun({
        run: runDir,
        maxTests: opts.maxRuns,
        base: { runtime: opts.runtime, rate: opts.rate, writersPerStore: 8, keysPerWriter: 16, signal: ac.signal },
        certify,
        print: (l) => process.stdout.write(`${l}\n`),
      });
      process.exitCode = r.scenarioFile ? 0 : 2;
    });

  program
    .command('analyze')
    .description('re-verify a stored run from its ledger, or a zaris-history/1 file')
    .argument('[run-dir]', 'a run directory (runs/<utc>-<seed>)')
    .option('--history <file>', 'a zaris-history/1 JSON file instead of a run directory')
    .option('--out <dir>', 'where --history writes ledger.sqlite, results.json, junit.xml, report.html')
    .action(async (runDir: string | undefined, opts: { history?: string; out?: string }) => {
      const { analyzeHistoryFile, analyzeRunDir } = await import('./commands/analyze.js');
      let r;
      if (opts.history) {
        if (runDir) throw new UsageError('give either a run directory or --history, not both');
        if (!opts.out) throw new UsageError('--history needs --out DIR');
        r = analyzeHistoryFile(opts.history, opts.out);
        process.stdout.write(`${opts.out}\n`);
      } else {
        if (!runDir) throw new UsageError('analyze needs a run directory (or --history FILE --out DIR)');
        r = analyzeRunDir(runDir);
        process.stdout.write(`${runDir}\n`);
      }
      process.stdout.write(
        `${r.verdict}: violations ${r.summary.violation}, rf1 ${r.summary.rf1}, async-ack ${r.summary['async-ack']}, beyond-budget ${r.summary['beyond-budget']}, info ${r.summary.info}` +
          `${r.inconclusiveReason ? ` (${r.inconclusiveReason})` : ''}${r.selfTestBug ? ` [self-test: ${r.selfTestBug}]` : ''}\n`,
      );
      process.exitCode = r.exitCode;
    });

  program
    .command('export')
    .description("write a run's ledger as a zaris-history/1 file")
    .argument('<run-dir>', 'a run directory')
    .option('--out <file>', 'output file (default <run-dir>/history.json)')
    .action(async (runDir: string, opts: { out?: string }) => {
      const { exportRun } = await import('./commands/export.js');
      process.stdout.write(`${exportRun(runDir, opts.out)}\n`);
    });

  program
    .command('power')
    .description('issue 12: per self-test bug, and for the correct store, RUNS seeded certify runs; FAILED counts and median seconds to the first violation in runs/power.json')
    .addOption(new Option('--runs <n>', 'runs per bug, and of the correct store').argParser(parseIntArg('--runs', 1)).default(10))
    .addOption(new Option('--seconds <n>', "each run's fault phase, s").argParser(parseIntArg('--seconds', 1)).default(180))
    .addOption(new Option('--seed <n>', 'run i of every bug uses seed + i').argParser(parseIntArg('--seed', 0)).default(1))
    .addOption(new Option('--mix <mix>', "preset: each bug under its own FAULTS preset (the correct store's runs under the bugs' presets in turn); default: every run under the mix make certify plays without FAULTS=").choices(['preset', 'default']).default('preset'))
    .addOption(new Option('--runtime <kind>', 'where nodes run').choices(['auto', 'process', 'docker']).default('process'))
    .option('--runs-dir <dir>', 'parent folder of run directories (power.json goes there)', 'runs')
    .option('--only <names>', 'comma list of self-test bugs and/or none (the correct store): run only those')
    .addOption(new Option('--jobs <n>', 'runs at a time (each run its own nodes; at 3,000 writes/s a run takes well under a core)').argParser(parseIntArg('--jobs', 1)).default(1))
    .action(async (opts: { runs: number; seconds: number; seed: number; mix: 'preset' | 'default'; runtime: 'auto' | 'process' | 'docker'; runsDir: string; only?: string; jobs: number }) => {
      const { certify } = await import('./certify.js');
      const { runPower, parsePowerOnly } = await import('./commands/power.js');
      let only: ReturnType<typeof parsePowerOnly> | undefined;
      try {
        only = opts.only === undefined ? undefined : parsePowerOnly(opts.only);
      } catch (e) {
        throw new UsageError((e as Error).message);
      }
      const ac = new AbortController();
      process.on('SIGINT', () => ac.abort());
      process.on('SIGTERM', () => ac.abort());
      const print = (line: string): void => void process.stdout.write(`${line}\n`);
      const { report } = await runPower({
        runs: opts.runs,
        seconds: opts.seconds,
        seed: opts.seed,
        mix: opts.mix,
        jobs: opts.jobs,
        ...(only ? { only } : {}),
        base: { runtime: opts.runtime, runsDir: opts.runsDir, rate: 3000, writersPerStore: 8, keysPerWriter: 16, escalationTimeoutMs: 10_000, signal: ac.signal, log: () => undefined },
        certify,
        print,
      });
      // the correct store FAILED: the store (or the certifier) is broken, say so in the exit code
      process.exitCode = (report.none?.failed ?? 0) > 0 ? 1 : 0;
    });

  program
    .command('admin')
    .description('operate a running cluster: status (maps, health, epochs, members), handoff, regenerate, set-policy (seed 004), join, leave, rebalance (issue 14)')
    .argument('<verb>', 'status | handoff <store>/<partition> <node> | regenerate <store>/<partition> | set-policy <store> <table> | join <node> | leave <node> | rebalance')
    .argument('[args...]', "the verb's arguments")
    .option('--seeds <host:port,...>', "client endpoints of any of the cluster's nodes (default: those of --run's cluster.json)")
    .option('--run <dir>', 'a running certify run whose cluster.json names the nodes', 'runs/latest')
    .option('--json', 'print JSON instead of a table', false)
    .addOption(new Option('--timeout <duration>', 'per-request timeout').argParser(parseDuration).default(2_000, '2s'))
    .action(async (verb: string, args: string[], opts: { seeds?: string; run: string; json: boolean; timeout: number }) => {
      const { runAdmin, parseSeeds, seedsOfRun } = await import('./commands/admin.js');
      const seeds = opts.seeds !== undefined ? parseSeeds(opts.seeds) : seedsOfRun(opts.run);
      await runAdmin(verb, args, { seeds, json: opts.json, timeoutMs: opts.timeout, print: (t) => process.stdout.write(`${t}\n`) });
    });

  program
    .command('node')
    .description('start one store node')
    .requiredOption('--config <file>', 'cluster config (JSON)')
    .requiredOption('--id <id>', 'this node\'s id')
    .option('--run <tag>', 'run tag (set by the harness)')
    .option('--metrics-port <port>', "the metrics endpoint's port (Prometheus text format; 0 = off; default: the config's metricsPort)")
    .option('--join', 'a spare of the config asks the leader to join the member set (copies then move onto it)')
    .action(async (opts: { config: string; id: string; run?: string; metricsPort?: string; join?: boolean }) => {
      const { runNode } = await import('../nodes/node-main.js');
      await runNode(['--config', opts.config, '--id', opts.id, ...(opts.run ? ['--run', opts.run] : []), ...(opts.metricsPort !== undefined ? ['--metrics-port', opts.metricsPort] : []), ...(opts.join ? ['--join'] : [])]);
    });
  return program;
}

/** Runs the CLI; maps user mistakes to exit 64 and one line, anything else to exit 3. */
export async function main(argv: string[]): Promise<void> {
  if (argv.length === 0) {
    buildCli().outputHelp();
    fail('no command given (certify, scenarios, shrink, analyze, export, admin, node)', USAGE_EXIT_CODE);
  }
  // the last guard: an error nothing awaited is a harness bug, said in one line (exit 3), never a stack trace
  const lastGuard = (e: unknown): void => {
    if (process.env.ZARIS_DEBUG) process.stderr.write(`${(e as Error)?.stack ?? String(e)}\n`);
    fail(`harness error: ${(e as Error)?.message ?? String(e)}`, HARNESS_ERROR);
  };
  process.on('unhandledRejection', lastGuard);
  process.on('uncaughtException', lastGuard);
  try {
    await buildCli().parseAsync(argv, { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.code === 'commander.help') process.exit(0);
      fail(e.message.replace(/^error: /, ''), USAGE_EXIT_CODE);
    }
    if (e instanceof UsageError || e instanceof ScheduleError || (e as Error).name === 'ConfigError') fail((e as Error).message, USAGE_EXIT_CODE);
    // admin: a cluster that cannot be reached or refuses (exit 3), a membership verb (exit 2)
    if ((e as Error).name === 'ClusterError') fail((e as Error).message, HARNESS_ERROR);
    if (process.env.ZARIS_DEBUG) process.stderr.write(`${(e as Error).stack}\n`);
    fail(`harness error: ${(e as Error).message}`, HARNESS_ERROR);
  }
}

const isMain = !!process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) void main(process.argv.slice(2));
