/**
 * Verify and report: the sealed ledger verified and results.json, junit.xml and report.html
 * written (commands/analyze.ts, as `zaris-certify analyze` does), and the run's exit code.
 */
import { analyzeRunDir } from '../commands/analyze.js';
import { formatBytes, ledgerBytes } from '../disk-guard.js';
import { scenarioExitCode } from '../scenario/expectation.js';
import type { CertifyOptions } from './options.js';

/** What verifying a run gave. */
export interface RunVerdict {
  /** The run's results (results.json), or null when not verified (`skipVerify`, `ledgerOff`). */
  results: ReturnType<typeof analyzeRunDir> | null;
  /** The verdict's exit code (a scenario's: whether its expectation held); 0 when not verified. */
  exitCode: number;
}

/**
 * Prints the sealed ledger's size, then verifies the run and writes its reports into `runDir`
 * (unless `skipVerify` or `ledgerOff`, benchmarks only).
 * @throws LedgerFileError when the ledger is broken (a harness error).
 */
export function verifyAndReport(runDir: string, o: Pick<CertifyOptions, 'ledgerOff' | 'skipVerify'>, log: (line: string) => void): RunVerdict {
  if (!o.ledgerOff) log(`ledger: ${formatBytes(ledgerBytes(runDir))} sealed`);
  let results: RunVerdict['results'] = null;
  let exitCode = 0;
  if (!o.skipVerify && !o.ledgerOff) {
    results = analyzeRunDir(runDir);
    exitCode = results.scenario ? scenarioExitCode(results.scenario.held, results.exitCode) : results.exitCode;
  }
  return { results, exitCode };
}
