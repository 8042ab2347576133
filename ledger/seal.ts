/**
 * The seal's steps: a ledger's hot rows packed into key_log (key-packer.ts) in one transaction,
 * then the file rewritten when its free pages are a large share of it.
 */
import { existsSync, renameSync, rmSync } from 'node:fs';
import Database from 'better-sqlite3';
import { hasTable } from './key-log.js';
import { HOT_TABLES, KeyPacker } from './key-packer.js';

/**
 * The seal (DESIGN.md §4, issue 11: the end of a long run stays short, the ledger small): the hot
 * path's appended rows (packed `write_batches`, and the `invokes` / `completions` / `read_log`
 * rows of the plain SQLite writer) become one `key_log` row per key (key-log.ts), which the
 * verifier reads. The {@link KeyPacker} (key-packer.ts) does it, during the run and at its end.
 */

/** Whether the ledger holds appended rows that a seal would move. */
export function needsSeal(db: Database.Database): boolean {
  for (const t of HOT_TABLES) {
    if (hasTable(db, t) && db.prepare(`SELECT 1 FROM ${t} LIMIT 1`).get() !== undefined) return true;
  }
  return false;
}

/**
 * Seals a ledger in place, in one transaction (all or nothing): the hot rows become key_log rows
 * and are deleted. Idempotent. The file keeps the deleted rows' pages as free space (see
 * {@link sealLedgerFile}).
 * @returns the number of writes sealed.
 */
export function sealLedger(db: Database.Database): number {
  if (!needsSeal(db)) return 0;
  return new KeyPacker(db).finish();
}

/** Phase timings of a seal, ms (for the seal benchmark and the run's log). */
export interface SealTimings {
  pack: number;
  vacuum: number;
}

/**
 * Free pages above this share of the file (and above {@link VACUUM_MIN_BYTES}) are given back by
 * rewriting the file (a ledger sealed at once at the end, not during its run).
 */
export const VACUUM_FREE_SHARE = 0.25;
export const VACUUM_MIN_BYTES = 32 * 1024 * 1024;

/**
 * Rewrites the ledger file at `path` when its free pages are a large share of it (VACUUM INTO a
 * new file beside it, renamed over it: until the rename the file is untouched; the new file is in
 * WAL mode). No connection may be open on it.
 * @returns true when the file was rewritten.
 */
export function vacuumIfSparse(path: string): boolean {
  const db = new Database(path, { fileMustExist: true });
  const tmp = `${path}.sealing`;
  try {
    const pageSize = db.pragma('page_size', { simple: true }) as number;
    const free = (db.pragma('freelist_count', { simple: true }) as number) * pageSize;
    const total = (db.pragma('page_count', { simple: true }) as number) * pageSize;
    if (!(free > VACUUM_MIN_BYTES && free > VACUUM_FREE_SHARE * total)) return false;
    for (const s of ['', '-wal', '-shm', '-journal']) rmSync(tmp + s, { force: true });
    db.prepare('VACUUM INTO ?').run(tmp);
  } finally {
    db.close();
  }
  const v = new Database(tmp);
  v.pragma('journal_mode = WAL');
  v.close();
  for (const s of ['-wal', '-shm']) if (existsSync(path + s)) rmSync(path + s, { force: true });
  renameSync(tmp, path);
  return true;
}

/**
 * Seals the ledger file at `path` ({@link sealLedger}), then gives back the free pages when they
 * are a large share of it ({@link vacuumIfSparse}). No other connection may write to the ledger
 * meanwhile; connections open on it keep seeing the old file when it is rewritten.
 * @returns the number of writes sealed.
 * @throws Error (SQLite's) when the ledger cannot be read or written.
 */
export function sealLedgerFile(path: string, timings?: Partial<SealTimings>): number {
  const t0 = performance.now();
  const db = new Database(path, { fileMustExist: true });
  let sealed: number;
  try {
    sealed = sealLedger(db);
  } finally {
    db.close();
  }
  const t1 = performance.now();
  if (timings) timings.pack = t1 - t0;
  vacuumIfSparse(path);
  if (timings) timings.vacuum = performance.now() - t1;
  return sealed;
}
