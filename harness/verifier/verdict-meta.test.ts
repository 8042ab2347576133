import { describe, expect, it } from 'vitest';
import { importHistory } from '../../ledger/history-import.js';
import { META } from '../../ledger/schema.js';
import { historyOf } from '../../ledger/test-support/fixtures.js';
import { buildResults } from '../../reports/results.js';
import { verifyLedger } from './verifier.js';

function ledgerOf(fixtureName: string) {
  return importHistory(historyOf(fixtureName), ':memory:');
}

/** Verdict rules that come from the run's own record (meta), beyond the history's findings. */
describe('verdict from the run record', () => {
  it('a ledger still marked running (its harness died) is INCONCLUSIVE, and says why', () => {
    const db = ledgerOf('clean-sync');
    expect(verifyLedger(db).verdict).toBe('CERTIFIED');
    db.prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)').run(META.status, 'running');
    const v = verifyLedger(db);
    expect(v.verdict).toBe('INCONCLUSIVE');
    expect(v.exitCode).toBe(2);
    expect(v.inconclusiveReason).toBe('the run did not finish (its harness stopped before the end phase)');
  });

  it('a self-test run that shows no violation is INCONCLUSIVE; one that does is FAILED; results.json names the bug', () => {
    const clean = ledgerOf('clean-sync');
    clean.prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)').run(META.runConfig, JSON.stringify({ selfTestBug: 'lose-on-promotion' }));
    const v = verifyLedger(clean);
    expect(v.verdict).toBe('INCONCLUSIVE');
    expect(v.inconclusiveReason).toMatch(/self-test run \(store started with the bug lose-on-promotion\) must come out FAILED/);
    expect(buildResults(clean, v).selfTestBug).toBe('lose-on-promotion');
    const lost = ledgerOf('lost-sync');
    lost.prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)').run(META.runConfig, JSON.stringify({ selfTestBug: 'lose-on-promotion' }));
    expect(verifyLedger(lost).verdict).toBe('FAILED');
    // a real run has no selfTestBug in results.json at all
    const real = ledgerOf('lost-sync');
    expect('selfTestBug' in buildResults(real, verifyLedger(real))).toBe(false);
  });
});
