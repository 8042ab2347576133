/**
 * Set-up: earlier runs' leftovers swept, the runtime chosen and made, the run directory (runs/latest
 * points at it) and its ledger created.
 */
import { mkdirSync, rmSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { NullLedger, type Ledger } from '../../ledger/ledger-writer.js';
import { WorkerLedger } from '../../ledger/worker-ledger.js';
import type { RunClock } from '../clock.js';
import { dockerEngineVersion } from '../docker/docker-cli.js';
import { guardRuntime } from '../run-errors.js';
import { sweepDockerLeftovers } from '../runtime/docker-sweep.js';
import { nodeProcessSweeper } from '../runtime/process-sweeper.js';
import { ProcessRuntime } from '../runtime/process-runtime.js';
import type { Runtime } from '../runtime/runtime.js';
import { selectRuntime } from '../runtime/select-runtime.js';
import { DEFAULT_SWEEPERS, sweepLeftovers, type Sweeper } from '../sweep.js';
import type { Target, TargetRuntime } from '../targets/target.js';
import { TargetDockerRuntime } from '../targets/target-docker-runtime.js';
import { TargetProcessRuntime } from '../targets/target-process-runtime.js';
import { UsageError } from '../usage-error.js';
import type { CertifyOptions } from './options.js';
import type { RunPlan } from './plan.js';

function utcStamp(): string {
  return new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
}

/**
 * Creates a new run directory `<runsDir>/<name>`, or `<name>-2`, `-3`, ... when that exists
 * (runs started in the same second with the same seed, e.g. `make power JOBS=4`): a run never
 * writes into another run's directory. `runsDir` must exist.
 * @returns the absolute path created.
 * @throws the fs error of anything but an existing name.
 */
export function createRunDir(runsDir: string, name: string): string {
  for (let n = 1; ; n++) {
    const dir = path.resolve(runsDir, n === 1 ? name : `${name}-${n}`);
    try {
      mkdirSync(dir);
      return dir;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
  }
}

/**
 * Picks and constructs the runtime (DESIGN.md §3 `auto`: docker when an engine answers and the
 * node image exists or can be built, else process). The reason line goes into the report.
 * @throws UsageError when docker is asked for and cannot run here.
 */
async function makeRuntime(kind: CertifyOptions['runtime'], runTag: string, processPartitions: () => Promise<boolean>, log: (l: string) => void): Promise<{ runtime: Runtime; reason: string }> {
  let sel;
  try {
    sel = await selectRuntime(kind, {
      createProcessRuntime: async () => new ProcessRuntime({ runTag, partitions: await processPartitions() }),
      docker: { runTag, log },
    });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  return { runtime: await sel.create(), reason: sel.reason };
}

/**
 * Picks and constructs the runtime of a target other than Zaris (the same choice as
 * {@link makeRuntime}: docker when an engine answers and the node image exists or can be built,
 * else process), then asks the target whether it can run there.
 * @throws UsageError when the runtime asked for cannot run here, or the target cannot run on it
 *   (a missing Debian package, setpriv).
 */
async function makeTargetRuntime(target: Target, kind: CertifyOptions['runtime'], runTag: string, processPartitions: () => Promise<boolean>, log: (l: string) => void): Promise<{ runtime: TargetRuntime; reason: string }> {
  let sel;
  try {
    sel = await selectRuntime<TargetRuntime>(kind, {
      createProcessRuntime: async () => new TargetProcessRuntime({ runTag, partitions: await processPartitions() }),
      createDockerRuntime: async () => new TargetDockerRuntime({ runTag, log }),
      docker: { runTag, log },
    });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const why = await target.unavailableReason(sel.kind);
  // RUNTIME=auto picked docker, but the target runs only as processes here: the process runtime instead
  if (why && kind === 'auto' && sel.kind === 'docker' && (await target.unavailableReason('process')) === null) {
    return { runtime: new TargetProcessRuntime({ runTag, partitions: await processPartitions() }), reason: `auto: TARGET=${target.name} cannot run on docker (${why}), so process` };
  }
  if (why) throw new UsageError(`TARGET=${target.name} cannot run on the ${sel.kind} runtime here: ${why}`);
  return { runtime: await sel.create(), reason: sel.reason };
}

/** The docker sweeper, when an engine answers (otherwise nothing of docker can be left). */
const dockerSweeper: Sweeper = {
  name: 'docker',
  async sweep() {
    if ((await dockerEngineVersion(3_000)) === undefined) return [];
    const r = await sweepDockerLeftovers();
    return [...r.containers, ...r.networks];
  },
};

/** What the set-up made: the run's runtime, directory and ledger. */
export interface RunSetUp {
  /** The runtime, every call guarded (run-errors.ts): a target's runtime for a target other than Zaris. */
  runtime: Runtime | TargetRuntime;
  /** Why this runtime (the report's line: `auto: ...`). */
  reason: string;
  /** The tag of everything this run starts (processes, containers, networks): `r` and 6 hex digits. */
  runTag: string;
  /** The run's seed: a replayed run's, a scenario's own, or the option's. */
  seed: number;
  /** The run directory, absolute. */
  runDir: string;
  /** The run's ledger (`<runDir>/ledger.sqlite`; nothing with `ledgerOff`). */
  ledger: Ledger;
}

/**
 * Sweeps what earlier runs left (processes, containers, networks), makes the runtime the plan can
 * run on, creates the run directory `<runsDir>/<utc>-<seed>` with runs/latest pointing at it, and
 * opens the ledger (its SQLite work on a worker thread).
 * @throws UsageError when the runtime asked for, or the target, cannot run here.
 */
export async function setUpRun(o: CertifyOptions, plan: RunPlan, clock: RunClock, log: (line: string) => void): Promise<RunSetUp> {
  await sweepLeftovers({ sweepers: [...DEFAULT_SWEEPERS, nodeProcessSweeper, dockerSweeper] });
  const runTag = `r${randomBytes(3).toString('hex')}`;
  const { runtime: made, reason } = plan.target ? await makeTargetRuntime(plan.target, o.runtime, runTag, plan.processPartitions, log) : await makeRuntime(o.runtime, runTag, plan.processPartitions, log);
  mkdirSync(o.runsDir, { recursive: true });
  // a scenario's own seed (when it names one) seeds its live choices and the workload
  const seed = plan.replayed ? plan.replayed.seed : (plan.scenario?.seed ?? o.seed);
  const runDir = createRunDir(o.runsDir, `${utcStamp()}-${seed}`);
  const latest = path.join(o.runsDir, 'latest');
  rmSync(latest, { force: true });
  symlinkSync(path.basename(runDir), latest);

  // the SQLite work runs on a worker thread: the harness's event loop only queues rows
  const ledger: Ledger = o.ledgerOff ? new NullLedger() : new WorkerLedger(path.join(runDir, 'ledger.sqlite'));
  // every runtime call of the run: transient failures retried, the rest a world error (run-errors.ts)
  const runtime = guardRuntime(made, { ledger, clock, log, ...(o.injectRuntimeErrors ? { inject: o.injectRuntimeErrors } : {}), ...(o.runtimeBackoff ? { backoff: o.runtimeBackoff } : {}) });
  log(`run ${runDir} (target ${plan.targetName}, runtime ${runtime.kind}: ${reason})`);
  return { runtime, reason, runTag, seed, runDir, ledger };
}
