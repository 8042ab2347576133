import { join } from 'node:path';
import { exportHistory } from '../../ledger/history-export.js';
import { openRunLedger } from './run-ledger.js';
import { loadRunFacts } from '../verifier/run-facts.js';

/**
 * `zaris-certify export RUN_DIR`: writes the run's ledger as zaris-history/2
 * (shared/cases/history-format.md), streaming, to `outFile` (default `<dir>/history.json`): the
 * run's status and reason, budget mode, lag bound, lease and self-test bug, the contract it is
 * judged by (stored, or its target's declaration), samples with in-sync sets and revisions,
 * reads, acks' copies.
 * @returns the path written.
 * @throws UsageError when the directory or its ledger is missing; LedgerFileError when the file
 *   is not a ledger; Error when the ledger is inconsistent (nothing is left half-written).
 */
export function exportRun(dir: string, outFile?: string): string {
  const out = outFile ?? join(dir, 'history.json');
  // write: a run that ended before its seal is sealed first
  const db = openRunLedger(dir, { write: true });
  try {
    // a ledger from before contracts were stored: the history carries the declaration it is judged by
    const facts = loadRunFacts(db);
    exportHistory(db, out, facts.v2 && facts.contractOrigin === 'target declaration' ? facts.contract : undefined);
  } finally {
    db.close();
  }
  return out;
}
