import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Member, RuntimeEntry } from '../cluster-messages.js';
import { NodeCore } from '../node-core.js';
import { runSimulation, SimViolation, type SimOptions } from './failover-sim.js';
import { membershipScheduleArb } from './sim-arbitraries.js';

/** A fixed fast-check seed: the properties must not flake. */
const SEED = 20_261_201;

type NextEntry = (e: RuntimeEntry, target: string[], now: number) => { step: string; node: string; entry: RuntimeEntry } | 'wait' | null;

/**
 * A core whose leader moves ownership the quick way: where the plan names another owner, the
 * entry names it active at once (no fenced handoff, no wait for its copy to be in sync).
 */
const quickOwnerMove: NonNullable<SimOptions['coreFactory']> = (id, inc, config, env) => {
  const core = new NodeCore(id, inc, config, env);
  const driver = core.membership.migration as unknown as { nextEntry: NextEntry; h: { liveMember(node: string, now: number): Member | null } };
  const original = driver.nextEntry.bind(driver);
  driver.nextEntry = (e, target, now) => {
    const to = driver.h.liveMember(target[0], now);
    if (e.active && to && e.active.node !== target[0] && e.replicas.includes(target[0])) {
      return { step: 'mutant-owner-move', node: to.node, entry: { ...e, active: to, inSync: [to, ...e.inSync.filter((m) => m.node !== to.node)], handoffTo: null } };
    }
    return original(e, target, now);
  };
  return core;
};

describe('membership schedules in the simulation (make sim MEMBERSHIP=1)', () => {
  it('the correct store: joins, leaves and rebalances under crashes, pauses and partitions lose nothing, and moves do happen', () => {
    let changes = 0;
    let migrations = 0;
    fc.assert(
      fc.property(membershipScheduleArb(), (s) => {
        const r = runSimulation(s);
        changes += r.stats.membershipChanges;
        migrations += r.stats.migrations;
      }),
      { numRuns: 25, seed: SEED },
    );
    expect(changes).toBeGreaterThanOrEqual(20);
    expect(migrations).toBeGreaterThanOrEqual(30);
  }, 120_000);

  it('a leader that moves ownership without the fenced handoff (the new owner not yet in sync) is caught', () => {
    const out = fc.check(
      fc.property(membershipScheduleArb(), (s) => {
        runSimulation(s, { coreFactory: quickOwnerMove });
      }),
      { numRuns: 40, seed: SEED, endOnFailure: true },
    );
    expect(out.failed).toBe(true);
    expect(out.errorInstance).toBeInstanceOf(SimViolation);
  }, 120_000);
});
