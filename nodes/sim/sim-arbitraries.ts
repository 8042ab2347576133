import fc from 'fast-check';
import { DEFAULT_TIMING } from '../cluster-config.js';
import { GENERAL_FAULT_KINDS, type ClusterPreset, type FaultKind, type FaultStep, type FaultTarget, type NetParams, type SimSchedule, type WorkloadParams } from './sim-schedule.js';

/**
 * fast-check generators of simulation schedules (sim brief, issue 4): fault kinds, targets (a node,
 * the leader, a partition's active owner), timings, network delay / reset parameters and client
 * operation mixes. Shared by the vitest properties and `make sim`, so both explore the same space.
 * Every number is virtual ms unless named otherwise.
 */

/** Network parameters: sub-ms to tens of ms of delay, connection resets from none to 0.5 % of messages. */
export function netArb(): fc.Arbitrary<NetParams> {
  return fc
    .record({
      minDelayMs: fc.double({ min: 0.05, max: 2, noNaN: true }),
      spreadMs: fc.oneof(fc.double({ min: 0, max: 5, noNaN: true }), fc.double({ min: 5, max: 40, noNaN: true })),
      // up to one connection reset every 200 messages: far harsher than TCP on a LAN, yet not so
      // harsh that every burst of proposals loses a reply (1-2 % kept a leader from ever
      // committing a failover within the survivor bound, with nothing wrong in the store)
      resetProbability: fc.oneof(fc.constant(0), fc.double({ min: 0.0002, max: 0.005, noNaN: true })),
      clientMinDelayMs: fc.double({ min: 0.05, max: 1, noNaN: true }),
      clientSpreadMs: fc.double({ min: 0, max: 5, noNaN: true }),
    })
    .map((r) => ({
      minDelayMs: r.minDelayMs,
      maxDelayMs: r.minDelayMs + r.spreadMs,
      resetProbability: r.resetProbability,
      clientMinDelayMs: r.clientMinDelayMs,
      clientMaxDelayMs: r.clientMinDelayMs + r.clientSpreadMs,
    }));
}

/** Client mixes: 1-3 writers per store, a few keys each, reads, deletes, tight or loose retry bounds. */
export function workloadArb(): fc.Arbitrary<WorkloadParams> {
  return fc
    .record({
      writersPerStore: fc.integer({ min: 1, max: 3 }),
      keysPerWriter: fc.integer({ min: 1, max: 4 }),
      thinkMinMs: fc.integer({ min: 1, max: 30 }),
      thinkSpreadMs: fc.integer({ min: 0, max: 60 }),
      readFraction: fc.double({ min: 0, max: 0.4, noNaN: true }),
      deleteFraction: fc.double({ min: 0, max: 0.25, noNaN: true }),
      maxAttempts: fc.integer({ min: 1, max: 6 }),
      attemptTimeoutMs: fc.integer({ min: 150, max: 1500 }),
      deadlineMs: fc.integer({ min: 1000, max: 6000 }),
    })
    .map((r) => ({
      writersPerStore: r.writersPerStore,
      keysPerWriter: r.keysPerWriter,
      thinkMinMs: r.thinkMinMs,
      thinkMaxMs: r.thinkMinMs + r.thinkSpreadMs,
      readFraction: r.readFraction,
      deleteFraction: r.deleteFraction,
      maxAttempts: r.maxAttempts,
      attemptTimeoutMs: r.attemptTimeoutMs,
      deadlineMs: r.deadlineMs,
    }));
}

/** A fault target: a node by index, the leader, or the active owner of a partition. */
export function targetArb(): fc.Arbitrary<FaultTarget> {
  return fc.oneof(
    fc.record({ kind: fc.constant('node' as const), index: fc.integer({ min: 0, max: 4 }) }),
    fc.record({ kind: fc.constant('leader' as const) }),
    fc.record({ kind: fc.constant('active' as const), partition: fc.integer({ min: 0, max: 14 }) }),
  );
}

/**
 * One general fault (everything but `strip`) starting within the first `workloadMs`; crashes are
 * `crashWeight` times as likely as each other kind (default 1).
 */
export function faultArb(workloadMs: number, crashWeight = 1): fc.Arbitrary<FaultStep> {
  const kinds = GENERAL_FAULT_KINDS.map((k) => ({ weight: k === 'crash' ? crashWeight : 1, arbitrary: fc.constant(k) }));
  return fc.record({
    atMs: fc.integer({ min: 0, max: Math.max(0, workloadMs - 1) }),
    kind: fc.oneof(...kinds),
    target: targetArb(),
    durationMs: fc.oneof(fc.integer({ min: 50, max: 800 }), fc.integer({ min: 800, max: 4000 })),
  });
}

/** Mostly a near-simultaneous boot (50 ms), sometimes nodes starting up to 3 s apart. */
export function bootStaggerArb(): fc.Arbitrary<number> {
  return fc.oneof({ weight: 3, arbitrary: fc.constant(50) }, { weight: 1, arbitrary: fc.integer({ min: 0, max: 3_000 }) });
}

/** Options of {@link scheduleArb}. */
export interface ScheduleArbOptions {
  budget: SimSchedule['budget'];
  /** Clusters to draw from (default n3 only). */
  clusters?: ClusterPreset[];
  /** Workload phase length range, ms (default 2,000-5,000). */
  minWorkloadMs?: number;
  maxWorkloadMs?: number;
  /** Most faults in one schedule (default 6). */
  maxFaults?: number;
  /** Relative weight of crashes among the fault kinds (default 1). */
  crashWeight?: number;
}

/** A whole schedule: seed, cluster, budget, timers, network, clients, faults. */
export function scheduleArb(o: ScheduleArbOptions): fc.Arbitrary<SimSchedule> {
  const clusters = o.clusters ?? ['n3'];
  return fc.integer({ min: o.minWorkloadMs ?? 2_000, max: o.maxWorkloadMs ?? 5_000 }).chain((workloadMs) =>
    fc.record({
      seed: fc.integer(),
      cluster: fc.constantFrom(...clusters),
      budget: fc.constant(o.budget),
      workloadMs: fc.constant(workloadMs),
      escalationTimeoutMs: fc.integer({ min: 1_000, max: 3_000 }),
      net: netArb(),
      workload: workloadArb(),
      faults: fc.array(faultArb(workloadMs, o.crashWeight), { minLength: 0, maxLength: o.maxFaults ?? 6 }),
      bootStaggerMs: bootStaggerArb(),
    }),
  );
}

/**
 * The sole-survivor property (sim brief): RF3 stores on 5 nodes, or RF2 stores on 3 nodes; one
 * `strip` fault kills every in-sync member of a partition but one, leaving a majority of nodes up;
 * the survivor must serve within `survivorBoundMs`. Only network noise besides.
 */
export function survivorScheduleArb(): fc.Arbitrary<SimSchedule> {
  return fc
    .record({
      seed: fc.integer(),
      cluster: fc.constantFrom<ClusterPreset>('n5', 'n3-rf2'),
      atMs: fc.integer({ min: 0, max: 1_500 }),
      partition: fc.integer({ min: 0, max: 14 }),
      survivor: fc.integer({ min: 0, max: 2 }),
      escalationTimeoutMs: fc.integer({ min: 1_000, max: 3_000 }),
      net: netArb(),
      workload: workloadArb(),
      bootStaggerMs: bootStaggerArb(),
    })
    .map((r) => ({
      seed: r.seed,
      cluster: r.cluster,
      budget: 'beyond' as const,
      workloadMs: r.atMs + 15_000,
      escalationTimeoutMs: r.escalationTimeoutMs,
      net: r.net,
      workload: r.workload,
      faults: [{ atMs: r.atMs, kind: 'strip' as const, target: { kind: 'active' as const, partition: r.partition }, durationMs: 0, survivor: r.survivor }],
      survivorBoundMs: 10_000,
      bootStaggerMs: r.bootStaggerMs,
    }));
}

/**
 * The dense family (issue 12: a schedule must reach the dangerous states to catch a bug there):
 * within budget, 10-16 s of workload on 3 nodes (sometimes 5), every schedule with
 * - 2-3 partitions cutting an active off past the suspicion and the escalation (its partitions
 *   fail over while it may still act; it comes back with a copy its successor never saw), each
 *   starting after the boot and early enough to end before the workload does, none overlapping
 *   another, with no other fault in their first seconds (so that a majority replaces the owner);
 * - 6-10 crashes (of actives mostly): failovers, restarted nodes catching up, failbacks;
 * - 2-6 other faults of any kind and length, some overlapping the others;
 * links of unequal speed (a fixed extra delay per link), so the replicas of one active hold
 * different prefixes of its stream when it fails; writers that keep many keys each and write
 * fast, so a lost write or a diverged copy is seen before it is overwritten.
 */
export function denseScheduleArb(): fc.Arbitrary<SimSchedule> {
  return fc.record({ workloadMs: fc.integer({ min: 10_000, max: 16_000 }), escalationTimeoutMs: fc.integer({ min: 1_000, max: 2_500 }) }).chain(({ workloadMs, escalationTimeoutMs }) => {
    const outlast = DEFAULT_TIMING.suspectAfterMs + escalationTimeoutMs;
    // faults start once the partitions have owners (boot takes up to ~1 s), and a cut ends
    // (past the escalation) with time left to see what the returning owner does
    const atMs = fc.integer({ min: 500, max: workloadMs - 1_000 });
    const cutAtMs = fc.integer({ min: 1_000, max: workloadMs - outlast - 1_500 });
    const active = fc.record({ kind: fc.constant('active' as const), partition: fc.integer({ min: 0, max: 14 }) });
    const cut = fc.record({ atMs: cutAtMs, kind: fc.constantFrom<FaultKind>('isolate', 'isolate-out', 'split'), target: active, durationMs: fc.integer({ min: outlast + 500, max: outlast + 3_000 }) });
    const crash = fc.record({ atMs, kind: fc.constant<FaultKind>('crash'), target: fc.oneof({ weight: 3, arbitrary: active }, { weight: 1, arbitrary: targetArb() }), durationMs: fc.oneof(fc.integer({ min: 100, max: 1_000 }), fc.integer({ min: 1_000, max: 4_000 })) });
    return fc.record({
      seed: fc.integer(),
      cluster: fc.constantFrom<ClusterPreset>('n3', 'n3', 'n3', 'n5'),
      budget: fc.constant('within' as const),
      workloadMs: fc.constant(workloadMs),
      escalationTimeoutMs: fc.constant(escalationTimeoutMs),
      // an integer: fc.double draws uniformly over the doubles' bit patterns, mostly denormals
      net: fc.tuple(netArb(), fc.integer({ min: 0, max: 60 })).map(([n, linkSkewMs]) => ({ ...n, linkSkewMs })),
      workload: denseWorkloadArb(),
      faults: fc
        .tuple(fc.array(cut, { minLength: 2, maxLength: 3 }), fc.array(crash, { minLength: 6, maxLength: 10 }), fc.array(denseFaultArb(workloadMs, escalationTimeoutMs), { minLength: 2, maxLength: 6 }))
        .map(([a, b, c]) => quietCuts([...a].sort((x, y) => x.atMs - y.atMs), [...b, ...c], outlast)),
      bootStaggerMs: bootStaggerArb(),
    });
  });
}

/**
 * The dense family's faults: cuts that do not overlap one another (a later cut starting before the
 * previous one healed is left out), and no other fault during a cut's first `outlast` + 1 s: with
 * another node crashed or cut off as well, a 3-node cluster has no majority and nobody replaces
 * the cut-off owner, the very state the cut is for (a successor serving while the old owner may
 * still act). Other faults may overlap a cut's later part (the failover's aftermath, the
 * failback): the quiet window ends 300 ms past the suspicion and escalation, so that crashes
 * (the failovers between replicas holding different prefixes) are not crowded out. Sorted by
 * start.
 */
function quietCuts(cuts: FaultStep[], others: FaultStep[], outlast: number): FaultStep[] {
  const kept: FaultStep[] = [];
  for (const c of cuts) if (kept.length === 0 || c.atMs >= kept[kept.length - 1].atMs + kept[kept.length - 1].durationMs + 500) kept.push(c);
  const quiet = kept.map((c) => [c.atMs - 200, c.atMs + outlast + 300] as const);
  const rest = others.filter((f) => !quiet.some(([a, b]) => f.atMs < b && f.atMs + f.durationMs > a));
  return [...kept, ...rest].sort((x, y) => x.atMs - y.atMs);
}

/** Clients of the dense family: 2-4 writers per store, 3-20 keys each, short think times. */
function denseWorkloadArb(): fc.Arbitrary<WorkloadParams> {
  return fc.record({
    writersPerStore: fc.integer({ min: 2, max: 4 }),
    keysPerWriter: fc.integer({ min: 3, max: 20 }),
    thinkMinMs: fc.integer({ min: 1, max: 5 }),
    thinkMaxMs: fc.integer({ min: 5, max: 25 }),
    readFraction: fc.double({ min: 0, max: 0.3, noNaN: true }),
    deleteFraction: fc.double({ min: 0, max: 0.2, noNaN: true }),
    maxAttempts: fc.integer({ min: 2, max: 6 }),
    attemptTimeoutMs: fc.integer({ min: 200, max: 1500 }),
    deadlineMs: fc.integer({ min: 1_000, max: 6_000 }),
  });
}

/** One fault of any kind (crashes three times as likely) of the dense family: short, medium, or past the suspicion plus the escalation. */
function denseFaultArb(workloadMs: number, escalationTimeoutMs: number): fc.Arbitrary<FaultStep> {
  const kinds = GENERAL_FAULT_KINDS.map((k) => ({ weight: k === 'crash' ? 3 : 1, arbitrary: fc.constant(k) }));
  const outlast = DEFAULT_TIMING.suspectAfterMs + escalationTimeoutMs;
  return fc.record({
    atMs: fc.integer({ min: 0, max: workloadMs - 1 }),
    kind: fc.oneof(...kinds),
    target: fc.oneof({ weight: 3, arbitrary: fc.record({ kind: fc.constant('active' as const), partition: fc.integer({ min: 0, max: 14 }) }) }, { weight: 2, arbitrary: targetArb() }),
    durationMs: fc.oneof(fc.integer({ min: 50, max: 800 }), fc.integer({ min: 800, max: 4_000 }), fc.integer({ min: outlast, max: outlast + 3_000 })),
  });
}

/**
 * The one-way-cut family (certify seed 4040, async3 partition 2): within budget, 3 nodes, one
 * partition P (any store; the async ones are the point) and
 * - a one-way cut where P's active owner drops the messages of a third replica H (neither the
 *   owner nor the leader): H keeps receiving the owner's stream, but its acks never arrive, so
 *   it leaves (or never rejoins) the in-sync set while its copy keeps up;
 * - a one-way cut, starting later, where the leader drops the owner's messages: the leader
 *   stops hearing the owner (and so hears no drop request from it), while the owner may still
 *   acknowledge async writes and stream them to H;
 * - the owner killed (even though P is Degraded) before the leader's escalation timeout runs
 *   out, so that the promotion follows the crash; the first cut may or may not have healed;
 * - sometimes H itself cut off or paused around the promotion (the fallback: Degraded, the
 *   loss accepted only then).
 * Writers keep few keys and write fast, so that H holds acknowledged writes the in-sync
 * survivor lacks when the owner dies. Seed 002 (possession proof over the assigned replicas).
 */
export function oneWayCutCrashScheduleArb(): fc.Arbitrary<SimSchedule> {
  const partition = fc.integer({ min: 0, max: 8 });
  return fc
    .record({
      seed: fc.integer(),
      partition: fc.oneof({ weight: 3, arbitrary: fc.integer({ min: 3, max: 5 }) }, { weight: 1, arbitrary: partition }),
      escalationTimeoutMs: fc.integer({ min: 1_500, max: 3_000 }),
      t0: fc.integer({ min: 1_000, max: 2_500 }),
      firstMs: fc.integer({ min: 1_000, max: 4_000 }),
      secondAfterMs: fc.integer({ min: 300, max: 2_000 }),
      crashAfterMs: fc.integer({ min: 200, max: 2_200 }),
      holderFault: fc.option(fc.record({ kind: fc.constantFrom<FaultKind>('isolate', 'isolate-in', 'pause'), afterCrashMs: fc.integer({ min: -200, max: 4_000 }), durationMs: fc.integer({ min: 200, max: 5_000 }) }), { freq: 3 }),
      net: fc.tuple(netArb(), fc.integer({ min: 0, max: 30 })).map(([n, linkSkewMs]) => ({ ...n, resetProbability: Math.min(n.resetProbability, 0.001), linkSkewMs })),
      workload: fc.record({
        writersPerStore: fc.integer({ min: 1, max: 3 }),
        keysPerWriter: fc.integer({ min: 2, max: 8 }),
        thinkMinMs: fc.integer({ min: 1, max: 5 }),
        thinkMaxMs: fc.integer({ min: 5, max: 20 }),
        readFraction: fc.double({ min: 0, max: 0.2, noNaN: true }),
        deleteFraction: fc.double({ min: 0, max: 0.1, noNaN: true }),
        maxAttempts: fc.integer({ min: 2, max: 4 }),
        attemptTimeoutMs: fc.integer({ min: 300, max: 1_000 }),
        deadlineMs: fc.integer({ min: 1_500, max: 4_000 }),
      }),
    })
    .map((r) => {
      const p = r.partition;
      const secondAt = r.t0 + r.secondAfterMs;
      // before the leader confirms the silent owner down (suspicion + escalation after the second cut)
      const crashAt = secondAt + Math.min(r.crashAfterMs, DEFAULT_TIMING.suspectAfterMs + r.escalationTimeoutMs - 300);
      const faults: FaultStep[] = [
        { atMs: r.t0, kind: 'link', target: { kind: 'active', partition: p }, source: { kind: 'other', partition: p }, durationMs: r.firstMs },
        { atMs: secondAt, kind: 'link', target: { kind: 'leader' }, source: { kind: 'active', partition: p }, durationMs: crashAt - secondAt + 3_000 },
        { atMs: crashAt, kind: 'crash', target: { kind: 'active', partition: p }, durationMs: 2_500, whileDegraded: true },
      ];
      if (r.holderFault) faults.push({ atMs: Math.max(0, crashAt + r.holderFault.afterCrashMs), kind: r.holderFault.kind, target: { kind: 'other', partition: p }, durationMs: r.holderFault.durationMs });
      return {
        seed: r.seed,
        cluster: 'n3' as const,
        budget: 'within' as const,
        workloadMs: crashAt + 5_000,
        escalationTimeoutMs: r.escalationTimeoutMs,
        net: r.net,
        workload: r.workload,
        faults,
        bootStaggerMs: 50,
      };
    });
}
