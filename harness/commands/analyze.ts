import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { importHistory } from '../../ledger/history-import.js';
import { writeHtmlReport } from '../../reports/html-report.js';
import { writeJunitXml } from '../../reports/junit.js';
import type { Results } from '../../reports/results.js';
import { buildResults, writeResultsJson } from '../../reports/results.js';
import { UsageError } from '../usage-error.js';
import { HistoryFormatError, parseHistory } from '../../ledger/history-format.js';
import { verifyLedger } from '../verifier/verifier.js';
import { LEDGER_FILE, openRunLedger } from './run-ledger.js';

/**
 * Verifies an open ledger and writes results.json, junit.xml and report.html into `outDir`
 * (each through a temporary file and a rename). The findings table is replaced.
 * @returns the results written.
 */
export function analyzeLedger(db: Database.Database, outDir: string): Results {
  const verification = verifyLedger(db);
  const results = buildResults(db, verification);
  writeResultsJson(results, outDir);
  writeJunitXml(results, outDir);
  writeHtmlReport(db, results, outDir);
  return results;
}

/**
 * `zaris-certify analyze RUN_DIR`: re-verifies a stored run from its ledger alone and rewrites
 * its results.json, junit.xml and report.html (DESIGN.md §7).
 * @throws UsageError when the directory or its ledger is missing (exit 64).
 * @throws LedgerFileError when the ledger file is broken or not a ledger (a harness error, exit 3).
 */
export function analyzeRunDir(dir: string): Results {
  const db = openRunLedger(dir, { write: true });
  try {
    return analyzeLedger(db, dir);
  } finally {
    db.close();
  }
}

/**
 * `zaris-certify analyze --history FILE --out DIR`: imports a zaris-history/1 or /2 file into
 * `<outDir>/ledger.sqlite` (replacing one left by an earlier analysis), verifies it by the rules
 * of its version and writes results.json, junit.xml and report.html into outDir (created when
 * missing).
 * @throws UsageError when the file cannot be read, is not JSON, or is not a valid history (the
 *   message names the file and the bad field), or outDir cannot be made.
 */
export function analyzeHistoryFile(file: string, outDir: string): Results {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new UsageError(`cannot read history file ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  let history;
  try {
    history = parseHistory(text);
  } catch (e) {
    if (e instanceof HistoryFormatError) throw new UsageError(`${file}: ${e.message}`);
    throw e;
  }
  try {
    mkdirSync(outDir, { recursive: true });
  } catch (e) {
    throw new UsageError(`cannot create output directory ${outDir}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  const ledger = join(outDir, LEDGER_FILE);
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(ledger + suffix, { force: true });
  const db = importHistory(history, ledger);
  try {
    return analyzeLedger(db, outDir);
  } finally {
    db.close();
  }
}
