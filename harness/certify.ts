import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { DEFAULT_MAX_FRAME_BYTES, DEFAULT_TIMING, type ClusterConfig, type SelfTestBug, type StoreConfig } from '../nodes/cluster-config.js';
import { ZarisClient } from '../nodes/client/zaris-client.js';
import type { RetryOptions } from '../nodes/client/retry-policy.js';
import { DEFAULT_BATCH_GET_TABLE } from '../nodes/multikey/retry-range-table.js';
import { KvStatus } from '../nodes/kv-status.js';
import { assignAll } from '../nodes/partitioning.js';
import { NullLedger, type Ledger } from '../ledger/ledger-writer.js';
import { WorkerLedger } from '../ledger/worker-ledger.js';
import { DEFAULT_STALL_BOUND_MS } from './verifier/stalls.js';
import { DEFAULT_ASYNC_LAG_MS, META, type RunRulesConfig } from '../ledger/schema.js';
import { startRunClock, type RunClock } from './clock.js';
import { finalReadAll } from './final-reads.js';
import { checkClientEnv, clientOptionsRecord, type ClientOptionsRecord } from './client-options.js';
import { ClusterWatch, ledgerFaultRecorder } from './cluster-watch.js';
import { analyzeRunDir } from './commands/analyze.js';
import { Nemesis, type ClusterProbe } from './nemesis/nemesis.js';
import { createPrng } from './nemesis/prng.js';
import { ADMIN_KINDS, isMembershipKind, planSchedule, scheduleDigest, scheduleFromJson, scheduleToJson, validateSchedule, type FaultKind, type Schedule } from './nemesis/schedule.js';
import { compileScenario, describeExpectation, scenarioRecord, type ScenarioRecord } from './scenario/scenario.js';
import { scenarioExitCode } from './scenario/expectation.js';
import { defaultClockModes, hostClockFaultsUnavailable } from './runtime/faketime.js';
import { checkNetAdmin } from './runtime/iptables.js';
import { nodeProcessSweeper } from './runtime/process-sweeper.js';
import { ProcessRuntime } from './runtime/process-runtime.js';
import type { Runtime, RuntimeKind } from './runtime/runtime.js';
import { DEFAULT_SWEEPERS, sweepLeftovers, type Sweeper } from './sweep.js';
import { dockerEngineVersion } from './docker/docker-cli.js';
import { repoRootFrom } from './docker/node-image.js';
import { sweepDockerLeftovers } from './runtime/docker-sweep.js';
import { selectRuntime } from './runtime/select-runtime.js';
import { UsageError } from './usage-error.js';
import { Workload, type AckProber, type WorkloadStore } from './workload.js';
import { formatBytes, ledgerBytes } from './disk-guard.js';
import { startRunMonitor, type RunMonitor } from './run-monitor.js';
import { startMetricsSampler, type MetricsSampler } from './metrics-sampler.js';
import { describePolicyFollow, POLICY_STORE, POLICY_TABLES, setStorePolicy, type SetPolicyRecord } from './policy-change.js';
import { plainProgressOutput } from './run-progress.js';
import type { Results } from '../reports/results.js';
import { DEFAULT_STORES, type CertifyOptions } from './certify/options.js';
import { createTarget, isTargetName, TARGET_NAMES } from './targets/targets.js';
import { TargetProcessRuntime } from './targets/target-process-runtime.js';
import { TargetDockerRuntime } from './targets/target-docker-runtime.js';
import { startTargetSession, type TargetSession } from './targets/target-session.js';
import { endOnWorldError, guardRuntime, phaseErrorReason } from './run-errors.js';
import { isWorldError, WorldError } from './runtime/runtime-errors.js';
import { declarationOf, faultRefusals, type Target, type TargetName, type TargetRuntime } from './targets/target.js';
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

/** The node ids of a cluster of n nodes: n1..nN. */
export function nodeIdsOf(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `n${i + 1}`);
}

/** The most spare nodes a run may start (SPARES=). */
export const MAX_SPARES = 3;

/**
 * The spare nodes of a run (issue 14): `n<voters+1>`.. after the voters n1..n<voters>, as many as
 * `spares` asks (SPARES=), by default 1 when membership changes are planned, else none.
 * @throws UsageError (one line) for a count outside 0..{@link MAX_SPARES}, or SPARES=0 with
 * membership changes planned (a join would find nobody outside and a leave may not go below the
 * voters' count, so no change could run).
 */
export function spareIdsOf(voters: number, spares: number | undefined, membership: boolean): string[] {
  if (spares !== undefined && !(Number.isSafeInteger(spares) && spares >= 0 && spares <= MAX_SPARES)) throw new UsageError(`SPARES must be 0 to ${MAX_SPARES}, got ${spares}`);
  if (spares === 0 && membership) throw new UsageError('membership changes need a spare node to join (SPARES=0 given): use SPARES=1 or drop membership from FAULTS');
  const n = spares ?? (membership ? 1 : 0);
  return Array.from({ length: n }, (_, i) => `n${voters + 1 + i}`);
}

/**
 * Retry bounds of the harness's OWN client (cluster watch, nemesis probes, final reads): fixed,
 * whatever ZARIS_* variables the user set for the client under test.
 */
const HARNESS_CLIENT_RETRY: RetryOptions = { maxAttempts: 3, backoffMillis: 100, timeoutMs: 15_000, disableRetries: false };

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
  const targetName = o.target ?? 'zaris';
  if (!isTargetName(targetName)) throw new UsageError(`unknown TARGET "${String(targetName)}": expected ${TARGET_NAMES.join(', ')}`);
  let target: Target | null;
  try {
    target = await createTarget(targetName, { redisMinReplicas: o.redisMinReplicas, natsReads: o.natsReads, patroniSync: o.patroniSync });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  if (target) {
    // the Zaris store's own knobs mean nothing to another store
    if (o.selfTestBug) throw new UsageError(`BUG=${o.selfTestBug} is a deliberate bug of the Zaris store; TARGET=${target.name} runs the store as it is`);
    if (o.nodes !== undefined && o.nodes !== target.nodeIds.length) throw new UsageError(`TARGET=${target.name} runs ${target.nodeIds.length} nodes, not NODES=${o.nodes}`);
    if (o.asyncLagMaxMs !== undefined) throw new UsageError(`ASYNC_LAG= is the Zaris store's async lag bound; TARGET=${target.name} declares its own contract (docs/targets.md)`);
    if (o.scenario) throw new UsageError(`SCENARIO= plays its steps on the Zaris store's partitions and admin requests; TARGET=${target.name} takes FAULTS= (or REPLAY=) instead`);
  }
  // the client under test reads its ZARIS_* variables itself; a bad one is refused before anything starts
  if (!target) checkClientEnv();
  const asyncLagMaxMs = o.asyncLagMaxMs ?? DEFAULT_ASYNC_LAG_MS;
  const stallBoundMs = o.stallBoundMs ?? DEFAULT_STALL_BOUND_MS;
  if (!(Number.isFinite(stallBoundMs) && stallBoundMs > 0)) throw new UsageError(`STALL must be a duration above zero, got ${stallBoundMs} ms`);
  if (!(Number.isFinite(asyncLagMaxMs) && asyncLagMaxMs > 0)) throw new UsageError(`ASYNC_LAG must be a duration above zero, got ${asyncLagMaxMs} ms`);
  const clock: RunClock = startRunClock();
  const sc = o.scenario;
  if (sc && o.replay) throw new UsageError('give SCENARIO= or REPLAY=, not both (a scenario run replays with REPLAY= like any run)');
  const nodeCount = sc ? sc.nodes : (o.nodes ?? 3);
  if (nodeCount !== 3 && nodeCount !== 5) throw new UsageError(`NODES must be 3 or 5, got ${nodeCount}`);
  const NODE_IDS = nodeIdsOf(nodeCount);
  let kinds = sc ? [...new Set(sc.faults.map((f) => f.kind))].filter((k) => !(ADMIN_KINDS as readonly string[]).includes(k)) : [...o.faults];
  const faultsExplicit = sc ? true : o.faultsExplicit;
  // one node: every crash takes the whole cluster down, past a replicated store's budget (its contract decides what it may lose)
  const beyondBudget = (sc ? sc.beyondBudget : o.beyondBudget) || target?.nodeIds.length === 1;
  let escalationTimeoutMs = sc ? sc.escalationTimeoutMs : o.escalationTimeoutMs;
  let evictionTimeoutMs = sc ? sc.evictionTimeoutMs : DEFAULT_TIMING.evictionTimeoutMs;
  let stores = sc ? sc.stores : (o.stores ?? DEFAULT_STORES);
  const selfTestBug = o.selfTestBug ?? sc?.bug;
  // a power failure within the budget must leave a majority up: two nodes of five, never of three
  if (!sc && kinds.includes('power') && !beyondBudget && nodeCount < 5) {
    const why = 'the fault budget allows power failures only with NODES=5 (two nodes at once) or BEYOND_BUDGET=1';
    if (faultsExplicit && (o.faultPreset ?? 'random') === 'random') throw new UsageError(`FAULTS asks for power failures, but ${why}`);
    kinds = kinds.filter((k) => k !== 'power');
    log(`power failures left out: ${why}`);
  }
  // a target refuses the kinds it cannot express (clock faults and membership changes are Zaris's)
  for (const [kind, why] of target ? faultRefusals(target) : []) {
    if (!kinds.includes(kind)) continue;
    if (faultsExplicit && (o.faultPreset ?? 'random') === 'random') throw new UsageError(`FAULTS asks for ${kind}, but ${why}`);
    kinds = kinds.filter((k) => k !== kind);
    log(`${kind} left out: ${why}`);
  }
  // process runtime: partitions and client cuts are iptables rules on this host (CAP_NET_ADMIN); clock faults preload libfaketime
  const processPartitions = async (): Promise<boolean> => {
    if (kinds.includes('clock')) {
      const why = hostClockFaultsUnavailable();
      if (why) {
        if (faultsExplicit) throw new UsageError(`${sc ? `scenario ${sc.name} has clock steps` : 'FAULTS asks for clock faults'}, but ${why}`);
        kinds = kinds.filter((k) => k !== 'clock');
        log(`clock faults left out: ${why}`);
      }
    }
    const net = kinds.filter((k) => k === 'partition' || k === 'client-cut');
    if (net.length === 0) return false;
    const why = await checkNetAdmin();
    if (!why) return true;
    if (faultsExplicit) throw new UsageError(`${sc ? `scenario ${sc.name} has ${net.join(' and ')} steps` : `FAULTS asks for ${net.join(' and ')}`}, but ${why}`);
    kinds = kinds.filter((k) => k !== 'partition' && k !== 'client-cut');
    log(`partitions and client cuts left out: ${why}`);
    return false;
  };
  let replayed: Schedule | null = null;
  /** A replayed run's spare nodes (its run config), started again the same. */
  let replayedSpares: number | undefined;
  let scenarioRec: ScenarioRecord | null = sc ? scenarioRecord(sc) : null;
  if (o.replay) {
    const ledgerPath = path.join(o.replay, 'ledger.sqlite');
    if (!existsSync(ledgerPath)) throw new UsageError(`REPLAY=${o.replay}: no ledger.sqlite there`);
    const Database = (await import('better-sqlite3')).default;
    const db = new Database(ledgerPath, { readonly: true, fileMustExist: true });
    try {
      const row = db.prepare('SELECT value FROM meta WHERE key = ?').get(META.schedule) as { value: string } | undefined;
      if (!row) throw new UsageError(`REPLAY=${o.replay}: the run recorded no schedule`);
      replayed = scheduleFromJson(row.value);
      // a scenario run replays as a scenario (its expectation judged again), with its stores and timings
      const scRow = db.prepare('SELECT value FROM meta WHERE key = ?').get(META.scenario) as { value: string } | undefined;
      if (scRow) scenarioRec = JSON.parse(scRow.value) as ScenarioRecord;
      const cfgRow = db.prepare('SELECT value FROM meta WHERE key = ?').get(META.runConfig) as { value: string } | undefined;
      const cfg = cfgRow ? (JSON.parse(cfgRow.value) as Partial<RunConfig>) : {};
      if (Array.isArray(cfg.stores) && cfg.stores.length > 0) stores = cfg.stores;
      if (Array.isArray(cfg.spares)) replayedSpares = cfg.spares.length;
      escalationTimeoutMs = replayed.escalationTimeoutMs;
      evictionTimeoutMs = replayed.evictionTimeoutMs;
      kinds = replayed.kinds.filter((k) => !(ADMIN_KINDS as readonly string[]).includes(k));
    } finally {
      db.close();
    }
  }

  // spare nodes (issue 14): when membership changes are planned, unless SPARES= says otherwise
  const membershipPlanned = (replayed ?? (sc ? { faults: sc.faults } : null))?.faults.some((f) => isMembershipKind(f.kind)) ?? kinds.some(isMembershipKind);
  if (target && o.spares) throw new UsageError(`SPARES= starts spare Zaris nodes; TARGET=${target.name} runs its own nodes`);
  // (a scenario says its own spares; SPARES= overrides them; a replay starts the recorded run's)
  const spareCount = o.spares ?? replayedSpares ?? sc?.spares;
  const spareIds = target ? [] : spareIdsOf(replayed ? replayed.nodeCount : nodeCount, spareCount, membershipPlanned && !(sc !== undefined && spareCount === 0));

  await sweepLeftovers({ sweepers: [...DEFAULT_SWEEPERS, nodeProcessSweeper, dockerSweeper] });
  const runTag = `r${randomBytes(3).toString('hex')}`;
  const { runtime: made, reason } = target ? await makeTargetRuntime(target, o.runtime, runTag, processPartitions, log) : await makeRuntime(o.runtime, runTag, processPartitions, log);
  mkdirSync(o.runsDir, { recursive: true });
  // a scenario's own seed (when it names one) seeds its live choices and the workload
  const seed = replayed ? replayed.seed : (sc?.seed ?? o.seed);
  const runDir = createRunDir(o.runsDir, `${utcStamp()}-${seed}`);
  const latest = path.join(o.runsDir, 'latest');
  rmSync(latest, { force: true });
  symlinkSync(path.basename(runDir), latest);

  // the SQLite work runs on a worker thread: the harness's event loop only queues rows
  const ledger: Ledger = o.ledgerOff ? new NullLedger() : new WorkerLedger(path.join(runDir, 'ledger.sqlite'));
  // every runtime call of the run: transient failures retried, the rest a world error (run-errors.ts)
  const runtime = guardRuntime(made, { ledger, clock, log, ...(o.injectRuntimeErrors ? { inject: o.injectRuntimeErrors } : {}), ...(o.runtimeBackoff ? { backoff: o.runtimeBackoff } : {}) });
  log(`run ${runDir} (target ${targetName}, runtime ${runtime.kind}: ${reason})`);
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
    const pkg = JSON.parse(readFileSync(path.join(repoRootFrom(import.meta.url), 'package.json'), 'utf8')) as { version: string };
    ledger.setMeta(META.status, 'running');
    ledger.setMeta(META.seed, String(seed));
    ledger.setMeta(META.runtime, runtime.kind);
    ledger.setMeta(META.startedAtUtc, new Date().toISOString());
    const scenarioSchedule = sc ? validateSchedule(compileScenario(sc, seed)) : null;
    ledger.setMeta(META.durationMs, String(replayed ? replayed.durationMs : scenarioSchedule ? scenarioSchedule.durationMs : o.durationMs));
    if (scenarioRec) ledger.setMeta(META.scenario, JSON.stringify(scenarioRec));
    // the store's identity (results.json `target`): a target's version is asked of the binaries its
    // nodes run (on docker: the node image's), once they run
    const identity = target
      ? { target: target.name, targetVersion: '(not asked yet)', clientLibrary: target.clientLibrary }
      : { target: 'zaris', targetVersion: `zaris ${pkg.version} (nodes/, this repository)`, clientLibrary: `zaris client ${pkg.version} (nodes/client, seed 000)` };
    const writeVersions = (): void => ledger.setMeta(META.versions, JSON.stringify({ node: process.version, zarisCertify: pkg.version, ...identity }));
    writeVersions();
    const planned = replayed ?? scenarioSchedule;
    const runKinds = planned ? planned.kinds : kinds;
    const runNodes = planned ? planned.nodeCount : nodeCount;
    const nodeIds = nodeIdsOf(runNodes);
    // run meta (CONTRACT.md): written now, and again once the cluster declared its lease and the client its options
    const runConfig: RunConfig = { target: targetName, ...(target?.scope ? { scope: target.scope } : {}), durationMs: planned ? planned.durationMs : o.durationMs, seed, runtime: runtime.kind, runtimeReason: reason, faults: runKinds, faultPreset: planned ? planned.preset : (o.faultPreset ?? 'random'), nodes: runNodes, beyondBudget: planned ? planned.beyondBudget : beyondBudget, replay: o.replay ?? null, scenario: scenarioRec ? scenarioRec.name : null, stores, rate: o.rate, writersPerStore: o.writersPerStore, keysPerWriter: o.keysPerWriter, escalationTimeoutMs, evictionTimeoutMs, selfTestBug: selfTestBug ?? null, asyncLagMaxMs, stallBoundMs, leaseMs: null, clientOptions: null, multiKeyLongTailRetryThresholdsMs: DEFAULT_BATCH_GET_TABLE, spares: spareIds };
    ledger.setMeta(META.runConfig, JSON.stringify(runConfig));

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
        kinds,
        preset: o.faultPreset ?? 'random',
        escalationTimeoutMs,
        evictionTimeoutMs,
        nodeCount: target ? target.nodeIds.length : NODE_IDS.length,
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

/**
 * The run meta `runConfig` (META.runConfig, JSON; CONTRACT.md "Run meta"): the options of the run,
 * `asyncLagMaxMs` (ms), `leaseMs` (ms, the owner lease the store declares; null until known),
 * `clientOptions` (the workload client's, null until it is made) and the seed 004 table the nodes
 * advertise.
 */
export interface RunConfig extends RunRulesConfig {
  /** The store under test (TARGET=). */
  target: TargetName;
  /** Targets that declare it: what a run of the target tests and does not test (results.json `scope`). */
  scope?: { tested: string[]; notTested: string[] };
  durationMs: number;
  seed: number;
  runtime: RuntimeKind;
  runtimeReason: string;
  faults: FaultKind[];
  /** The schedule's preset ('random' unless FAULTS=preset:<name>). */
  faultPreset: string;
  /** How many nodes the cluster has (NODES=), spares not counted. */
  nodes: number;
  /** The spare nodes started beside them (SPARES=, issue 14); absent in runs from before membership changes. */
  spares?: string[];
  beyondBudget: boolean;
  replay: string | null;
  /** The scenario's name (SCENARIO=), or null. */
  scenario: string | null;
  /** The stores the run started (replays of scenario runs start the same). */
  stores: StoreConfig[];
  rate: number;
  writersPerStore: number;
  keysPerWriter: number;
  escalationTimeoutMs: number;
  /** The nodes' eviction timeout, ms (seed 002; a scenario may set it). */
  evictionTimeoutMs: number;
  selfTestBug: SelfTestBug | null;
  asyncLagMaxMs: number;
  /** The stall bound (STALL=), ms. */
  stallBoundMs: number;
  leaseMs: number | null;
  /** The workload client's options: the Zaris client's record, or a target adapter's (library, bounds, store settings). */
  clientOptions: ClientOptionsRecord | Record<string, unknown> | null;
  multiKeyLongTailRetryThresholdsMs: string;
}

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
