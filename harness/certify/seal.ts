/**
 * Seal: the ledger's last phase, its seal and the run's status; or the same end for a run an error
 * stopped (a world error leaves it INCONCLUSIVE, any other error is a harness error, thrown on).
 */
import type { Ledger } from '../../ledger/ledger-writer.js';
import { META } from '../../ledger/schema.js';
import type { RunClock } from '../clock.js';
import { endOnWorldError } from '../run-errors.js';
import { isWorldError } from '../runtime/runtime-errors.js';

/** Records the phase `done`, seals the ledger and writes the run's status (meta `status`). */
export function sealRun(ledger: Ledger, clock: RunClock, status: 'complete' | 'interrupted'): void {
  ledger.event(clock.now(), 'phase', { phase: 'done' });
  ledger.seal();
  ledger.setMeta(META.status, status);
  // (an interrupted run is INCONCLUSIVE by its status; the verifier says so)
}

/**
 * Ends a run that `e` stopped. A world error (a node that will not start: run-errors.ts
 * endOnWorldError) ends it INCONCLUSIVE, the ledger sealed, to be verified as any run.
 * @throws `e` when it is not a world error: a harness error (status `interrupted`, meta
 *   `inconclusive_reason` `harness error: <first line>`; the run's files are kept).
 */
export async function endOnError(e: unknown, c: { runDir: string; ledger: Ledger; clock: RunClock; log: (line: string) => void; workload: { stop(): Promise<void> } | null }): Promise<void> {
  const { ledger, clock, log, workload } = c;
  if (!isWorldError(e)) {
    ledger.setMeta(META.status, 'interrupted');
    ledger.setMeta(META.inconclusiveReason, `harness error: ${(e as Error).message.split('\n')[0]}`);
    log(`harness error; the run's files are kept in ${c.runDir}`);
    throw e;
  }
  // the world stopped the run outside its fault phase (a node that will not start): INCONCLUSIVE
  await endOnWorldError(e, { ledger, clock, log, workload });
}
