/**
 * A long run within its means on disk (issue 11): the ledger's expected size for the whole run,
 * measured over the first minute of the fault phase; and a guard that ends the run cleanly,
 * INCONCLUSIVE with the reason, before the run directory's file system fills (a full disk would
 * otherwise kill the ledger mid-write and leave nothing verifiable).
 *
 * The guard keeps room for the end phase: the final reads, the seal (which rewrites the hot path's
 * packed rows into the `writes` table inside one transaction, so that for a while the old and new
 * forms coexist in the file and its WAL), and the reports. That room is {@link SEAL_ROOM_FACTOR}
 * times the ledger's current size plus a fixed floor, so it grows with the run.
 */
import { readdirSync, statSync } from 'node:fs';
import { statfs } from 'node:fs/promises';
import path from 'node:path';

/** Bytes free to an unprivileged writer on the file system holding `dir` (statfs bavail × bsize). */
export async function freeBytes(dir: string): Promise<number> {
  const s = await statfs(dir);
  return s.bavail * s.bsize;
}

/** Total size in bytes of the ledger's files in `runDir` (ledger.sqlite, its -wal and -shm). */
export function ledgerBytes(runDir: string): number {
  let n = 0;
  for (const f of readdirSync(runDir)) {
    if (f === 'ledger.sqlite' || f.startsWith('ledger.sqlite-')) {
      try {
        n += statSync(path.join(runDir, f)).size;
      } catch {
        // a -wal or -shm removed between the listing and the stat
      }
    }
  }
  return n;
}

/**
 * How much room the end phase needs per byte of ledger: the seal holds the packed rows and the
 * unpacked `writes` rows at once, and the WAL keeps the transaction's pages until the checkpoint.
 * Measured (a 60 s run, 111k acknowledged writes, files polled every 200 ms): 20.7 MB of ledger
 * and WAL before the seal, 46.1 MB at its peak, 27.0 MB after; the seal took 1.23x the ledger's
 * size in extra room. 2 keeps a margin for the final reads, the reports and a missed peak.
 */
export const SEAL_ROOM_FACTOR = 2;

/** The fixed part of the end phase's room (bytes): reports, node logs, SQLite's own slack. */
export const DEFAULT_FLOOR_BYTES = 256 * 1024 * 1024;

/** Options of {@link DiskGuard}. */
export interface DiskGuardOptions {
  /** The run directory (its file system is the one watched). */
  runDir: string;
  /** Fixed room kept free (bytes); default {@link DEFAULT_FLOOR_BYTES}. */
  floorBytes?: number;
  /** Room per ledger byte; default {@link SEAL_ROOM_FACTOR}. */
  sealRoomFactor?: number;
  /** The guard's check period (ms): the growth over two periods is kept free as well. */
  checkEveryMs: number;
  /** Free-space probe (tests); default {@link freeBytes}. */
  free?: (dir: string) => Promise<number>;
  /** Ledger-size probe (tests); default {@link ledgerBytes}. */
  ledgerSize?: (runDir: string) => number;
}

/** One check's figures, bytes. */
export interface DiskCheck {
  free: number;
  ledger: number;
  /** Room the end phase needs now (floor + factor × ledger + growth over two check periods). */
  needed: number;
  /** Set when the run must stop: one line naming the figures. */
  stop?: string;
}

function mb(bytes: number): string {
  return bytes >= 1024 ** 3 ? `${(bytes / 1024 ** 3).toFixed(1)} GB` : `${Math.round(bytes / 1024 ** 2)} MB`;
}

/** Formats a byte count for progress lines: `512 MB`, `11.3 GB`. */
export const formatBytes = mb;

/**
 * The disk guard: call {@link DiskGuard.check} every `checkEveryMs`; once it returns `stop`, end
 * the fault phase, stop the workload, heal, read, seal and verify (certify.ts), and record the
 * reason as the run's inconclusive reason.
 */
export class DiskGuard {
  private lastLedger: number | null = null;
  private readonly floor: number;
  private readonly factor: number;

  constructor(private readonly o: DiskGuardOptions) {
    this.floor = o.floorBytes ?? DEFAULT_FLOOR_BYTES;
    this.factor = o.sealRoomFactor ?? SEAL_ROOM_FACTOR;
  }

  /** Measures free space and the ledger; says stop when the free space is below the room needed. */
  async check(): Promise<DiskCheck> {
    const free = await (this.o.free ?? freeBytes)(this.o.runDir);
    const ledger = (this.o.ledgerSize ?? ledgerBytes)(this.o.runDir);
    const growth = this.lastLedger === null ? 0 : Math.max(0, ledger - this.lastLedger);
    this.lastLedger = ledger;
    const needed = this.floor + this.factor * ledger + 2 * growth;
    const out: DiskCheck = { free, ledger, needed };
    if (free < needed) {
      out.stop = `disk guard: ${mb(free)} free on the run directory's file system, the end phase needs ${mb(needed)} (ledger ${mb(ledger)}): the run was ended early, healed, sealed and verified as it was`;
    }
    return out;
  }
}

/** The expected ledger size, from its growth over the first minute of the fault phase. */
export interface LedgerEstimate {
  /** Ledger bytes when the fault phase started. */
  startBytes: number;
  /** Ledger bytes after the measuring window. */
  measuredBytes: number;
  /** Length of the measuring window, ms. */
  windowMs: number;
  /** Bytes per second of fault phase over the window. */
  bytesPerSec: number;
  /** Acknowledged writes in the window (0 when unknown) and the bytes per acknowledged write. */
  acked: number;
  bytesPerAck: number | null;
  /** Expected ledger bytes when the whole fault phase is over (linear in time; before the seal). */
  expectedBytes: number;
}

/**
 * Extrapolates the ledger's size at the end of the fault phase from its growth over a window at
 * its start (the workload runs at a steady rate, so the ledger grows linearly with time).
 * @param durationMs the planned fault phase, ms.
 * @throws RangeError when the window is not positive.
 */
export function estimateLedger(startBytes: number, measuredBytes: number, windowMs: number, durationMs: number, acked = 0): LedgerEstimate {
  if (!(windowMs > 0)) throw new RangeError(`the measuring window must be positive, got ${windowMs} ms`);
  const grown = Math.max(0, measuredBytes - startBytes);
  const bytesPerSec = grown / (windowMs / 1000);
  return {
    startBytes,
    measuredBytes,
    windowMs,
    bytesPerSec,
    acked,
    bytesPerAck: acked > 0 ? grown / acked : null,
    expectedBytes: Math.round(measuredBytes + bytesPerSec * (Math.max(0, durationMs - windowMs) / 1000)),
  };
}
