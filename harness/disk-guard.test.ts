import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_FLOOR_BYTES, DiskGuard, estimateLedger, formatBytes, freeBytes, ledgerBytes, SEAL_ROOM_FACTOR } from './disk-guard.js';

const MB = 1024 * 1024;

describe('DiskGuard', () => {
  it('keeps room for the end phase: floor + factor x ledger + the growth of two checks', async () => {
    let free = 1_000 * MB;
    let ledger = 100 * MB;
    const g = new DiskGuard({ runDir: '/x', floorBytes: 50 * MB, checkEveryMs: 1_000, free: async () => free, ledgerSize: () => ledger });
    // first check: no growth known yet; needed = 50 + 2 x 100
    expect(await g.check()).toEqual({ free: 1_000 * MB, ledger: 100 * MB, needed: (50 + SEAL_ROOM_FACTOR * 100) * MB });
    ledger = 110 * MB;
    free = 990 * MB;
    expect((await g.check()).needed).toBe((50 + SEAL_ROOM_FACTOR * 110 + 2 * 10) * MB);
    // the disk fills: the ledger grew 100 MB since the last check, free is below what is needed
    ledger = 210 * MB;
    free = 560 * MB;
    const c = await g.check();
    expect(c.needed).toBe((50 + SEAL_ROOM_FACTOR * 210 + 2 * 100) * MB);
    expect(c.stop).toBe('disk guard: 560 MB free on the run directory\'s file system, the end phase needs 670 MB (ledger 210 MB): the run was ended early, healed, sealed and verified as it was');
  });

  it('defaults: a 256 MB floor and the measured seal factor', async () => {
    const g = new DiskGuard({ runDir: '/x', checkEveryMs: 1_000, free: async () => DEFAULT_FLOOR_BYTES - 1, ledgerSize: () => 0 });
    expect(DEFAULT_FLOOR_BYTES).toBe(256 * MB);
    expect((await g.check()).stop).toMatch(/^disk guard: 256 MB free/);
  });
});

describe('the disk probes', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'zaris-certify-disk-guard-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('ledgerBytes sums the ledger, its WAL and shared memory, nothing else', () => {
    expect(ledgerBytes(dir)).toBe(0);
    writeFileSync(path.join(dir, 'ledger.sqlite'), Buffer.alloc(1000));
    writeFileSync(path.join(dir, 'ledger.sqlite-wal'), Buffer.alloc(300));
    writeFileSync(path.join(dir, 'ledger.sqlite-shm'), Buffer.alloc(20));
    writeFileSync(path.join(dir, 'report.html'), Buffer.alloc(5000));
    expect(ledgerBytes(dir)).toBe(1320);
  });

  it('freeBytes reads the file system of a folder', async () => {
    const f = await freeBytes(dir);
    expect(Number.isSafeInteger(f)).toBe(true);
    expect(f).toBeGreaterThan(0);
    await expect(freeBytes(path.join(dir, 'missing'))).rejects.toThrow(/ENOENT/);
  });

  it('formats sizes for the progress line', () => {
    expect(formatBytes(0)).toBe('0 MB');
    expect(formatBytes(1000 * MB)).toBe('1000 MB');
    expect(formatBytes(1536 * MB)).toBe('1.5 GB');
    expect(formatBytes(11.34 * 1024 * MB)).toBe('11.3 GB');
  });
});

describe('estimateLedger', () => {
  it('extrapolates the growth over the first minute to the whole fault phase', () => {
    // 2 MB at the start, 14 MB after 60 s (12 MB/min), a 4-hour phase: 14 + 239 x 12 MB
    const e = estimateLedger(2 * MB, 14 * MB, 60_000, 4 * 3600_000, 60_000);
    expect(e.bytesPerSec).toBe((12 * MB) / 60);
    expect(e.bytesPerAck).toBe((12 * MB) / 60_000);
    expect(e.expectedBytes).toBe(14 * MB + 239 * 12 * MB);
    expect(estimateLedger(0, 10, 1_000, 500).expectedBytes).toBe(10); // a phase shorter than the window
    expect(estimateLedger(5, 3, 1_000, 10_000).bytesPerSec).toBe(0); // a shrinking file grows nothing
    expect(estimateLedger(0, 10, 1_000, 10_000).bytesPerAck).toBeNull();
    expect(() => estimateLedger(0, 1, 0, 1)).toThrow(RangeError);
  });
});
