/**
 * Watches a run's means while its fault phase lasts (issue 11), on one timer:
 * - the progress line (run-progress.ts), every second;
 * - the harness's own memory into the ledger (`harness` events: rssMb, heapUsedMb, acked) every
 *   10 s, which the report plots (reports/harness-memory.ts);
 * - the ledger's expected size for the whole fault phase, measured over its first minute (or
 *   half the phase when shorter), printed and recorded (`ledger-estimate` event);
 * - the disk guard (disk-guard.ts): when free space runs below what the end phase needs, it calls
 *   `onDiskLow(reason)` once; certify.ts then ends the run cleanly, INCONCLUSIVE with the reason.
 * Its memory is constant, however long the run.
 */
import { DiskGuard, estimateLedger, formatBytes, ledgerBytes, SEAL_ROOM_FACTOR, type LedgerEstimate } from './disk-guard.js';
import type { ProgressOutput, ProgressSnapshot } from './run-progress.js';

/** The ledger events the monitor writes. */
export interface MonitorLedger {
  event(tMs: number, kind: string, detail?: unknown): void;
}

/** Options of {@link startRunMonitor}. */
export interface RunMonitorOptions {
  runDir: string;
  /** Planned fault phase, ms. */
  durationMs: number;
  /** The run clock, ms. */
  now: () => number;
  /** Run-clock time the fault phase started, ms. */
  phaseStartMs: number;
  /** Acknowledged writes so far. */
  acked: () => number;
  /** Faults injected so far. */
  faults: () => number;
  /** Findings so far from online checks; omitted or null when none report. */
  findings?: () => number | null;
  /** Where `harness` and `ledger-estimate` events go; null when the ledger is off. */
  ledger: MonitorLedger | null;
  /** Progress lines and the monitor's own log lines. */
  output: ProgressOutput;
  /**
   * Disk guard; false turns it off. Default: on, checked every 5 s, default room, free space from
   * statfs (`free`: another probe, for tests).
   */
  diskGuard?: false | { floorBytes?: number; checkEveryMs?: number; free?: (dir: string) => Promise<number> };
  /** Called once when the disk guard says stop (one-line reason). */
  onDiskLow: (reason: string) => void;
  /** The ledger estimate's window, ms; default min(120 s, a quarter of the phase). */
  estimateWindowMs?: number;
  /**
   * Time into the fault phase before the estimate's window opens, ms; default min(120 s, a quarter
   * of the phase). The ledger's worker packs idle keys while the run goes on, reusing the pages of
   * the batches it packed, so the file grows faster in the first minutes (raw batches not yet
   * packed) than after: measured from the start, a 10-minute run's estimate was 217 MB for a
   * 97 MB ledger; from 2:00 to 4:00 it gives 97 MB.
   */
  estimateWarmupMs?: number;
  /** Progress period, ms; default 1,000. */
  tickMs?: number;
  /** `harness` event period, ms; default 10,000. */
  memoryEveryMs?: number;
}

/** A running monitor. */
export interface RunMonitor {
  /** The ledger estimate, once measured. */
  readonly estimate: LedgerEstimate | null;
  /**
   * Stops the timers and closes the display (output.done()); records the ledger's size then
   * (`ledger-size` event) and returns it (null with the ledger off). Idempotent: later calls
   * return the first call's figure.
   */
  stop(): number | null;
}

/** The default period of the disk guard's checks, ms. */
export const DISK_CHECK_MS = 5_000;

/** Starts watching; call stop() when the fault phase ends. */
export function startRunMonitor(o: RunMonitorOptions): RunMonitor {
  const tickMs = o.tickMs ?? 1_000;
  const memoryEveryMs = o.memoryEveryMs ?? 10_000;
  const windowMs = o.estimateWindowMs ?? Math.min(120_000, o.durationMs / 4);
  const warmupMs = o.estimateWarmupMs ?? Math.min(120_000, o.durationMs / 4);
  const withLedger = o.ledger !== null;
  const sizeNow = (): number | null => (withLedger ? ledgerBytes(o.runDir) : null);
  const guard = o.diskGuard === false ? null : new DiskGuard({ runDir: o.runDir, checkEveryMs: o.diskGuard?.checkEveryMs ?? DISK_CHECK_MS, floorBytes: o.diskGuard?.floorBytes, free: o.diskGuard?.free });
  const checkEveryMs = o.diskGuard === false ? Infinity : (o.diskGuard?.checkEveryMs ?? DISK_CHECK_MS);

  const startBytes = sizeNow();
  const startAcked = o.acked();
  let estimate: LedgerEstimate | null = null;
  // where the estimate's window opens: the phase's start, or the first tick past the warm-up
  let warm: { t: number; bytes: number; acked: number } | null = warmupMs <= 0 && startBytes !== null ? { t: o.phaseStartMs, bytes: startBytes, acked: startAcked } : null;
  let free: number | null = null;
  let tripped = false;
  let checking = false;
  let lastCheck = -Infinity;
  let lastMemory = o.now();
  // acknowledged writes/s over the last ~10 s: a ring of (t, acked) pairs, constant memory
  const ring: Array<{ t: number; acked: number }> = [];

  const check = async (): Promise<void> => {
    if (guard === null || tripped || checking) return;
    checking = true;
    try {
      const c = await guard.check();
      free = c.free;
      if (c.stop && !tripped) {
        tripped = true;
        o.ledger?.event(o.now(), 'disk-guard', { freeBytes: c.free, ledgerBytes: c.ledger, neededBytes: c.needed });
        o.onDiskLow(c.stop);
      }
    } catch (e) {
      o.output.log(`disk guard: cannot read free space: ${(e as Error).message.split('\n')[0]}`);
    } finally {
      checking = false;
    }
  };

  const measureEstimate = (t: number): void => {
    if (startBytes === null || estimate !== null) return;
    if (warm === null) {
      if (t - o.phaseStartMs >= warmupMs) warm = { t, bytes: sizeNow()!, acked: o.acked() };
      return;
    }
    if (t - warm.t < windowMs) return;
    const bytes = sizeNow()!;
    const from = warm.t - o.phaseStartMs;
    estimate = estimateLedger(warm.bytes, bytes, t - warm.t, o.durationMs - from, o.acked() - warm.acked);
    // the expected size is of the whole file: what it held when the window opened, plus its growth
    o.ledger?.event(t, 'ledger-estimate', { ...estimate, fromMs: from });
    const perAck = estimate.bytesPerAck === null ? '' : `, ${Math.round(estimate.bytesPerAck)} B per acknowledged write`;
    const when = from <= 0 ? `in the first ${Math.round(estimate.windowMs / 1000)} s of faults` : `from ${Math.round(from / 1000)} s to ${Math.round((t - o.phaseStartMs) / 1000)} s of faults`;
    o.output.log(`ledger: +${formatBytes(bytes - warm.bytes)} ${when}${perAck}: expected ~${formatBytes(estimate.expectedBytes)} by the end of the fault phase`);
    if (free !== null && guard !== null && estimate.expectedBytes - bytes + SEAL_ROOM_FACTOR * estimate.expectedBytes > free) {
      o.output.log(`disk: only ${formatBytes(free)} free for a ledger of ~${formatBytes(estimate.expectedBytes)} and its seal: the disk guard will end the run early unless space is freed`);
    }
  };

  const tick = (): void => {
    const t = o.now();
    const acked = o.acked();
    ring.push({ t, acked });
    while (ring.length > 2 && t - ring[0].t > 10_000) ring.shift();
    const first = ring[0];
    const perSec = t > first.t ? ((acked - first.acked) * 1000) / (t - first.t) : 0;
    const m = process.memoryUsage();
    const rssMb = Math.round(m.rss / 1048576);
    if (t - lastMemory >= memoryEveryMs) {
      lastMemory = t;
      // the harness's own memory, in the ledger: a soak shows it flat (DESIGN.md §8)
      o.ledger?.event(t, 'harness', { rssMb, heapUsedMb: Math.round(m.heapUsed / 1048576), acked });
    }
    measureEstimate(t);
    if (t - lastCheck >= checkEveryMs) {
      lastCheck = t;
      void check();
    }
    const snap: ProgressSnapshot = {
      elapsedMs: t - o.phaseStartMs,
      durationMs: o.durationMs,
      acked,
      ackedPerSec: perSec,
      faults: o.faults(),
      findings: o.findings?.() ?? null,
      ledgerBytes: sizeNow(),
      freeBytes: free,
      rssMb,
    };
    o.output.update(snap);
  };

  void check();
  lastCheck = o.now();
  const timer = setInterval(tick, tickMs);
  let stopped = false;
  let finalBytes: number | null = null;
  return {
    get estimate() {
      return estimate;
    },
    stop() {
      if (stopped) return finalBytes;
      stopped = true;
      clearInterval(timer);
      o.output.done();
      finalBytes = sizeNow();
      if (finalBytes !== null) o.ledger?.event(o.now(), 'ledger-size', { bytes: finalBytes, expectedBytes: estimate?.expectedBytes ?? null });
      return finalBytes;
    },
  };
}
