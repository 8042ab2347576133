/**
 * One certification run: its options wired to its phases in order (harness/certify/: set-up,
 * workload, fault phase, heal, read back, seal, verify and report).
 */
import type { Results } from '../reports/results.js';
import { startRunClock, type RunClock } from './clock.js';
import type { RuntimeKind, Runtime } from './runtime/runtime.js';
import type { TargetRuntime } from './targets/target.js';
import { runFaultPhase } from './certify/fault-phase.js';
import { scheduleFaults } from './certify/fault-schedule.js';
import { heal } from './certify/heal.js';
import type { CertifyOptions } from './certify/options.js';
import { checkTarget, planRun } from './certify/plan.js';
import { readBack } from './certify/read-back.js';
import { startRunMeta } from './certify/run-meta.js';
import { newRunState, releaseRun } from './certify/run-state.js';
import { endOnError, sealRun } from './certify/seal.js';
import { setUpRun } from './certify/setup.js';
import { startTargetStore } from './certify/target-store.js';
import { verifyAndReport } from './certify/verify-and-report.js';
import { startZarisWorkload, type RunStore } from './certify/workload-start.js';
import { startZarisCluster } from './certify/zaris-cluster.js';

/** What a run produced. */
export interface CertifyOutcome {
  runDir: string;
  exitCode: number;
  results: Results | null;
  /** Acknowledged writes/s over the fault phase (for the benchmark). */
  ackedPerSec: number;
  failoverMs: number[];
  runtime: RuntimeKind;
}

/**
 * One certification run (DESIGN.md §3-§7): sweep leftovers, start the cluster, run the workload
 * and the nemesis for the duration, heal, read every key, verify, write results.json, junit.xml
 * and report.html into `runs/<utc>-<seed>/` (runs/latest points at it).
 * A runtime, target or engine error does not throw: the run ends INCONCLUSIVE with it as the
 * reason (run-errors.ts).
 * @throws UsageError for bad options discovered late (e.g. partitions without CAP_NET_ADMIN);
 *   any other error is a harness bug (the run's files are kept; the CLI exits 3).
 */
export async function certify(o: CertifyOptions): Promise<CertifyOutcome> {
  const log = o.log ?? (() => undefined);
  const checked = await checkTarget(o);
  const clock: RunClock = startRunClock();
  const plan = await planRun(o, checked, log);
  const run = await setUpRun(o, plan, clock, log);
  const { runtime, runDir, ledger } = run;
  const state = newRunState();
  try {
    const meta = startRunMeta(o, plan, run);
    let store: RunStore;
    if (plan.target) store = await startTargetStore({ o, target: plan.target, runtime: runtime as TargetRuntime, run, meta, clock, log, state });
    else {
      const cluster = await startZarisCluster({ runtime: runtime as Runtime, plan, meta, run, clock, log, state });
      store = await startZarisWorkload({ o, plan, meta, run, clock, log, state, cluster });
    }
    const schedule = await scheduleFaults({ o, plan, meta, seed: run.seed, watch: store.watch, ledger, log });
    const phase = await runFaultPhase({ o, plan, meta, schedule, runtime, runDir, ledger, clock, log, store, state });
    await heal({ phase, store, ledger, clock, log });
    if (state.status !== 'interrupted') await readBack(state, ledger, clock, log);
    sealRun(ledger, clock, state.status);
  } catch (e) {
    await endOnError(e, { runDir, ledger, clock, log, workload: state.workload });
  } finally {
    await releaseRun(state, runtime, ledger);
  }
  const { results, exitCode } = verifyAndReport(runDir, o, log);
  return { runDir, exitCode, results, ackedPerSec: state.ackedPerSec, failoverMs: state.watch?.failoverMs ?? [], runtime: runtime.kind };
}
