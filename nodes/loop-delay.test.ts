import { describe, expect, it } from 'vitest';
import { foldLoopSlices, LOOP_SLICE_MS, LoopDelayMonitor } from './loop-delay.js';

describe('event-loop delay (issue 11: a node reports its own stalls)', () => {
  it('folds slices into the longest delay and the highest per-slice p99', () => {
    expect(foldLoopSlices([{ maxMs: 3.21, p99Ms: 1.04 }, { maxMs: 250, p99Ms: 0.5 }, { maxMs: 1, p99Ms: 7.77 }], 3 * LOOP_SLICE_MS)).toEqual({ maxMs: 250, p99Ms: 7.8, windowMs: 15_000 });
    expect(foldLoopSlices([], 0)).toEqual({ maxMs: 0, p99Ms: 0, windowMs: 0 });
  });

  it('a blocked loop shows in maxMs; reading the figures resets nothing', async () => {
    const m = new LoopDelayMonitor();
    m.start();
    try {
      await new Promise((r) => setTimeout(r, 50));
      const t = performance.now();
      while (performance.now() - t < 200) {
        // block the loop for 200 ms
      }
      await new Promise((r) => setTimeout(r, 30));
      const a = m.stats();
      const b = m.stats();
      // at least the block, whatever else the machine was doing (a lower bound only)
      expect(a.maxMs).toBeGreaterThanOrEqual(150);
      expect(b.maxMs).toBe(a.maxMs);
      expect(a.windowMs).toBe(LOOP_SLICE_MS);
    } finally {
      m.stop();
    }
  });
});
