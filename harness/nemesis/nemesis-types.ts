/**
 * The nemesis's seams and what it reports: the recorder it writes faults through, the probe it reads
 * the live cluster through, its clock, its options, the heal outcome and the fault counts.
 */
import type { FaultRuntime } from '../runtime/runtime.js';
import type { ClusterSnapshot } from './budget.js';
import { ALL_FAULT_KINDS, type FaultKind, type RecordedKind, type Schedule } from './schedule.js';

/** What the ledger records when a fault starts (table `faults`, ledger/schema.ts). */
export interface FaultStartRecord {
  kind: RecordedKind;
  /** Nodes hit: the crashed / paused / clock-faulted / client-cut node; for a partition the nodes cut off (one-way: both ends). */
  nodes: string[];
  /** The planned target, as {@link describeTarget} writes it: `leader`, `active:sync3/2`, `node:n1`, `random`, ... */
  target: string;
  /** The planned start on the run clock (ms since run start) = fault-phase start + atMs. */
  plannedMs: number;
  /** Partitions only: the nodes that cannot reach a majority while it lasts (history-format.md v2 `faults[].isolated`). */
  isolated?: string[];
  /** JSON text: schedule index, resolved node, topology, grudge, fallbacks, trigger, flap, clock, power group. */
  detail?: string;
}

/**
 * Where the nemesis records faults (the ledger writer implements it). Every method must be durable
 * (committed) before it returns: the nemesis applies the fault only afterwards. Times are taken by
 * the recorder from the run clock, except `caughtUp`'s `ms`.
 */
export interface FaultRecorder {
  /** Records a fault about to start; returns its id (faults.id). */
  faultStart(f: FaultStartRecord): number;
  /** Records the end of fault `id` (restart / resume / heal / clock restore about to happen). */
  faultEnd(id: number): void;
  /**
   * The undo after {@link faultEnd} of fault `id` failed: the fault is in effect again, as if its
   * end had never been recorded (no end, until a later faultEnd). Issue 22, stuck-faults.ts.
   */
  faultReopen(id: number): void;
  /**
   * The runtime call that applies fault `id` returned: the fault is surely in effect now (the
   * ledger's effective_ms; the crash of a node happened between faultStart and this call).
   */
  faultEffective?(id: number): void;
  /** The node restarted after crash fault `id` was back in sync at `ms` (run clock). */
  caughtUp(id: number, ms: number): void;
  /** A free-form timeline entry (events table): kind such as `fault-skipped`, detail JSON text. */
  event(kind: string, detail: string): void;
}

/**
 * Live answers about the cluster (the harness implements it over the metadata request). Any
 * method may throw or hang; the nemesis bounds each call by `probeTimeoutMs` and treats a failure
 * as "unknown" (the budget refuses, no leader, not caught up).
 */
export interface ClusterProbe {
  /** The merged runtime map now: leader, nodes that answered, every partition (budget.ts). */
  snapshot(): Promise<ClusterSnapshot>;
  /**
   * Every partition of every store with its replication factor (the partition map). The harness
   * feeds it to planSchedule's `partitions`; the executor does not call it.
   */
  partitions(): Promise<Array<{ store: string; partition: number; replicationFactor?: number }>>;
  /**
   * Sends an admin request (nodes/node-admin.ts: `handoff <store>/<partition> to <node>`,
   * `regenerate <store>/<partition>`, `join <node>`, `leave <node>`, `rebalance`) to the leader;
   * `ok` when the change was proposed, else the store's one-line reason. Needed only by admin
   * faults (handoff, regenerate, join, leave, rebalance).
   */
  admin?(command: string): Promise<{ ok: boolean; message: string; status: string }>;
}

/** The harness's run clock: milliseconds since the run started (monotonic). */
export interface Clock {
  now(): number;
}

/** Options of the executor. Every time is in ms. */
export interface NemesisOptions {
  runtime: FaultRuntime;
  schedule: Schedule;
  clock: Clock;
  recorder: FaultRecorder;
  probe: ClusterProbe;
  /** Apply no fault budget (DESIGN.md §5). Default: schedule.beyondBudget. */
  beyondBudget?: boolean;
  /** Within budget: how long a fault waits for the budget to allow it before it is skipped. Default 30,000. */
  gateWaitMs?: number;
  /** How long to wait for a restarted node to catch up (healAll records it if it did later). Default 60,000. */
  catchUpWaitMs?: number;
  /** healAll(): how long to wait for every partition to be Healthy. Default 60,000. */
  healTimeoutMs?: number;
  /** Polling period of the probe (snapshots, triggers, the gate). Default 200. */
  pollMs?: number;
  /** Bound on one probe call. Default 5,000. */
  probeTimeoutMs?: number;
  /**
   * The nodes that vote (issue 14: a run's spares do not): the budget's majority and a partition's
   * `isolated` nodes are counted over them. Default: every node of the runtime.
   */
  voters?: readonly string[];
}

/** Outcome of {@link Nemesis.healAll}; `reason` (one line) when not healed: the run is INCONCLUSIVE. */
export interface HealResult {
  healed: boolean;
  reason?: string;
}

/** Injected faults by planned kind (a power failure counts once) — progress lines. */
export type FaultCounts = Record<FaultKind, number>;

/** Every fault kind with a zero count (a starting point for progress lines). */
export function zeroCounts(): FaultCounts {
  return Object.fromEntries(ALL_FAULT_KINDS.map((k) => [k, 0])) as FaultCounts;
}
