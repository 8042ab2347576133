import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ProgressOutput, ProgressSnapshot } from './run-progress.js';
import { startRunMonitor, type RunMonitorOptions } from './run-monitor.js';

const MB = 1024 * 1024;

/** Everything the monitor said and recorded. */
function recorder(): { output: ProgressOutput; logs: string[]; snaps: ProgressSnapshot[]; done: number; events: Array<{ t: number; kind: string; detail: Record<string, unknown> }> } {
  const r = {
    logs: [] as string[],
    snaps: [] as ProgressSnapshot[],
    done: 0,
    events: [] as Array<{ t: number; kind: string; detail: Record<string, unknown> }>,
    output: null as unknown as ProgressOutput,
  };
  r.output = { log: (l) => r.logs.push(l), update: (s) => r.snaps.push(s), done: () => r.done++ };
  return r;
}

describe('startRunMonitor (virtual clock)', () => {
  let runDir: string;
  let t0: number;
  const now = (): number => Date.now() - t0;
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'setTimeout', 'clearTimeout', 'Date'] });
    t0 = Date.now();
    runDir = mkdtempSync(path.join(os.tmpdir(), 'zaris-certify-monitor-'));
    writeFileSync(path.join(runDir, 'ledger.sqlite'), '');
  });
  afterEach(() => {
    vi.useRealTimers();
    rmSync(runDir, { recursive: true, force: true });
  });

  function start(r: ReturnType<typeof recorder>, acked: { n: number }, extra: Partial<RunMonitorOptions> = {}) {
    return startRunMonitor({
      runDir,
      durationMs: 60_000,
      now,
      phaseStartMs: 0,
      acked: () => acked.n,
      faults: () => 3,
      ledger: { event: (t, kind, detail) => r.events.push({ t, kind, detail: detail as Record<string, unknown> }) },
      output: r.output,
      // free space from a probe that answers at once: statfs's real I/O would race the virtual clock
      diskGuard: { floorBytes: 0, checkEveryMs: 1_000, free: async () => 40 * 1024 * MB },
      onDiskLow: () => {
        throw new Error('the disk is not low');
      },
      estimateWindowMs: 5_000,
      estimateWarmupMs: 0,
      memoryEveryMs: 2_000,
      ...extra,
    });
  }

  it('opens the estimate window after the warm-up: the early burst of unpacked batches does not count', async () => {
    const r = recorder();
    const acked = { n: 0 };
    truncateSync(path.join(runDir, 'ledger.sqlite'), 1 * MB);
    const m = start(r, acked, { estimateWarmupMs: 3_000, estimateWindowMs: 4_000 });
    // 3 MB/s for the first 3 s (raw batches), then 1 MB/s (packed as the run goes)
    let size = 1;
    for (let s = 1; s <= 8; s++) {
      size += s <= 3 ? 3 : 1;
      truncateSync(path.join(runDir, 'ledger.sqlite'), size * MB);
      acked.n = s * 1_000;
      await vi.advanceTimersByTimeAsync(1_000);
    }
    // window 3 s -> 7 s: 10 MB -> 14 MB; 53 s of phase left after 7 s at 1 MB/s
    expect(m.estimate).toMatchObject({ startBytes: 10 * MB, measuredBytes: 14 * MB, windowMs: 4_000, bytesPerSec: MB, acked: 4_000, expectedBytes: 14 * MB + 53 * MB });
    expect(r.logs).toContain('ledger: +4 MB from 3 s to 7 s of faults, 1049 B per acknowledged write: expected ~67 MB by the end of the fault phase');
  });

  it('estimates the ledger over its window, samples memory, shows progress, records the final size', async () => {
    const r = recorder();
    const acked = { n: 0 };
    truncateSync(path.join(runDir, 'ledger.sqlite'), 2 * MB);
    const m = start(r, acked);
    // the ledger grows 1 MB and 1,000 acknowledged writes per second
    for (let s = 1; s <= 6; s++) {
      truncateSync(path.join(runDir, 'ledger.sqlite'), (2 + s) * MB);
      acked.n = s * 1_000;
      await vi.advanceTimersByTimeAsync(1_000);
    }
    expect(m.estimate).toEqual({ startBytes: 2 * MB, measuredBytes: 7 * MB, windowMs: 5_000, bytesPerSec: MB, acked: 5_000, bytesPerAck: MB / 1_000, expectedBytes: 7 * MB + 55 * MB });
    expect(r.logs).toContain('ledger: +5 MB in the first 5 s of faults, 1049 B per acknowledged write: expected ~62 MB by the end of the fault phase');
    expect(r.events.filter((e) => e.kind === 'ledger-estimate')).toHaveLength(1);
    const mem = r.events.filter((e) => e.kind === 'harness');
    expect(mem.map((e) => e.t)).toEqual([2_000, 4_000, 6_000]);
    expect(mem[0].detail.rssMb).toBeGreaterThan(10);
    expect(mem[2].detail.acked).toBe(6_000);
    const last = r.snaps.at(-1)!;
    expect(last).toMatchObject({ elapsedMs: 6_000, durationMs: 60_000, acked: 6_000, faults: 3, findings: null, ledgerBytes: 8 * MB });
    expect(last.ackedPerSec).toBeCloseTo(1_000, 6);
    expect(last.freeBytes).toBe(40 * 1024 * MB);
    expect(m.stop()).toBe(8 * MB);
    expect(m.stop()).toBe(8 * MB);
    expect(r.done).toBe(1);
    expect(r.events.filter((e) => e.kind === 'ledger-size').map((e) => e.detail)).toEqual([{ bytes: 8 * MB, expectedBytes: 62 * MB }]);
    const ticks = r.snaps.length;
    await vi.advanceTimersByTimeAsync(5_000);
    expect(r.snaps.length).toBe(ticks); // stopped
  });

  it('calls onDiskLow once, with the reason, when the end phase would not fit', async () => {
    const r = recorder();
    const reasons: string[] = [];
    const m = start(r, { n: 0 }, { diskGuard: { floorBytes: 100 * MB, checkEveryMs: 1_000, free: async () => 99 * MB }, onDiskLow: (why) => reasons.push(why) });
    await vi.advanceTimersByTimeAsync(5_000);
    m.stop();
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toBe("disk guard: 99 MB free on the run directory's file system, the end phase needs 100 MB (ledger 0 MB): the run was ended early, healed, sealed and verified as it was");
    expect(r.events.filter((e) => e.kind === 'disk-guard')).toHaveLength(1);
  });

  it('with the ledger off: no ledger figures, no guard', async () => {
    const r = recorder();
    const m = start(r, { n: 5 }, { ledger: null, diskGuard: false });
    await vi.advanceTimersByTimeAsync(3_000);
    expect(m.stop()).toBeNull();
    expect(r.snaps.at(-1)).toMatchObject({ ledgerBytes: null, freeBytes: null, acked: 5 });
    expect(m.estimate).toBeNull();
  });
});
