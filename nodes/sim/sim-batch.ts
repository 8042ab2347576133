import fc from 'fast-check';
import type { SelfTestBug } from '../cluster-config.js';
import { runSimulation, SimViolation } from './failover-sim.js';
import { denseScheduleArb, membershipScheduleArb, oneWayCutCrashScheduleArb, scheduleArb, survivorScheduleArb } from './sim-arbitraries.js';
import type { SimSchedule } from './sim-schedule.js';

/**
 * Batches of generated schedules outside vitest: the schedule of run `i` of a batch seed, and one
 * checked run (`make sim`, sim-main.ts; `make power-sim`, power-sim.ts).
 */

/** The mix of schedule families `make sim` draws from, by weight (the properties' proportions, plus the dense and one-way-cut families). */
export function mixedScheduleArb(): fc.Arbitrary<SimSchedule> {
  return fc.oneof(
    { weight: 8, arbitrary: scheduleArb({ budget: 'within' }) },
    { weight: 2, arbitrary: scheduleArb({ budget: 'within', clusters: ['n5'], maxWorkloadMs: 4_000 }) },
    { weight: 5, arbitrary: scheduleArb({ budget: 'beyond', clusters: ['n3', 'n3', 'n5'], crashWeight: 4 }) },
    { weight: 3, arbitrary: survivorScheduleArb() },
    { weight: 1, arbitrary: scheduleArb({ budget: 'amnesia', clusters: ['n3', 'n3', 'n5'], crashWeight: 8 }) },
    { weight: 6, arbitrary: denseScheduleArb() },
    { weight: 2, arbitrary: oneWayCutCrashScheduleArb() },
  );
}

/** fast-check's seed of run `i` of a batch seeded `seed`. */
function runSeed(seed: number, i: number): number {
  return (Math.imul(seed, 0x9e3779b1) + i) | 0;
}

/**
 * The schedule of run `i` of a `make sim` batch seeded `seed`: reproducible one by one. With
 * `membership` (`make sim MEMBERSHIP=1`), the membership family only (sim-arbitraries.ts
 * membershipScheduleArb).
 */
export function scheduleOfRun(seed: number, i: number, membership = false): SimSchedule {
  return fc.sample(membership ? membershipScheduleArb() : mixedScheduleArb(), { numRuns: 1, seed: runSeed(seed, i) })[0];
}

/**
 * The schedule of run `i` of a `make power-sim` batch seeded `seed` (the dense family; the same for
 * every bug), drawn without fast-check's bias: a sample of one is fast-check's first run, the most
 * biased towards the bounds (fault times of 0-12 ms, before any partition has an owner, or at the
 * workload's last ms; link skews of 1e-323), which wasted most faults of most power schedules.
 */
export function powerScheduleOfRun(seed: number, i: number): SimSchedule {
  return fc.sample(fc.noBias(denseScheduleArb()), { numRuns: 1, seed: runSeed(seed, i) })[0];
}

/** How one run ended. */
export interface RunOutcome {
  /** The violated invariant and the whole message (seed, detail, last events), or null for a clean run. */
  violation: { invariant: string; message: string } | null;
  /** Events popped (0 when a violation stopped the run). */
  events: number;
  /** Virtual time reached, ms. */
  virtualMs: number;
  /**
   * The run's behaviour fingerprint (sim-digest.ts, fed by the simulation: every delivery with its time, crash, restart
   * and the final revisions and epochs; 8 hex digits), or null when a violation stopped the run.
   */
  digest: string | null;
  /** Membership requests the leader proposed, and partition moves finished (0 when a violation stopped the run). */
  membershipChanges: number;
  migrations: number;
}

/**
 * Runs one schedule, optionally with every node started with a deliberate bug.
 * A `strip` schedule whose strip never ran counts as a sole-survivor violation (the property was
 * not tested).
 * @throws whatever runSimulation throws besides a SimViolation (a harness error).
 */
export function runChecked(schedule: SimSchedule, bug?: SelfTestBug): RunOutcome {
  const s = bug ? { ...schedule, selfTestBug: bug } : schedule;
  try {
    const r = runSimulation(s);
    if (s.faults.some((f) => f.kind === 'strip') && r.stats.strips !== 1) {
      return { violation: { invariant: 'sole-survivor', message: `sole-survivor: the strip never ran (${r.stats.faultsSkipped} skipped)` }, events: r.events, virtualMs: r.virtualMs, digest: null, membershipChanges: 0, migrations: 0 };
    }
    return { violation: null, events: r.events, virtualMs: r.virtualMs, digest: r.digest, membershipChanges: r.stats.membershipChanges, migrations: r.stats.migrations };
  } catch (e) {
    if (!(e instanceof SimViolation)) throw e;
    return { violation: { invariant: e.invariant, message: e.message }, events: 0, virtualMs: e.atMs, digest: null, membershipChanges: 0, migrations: 0 };
  }
}
