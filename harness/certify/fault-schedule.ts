/**
 * Fault phase, its plan: the schedule the nemesis plays (a replayed run's, a scenario's, or planned
 * from the seed over the cluster's partitions), recorded in the ledger with its digest.
 */
import type { Ledger } from '../../ledger/ledger-writer.js';
import { META } from '../../ledger/schema.js';
import { planSchedule, scheduleDigest, scheduleToJson, type Schedule } from '../nemesis/schedule.js';
import { describeExpectation } from '../scenario/scenario.js';
import type { CertifyOptions } from './options.js';
import type { RunPlan } from './plan.js';
import type { RunMeta } from './run-meta.js';
import type { RunWatch } from './run-state.js';

/**
 * The run's schedule: the replayed one, else the scenario's, else one planned from the seed over
 * the fault kinds left in the plan and the watch's partitions (sorted by store and partition).
 * Writes the meta `schedule` and `schedule_digest` and prints its line (and the scenario's).
 * @throws ScheduleError when planSchedule refuses an option (nemesis/plan-schedule.ts).
 */
export async function scheduleFaults(c: { o: CertifyOptions; plan: RunPlan; meta: RunMeta; seed: number; watch: RunWatch; ledger: Ledger; log: (line: string) => void }): Promise<Schedule> {
  const { o, plan, seed, watch, ledger, log } = c;
  const { target, stores, scenarioRec } = plan;
  const schedule: Schedule =
    plan.replayed ??
    c.meta.scenarioSchedule ??
    planSchedule({
      seed,
      durationMs: o.durationMs,
      kinds: plan.kinds,
      preset: o.faultPreset ?? 'random',
      escalationTimeoutMs: plan.escalationTimeoutMs,
      evictionTimeoutMs: plan.evictionTimeoutMs,
      nodeCount: target ? target.nodeIds.length : plan.nodeCount,
      partitions: (await watch.partitions())
        .map((p) => ({ ...p, ackMode: stores.find((s) => s.name === p.store)?.ackMode }))
        .sort((a, b) => a.store.localeCompare(b.store) || a.partition - b.partition),
      beyondBudget: plan.beyondBudget,
    });
  const digest = scheduleDigest(schedule);
  ledger.setMeta(META.schedule, scheduleToJson(schedule));
  ledger.setMeta(META.scheduleDigest, digest);
  log(`schedule: ${schedule.faults.length} planned faults (${schedule.kinds.join(',') || 'none'}${schedule.preset !== 'random' ? `, preset ${schedule.preset}` : ''}), digest ${digest.slice(0, 16)}`);
  if (scenarioRec) log(`scenario ${scenarioRec.name}: ${schedule.faults.length} steps, expected ${describeExpectation(scenarioRec.expect)}; the fault phase ends ${(schedule.tailMs ?? 0) / 1000} s after the last step (at most ${schedule.durationMs / 1000} s)`);
  return schedule;
}
