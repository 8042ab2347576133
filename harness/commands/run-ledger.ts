import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { applySchema } from '../../ledger/schema.js';
import { needsSeal, sealLedgerFile } from '../../ledger/seal.js';
import { UsageError } from '../usage-error.js';

/** The ledger's file name inside a run directory (DESIGN.md §4). */
export const LEDGER_FILE = 'ledger.sqlite';

/**
 * A ledger file that cannot be read as a zaris-certify ledger (corrupt, not SQLite, not ours): a
 * harness error (the CLI exits 3 with the one-line message), not a mistake in the arguments.
 */
export class LedgerFileError extends Error {
  override name = 'LedgerFileError';

  /** @param message one line; line breaks are folded. */
  constructor(message: string) {
    super(message.replace(/\s*[\r\n]+\s*/g, ' '));
  }
}

/**
 * Opens the ledger of a stored run directory for re-analysis or export. With `write`, the
 * schema is brought up to date first (applySchema: only adds what is missing) and a run that
 * ended before its seal is sealed.
 * @throws UsageError (one line, exit 64) when the directory or its ledger.sqlite is missing.
 * @throws LedgerFileError (one line, exit 3) when the file cannot be opened or is not a
 *   zaris-certify ledger.
 */
export function openRunLedger(dir: string, opts: { write: boolean }): Database.Database {
  if (!existsSync(dir)) throw new UsageError(`run directory ${dir} does not exist`);
  if (!statSync(dir).isDirectory()) throw new UsageError(`${dir} is not a directory`);
  const path = join(dir, LEDGER_FILE);
  if (!existsSync(path)) throw new UsageError(`${dir} has no ${LEDGER_FILE}: not a run directory`);
  const open = (): Database.Database => {
    try {
      return new Database(path, { fileMustExist: true, readonly: !opts.write });
    } catch (e) {
      throw new LedgerFileError(`cannot open ${path}: ${(e as Error).message}`);
    }
  };
  let db = open();
  try {
    const hasWrites = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'writes'").get();
    if (hasWrites === undefined) throw new LedgerFileError(`${path} is not a zaris-certify ledger (no writes table)`);
    if (opts.write) {
      applySchema(db);
      // a run that ended before its seal (a crash, a forced exit) is sealed by its first analysis
      // (into a new file renamed over this one: seal.ts)
      if (needsSeal(db)) {
        db.close();
        sealLedgerFile(path);
        db = open();
      }
    }
  } catch (e) {
    if (db.open) db.close();
    if (e instanceof LedgerFileError) throw e;
    throw new LedgerFileError(`${path} is not a zaris-certify ledger: ${(e as Error).message}`);
  }
  return db;
}
