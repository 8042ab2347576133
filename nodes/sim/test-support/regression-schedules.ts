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
  {
    // A failover proposal (sync3/1 to n3) reached the deposed active n2, which stopped serving at
    // once, but its acceptance by n3 was lost with a broken connection; the proposal timed out and
    // the leader went back to deciding from the committed entry, in which n2 - now reachable again -
    // was still the active: nothing ever committed past the accepted entry, and the partition
    // stayed without a serving active for good.
    name: 'a timed-out proposal that deposed an active is proposed again until it commits',
    schedule: {
      seed: 84,
      cluster: 'n3',
      budget: 'within',
      workloadMs: 6000,
      escalationTimeoutMs: 1070,
      net: { minDelayMs: 0.1, maxDelayMs: 30, resetProbability: 0.001, clientMinDelayMs: 0.1, clientMaxDelayMs: 1 },
      workload: { writersPerStore: 2, keysPerWriter: 3, thinkMinMs: 5, thinkMaxMs: 40, readFraction: 0.2, deleteFraction: 0.1, maxAttempts: 3, attemptTimeoutMs: 300, deadlineMs: 5000 },
      faults: [
        { atMs: 5423, kind: 'isolate-in', target: { kind: 'active', partition: 3 }, durationMs: 226 },
        { atMs: 3687, kind: 'isolate-out', target: { kind: 'leader' }, durationMs: 2429 },
      ],
    },
  },
  {
    // Beyond budget (the leader n1 crashed while sync3/0 was Degraded). n1 and n3 had committed
    // sync3/0 epoch 2 while n2 was cut off; n1 crashed and came back empty; n2, which had never
    // heard of epoch 2, won an election with the vote of the new, memory-less n1 and committed a
    // different entry at epoch 2 with n1's acceptance: two committed entries at one epoch. A new
    // incarnation must not vote or accept before it has relearnt where the cluster stands.
    name: 'a restarted, memory-less node neither votes nor accepts before it has rejoined',
    schedule: {
      seed: 34,
      cluster: 'n3',
      budget: 'beyond',
      workloadMs: 6000,
      escalationTimeoutMs: 2000,
      net: { minDelayMs: 0.2, maxDelayMs: 3, resetProbability: 0.001, clientMinDelayMs: 0.1, clientMaxDelayMs: 1 },
      workload: { writersPerStore: 2, keysPerWriter: 3, thinkMinMs: 5, thinkMaxMs: 40, readFraction: 0.2, deleteFraction: 0.1, maxAttempts: 4, attemptTimeoutMs: 1000, deadlineMs: 5000 },
      faults: [
        { atMs: 3218, kind: 'crash', target: { kind: 'leader' }, durationMs: 1754 },
        { atMs: 1436, kind: 'isolate-in', target: { kind: 'active', partition: 34 }, durationMs: 3208 },
        { atMs: 4654, kind: 'bridge', target: { kind: 'node', index: 36 }, durationMs: 1662 },
      ],
    },
  },
];
