/**
 * The progress of a long run (issue 11): on a terminal one line redrawn in place (log-update),
 * with the run's other lines printed above it; elsewhere (CI logs, a pipe) a plain line every
 * 30 s. The line: fault phase elapsed / planned (remaining), acknowledged writes/s, faults so far,
 * findings so far (when online checks report them), ledger size and free disk, harness RSS.
 */
import { createLogUpdate } from 'log-update';
import { formatBytes } from './disk-guard.js';

/** What one progress line shows. Times ms, sizes bytes. */
export interface ProgressSnapshot {
  /** Fault phase elapsed, ms. */
  elapsedMs: number;
  /** Planned fault phase, ms. */
  durationMs: number;
  /** Acknowledged writes so far. */
  acked: number;
  /** Acknowledged writes per second, recently. */
  ackedPerSec: number;
  /** Faults injected so far. */
  faults: number;
  /** Findings so far from the online checks; null when no online check reports any. */
  findings: number | null;
  /** Ledger files' size, bytes; null when unknown (ledger off). */
  ledgerBytes: number | null;
  /** Free bytes on the run directory's file system; null when unknown. */
  freeBytes: number | null;
  /** Harness resident set size, MB. */
  rssMb: number;
}

/** `h:mm:ss` (or `m:ss` under an hour) of a non-negative duration in ms. */
export function clockTime(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

const int = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

/** The progress line (no prefix, no newline). */
export function progressLine(s: ProgressSnapshot): string {
  const parts = [
    `fault phase ${clockTime(s.elapsedMs)} / ${clockTime(s.durationMs)} (${clockTime(s.durationMs - s.elapsedMs)} left)`,
    `${int.format(s.ackedPerSec)} acked/s (${int.format(s.acked)} in all)`,
    `${s.faults} fault${s.faults === 1 ? '' : 's'}`,
  ];
  if (s.findings !== null) parts.push(`${s.findings} finding${s.findings === 1 ? '' : 's'} so far`);
  if (s.ledgerBytes !== null) parts.push(`ledger ${formatBytes(s.ledgerBytes)}`);
  if (s.freeBytes !== null) parts.push(`${formatBytes(s.freeBytes)} free`);
  parts.push(`rss ${s.rssMb} MB`);
  return parts.join(' | ');
}

/** Where the run's lines and its progress go. */
export interface ProgressOutput {
  /** A line of the run's log (kept; printed above the progress line on a terminal). */
  log(line: string): void;
  /** The latest progress; a terminal redraws it, elsewhere a line is printed now and then. */
  update(s: ProgressSnapshot): void;
  /** The fault phase is over: a terminal keeps the last progress line; no more updates. */
  done(): void;
}

/**
 * Progress as plain lines (CI logs, pipes, tests): the run's log lines as they come, and
 * `progress: …` through `writeLine` at most every `everyMs` (default 30,000; the first once the
 * first period has passed).
 * @param now clock for the spacing, ms (default performance.now).
 */
export function plainProgressOutput(writeLine: (line: string) => void, everyMs = 30_000, now: () => number = () => performance.now()): ProgressOutput {
  let last = -Infinity;
  let started = -Infinity;
  return {
    log: writeLine,
    update: (s) => {
      const t = now();
      if (started === -Infinity) started = t;
      if (t - started < everyMs || t - last < everyMs) return;
      last = t;
      writeLine(`progress: ${progressLine(s)}`);
    },
    done: () => undefined,
  };
}

/** Options of {@link createProgressOutput}. */
export interface ProgressOutputOptions {
  /** The stream (stderr). */
  stream: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  /** Prefix of every line, e.g. `zaris-certify: `. */
  prefix?: string;
  /** Redraw in place; default: the stream is a terminal. */
  tty?: boolean;
  /** Elsewhere, a plain progress line at most this often (ms); default 30,000. */
  plainEveryMs?: number;
  /** Clock for the plain lines' spacing (ms); default performance.now. */
  now?: () => number;
}

/**
 * The run's output on `stream`: on a terminal (`tty`) log lines persist above one progress line
 * that log-update redraws in place; otherwise {@link plainProgressOutput}.
 */
export function createProgressOutput(o: ProgressOutputOptions): ProgressOutput {
  const prefix = o.prefix ?? '';
  const tty = o.tty ?? o.stream.isTTY === true;
  if (!tty) return plainProgressOutput((line) => void o.stream.write(`${prefix}${line}\n`), o.plainEveryMs, o.now);
  const draw = createLogUpdate(o.stream, { showCursor: true });
  let current: string | null = null;
  let finished = false;
  return {
    log: (line) => {
      draw.persist(`${prefix}${line}`);
      if (current !== null && !finished) draw(current);
    },
    update: (s) => {
      if (finished) return;
      current = `${prefix}${progressLine(s)}`;
      draw(current);
    },
    done: () => {
      if (finished) return;
      finished = true;
      if (current !== null) draw.done();
    },
  };
}
