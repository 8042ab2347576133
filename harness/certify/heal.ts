/**
 * Heal: after the fault phase, the nemesis undoes what it did and the cluster returns to Healthy;
 * the workload, watch and samplers stop after their last samples.
 */
import type { Ledger } from '../../ledger/ledger-writer.js';
import { META } from '../../ledger/schema.js';
import type { RunClock } from '../clock.js';
import { describePolicyFollow } from '../policy-change.js';
import type { FaultPhaseEnd } from './fault-phase.js';
import type { RunStore } from './workload-start.js';

/**
 * Heals partitions, resumes and restarts nodes and waits for Healthy (Nemesis.healAll); records
 * the run's INCONCLUSIVE reasons, if any (meta `inconclusive_reason`: the fault phase's runtime
 * error, a cluster that did not heal, the disk guard's reason, joined by `; `); stops the workload,
 * prints whether the client followed seed 004's policy changes, stops the watch and the metrics
 * sampler after a last sample of each.
 */
export async function heal(c: { phase: FaultPhaseEnd; store: RunStore; ledger: Ledger; clock: RunClock; log: (line: string) => void }): Promise<void> {
  const { ledger, clock, log } = c;
  const { nemesis, metrics, runError, diskLow } = c.phase;
  const { watch, workload, policy } = c.store;
  ledger.event(clock.now(), 'phase', { phase: 'heal' });
  log('healing: heal partitions, resume and restart nodes, wait for Healthy');
  const healed = await nemesis.healAll();
  if (!healed.healed) log(`cluster did not heal: ${healed.reason}`);
  const inconclusive = [runError, healed.healed ? null : (healed.reason ?? 'the cluster did not return to Healthy'), diskLow].filter((r) => r !== null);
  if (inconclusive.length > 0) ledger.setMeta(META.inconclusiveReason, inconclusive.join('; '));
  await workload.stop();
  for (const line of describePolicyFollow(policy.sets, workload.policyChanges)) log(line);
  watch.stop();
  await watch.sample();
  await metrics.sampleNow();
  await metrics.stop();
}
