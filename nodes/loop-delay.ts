import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import type { LoopDelay } from './core/core-env.js';

/** Sampling period of the event-loop delay histogram, ms (perf_hooks resolution). */
const RESOLUTION_MS = 10;
/** Length of one slice of the window, ms. */
export const LOOP_SLICE_MS = 5_000;
/** Slices kept: the window reaches back LOOP_SLICE_MS x LOOP_SLICES (30 s), plus the current one. */
export const LOOP_SLICES = 6;

/** One slice's figures, ms. */
export interface LoopSlice {
  maxMs: number;
  p99Ms: number;
}

/**
 * Folds the slices of a rolling window into the figures a node reports (issue 11, stall
 * findings): the longest delay of any slice and the highest per-slice 99th percentile
 * (percentiles of different slices do not merge exactly; the highest one is the conservative
 * figure). Pure.
 */
export function foldLoopSlices(slices: readonly LoopSlice[], windowMs: number): LoopDelay {
  let maxMs = 0;
  let p99Ms = 0;
  for (const s of slices) {
    if (s.maxMs > maxMs) maxMs = s.maxMs;
    if (s.p99Ms > p99Ms) p99Ms = s.p99Ms;
  }
  return { maxMs: round(maxMs), p99Ms: round(p99Ms), windowMs };
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}

/**
 * The node process's own event-loop delay (perf_hooks monitorEventLoopDelay): how late a 10 ms
 * timer fired, beyond its period, over a rolling window of the last 30-35 s. Reading it resets
 * nothing; slices rotate on their own timer. A node whose loop is blocked (a long synchronous
 * task, swapping, a starved CPU) reports it here the next time it answers.
 */
export class LoopDelayMonitor {
  private readonly h: IntervalHistogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  private readonly slices: LoopSlice[] = [];
  private timer: NodeJS.Timeout | null = null;

  /** Starts sampling. */
  start(): void {
    this.h.enable();
    this.timer = setInterval(() => this.rotate(), LOOP_SLICE_MS);
    this.timer.unref();
  }

  /** Stops sampling. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.h.disable();
  }

  /** The figures over the kept slices and the current one. */
  stats(): LoopDelay {
    return foldLoopSlices([...this.slices, this.current()], (this.slices.length + 1) * LOOP_SLICE_MS);
  }

  private current(): LoopSlice {
    if (this.h.count === 0) return { maxMs: 0, p99Ms: 0 };
    // the histogram holds intervals between samples; the delay is what exceeds the period
    return { maxMs: Math.max(0, this.h.max / 1e6 - RESOLUTION_MS), p99Ms: Math.max(0, this.h.percentile(99) / 1e6 - RESOLUTION_MS) };
  }

  private rotate(): void {
    this.slices.push(this.current());
    if (this.slices.length > LOOP_SLICES) this.slices.shift();
    this.h.reset();
  }
}
