import { describe, expect, it } from 'vitest';
import { runSimulation } from './failover-sim.js';
import { REGRESSION_SCHEDULES } from './test-support/regression-schedules.js';

describe('regression schedules: each once found a bug in NodeCore and must now run clean', () => {
  for (const r of REGRESSION_SCHEDULES) {
    it(r.name, () => {
      // runSimulation throws a SimViolation (seed, invariant, last events) if the bug is back
      const res = runSimulation(r.schedule);
      expect(res.stats.convergeMs).toBeGreaterThanOrEqual(r.schedule.budget === 'beyond' ? -1 : 0);
      expect(res.clients.writesOk).toBeGreaterThan(0);
      if (r.strips !== undefined) expect(res.stats.strips).toBe(r.strips);
      if (r.holderPromotions !== undefined) expect(res.stats.holderPromotions).toBeGreaterThanOrEqual(r.holderPromotions);
    });
  }
});
