/**
 * The nemesis's fault schedule (DESIGN.md §3 "Nemesis", §7 `scheduleDigest`, issues 12 and 13):
 * drawn from the run's SEED, stored in the ledger meta `schedule` as JSON, replayable, and
 * summarised by a sha256 digest in results.json.
 *
 * The same (seed, durationMs, kinds, preset, escalationTimeoutMs, evictionTimeoutMs, nodeCount,
 * partitions, beyondBudget) always gives the same schedule. Targets that depend on the live
 * cluster (the leader, a partition's active owner or in-sync replica, a replica catching up, the
 * node a failback hands to, a random node or split) are resolved by the executor when the fault
 * starts (nemesis.ts), and a fault may wait for an event (a restarted node catching up or caught
 * up, a failback starting, an earlier fault ending) before it starts.
 *
 * What reaches the dangerous states in short runs (issue 12): fault durations do not shrink with
 * the run's length, so every run has partitions and pauses longer than the escalation timeout
 * (and, where the phase can hold one, longer than the eviction timeout); and faults come in
 * episodes that overlap on purpose (a second fault while a restarted replica catches up, right
 * after it caught up, when a failback starts, when a long isolation heals). Whether an
 * overlapping fault may start is decided live by the fault budget (budget.ts), not here.
 *
 * This module is the schedule's public face; each part lives in a module of its own:
 * - schedule-types.ts: fault kinds, targets, triggers, a planned fault, the schedule, ScheduleError
 * - presets.ts: the named mixes as data; fault-selection.ts: FAULTS= parsing
 * - fault-durations.ts: how long each fault lasts (from the nodes' timeouts)
 * - episodes/: the episodes (episode-kit.ts, one module per fault family or aimed episode,
 *   index.ts the registry)
 * - plan-schedule.ts: the seeded generator; plan-membership.ts: the membership track
 * - schedule-json.ts: canonical JSON and digest; schedule-validate.ts: reading a schedule back
 */
export * from './schedule-types.js';
export * from './presets.js';
export * from './fault-selection.js';
export * from './fault-durations.js';
export { planSchedule, type PlanOptions } from './plan-schedule.js';
export * from './plan-membership.js';
export * from './schedule-json.js';
export * from './schedule-validate.js';
