import type { SimSchedule } from '../sim-schedule.js';

/**
 * Schedules that once made the simulation find a real bug in NodeCore, kept as fixed regression
 * tests (sim brief: "keep any schedule that ever found a bug"). Each names what broke.
 */
export const REGRESSION_SCHEDULES: ReadonlyArray<{ name: string; schedule: SimSchedule }> = [
  {
    // Connection resets lost both copies of the leader's bootstrap proposals; the leader had
    // accepted them itself, so it never bootstrapped again nor re-proposed: no partition ever
    // got a committed entry (boot never converged).
    name: 'a bootstrap proposal lost to connection resets is proposed again',
    schedule: {
      seed: 53,
      cluster: 'n3',
      budget: 'within',
      workloadMs: 6000,
      escalationTimeoutMs: 2117,
      net: { minDelayMs: 0.1, maxDelayMs: 1, resetProbability: 0.01, clientMinDelayMs: 0.1, clientMaxDelayMs: 1 },
      workload: { writersPerStore: 2, keysPerWriter: 3, thinkMinMs: 5, thinkMaxMs: 40, readFraction: 0.2, deleteFraction: 0.1, maxAttempts: 2, attemptTimeoutMs: 1000, deadlineMs: 5000 },
      faults: [{ atMs: 383, kind: 'crash', target: { kind: 'node', index: 4 }, durationMs: 3779 }],
    },
  },
];
