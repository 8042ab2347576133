import fc from 'fast-check';
import type { SimSchedule } from '../sim-schedule.js';

/**
 * Schedules of the kind of make sim run 1346 (batch seed 4040): the leader is split away with a
 * minority (a `split` around it), and while it is, the active owner of a
 * partition on the other side crashes - before the leader's quorum check gives up, so the cut-off
 * leader may still decide from its ageing view (drop the replicas it lost, keep the crashed owner)
 * and leave that decision accepted for the next leader to re-propose. Within budget: the crash is
 * one failure, and every write the owner acknowledged that a surviving assigned replica held must
 * survive (the simulation's possession and durability checks).
 *
 * Bounded: workloads of 3-5 s, one cut of 1.2-2.5 s, one crash 100-600 ms into
 * it, an optional isolation of another active later on. 5 nodes, so the side without the leader
 * loses its majority when the owner crashes and the next leader is elected after the heal.
 */
export function cutLeaderCrashScheduleArb(): fc.Arbitrary<SimSchedule> {
  return fc
    .record({
      seed: fc.integer({ min: 1, max: 1_000_000 }),
      cluster: fc.constant<SimSchedule['cluster']>('n5'),
      workloadMs: fc.integer({ min: 3_000, max: 5_000 }),
      escalationTimeoutMs: fc.integer({ min: 1_000, max: 2_000 }),
      maxDelayMs: fc.double({ min: 5, max: 30, noNaN: true }),
      resetProbability: fc.constantFrom(0, 0.0002, 0.0005),
      cutKind: fc.constant<'split'>('split'),
      cutAt: fc.integer({ min: 0, max: 1_000 }),
      cutMs: fc.integer({ min: 1_200, max: 2_500 }),
      crashAfter: fc.integer({ min: 100, max: 600 }),
      crashMs: fc.integer({ min: 500, max: 4_000 }),
      partition: fc.integer({ min: 0, max: 63 }),
      laterIsolate: fc.boolean(),
    })
    .map((r) => ({
      seed: r.seed,
      cluster: r.cluster,
      budget: 'within' as const,
      workloadMs: r.workloadMs,
      escalationTimeoutMs: r.escalationTimeoutMs,
      net: { minDelayMs: 0.05, maxDelayMs: r.maxDelayMs, resetProbability: r.resetProbability, clientMinDelayMs: 0.1, clientMaxDelayMs: 1, linkSkewMs: 4 },
      workload: { writersPerStore: 2, keysPerWriter: 12, thinkMinMs: 1, thinkMaxMs: 13, readFraction: 0.05, deleteFraction: 0.02, maxAttempts: 4, attemptTimeoutMs: 900, deadlineMs: 4_800 },
      faults: [
        { atMs: r.cutAt, kind: r.cutKind, target: { kind: 'leader' as const }, durationMs: r.cutMs },
        { atMs: r.cutAt + r.crashAfter, kind: 'crash' as const, target: { kind: 'active' as const, partition: r.partition }, durationMs: r.crashMs },
        ...(r.laterIsolate ? [{ atMs: r.cutAt + r.cutMs + 300, kind: 'isolate-out' as const, target: { kind: 'active' as const, partition: r.partition + 1 }, durationMs: 1_500 }] : []),
      ],
    }));
}
