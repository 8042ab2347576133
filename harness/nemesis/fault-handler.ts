/**
 * What a fault family implements (one module per family, listed by kind in fault-registry.ts): one
 * attempt to start a fault, how it is held while it lasts, and how it ends.
 */
import type { ClusterSnapshot } from './budget.js';
import type { Effect } from './budget-gate.js';
import type { FaultStatus, Holding, PlayerState, Started } from './player-state.js';
import type { Prng } from './prng.js';
import type { PlannedFault } from './schedule.js';

/** One attempt to start fault `index`, as fault-lifecycle.ts startFault gathers it for the family. */
export interface StartRequest {
  index: number;
  f: PlannedFault;
  /** The fault's own PRNG (seeded from the schedule's seed and the index): targets, splits, power groups. */
  rng: Prng;
  /** Every node of the runtime. */
  nodes: string[];
  /** A fresh snapshot; null when the probe failed or did not answer in time. */
  snap: ClusterSnapshot | null;
  /** The fault's detail so far (index, step, trigger): the family adds to it; its rows record it as JSON text. */
  detail: Record<string, unknown>;
  /** The planned start on the run clock (ms since run start) = fault-phase start + atMs. */
  plannedMs: number;
  /** The planned target as describeTarget writes it (the rows' `target`). */
  target: string;
  /** The fault's status, where the family notes the nodes it hit (triggers and later targets read it). */
  st: FaultStatus;
  /** Is the node up and held (down or frozen) by no fault? */
  usable(n: string): boolean;
  /** The budget's one-line refusal of an effect added to the faults in effect; null when allowed (budget-gate.ts). */
  check(effect: Effect): string | null;
}

/**
 * How one attempt went: `started` (its rows recorded, its state counted; `apply` makes the change),
 * or `skip` with the reason (retried until gateWaitMs unless `final`), or neither (the phase ended).
 */
export type StartAttempt = { started?: Started; skip?: string; final?: boolean };

/** One fault family: the kinds fault-registry.ts maps to it. */
export interface FaultHandler {
  /**
   * One attempt to start: resolves the target (live-targets.ts), asks the budget (`req.check`)
   * and, when allowed, reserves the fault in `ps.holdings` and records its rows BEFORE the change,
   * which it returns as `started.apply`. A skip changes nothing. Throws what the recorder throws.
   */
  start(ps: PlayerState, req: StartRequest): StartAttempt | Promise<StartAttempt>;
  /** Holds a started fault until its end (default: f.durationMs, less when `stop` aborts). */
  hold?(ps: PlayerState, h: Holding, f: PlannedFault, stop: AbortSignal): Promise<void>;
  /**
   * Records the end of the fault's open rows, then undoes it (restart, resume, heal, clock
   * restore). An undo that fails leaves the fault in effect with its rows reopened (ps.goOn,
   * stuck-faults.ts) and throws.
   */
  end(ps: PlayerState, h: Holding): void | Promise<void>;
}
