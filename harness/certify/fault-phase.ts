/**
 * Fault phase: the workload and the nemesis run for the duration, until SIGINT, a runtime error
 * or the disk guard ends it, with the progress line, node metrics and the halfway policy change.
 */
import type { Ledger } from '../../ledger/ledger-writer.js';
import type { RunClock } from '../clock.js';
import { ledgerFaultRecorder } from '../cluster-watch.js';
import { formatBytes } from '../disk-guard.js';
import { startMetricsSampler, type MetricsSampler } from '../metrics-sampler.js';
import { Nemesis } from '../nemesis/nemesis.js';
import type { Schedule } from '../nemesis/schedule.js';
import { POLICY_TABLES } from '../policy-change.js';
import { phaseErrorReason } from '../run-errors.js';
import { startRunMonitor, type RunMonitor } from '../run-monitor.js';
import { plainProgressOutput } from '../run-progress.js';
import type { Runtime } from '../runtime/runtime.js';
import type { TargetRuntime } from '../targets/target.js';
import type { Workload } from '../workload.js';
import type { CertifyOptions } from './options.js';
import type { RunPlan } from './plan.js';
import type { RunMeta } from './run-meta.js';
import type { RunState } from './run-state.js';
import type { RunStore } from './workload-start.js';
import { sleep } from './wait.js';

/** How the fault phase ended: what the heal phase needs. */
export interface FaultPhaseEnd {
  /** The nemesis that played the schedule (the heal phase undoes what it did). */
  nemesis: Nemesis;
  /** The node metrics sampler, still running (the heal phase takes its last sample). */
  metrics: MetricsSampler;
  /** The runtime error that ended the phase early, as the run's INCONCLUSIVE reason; else null. */
  runError: string | null;
  /** The disk guard's reason when it ended the phase (the run is INCONCLUSIVE); else null. */
  diskLow: string | null;
}

/**
 * Starts the run monitor (run-monitor.ts) for the fault phase: progress line, harness memory in
 * the ledger, the ledger's expected size, the disk guard (which calls `onDiskLow` once).
 */
function watchRunMeans(o: CertifyOptions, runDir: string, ledger: Ledger, clock: RunClock, phaseStartMs: number, durationMs: number, workload: Workload, nemesis: Nemesis, onDiskLow: (reason: string) => void): RunMonitor {
  const log = o.log ?? (() => undefined);
  return startRunMonitor({
    runDir,
    durationMs,
    now: () => clock.now(),
    phaseStartMs,
    acked: () => workload.totals.ok,
    faults: () => Object.values(nemesis.counts()).reduce((a, b) => a + b, 0),
    ledger: o.ledgerOff ? null : ledger,
    output: o.output ?? plainProgressOutput(log),
    diskGuard: o.ledgerOff ? false : o.diskGuard,
    onDiskLow,
  });
}

/** At the end of the fault phase: the ledger's size against the estimate printed at its start. */
function endOfPhaseLedgerLine(monitor: RunMonitor, log: (line: string) => void): void {
  const bytes = monitor.stop();
  const e = monitor.estimate;
  if (bytes === null) return;
  const vs = e ? ` (expected ~${formatBytes(e.expectedBytes)}, ${e.expectedBytes > 0 ? `${bytes >= e.expectedBytes ? '+' : ''}${Math.round(((bytes - e.expectedBytes) / e.expectedBytes) * 100)}%` : 'n/a'})` : '';
  log(`ledger: ${formatBytes(bytes)} at the end of the fault phase${vs}`);
}

/**
 * Runs the fault phase: starts the watch, the metrics sampler (`state.metrics`), the workload and
 * the nemesis on the schedule (spares never vote), and the run monitor (`state.monitor`); seed
 * 004's policy changes halfway. The phase lasts the schedule's duration (a scenario's ends
 * `tailMs` after its last step), or ends at once on `o.signal` (`state.status` interrupted), a
 * runtime call that failed for good, or the disk guard (the workload then stops at once). Sets
 * `state.ackedPerSec` and prints the ledger's size against its estimate.
 * @throws the nemesis's error when it is not a world error (a harness bug).
 */
export async function runFaultPhase(c: { o: CertifyOptions; plan: RunPlan; meta: RunMeta; schedule: Schedule; runtime: Runtime | TargetRuntime; runDir: string; ledger: Ledger; clock: RunClock; log: (line: string) => void; store: RunStore; state: RunState }): Promise<FaultPhaseEnd> {
  const { o, schedule, runtime, ledger, clock, log, state } = c;
  const { watch, workload, policy } = c.store;
  const { spareIds, replayed } = c.plan;
  const { scenarioSchedule } = c.meta;
  const { runOver } = state;
  watch.start();
  // every node's counters (its metrics endpoint) into the ledger every 5 s: the report charts them
  const metrics = startMetricsSampler({ endpoints: c.store.metricsEndpoints, now: () => clock.now(), ledger });
  state.metrics = metrics;
  const faultPhaseStart = clock.now();
  ledger.event(faultPhaseStart, 'phase', { phase: 'faults' });
  workload.start();
  // a run's spares never vote: the budget's majority and a partition's isolated nodes count the voters
  const nemesis = new Nemesis({ runtime, schedule, clock, recorder: ledgerFaultRecorder(ledger, clock, watch), probe: watch, beyondBudget: schedule.beyondBudget, pollMs: 100, ...(spareIds.length > 0 ? { voters: runtime.nodeIds().filter((n) => !spareIds.includes(n)) } : {}) });
  const stopFaults = new AbortController();
  const onAbort = (): void => stopFaults.abort();
  o.signal?.addEventListener('abort', onAbort, { once: true });
  const phaseDurationMs = replayed ? replayed.durationMs : scenarioSchedule ? scenarioSchedule.durationMs : o.durationMs;
  // the fault phase ends at its duration, on SIGINT, or when the disk guard says so
  const endPhase = new AbortController();
  const onEndPhase = (): void => endPhase.abort();
  o.signal?.addEventListener('abort', onEndPhase, { once: true });
  let diskLow: string | null = null;
  const monitor = watchRunMeans(o, c.runDir, ledger, clock, faultPhaseStart, phaseDurationMs, workload, nemesis, (reason) => {
    diskLow = reason;
    endPhase.abort();
  });
  state.monitor = monitor;
  // a runtime call that failed for good ends the fault phase at once (never an unhandled rejection)
  let phaseError: unknown;
  const nemesisRun = nemesis.run(stopFaults.signal).catch((e: unknown) => {
    phaseError = e;
    endPhase.abort();
  });
  // a scenario's phase ends `tailMs` after its last step ended (at most its duration)
  if (schedule.tailMs !== undefined) {
    const tail = schedule.tailMs;
    void nemesisRun.then(
      () => sleep(tail, endPhase.signal).then(() => endPhase.abort()),
      () => endPhase.abort(),
    );
  }
  const policyChange = policy.on
    ? sleep(phaseDurationMs / 2, AbortSignal.any([endPhase.signal, runOver.signal]))
        .then(() => (endPhase.signal.aborted || runOver.signal.aborted ? undefined : policy.set(POLICY_TABLES[1])))
        .catch(() => undefined)
    : Promise.resolve();
  // a replay runs as long as the recorded run did
  try {
    await sleep(phaseDurationMs, endPhase.signal);
    stopFaults.abort();
    await nemesisRun;
  } finally {
    // the caller's signal outlives this run (make scenarios, make shrink: one signal, many runs)
    o.signal?.removeEventListener('abort', onAbort);
    o.signal?.removeEventListener('abort', onEndPhase);
  }
  await policyChange;
  const runError = phaseError === undefined ? null : phaseErrorReason(phaseError, log);
  const faultPhaseEnd = clock.now();
  state.ackedPerSec = workload.totals.ok / ((faultPhaseEnd - faultPhaseStart) / 1000);
  if (o.signal?.aborted) state.status = 'interrupted';
  if (diskLow !== null) {
    // the ledger must stop growing now: no more writes, then heal, read, seal and verify
    log(diskLow);
    await workload.stop();
  }
  endOfPhaseLedgerLine(monitor, log);
  return { nemesis, metrics, runError, diskLow };
}
