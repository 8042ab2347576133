/**
 * The node's monotonic clock (ms since the process started), robust to the harness's clock-rate
 * faults.
 *
 * The harness changes a node's clock rate with libfaketime's FAKETIME_XRESET (harness/runtime/
 * faketime.ts, `monotonic` mode). On every rate change, libfaketime 0.9.10 (and its current
 * source) re-anchors every faked clock, the monotonic one included, at the last REALTIME value it
 * handed out, and counts the monotonic clock on from the last MONOTONIC reading it saw: a process
 * that reads its monotonic clock far more often than its wall clock (a Node process whose only
 * wall-clock reads are the timestamps of its log lines) sees its monotonic clock thrown back by
 * the time since its last wall-clock read, times the old rate. Measured here (2 cores, Node 20,
 * libfaketime 0.9.10): a process that read only `performance.now()` froze 8 s after a change to
 * x0.5 and 20 s after the change back from x2 to x1 (its timers waited for the clock to catch up
 * again), and came out 8.5 s behind; with a wall-clock read after every monotonic read, the same
 * changes took effect with no step back and no stall (x2 for 4 s: +4.0 s; x0.5 for 4 s: -2.0 s).
 * A clock thrown back also lengthens every lease and timeout measured on it: in a 40-minute run
 * an owner went on acknowledging 1.5 s past its lease after the end of a clock fault on it.
 *
 * So while libfaketime's rate reset is in effect (FAKETIME_XRESET in the environment), each
 * reading of this clock also reads the wall clock, which keeps libfaketime's two anchors within
 * microseconds of each other. Without it, the clock is `performance.now()` alone.
 */
import { performance } from 'node:perf_hooks';

/** A monotonic clock: ms since the clock was made (fractional). */
export type MonotonicClock = () => number;

/**
 * Makes the node's monotonic clock. `keepWallFresh`: also read the wall clock on each reading
 * (default: when FAKETIME_XRESET is set in `env`, i.e. under the harness's monotonic clock
 * faults; see the module comment). Never throws.
 */
export function makeNodeClock(env: NodeJS.ProcessEnv = process.env, keepWallFresh = env.FAKETIME_XRESET !== undefined): MonotonicClock {
  const t0 = performance.now();
  if (!keepWallFresh) return () => performance.now() - t0;
  return () => {
    const t = performance.now() - t0;
    Date.now();
    return t;
  };
}
