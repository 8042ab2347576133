import { performance } from 'node:perf_hooks';

/**
 * The harness's own monotonic clock: ms since the run started (DESIGN.md §4: every time in the
 * ledger comes from it; node clocks are never compared with it).
 */
export interface RunClock {
  /** ms since the run started. */
  now(): number;
}

/** A clock starting at 0 now. */
export function startRunClock(): RunClock {
  const t0 = performance.now();
  return { now: () => performance.now() - t0 };
}
