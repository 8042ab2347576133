/**
 * How a certification run meets the errors of the world outside the harness (issue 22; DESIGN.md
 * §5: exceptions never fail a run, `2` INCONCLUSIVE, `3` harness error):
 * - every runtime and target-runtime call of the run goes through {@link guardRuntime}: transient
 *   failures retried (fault-tolerant-runtime.ts), every retry and every call that failed for good
 *   recorded in the ledger (events `runtime-retry`, `runtime-error`) and printed;
 * - a call that failed for good during the fault phase ends the phase at once; the run then heals
 *   what can be healed, reads every key back, seals, verifies and writes its reports, INCONCLUSIVE
 *   with the error as the reason ({@link phaseErrorReason});
 * - one before the fault phase (a node that will not start, a cluster that never answers) ends
 *   the run the same way with what was recorded ({@link endOnWorldError});
 * - anything else is a harness bug: the run's files are kept and the CLI exits 3 with one line.
 */
import type { Ledger } from '../ledger/ledger-writer.js';
import { META } from '../ledger/schema.js';
import type { RunClock } from './clock.js';
import { faultTolerantRuntime } from './runtime/fault-tolerant-runtime.js';
import { injectRuntimeErrors, type Injection } from './runtime/injected-runtime-errors.js';
import { isWorldError, worldErrorReason } from './runtime/runtime-errors.js';
import type { FaultRuntime } from './runtime/runtime.js';

/** What {@link guardRuntime} records into and prints through. */
export interface GuardContext {
  ledger: Pick<Ledger, 'event'>;
  clock: Pick<RunClock, 'now'>;
  log: (line: string) => void;
  /** Errors injected on purpose under the retries (injected-runtime-errors.ts); default none. */
  inject?: readonly Injection[];
  /** Backoff of the retries, ms (tests shorten it); default fault-tolerant-runtime.ts's 250 .. 2,000. */
  backoff?: { initialDelayMs: number; maxDelayMs: number };
}

/**
 * The run's runtime: `rt` with the injections (if any) under the fault-tolerant wrapper, whose
 * retries and final failures go into the ledger as events `runtime-retry` `{ op, attempt,
 * delayMs, error }` and `runtime-error` `{ op, source, attempts, transient, error }` and to `log`.
 * The result is `rt`'s own type.
 */
export function guardRuntime<T extends FaultRuntime>(rt: T, c: GuardContext): T {
  return faultTolerantRuntime(injectRuntimeErrors(rt, c.inject ?? []), {
    ...(c.backoff ?? {}),
    onRetry: (r) => {
      c.ledger.event(c.clock.now(), 'runtime-retry', r);
      c.log(`${r.op} failed (attempt ${r.attempt}), retrying in ${r.delayMs} ms: ${r.error}`);
    },
    onGiveUp: (e) => {
      c.ledger.event(c.clock.now(), 'runtime-error', { op: e.op, source: e.source, attempts: e.attempts, transient: e.transient, error: e.message });
      c.log(`${e.op} failed for good: ${e.message}`);
    },
  });
}

/**
 * The error that ended the fault phase early (the nemesis's), as the run's INCONCLUSIVE reason.
 * @returns the reason line (`runtime error: partition: ...`), also printed.
 * @throws `e` itself when it is not a world error (a harness bug: exit 3).
 */
export function phaseErrorReason(e: unknown, log: (line: string) => void): string {
  if (!isWorldError(e)) throw e;
  const reason = worldErrorReason(e);
  log(`${reason}: the fault phase ends now; healing, reading back, verifying what was recorded`);
  return reason;
}

/**
 * Ends a run that a world error stopped outside the fault phase (a node that will not start, a
 * cluster that never answers): the workload stopped, the reason recorded (meta
 * inconclusive_reason, event `run-error`), status `interrupted`, the ledger sealed. The caller
 * then verifies and writes the reports as for any run (INCONCLUSIVE).
 * @throws `e` itself when it is not a world error (a harness bug), before touching anything.
 */
export async function endOnWorldError(e: unknown, c: { ledger: Ledger; clock: Pick<RunClock, 'now'>; log: (line: string) => void; workload: { stop(): Promise<void> } | null }): Promise<void> {
  if (!isWorldError(e)) throw e;
  const reason = worldErrorReason(e);
  c.log(`${reason}: the run ends here; verifying what was recorded`);
  c.ledger.event(c.clock.now(), 'run-error', { reason });
  await c.workload?.stop().catch(() => undefined);
  c.ledger.setMeta(META.status, 'interrupted');
  c.ledger.setMeta(META.inconclusiveReason, reason);
  c.ledger.event(c.clock.now(), 'phase', { phase: 'done' });
  c.ledger.seal();
}
