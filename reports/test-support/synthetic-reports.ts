import { join } from 'node:path';
import Database from 'better-sqlite3';
import { writeSyntheticRun } from '../../harness/synthetic-run.js';
import { verifyLedger } from '../../harness/verifier/verifier.js';
import { sealLedgerFile } from '../../ledger/seal.js';
import { writeHtmlReport } from '../html-report.js';
import { buildResults, writeResultsJson, type Results } from '../results.js';

/** A run directory as `make certify` leaves it (ledger.sqlite, results.json, report.html), from a synthetic run. */
export interface SyntheticReport {
  dir: string;
  /** report.html's path. */
  report: string;
  results: Results;
}

/**
 * The synthetic runs (harness/synthetic-run.ts) the report's tests open, shaped like `make
 * certify` at its defaults (three stores, a fault every 20 s, charts of every kind):
 * - FAILED: 90 s at 600 writes/s with allowed losses (lossEvery 1, seed 7): 16 incidents, a few
 *   of them with more than 20 findings, rf1 and async-ack losses and 3 violations;
 * - CERTIFIED: 60 s at 300 writes/s, no loss (seed 7).
 */
export const SYNTHETIC_REPORTS = {
  FAILED: { durationMs: 90_000, rate: 600, seed: 7, lossEvery: 1 },
  CERTIFIED: { durationMs: 60_000, rate: 300, seed: 7, lossEvery: 0 },
} as const;

/**
 * Writes one of {@link SYNTHETIC_REPORTS} into `dir` (a new, empty folder): the ledger, sealed and
 * verified, then results.json and report.html.
 * @throws Error when the run's verdict is not the one named (the generator changed).
 */
export function writeSyntheticReport(dir: string, verdict: keyof typeof SYNTHETIC_REPORTS): SyntheticReport {
  const path = join(dir, 'ledger.sqlite');
  writeSyntheticRun({ path, ...SYNTHETIC_REPORTS[verdict] });
  sealLedgerFile(path);
  const db = new Database(path);
  try {
    const results = buildResults(db, verifyLedger(db, { parallel: false }));
    if (results.verdict !== verdict) throw new Error(`the synthetic ${verdict} run came out ${results.verdict}`);
    writeResultsJson(results, dir);
    return { dir, report: writeHtmlReport(db, results, dir), results };
  } finally {
    db.close();
  }
}
