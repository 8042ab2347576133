/** What one simulation run hands back: its counters, its digest, or the violation that ended it. */
import type { ClientStats } from './sim-client.js';
import type { FinalClass } from './sim-invariants.js';

/** A violated invariant, with what is needed to replay and understand it. */
export class SimViolation extends Error {
  override name = 'SimViolation';
  constructor(
    /** Invariant name (see sim-invariants.ts, plus "no-convergence", "sole-survivor", "lost", "phantom", "unexpected", "replica-divergence", "phantom-read", "unexpected-read"). */
    readonly invariant: string,
    readonly detail: string,
    readonly seed: number,
    /** Virtual time of the violation, ms. */
    readonly atMs: number,
    /** The last events before it, oldest first. */
    readonly trace: string[],
  ) {
    super(`${invariant} at ${atMs.toFixed(1)} ms (sim seed ${seed}): ${detail}\nlast events:\n  ${trace.join('\n  ')}`);
  }
}

/** Counters of one run. */
export interface SimStats {
  /** Node events handled (messages, ticks, client requests, probes, peer-down signals). */
  nodeEvents: number;
  messagesSent: number;
  messagesLost: number;
  resets: number;
  crashes: number;
  restarts: number;
  pauses: number;
  partitions: number;
  /** Faults that never ran (a crash held back by the budget until the workload ended). */
  faultsSkipped: number;
  strips: number;
  /**
   * Strips whose premise fell: an entry decided for the killed active's tenure (a drop it asked
   * for before it died, committed after) took the survivor out of the in-sync set, so it was no
   * longer the sole surviving in-sync replica the property is about.
   */
  stripsVoided: number;
  /**
   * Promotions a leader decided as Recovering from a more complete holder outside the in-sync set
   * (NodeCore log `possession-holder`; seed 002 possession proof over every assigned replica).
   */
  holderPromotions: number;
  /** Membership requests the leader proposed (join, leave, rebalance: sim-nemesis.ts). */
  membershipChanges: number;
  /** Partition moves finished (a leader's migration-done: core/migration-driver.ts). */
  migrations: number;
  /**
   * Acknowledged async writes a surviving replica held when their owner crashed, checked at the
   * next tenure's start (sim-durability.ts; 0 outside the within budget).
   */
  heldAtCrashChecked: number;
  /** Replicas' position claims (rep-ack, sync-req) checked against their active's log (sim-durability.ts onPositionClaim). */
  positionClaimsChecked: number;
  /** Virtual ms from the final heal until the cluster converged (-1 when it did not). */
  convergeMs: number;
  /** Final classification of every key (within budget only). */
  finals: Record<FinalClass, number>;
}

/** The counters of a run before its first event: every count 0, not converged (-1). */
export function newSimStats(): SimStats {
  return {
    nodeEvents: 0,
    messagesSent: 0,
    messagesLost: 0,
    resets: 0,
    crashes: 0,
    restarts: 0,
    pauses: 0,
    partitions: 0,
    faultsSkipped: 0,
    strips: 0,
    stripsVoided: 0,
    holderPromotions: 0,
    membershipChanges: 0,
    migrations: 0,
    heldAtCrashChecked: 0,
    positionClaimsChecked: 0,
    convergeMs: -1,
    finals: { ok: 0, recovered: 0, unexpected: 0, phantom: 0, lost: 0 },
  };
}

/** The result of one run. */
export interface SimResult {
  seed: number;
  /** Events popped from the queue (all kinds). */
  events: number;
  /** Virtual time at the end, ms. */
  virtualMs: number;
  /** Hash of the run's event sequence and final state: equal for equal seeds (determinism). */
  digest: string;
  stats: SimStats;
  clients: ClientStats;
}
