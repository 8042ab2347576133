/**
 * The options of a certification run (the CLI and the Makefile fill them) and the default stores.
 */
import type { SelfTestBug, StoreConfig } from '../../nodes/cluster-config.js';
import type { FaultKind, PresetName } from '../nemesis/schedule.js';
import type { ProgressOutput } from '../run-progress.js';
import type { Injection } from '../runtime/injected-runtime-errors.js';
import type { RuntimeKind } from '../runtime/runtime.js';
import type { Scenario } from '../scenario/scenario.js';
import type { TargetName } from '../targets/target.js';

/** The stores of a certification run (DESIGN.md §3): sync RF3, async RF3, RF1. */
export const DEFAULT_STORES: StoreConfig[] = [
  { name: 'sync3', replicationFactor: 3, ackMode: 'sync', segments: 64 },
  { name: 'async3', replicationFactor: 3, ackMode: 'async', segments: 64 },
  { name: 'rf1', replicationFactor: 1, ackMode: 'sync', segments: 64 },
];

/** Everything a run is parameterised by (the CLI and the Makefile fill it). */
export interface CertifyOptions {
  /**
   * The store under test (`TARGET=`, DESIGN.md §3 "Targets"): `zaris` (default), `etcd`,
   * `redis-sentinel`. The nemesis, ledger, verifier and report are the same for all.
   */
  target?: TargetName;
  /** redis-sentinel only: Redis's min-replicas-to-write (`REDIS_MIN_REPLICAS=`; default 1). */
  redisMinReplicas?: number;
  /** postgres-patroni only: `off` or `strict` (`PATRONI_SYNC=`; default off). */
  patroniSync?: string;
  /** TARGET=nats-jetstream: reads during the run (NATS_READS=1; TargetSettings.natsReads). */
  natsReads?: boolean;
  /** Length of the fault phase, ms. */
  durationMs: number;
  seed: number;
  runtime: 'auto' | RuntimeKind;
  faults: FaultKind[];
  /** The fault mix (FAULTS=preset:<name>); default `random`. */
  faultPreset?: PresetName;
  /** FAULTS was given explicitly (a partition request without CAP_NET_ADMIN is then refused). */
  faultsExplicit: boolean;
  /** Cluster size, 3 (default) or 5 (NODES=5). */
  nodes?: number;
  /**
   * Spare nodes started beside the cluster (`SPARES=`, issue 14): outside the member set at
   * start, joined and drained by the membership changes. Default: 1 when membership changes are
   * planned (FAULTS=...,membership, a scenario's join/leave/rebalance steps, a replayed schedule
   * with them), else 0. See spareIdsOf (plan.ts).
   */
  spares?: number;
  beyondBudget: boolean;
  /** A run directory whose planned schedule to re-apply. */
  replay?: string;
  /**
   * A scenario (SCENARIO=, harness/scenario): its cluster, stores, timings and steps replace the
   * random schedule; the run says whether its expectation held (results.json `scenario`, exit code).
   */
  scenario?: Scenario;
  /** The stores of the run (default {@link DEFAULT_STORES}; a scenario names its own). */
  stores?: StoreConfig[];
  /** Parent of run directories (default runs/). */
  runsDir: string;
  /** Target write rate over all stores, writes/s (0 = as fast as possible). */
  rate: number;
  writersPerStore: number;
  keysPerWriter: number;
  /** Suspicion escalation timeout of the nodes (seed 002: 10 s). */
  escalationTimeoutMs: number;
  /**
   * How long the store may keep an acknowledged async write unreplicated while nothing disrupts
   * replication, ms (`ASYNC_LAG=`, history-format.md v2 `run.asyncLagMaxMs`); default
   * DEFAULT_ASYNC_LAG_MS (ledger/schema.ts).
   */
  asyncLagMaxMs?: number;
  /**
   * Stall bound (`STALL=`, issue 11): a node silent or a partition Unavailable longer than this
   * with no fault touching it is a stall finding (results.json `availability`), ms; default
   * DEFAULT_STALL_BOUND_MS (verifier/stalls.ts).
   */
  stallBoundMs?: number;
  /** A deliberate store bug (self-test: the run must come out FAILED). */
  selfTestBug?: SelfTestBug;
  /** Ledger off (benchmark only: measures the ledger's cost). */
  ledgerOff?: boolean;
  /** The workload reads nothing and probes nothing (benchmark only: measures the reads' cost). */
  readsOff?: boolean;
  /** Skip verification and reports (benchmark only). */
  skipVerify?: boolean;
  /** Print progress lines to stderr. */
  log?: (line: string) => void;
  /**
   * Where the progress line goes (a terminal redraws it in place: run-progress.ts). Default: a
   * plain progress line through `log` every 30 s.
   */
  output?: ProgressOutput;
  /**
   * The disk guard (disk-guard.ts): ends the run cleanly, INCONCLUSIVE with the reason, before the
   * run directory's file system fills. false turns it off. Default: on, checked every 5 s.
   */
  diskGuard?: false | { floorBytes?: number; checkEveryMs?: number };
  /** Stop signal (SIGINT): the run ends early, heals, and is INCONCLUSIVE. */
  signal?: AbortSignal;
  /**
   * Runtime errors injected on purpose (runtime/injected-runtime-errors.ts; the CLI reads
   * ZARIS_CERTIFY_INJECT_RUNTIME_ERRORS): the harness's self-test of a run the world fails.
   */
  injectRuntimeErrors?: Injection[];
  /** Backoff of runtime retries, ms (tests shorten it); default 250 .. 2,000 (run-errors.ts). */
  runtimeBackoff?: { initialDelayMs: number; maxDelayMs: number };
}
