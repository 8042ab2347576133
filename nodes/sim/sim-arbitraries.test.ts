import { describe, expect, it } from 'vitest';
import { DEFAULT_TIMING } from '../cluster-config.js';
import { powerScheduleOfRun } from './sim-batch.js';
import { validateSchedule, type FaultStep } from './sim-schedule.js';

/** The dense family as make power-sim draws it (issue 12): generation only, no simulation. */
describe('the dense schedules of make power-sim', () => {
  const schedules = Array.from({ length: 300 }, (_, i) => powerScheduleOfRun(20261130, i));

  it('are valid, and the same for the same batch seed and run', () => {
    for (const s of schedules) expect(() => validateSchedule(s)).not.toThrow();
    expect(powerScheduleOfRun(20261130, 17)).toEqual(schedules[17]);
    expect(powerScheduleOfRun(20261131, 17)).not.toEqual(schedules[17]);
  });

  it('each cut an active off past the suspicion and escalation, after the boot, with no other fault until it failed over', () => {
    for (const s of schedules) {
      const outlast = DEFAULT_TIMING.suspectAfterMs + s.escalationTimeoutMs;
      const isCut = (f: FaultStep): boolean => ['isolate', 'isolate-out', 'split'].includes(f.kind) && f.target.kind === 'active' && f.durationMs >= outlast + 500 && f.atMs >= 1_000;
      const quiet = s.faults.filter((c) => isCut(c) && s.faults.every((f) => f === c || !(f.atMs < c.atMs + outlast + 300 && f.atMs + f.durationMs > c.atMs - 200)));
      // and one of them fails over while the workload still runs
      expect(quiet.some((c) => c.atMs + outlast + 300 < s.workloadMs), JSON.stringify(s.faults)).toBe(true);
    }
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
