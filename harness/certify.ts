import type { ZarisClient } from '../nodes/client/zaris-client.js';
import { KvStatus } from '../nodes/kv-status.js';
import type { Ledger } from '../ledger/ledger-writer.js';
import { META } from '../ledger/schema.js';
import { startRunClock, type RunClock } from './clock.js';
import { finalReadAll } from './final-reads.js';
import { ledgerFaultRecorder } from './cluster-watch.js';
import { analyzeRunDir } from './commands/analyze.js';
import { Nemesis } from './nemesis/nemesis.js';
import { planSchedule, scheduleDigest, scheduleToJson, type Schedule } from './nemesis/schedule.js';
import { describeExpectation } from './scenario/scenario.js';
import { scenarioExitCode } from './scenario/expectation.js';
import type { Runtime, RuntimeKind } from './runtime/runtime.js';
import type { Workload } from './workload.js';
import { formatBytes, ledgerBytes } from './disk-guard.js';
import { startRunMonitor, type RunMonitor } from './run-monitor.js';
import { startMetricsSampler } from './metrics-sampler.js';
import { describePolicyFollow, POLICY_TABLES } from './policy-change.js';
import { plainProgressOutput } from './run-progress.js';
import type { Results } from '../reports/results.js';
import type { CertifyOptions } from './certify/options.js';
import { checkTarget, planRun } from './certify/plan.js';
import { startRunMeta } from './certify/run-meta.js';
import { newRunState, releaseRun } from './certify/run-state.js';
import { setUpRun } from './certify/setup.js';
import { startTargetStore } from './certify/target-store.js';
import { sleep } from './certify/wait.js';
import { startZarisWorkload, type RunStore } from './certify/workload-start.js';
import { startZarisCluster } from './certify/zaris-cluster.js';
import { endOnWorldError, phaseErrorReason } from './run-errors.js';
import { isWorldError } from './runtime/runtime-errors.js';
import type { TargetRuntime } from './targets/target.js';

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
  const { runtime, runDir, ledger, seed } = run;
  const { target, beyondBudget, escalationTimeoutMs, evictionTimeoutMs, stores, replayed, scenarioRec, spareIds } = plan;
  const state = newRunState();
  try {
    const meta = startRunMeta(o, plan, run);
    const { scenarioSchedule } = meta;
    let store: RunStore;
    if (plan.target) store = await startTargetStore({ o, target: plan.target, runtime: runtime as TargetRuntime, run, meta, clock, log, state });
    else {
      const cluster = await startZarisCluster({ runtime: runtime as Runtime, plan, meta, run, clock, log, state });
      store = await startZarisWorkload({ o, plan, meta, run, clock, log, state, cluster });
    }
    const { watch, workload, policy } = store;

    const schedule: Schedule =
      replayed ??
      scenarioSchedule ??
      planSchedule({
        seed,
        durationMs: o.durationMs,
        kinds: plan.kinds,
        preset: o.faultPreset ?? 'random',
        escalationTimeoutMs,
        evictionTimeoutMs,
        nodeCount: target ? target.nodeIds.length : plan.nodeCount,
        partitions: (await watch.partitions())
          .map((p) => ({ ...p, ackMode: stores.find((s) => s.name === p.store)?.ackMode }))
          .sort((a, b) => a.store.localeCompare(b.store) || a.partition - b.partition),
        beyondBudget,
      });
    const digest = scheduleDigest(schedule);
    ledger.setMeta(META.schedule, scheduleToJson(schedule));
    ledger.setMeta(META.scheduleDigest, digest);
    log(`schedule: ${schedule.faults.length} planned faults (${schedule.kinds.join(',') || 'none'}${schedule.preset !== 'random' ? `, preset ${schedule.preset}` : ''}), digest ${digest.slice(0, 16)}`);
    if (scenarioRec) log(`scenario ${scenarioRec.name}: ${schedule.faults.length} steps, expected ${describeExpectation(scenarioRec.expect)}; the fault phase ends ${(schedule.tailMs ?? 0) / 1000} s after the last step (at most ${schedule.durationMs / 1000} s)`);

    watch.start();
    // every node's counters (its metrics endpoint) into the ledger every 5 s: the report charts them
    const metrics = startMetricsSampler({ endpoints: store.metricsEndpoints, now: () => clock.now(), ledger });
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
    const monitor = watchRunMeans(o, runDir, ledger, clock, faultPhaseStart, phaseDurationMs, workload, nemesis, (reason) => {
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
      ? sleep(phaseDurationMs / 2, AbortSignal.any([endPhase.signal, state.runOver.signal]))
          .then(() => (endPhase.signal.aborted || state.runOver.signal.aborted ? undefined : policy.set(POLICY_TABLES[1])))
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

    ledger.event(clock.now(), 'phase', { phase: 'heal' });
    log('healing: heal partitions, resume and restart nodes, wait for Healthy');
    const healed = await nemesis.healAll();
    if (!healed.healed) log(`cluster did not heal: ${healed.reason}`);
    const inconclusive = [runError, healed.healed ? null : (healed.reason ?? 'the cluster did not return to Healthy'), diskLow].filter((r) => r !== null);
    if (inconclusive.length > 0) ledger.setMeta(META.inconclusiveReason, inconclusive.join('; '));
    await workload.stop();
    for (const line of describePolicyFollow(policy.sets, workload.policyChanges)) log(line);
    watch.stop();
    await watch.sample();
    await metrics.sampleNow();
    await metrics.stop();

    if (state.status !== 'interrupted') {
      ledger.event(clock.now(), 'phase', { phase: 'final-reads' });
      const t0 = clock.now();
      // the harness's own client, on a fresh map: the final reads are the judge's, not the client under test's
      let n: number;
      if (state.session) n = await state.session.finalReads();
      else {
        await state.harnessClient!.fetchView().catch(() => undefined);
        n = await finalReads(state.harnessClient!, ledger, clock);
      }
      log(`final reads: ${n} keys in ${((clock.now() - t0) / 1000).toFixed(1)} s`);
    }
    ledger.event(clock.now(), 'phase', { phase: 'done' });
    ledger.seal();
    ledger.setMeta(META.status, state.status);
    // (an interrupted run is INCONCLUSIVE by its status; the verifier says so)
  } catch (e) {
    if (!isWorldError(e)) {
      ledger.setMeta(META.status, 'interrupted');
      ledger.setMeta(META.inconclusiveReason, `harness error: ${(e as Error).message.split('\n')[0]}`);
      log(`harness error; the run's files are kept in ${runDir}`);
      throw e;
    }
    // the world stopped the run outside its fault phase (a node that will not start): INCONCLUSIVE
    await endOnWorldError(e, { ledger, clock, log, workload: state.workload });
  } finally {
    await releaseRun(state, runtime, ledger);
  }
  if (!o.ledgerOff) log(`ledger: ${formatBytes(ledgerBytes(runDir))} sealed`);
  let results: Results | null = null;
  let exitCode = 0;
  if (!o.skipVerify && !o.ledgerOff) {
    results = analyzeRunDir(runDir);
    exitCode = results.scenario ? scenarioExitCode(results.scenario.held, results.exitCode) : results.exitCode;
  }
  return { runDir, exitCode, results, ackedPerSec: state.ackedPerSec, failoverMs: state.watch?.failoverMs ?? [], runtime: runtime.kind };
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
 * The end phase's final reads through the Zaris client (harness/final-reads.ts): from active
 * owners only; an Ok answer's value is the write id read, NotFound reads as absent, a key the
 * client could not read is read again next round.
 */
function finalReads(client: ZarisClient, ledger: Ledger, clock: RunClock): Promise<number> {
  return finalReadAll(ledger, clock, async (store, keys) => {
    const got = await client.readMany(store, keys);
    return keys.map((key) => {
      const r = got.get(key);
      if (!r) return undefined;
      return r.status === KvStatus.Ok && r.value ? r.value.toString('utf8') : null;
    });
  }, 5_000);
}
