/**
 * How long each fault lasts, drawn from ranges fixed by the nodes' escalation and eviction
 * timeouts (issue 12: durations do not shrink with the run's length), and the fixed ranges of clock
 * faults.
 */

/** Inclusive integer range, ms. */
export interface Range {
  lo: number;
  hi: number;
}

/**
 * The fault durations, ms, for an escalation timeout E and an eviction timeout V. They do NOT
 * depend on the run's length (issue 12: in runs under 10 minutes the old scaled ranges never
 * outlasted E). `*Long` ranges outlast E, `*Evict` ranges outlast V; `*Short` stay under E where
 * they can.
 */
export function faultDurations(E: number, V: number): {
  crash: Range;
  crashLong: Range;
  crashEvict: Range;
  pauseShort: Range;
  pauseLong: Range;
  pauseEvict: Range;
  isolateShort: Range;
  isolateLong: Range;
  isolateEvict: Range;
  oneWay: Range;
  flap: Range;
  flapOn: Range;
  flapOff: Range;
  clock: Range;
  clientCut: Range;
  calm: Range;
} {
  return {
    crash: { lo: 1_000, hi: 6_000 },
    crashLong: { lo: E + 500, hi: E + 5_000 },
    crashEvict: { lo: V + 1_000, hi: V + 5_000 },
    pauseShort: { lo: 1_000, hi: Math.max(1_000, E - 500) },
    pauseLong: { lo: E + 500, hi: E + 8_000 },
    pauseEvict: { lo: V + 1_000, hi: V + 5_000 },
    isolateShort: { lo: 2_000, hi: Math.max(2_000, E - 1_000) },
    isolateLong: { lo: E + 1_000, hi: E + 10_000 },
    isolateEvict: { lo: V + 1_000, hi: V + 5_000 },
    oneWay: { lo: 3_000, hi: E + 8_000 },
    flap: { lo: 8_000, hi: 30_000 },
    flapOn: { lo: 300, hi: 2_500 },
    flapOff: { lo: 300, hi: 1_500 },
    clock: { lo: 8_000, hi: 30_000 },
    clientCut: { lo: 2_000, hi: 12_000 },
    calm: { lo: 500, hi: 3_000 },
  };
}

/** The rates a clock fault draws from (half speed and twice as fast most often). */
export const CLOCK_RATES: readonly number[] = [0.5, 0.5, 2, 2, 0.75, 1.5];
/** Whole-second wall-clock jumps are drawn from ±[5, 60] s. */
export const CLOCK_JUMP_S: Range = { lo: 5, hi: 60 };

/** Kills planned at least (in the opening), when kill is selected and the phase can hold them (15 s). */
export const MIN_KILLS = 3;
