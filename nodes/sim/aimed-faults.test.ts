import { describe, expect, it } from 'vitest';
import type { ClusterConfig } from '../cluster-config.js';
import { NodeCore, type CoreEnv } from '../node-core.js';
import { runSimulation, SimViolation } from './failover-sim.js';
import { powerScheduleOfRun } from './sim-batch.js';
import type { FaultStep, SimSchedule } from './sim-schedule.js';

/**
 * The faults the dense family aims at the self-test bugs' states (issue 12): `lag-crash` and the
 * `async-active` target (sim-schedule.ts), run by failover-sim.ts. Every time is virtual ms.
 */

/** A calm 3-node schedule with steady writers and one fault. */
function oneFault(f: FaultStep): SimSchedule {
  return {
    seed: 7,
    cluster: 'n3',
    budget: 'within',
    workloadMs: 9_000,
    escalationTimeoutMs: 1_500,
    net: { minDelayMs: 0.2, maxDelayMs: 1, resetProbability: 0, clientMinDelayMs: 0.1, clientMaxDelayMs: 0.5, linkSkewMs: 20 },
    workload: { writersPerStore: 3, keysPerWriter: 8, thinkMinMs: 2, thinkMaxMs: 10, readFraction: 0, deleteFraction: 0, maxAttempts: 4, attemptTimeoutMs: 500, deadlineMs: 3_000 },
    faults: [f],
  };
}

/** What the nodes logged (by node) and every node start (boot and restart, in order). */
function recorder(): { events: Array<{ node: string; event: string; fields: Record<string, unknown> }>; starts: string[]; coreFactory: (id: string, inc: string, config: ClusterConfig, env: CoreEnv) => NodeCore } {
  const events: Array<{ node: string; event: string; fields: Record<string, unknown> }> = [];
  const starts: string[] = [];
  return {
    events,
    starts,
    coreFactory: (id, inc, config, env) => {
      starts.push(id);
      return new NodeCore(id, inc, config, {
        ...env,
        log: (event, fields) => {
          events.push({ node: id, event, fields: (fields ?? {}) as Record<string, unknown> });
          env.log(event, fields);
        },
      });
    },
  };
}

describe('aimed faults of the dense family', { timeout: 0 }, () => {
  it('an async-active cut isolates the active of an async partition that is not the leader, and the leader fails it over', () => {
    const rec = recorder();
    const r = runSimulation(oneFault({ atMs: 2_000, kind: 'isolate', target: { kind: 'async-active', index: 0 }, durationMs: 5_000 }), { coreFactory: rec.coreFactory });
    expect(r.stats.partitions).toBe(1);
    expect(r.stats.faultsSkipped).toBe(0);
    const failovers = rec.events.filter((e) => e.event === 'failover' && String(e.fields.pkey).startsWith('async3/'));
    expect(failovers.length).toBeGreaterThan(0);
    // decided by a leader outside the cut, about the cut node's async partition
    for (const f of failovers) expect(f.node).not.toBe(f.fields.from);
  });

  it('a lag-crash cuts the heir off, then crashes the async active while its cut lasts, and restarts it', () => {
    const rec = recorder();
    const r = runSimulation(oneFault({ atMs: 1_500, kind: 'lag-crash', target: { kind: 'async-active', index: 1 }, durationMs: 500, lagMs: 300, downMs: 1_000 }), { coreFactory: rec.coreFactory });
    expect(r.stats.partitions).toBe(1);
    expect(r.stats.crashes).toBe(1);
    expect(r.stats.restarts).toBe(1);
    expect(r.stats.faultsSkipped).toBe(0);
    // the crashed node is the one that started a second incarnation; it was the active of an
    // async partition that a failover then moved
    const restarted = rec.starts.slice(3);
    expect(restarted.length).toBe(1);
    expect(rec.events.some((e) => e.event === 'failover' && String(e.fields.pkey).startsWith('async3/') && e.fields.from === restarted[0])).toBe(true);
  });

  it('a lag-crash whose budget never comes is skipped, not run outside the budget', () => {
    // a crash holds the cluster below Healthy until the end: the lag-crash waits and gives up
    const s = oneFault({ atMs: 1_500, kind: 'crash', target: { kind: 'node', index: 2 }, durationMs: 60_000 });
    s.faults.push({ atMs: 2_000, kind: 'lag-crash', target: { kind: 'async-active', index: 0 }, durationMs: 500, lagMs: 300, downMs: 1_000 });
    const r = runSimulation(s);
    expect(r.stats.crashes).toBe(1);
    expect(r.stats.partitions).toBe(0);
    expect(r.stats.faultsSkipped).toBe(1);
  });

  it('the same dense schedule catches no-possession-proof by the possession rule and runs clean on the correct store', () => {
    const s = powerScheduleOfRun(20261130, 0);
    expect(s.faults.some((f) => f.kind === 'lag-crash')).toBe(true);
    expect(() => runSimulation(s)).not.toThrow();
    let caught: SimViolation | null = null;
    try {
      runSimulation({ ...s, selfTestBug: 'no-possession-proof' });
    } catch (e) {
      if (!(e instanceof SimViolation)) throw e;
      caught = e;
    }
    expect(caught?.invariant).toBe('possession');
  });
});
