import { describe, expect, it } from 'vitest';
import { DEFAULT_TIMING } from '../cluster-config.js';
import { powerScheduleOfRun } from './sim-batch.js';
import { validateSchedule } from './sim-schedule.js';

/** The dense family as make power-sim draws it (issue 12): generation only, no simulation. */
describe('the dense schedules of make power-sim', () => {
  const schedules = Array.from({ length: 300 }, (_, i) => powerScheduleOfRun(20261130, i));

  it('are valid, and the same for the same batch seed and run', () => {
    for (const s of schedules) expect(() => validateSchedule(s)).not.toThrow();
    expect(powerScheduleOfRun(20261130, 17)).toEqual(schedules[17]);
    expect(powerScheduleOfRun(20261131, 17)).not.toEqual(schedules[17]);
  });

  it('each cut two async actives off past the suspicion and escalation, after the boot, with no other fault until they failed over', () => {
    for (const s of schedules) {
      const outlast = DEFAULT_TIMING.suspectAfterMs + s.escalationTimeoutMs;
      const cuts = s.faults.filter((f) => ['isolate', 'split'].includes(f.kind) && f.target.kind === 'async-active');
      expect(cuts.length, JSON.stringify(s.faults)).toBe(2);
      for (const c of cuts) {
        expect(c.atMs).toBeGreaterThanOrEqual(1_000);
        expect(c.durationMs).toBeGreaterThanOrEqual(outlast + 1_200);
        // the failover happens while the workload still runs, and nothing else starts or runs meanwhile
        expect(c.atMs + outlast + 300).toBeLessThan(s.workloadMs);
        expect(s.faults.filter((f) => f !== c && f.atMs < c.atMs + outlast + 300 && f.atMs + f.durationMs > c.atMs - 200)).toEqual([]);
      }
    }
  });

  it('each fail an async owner 200-450 ms into a cut of its heir, once or twice, the first before any other aimed fault, in a quiet window', () => {
    for (const s of schedules) {
      const outlast = DEFAULT_TIMING.suspectAfterMs + s.escalationTimeoutMs;
      const lags = s.faults.filter((f) => f.kind === 'lag-crash');
      expect(lags.length).toBeGreaterThanOrEqual(1);
      expect(lags.length).toBeLessThanOrEqual(2);
      // the row of aimed faults opens with a lag-crash, while the cluster is calm after the boot
      expect(s.faults.find((f) => f.target.kind === 'async-active')?.kind).toBe('lag-crash');
      for (const l of lags) {
        expect(l.target.kind).toBe('async-active');
        expect(l.lagMs).toBeGreaterThanOrEqual(200);
        expect(l.lagMs).toBeLessThanOrEqual(450);
        // the heir's cut outlasts the crash, and ends before the replication timeout could drop it first
        expect(l.durationMs).toBeGreaterThan(l.lagMs!);
        expect(l.durationMs).toBeLessThanOrEqual(750);
        expect(l.atMs + l.lagMs! + outlast + 300).toBeLessThan(s.workloadMs);
        const quietEnd = l.atMs + l.lagMs! + outlast + 300;
        expect(s.faults.filter((f) => f !== l && f.atMs < quietEnd && f.atMs + f.durationMs > l.atMs - 200)).toEqual([]);
      }
    }
  });

  it('keep crashes and faults of every kind besides the aimed ones', () => {
    const others = schedules.flatMap((s) => s.faults.filter((f) => f.target.kind !== 'async-active'));
    expect(others.length / schedules.length).toBeGreaterThan(1);
    expect(new Set(others.map((f) => f.kind)).size).toBe(7);
  });

  it('are drawn without bias towards the bounds: faults spread over the run, not piled on its first ms', () => {
    const faults = schedules.flatMap((s) => s.faults);
    const early = faults.filter((f) => f.atMs < 100).length;
    // a biased sample of one put a third of the faults in the first 12 ms (before any owner)
    expect(early / faults.length).toBeLessThan(0.02);
    const skews = schedules.map((s) => s.net.linkSkewMs ?? 0);
    // links of unequal speed in most schedules (uniform 0-60 ms)
    expect(skews.filter((k) => k >= 6).length / skews.length).toBeGreaterThan(0.8);
  });
});
