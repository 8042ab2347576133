/**
 * Set-up, the run meta: what the ledger records of the run as it starts (status, seed, runtime,
 * duration, scenario, versions, run config); the store's start adds its lease and client options.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { DEFAULT_BATCH_GET_TABLE } from '../../nodes/multikey/retry-range-table.js';
import type { SelfTestBug, StoreConfig } from '../../nodes/cluster-config.js';
import { META, type RunRulesConfig } from '../../ledger/schema.js';
import type { ClientOptionsRecord } from '../client-options.js';
import { repoRootFrom } from '../docker/node-image.js';
import { validateSchedule, type FaultKind, type Schedule } from '../nemesis/schedule.js';
import type { RuntimeKind } from '../runtime/runtime.js';
import { compileScenario } from '../scenario/scenario.js';
import type { TargetName } from '../targets/target.js';
import type { CertifyOptions } from './options.js';
import { nodeIdsOf, type RunPlan } from './plan.js';
import type { RunSetUp } from './setup.js';

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

/** The store's identity (results.json `target`), in the run meta `versions`. */
export interface RunIdentity {
  target: string;
  /** The store's version: asked of the binaries its nodes run, once they run (a target's). */
  targetVersion: string;
  clientLibrary: string;
}

/** What the run meta written at the start leaves to the phases that follow. */
export interface RunMeta {
  /** The run config as written; the store's start fills `leaseMs` and `clientOptions` and writes it again. */
  runConfig: RunConfig;
  /** The store's identity; a target's start fills `targetVersion` and calls {@link RunMeta.writeVersions}. */
  identity: RunIdentity;
  /** Writes the run meta `versions` (node, zaris-certify and the store's identity) again. */
  writeVersions: () => void;
  /** The scenario's schedule compiled with the run's seed (SCENARIO=), or null. */
  scenarioSchedule: Schedule | null;
  /** The fault kinds of the run: the replayed or scenario schedule's, else the plan's. */
  runKinds: FaultKind[];
  /** The voting nodes n1..nN (spares not counted). */
  nodeIds: string[];
}

/**
 * Writes the run meta of a starting run (CONTRACT.md "Run meta"): status `running`, seed, runtime,
 * start time, the fault phase's duration (ms), the scenario record, versions and the run config.
 * @throws ScheduleError when a scenario's compiled schedule is not valid.
 */
export function startRunMeta(o: CertifyOptions, plan: RunPlan, s: RunSetUp): RunMeta {
  const { ledger, runtime, seed } = s;
  const { target, replayed, scenarioRec } = plan;
  const pkg = JSON.parse(readFileSync(path.join(repoRootFrom(import.meta.url), 'package.json'), 'utf8')) as { version: string };
  ledger.setMeta(META.status, 'running');
  ledger.setMeta(META.seed, String(seed));
  ledger.setMeta(META.runtime, runtime.kind);
  ledger.setMeta(META.startedAtUtc, new Date().toISOString());
  const scenarioSchedule = plan.scenario ? validateSchedule(compileScenario(plan.scenario, seed)) : null;
  ledger.setMeta(META.durationMs, String(replayed ? replayed.durationMs : scenarioSchedule ? scenarioSchedule.durationMs : o.durationMs));
  if (scenarioRec) ledger.setMeta(META.scenario, JSON.stringify(scenarioRec));
  // the store's identity (results.json `target`): a target's version is asked of the binaries its
  // nodes run (on docker: the node image's), once they run
  const identity: RunIdentity = target
    ? { target: target.name, targetVersion: '(not asked yet)', clientLibrary: target.clientLibrary }
    : { target: 'zaris', targetVersion: `zaris ${pkg.version} (nodes/, this repository)`, clientLibrary: `zaris client ${pkg.version} (nodes/client, seed 000)` };
  const writeVersions = (): void => ledger.setMeta(META.versions, JSON.stringify({ node: process.version, zarisCertify: pkg.version, ...identity }));
  writeVersions();
  const planned = replayed ?? scenarioSchedule;
  const runKinds = planned ? planned.kinds : plan.kinds;
  const runNodes = planned ? planned.nodeCount : plan.nodeCount;
  const nodeIds = nodeIdsOf(runNodes);
  // run meta (CONTRACT.md): written now, and again once the cluster declared its lease and the client its options
  const runConfig: RunConfig = { target: plan.targetName, ...(target?.scope ? { scope: target.scope } : {}), durationMs: planned ? planned.durationMs : o.durationMs, seed, runtime: runtime.kind, runtimeReason: s.reason, faults: runKinds, faultPreset: planned ? planned.preset : (o.faultPreset ?? 'random'), nodes: runNodes, beyondBudget: planned ? planned.beyondBudget : plan.beyondBudget, replay: o.replay ?? null, scenario: scenarioRec ? scenarioRec.name : null, stores: plan.stores, rate: o.rate, writersPerStore: o.writersPerStore, keysPerWriter: o.keysPerWriter, escalationTimeoutMs: plan.escalationTimeoutMs, evictionTimeoutMs: plan.evictionTimeoutMs, selfTestBug: plan.selfTestBug ?? null, asyncLagMaxMs: plan.asyncLagMaxMs, stallBoundMs: plan.stallBoundMs, leaseMs: null, clientOptions: null, multiKeyLongTailRetryThresholdsMs: DEFAULT_BATCH_GET_TABLE, spares: plan.spareIds };
  ledger.setMeta(META.runConfig, JSON.stringify(runConfig));
  return { runConfig, identity, writeVersions, scenarioSchedule, runKinds, nodeIds };
}
