import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { DEFAULT_MAX_FRAME_BYTES, DEFAULT_TIMING, type ClusterConfig } from '../nodes/cluster-config.js';
import { ZarisClient } from '../nodes/client/zaris-client.js';
import type { RetryOptions } from '../nodes/client/retry-policy.js';
import { KvStatus } from '../nodes/kv-status.js';
import { assignAll } from '../nodes/partitioning.js';
import type { Ledger } from '../ledger/ledger-writer.js';
import { META } from '../ledger/schema.js';
import { startRunClock, type RunClock } from './clock.js';
import { finalReadAll } from './final-reads.js';
import { clientOptionsRecord, type ClientOptionsRecord } from './client-options.js';
import { ClusterWatch, ledgerFaultRecorder } from './cluster-watch.js';
import { analyzeRunDir } from './commands/analyze.js';
import { Nemesis, type ClusterProbe } from './nemesis/nemesis.js';
import { createPrng } from './nemesis/prng.js';
import { planSchedule, scheduleDigest, scheduleToJson, type Schedule } from './nemesis/schedule.js';
import { describeExpectation } from './scenario/scenario.js';
import { scenarioExitCode } from './scenario/expectation.js';
import { defaultClockModes } from './runtime/faketime.js';
import type { Runtime, RuntimeKind } from './runtime/runtime.js';
import { Workload, type AckProber, type WorkloadStore } from './workload.js';
import { formatBytes, ledgerBytes } from './disk-guard.js';
import { startRunMonitor, type RunMonitor } from './run-monitor.js';
import { startMetricsSampler, type MetricsSampler } from './metrics-sampler.js';
import { describePolicyFollow, POLICY_STORE, POLICY_TABLES, setStorePolicy, type SetPolicyRecord } from './policy-change.js';
import { plainProgressOutput } from './run-progress.js';
import type { Results } from '../reports/results.js';
import type { CertifyOptions } from './certify/options.js';
import { checkTarget, planRun } from './certify/plan.js';
import { startRunMeta } from './certify/run-meta.js';
import { setUpRun } from './certify/setup.js';
import { startTargetSession, type TargetSession } from './targets/target-session.js';
import { endOnWorldError, phaseErrorReason } from './run-errors.js';
import { isWorldError, WorldError } from './runtime/runtime-errors.js';
import { declarationOf, type TargetRuntime } from './targets/target.js';
import { zarisContract } from './targets/zaris-contract.js';
import { describeContract } from '../ledger/contract-judged.js';

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
 * Retry bounds of the harness's OWN client (cluster watch, nemesis probes, final reads): fixed,
 * whatever ZARIS_* variables the user set for the client under test.
 */
const HARNESS_CLIENT_RETRY: RetryOptions = { maxAttempts: 3, backoffMillis: 100, timeoutMs: 15_000, disableRetries: false };

async function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return;
  await new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(t);
      resolve();
    }, { once: true });
  });
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
  const { runtime, runDir, ledger, runTag, seed } = run;
  const { target, asyncLagMaxMs, scenario: sc, beyondBudget, escalationTimeoutMs, evictionTimeoutMs, stores, selfTestBug, replayed, scenarioRec, spareIds } = plan;
  /** The client under test: the workload's, routing and refreshing only by seed 000's rules. */
  let client: ZarisClient | null = null;
  /** The harness's own client: runtime-map samples, nemesis probes, final reads. */
  let harnessClient: ZarisClient | null = null;
  /** The store side of a target other than Zaris (its adapters, sampler, workload). */
  let session: TargetSession | null = null;
  let watch: RunWatch | null = null;
  let workload: Workload | null = null;
  let status: 'complete' | 'interrupted' = 'complete';
  let ackedPerSec = 0;
  let monitor: RunMonitor | null = null;
  let metrics: MetricsSampler | null = null;
  /** Aborted when the run ends however it ends: a pending mid-run policy change is dropped. */
  const runOver = new AbortController();
  try {
    const { runConfig, identity, writeVersions, scenarioSchedule, runKinds, nodeIds } = startRunMeta(o, plan, run);

    // seed 004 in certification (the Zaris store only): the multi-key retry policy set on one store
    const policySets: SetPolicyRecord[] = [];
    let withPolicy = false;
    let setPolicy: (table: string) => Promise<void> = async () => undefined;
    // the Zaris nodes' metrics endpoints (a target's nodes have none the harness reads)
    let metricsEndpoints: Array<{ node: string; host: string; port: number }> = [];
    const rng = createPrng(seed ^ 0x5eed);
    if (target) {
      session = await startTargetSession({ target, runtime: runtime as TargetRuntime, runDir, ledger, clock, writersPerStore: o.writersPerStore, keysPerWriter: o.keysPerWriter, rate: o.rate, random: () => rng.next(), readsOff: o.readsOff, log });
      writeFileSync(path.join(runDir, 'cluster.json'), `${JSON.stringify({ target: target.name, ...session.cluster, contract: target.contract }, null, 2)}\n`);
      identity.targetVersion = await target.version((runtime as TargetRuntime).binaryRunner).catch((e: unknown) => `unknown (${(e as Error).message.split('\n')[0]})`);
      writeVersions();
      log(`target ${identity.targetVersion}, client ${identity.clientLibrary}`);
      watch = session.watch;
      workload = session.workload;
      runConfig.clientOptions = session.clientOptions;
      runConfig.leaseMs = session.watch.leaseMs;
      ledger.setMeta(META.runConfig, JSON.stringify(runConfig));
      ledger.setMeta(META.contract, JSON.stringify(declarationOf(target.contract)));
      log(`workload client: ${target.clientLibrary} through the ${target.name} adapter (operation bound ${String(session.clientOptions.operationTimeoutMs)} ms); ${describeContract(target.contract)}`);
    } else {
      const zr = runtime as Runtime;
      const started = clock.now();
      const clockModes = runKinds.includes('clock') ? defaultClockModes([...nodeIds, ...spareIds]) : undefined;
      const config: ClusterConfig = await zr.start({
        runDir,
        nodeIds: [...nodeIds, ...spareIds],
        spares: spareIds,
        // the seed 004 long-tail retry policy on: the nodes advertise the seed's default table
        template: { ...(selfTestBug ? { selfTestBug } : {}), cluster: `zaris-${runTag}`, stores, timing: { ...DEFAULT_TIMING, escalationTimeoutMs, evictionTimeoutMs }, maxFrameBytes: DEFAULT_MAX_FRAME_BYTES, multiKeyLongTailRetryThresholdsMs: runConfig.multiKeyLongTailRetryThresholdsMs },
        ...(clockModes ? { clockModes } : {}),
      });
      if (clockModes) ledger.event(clock.now(), 'clock-modes', clockModes);
      writeFileSync(path.join(runDir, 'cluster.json'), `${JSON.stringify(config, null, 2)}\n`);
      metricsEndpoints = config.nodes.filter((n) => n.metricsPort).map((n) => ({ node: n.id, host: n.host, port: n.metricsPort! }));
      const partitions = assignAll(config).map((p) => ({ store: p.store, partition: p.partition, replicas: p.replicas }));
      ledger.registerTopology({ nodes: config.nodes, stores: config.stores, partitions });
      const seeds = nodeIds.map((id) => zr.clientEndpoint(id));
      // the harness watches the cluster through a client of its own: the client under test gets no
      // map from the harness, it refreshes only when its own operations tell it to (seed 000)
      harnessClient = new ZarisClient({ seeds, attemptTimeoutMs: 2_000, refreshWaitBudgetMs: 15_000, retry: HARNESS_CLIENT_RETRY });
      await waitUntil(async () => !!(await harnessClient!.connect().then(() => true).catch(() => false)), 20_000, 'the cluster to answer');
      const rf = new Map(config.stores.map((s) => [s.name, s.replicationFactor]));
      const zw = new ClusterWatch(harnessClient, ledger, clock, (s) => rf.get(s) ?? 1, new Map(partitions.map((p) => [`${p.store}/${p.partition}`, p.replicas])));
      await waitUntil(async () => (await zw.unhealthy().catch(() => ['?'])).length === 0, 30_000, 'every partition to be Healthy');
      const upMs = clock.now() - started;
      ledger.event(clock.now(), 'cluster-up', { ms: Math.round(upMs) });
      log(`cluster up in ${(upMs / 1000).toFixed(1)} s${spareIds.length > 0 ? `; spare node${spareIds.length > 1 ? 's' : ''} ${spareIds.join(', ')} outside the member set (membership changes join and drain them)` : ''}`);

      // seed 004 in certification: a non-empty multi-key retry policy on one store from the start (a
      // scenario plays its own script: none there); it changes halfway through the fault phase
      withPolicy = !sc && config.stores.some((s) => s.name === POLICY_STORE);
      const hc0 = harnessClient;
      setPolicy = async (table: string): Promise<void> => {
        const r = await setStorePolicy(POLICY_STORE, table, { admin: (cmd) => hc0.admin(cmd), now: () => clock.now(), sleep: (ms) => sleep(ms), ledger });
        policySets.push(r);
        log(r.ok ? `seed 004: ${POLICY_STORE} multi-key retry policy set to "${table}" (${r.message})` : `seed 004: set-policy ${POLICY_STORE} "${table}" not accepted after ${r.attempts} attempts: ${r.message}`);
      };
      if (withPolicy) await setPolicy(POLICY_TABLES[0]);

      // the client under test: the library's defaults and the user's ZARIS_* variables, nothing of the harness's
      client = new ZarisClient({ seeds });
      await waitUntil(async () => !!(await client!.connect().then(() => true).catch(() => false)), 20_000, 'the workload client to discover the cluster');
      runConfig.clientOptions = clientOptionsRecord(client.options);
      runConfig.leaseMs = zw.leaseMs;
      ledger.setMeta(META.runConfig, JSON.stringify(runConfig));
      ledger.setMeta(META.contract, JSON.stringify(zarisContract({ stores, asyncLagMs: asyncLagMaxMs, asyncLagFromOption: o.asyncLagMaxMs !== undefined, leaseMs: zw.leaseMs })));
      log(`workload client: ${describeClientOptions(clientOptionsRecord(client.options))}; owner lease declared by the store: ${runConfig.leaseMs ?? '?'} ms; async lag bound ${asyncLagMaxMs} ms`);

      const view = harnessClient.clusterView;
      const workloadStores: WorkloadStore[] = config.stores.map((s) => ({ name: s.name, segments: s.segments, partitions: view.stores.get(s.name)!.partitions, replicationFactor: s.replicationFactor, ackMode: s.ackMode }));
      // sync-ack probes read the other in-sync members of the ack's epoch through the harness's client
      const w0 = zw;
      const hc = harnessClient;
      const prober: AckProber = { inSyncAt: (store, partition, epoch) => w0.inSyncAt(store, partition, epoch), getLocal: (node, store, key) => hc.getLocal(node, store, key) };
      workload = new Workload(client, ledger, clock, { stores: workloadStores, writersPerStore: o.writersPerStore, keysPerWriter: o.keysPerWriter, ratePerSec: o.rate, random: () => rng.next(), ...(o.readsOff ? { readFraction: 0, batchReadFraction: 0 } : { prober }) });
      workload.onAck(zw.onAck);
      watch = zw;
    }

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
    metrics = startMetricsSampler({ endpoints: metricsEndpoints, now: () => clock.now(), ledger });
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
    monitor = watchRunMeans(o, runDir, ledger, clock, faultPhaseStart, phaseDurationMs, workload, nemesis, (reason) => {
      diskLow = reason;
      endPhase.abort();
    });
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
    const policyChange = withPolicy
      ? sleep(phaseDurationMs / 2, AbortSignal.any([endPhase.signal, runOver.signal]))
          .then(() => (endPhase.signal.aborted || runOver.signal.aborted ? undefined : setPolicy(POLICY_TABLES[1])))
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
    ackedPerSec = workload.totals.ok / ((faultPhaseEnd - faultPhaseStart) / 1000);
    if (o.signal?.aborted) status = 'interrupted';
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
    for (const line of describePolicyFollow(policySets, workload.policyChanges)) log(line);
    watch.stop();
    await watch.sample();
    await metrics.sampleNow();
    await metrics.stop();

    if (status !== 'interrupted') {
      ledger.event(clock.now(), 'phase', { phase: 'final-reads' });
      const t0 = clock.now();
      // the harness's own client, on a fresh map: the final reads are the judge's, not the client under test's
      let n: number;
      if (session) n = await session.finalReads();
      else {
        await harnessClient!.fetchView().catch(() => undefined);
        n = await finalReads(harnessClient!, ledger, clock);
      }
      log(`final reads: ${n} keys in ${((clock.now() - t0) / 1000).toFixed(1)} s`);
    }
    ledger.event(clock.now(), 'phase', { phase: 'done' });
    ledger.seal();
    ledger.setMeta(META.status, status);
    // (an interrupted run is INCONCLUSIVE by its status; the verifier says so)
  } catch (e) {
    if (!isWorldError(e)) {
      ledger.setMeta(META.status, 'interrupted');
      ledger.setMeta(META.inconclusiveReason, `harness error: ${(e as Error).message.split('\n')[0]}`);
      log(`harness error; the run's files are kept in ${runDir}`);
      throw e;
    }
    // the world stopped the run outside its fault phase (a node that will not start): INCONCLUSIVE
    await endOnWorldError(e, { ledger, clock, log, workload });
  } finally {
    runOver.abort();
    monitor?.stop();
    await metrics?.stop();
    workload && (await workload.stop().catch(() => undefined));
    watch?.stop();
    client?.close();
    harnessClient?.close();
    await session?.close();
    await runtime.close().catch(() => undefined);
    ledger.close();
  }
  if (!o.ledgerOff) log(`ledger: ${formatBytes(ledgerBytes(runDir))} sealed`);
  let results: Results | null = null;
  let exitCode = 0;
  if (!o.skipVerify && !o.ledgerOff) {
    results = analyzeRunDir(runDir);
    exitCode = results.scenario ? scenarioExitCode(results.scenario.held, results.exitCode) : results.exitCode;
  }
  return { runDir, exitCode, results, ackedPerSec, failoverMs: watch?.failoverMs ?? [], runtime: runtime.kind };
}

/**
 * What the run needs of a cluster watch, whatever the target (cluster-watch.ts for Zaris,
 * targets/target-watch.ts for the others): the nemesis's probe, the periodic samples into the
 * ledger, crash starts and failover measurements.
 */
type RunWatch = ClusterProbe & Pick<ClusterWatch, 'start' | 'stop' | 'crashStarting' | 'failoverMs'> & { sample(): Promise<unknown> };

/** One line for the console: the workload client's bounds and the variables that set them. */
function describeClientOptions(c: ClientOptionsRecord): string {
  const env = Object.entries(c.env).map(([k, v]) => `${k}=${v}`);
  return `${c.disableRetries ? '1 attempt (retries disabled)' : `${c.maxAttempts} attempts`}, backoff ${c.backoffMillis} ms, deadline ${c.timeoutMs === null ? 'none' : `${c.timeoutMs / 1000} s`}, map refresh wait ${c.mapRefreshWaitMs / 1000} s (${env.length > 0 ? `set by ${env.join(' ')}` : 'library defaults'})`;
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

async function waitUntil(cond: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    // the store's nodes did not come up as they should: the world's failure, not the harness's
    if (Date.now() > deadline) throw new WorldError(`cluster start: timed out after ${timeoutMs / 1000} s waiting for ${what}`, { source: 'target', op: 'cluster start', attempts: 1, transient: false });
    await new Promise((r) => setTimeout(r, 100));
  }
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
