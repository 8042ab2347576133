/**
 * The client retry loop (seed 000, "the retry/backoff brain of the client"; DESIGN.md §2
 * "Client"): one operation, tried against the current partition map until it succeeds, gets
 * an answer, or runs out of attempts or time, whichever comes first ("Two bounds, not one").
 *
 * Pure logic: no sockets. The connection layer supplies `operation` (one attempt), and the
 * clock, sleep and map refresh through {@link RetryDeps} so tests run on virtual time.
 *
 * Errors: runWithRetry never rejects because of the operation. When the last attempt threw
 * (a non-retryable error, rethrown at once as seed 000 says, or a TransportError on the last
 * attempt) the outcome carries it as `error` with `result: undefined`, next to the full attempt
 * trace. {@link unwrapRetryOutcome} turns that back into a throw ({@link RetryAbortedError},
 * with the error as `cause` and the outcome attached) for callers that want exceptions.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleepTimer } from 'node:timers/promises';
import { KvStatus } from '../kv-status.js';
import {
  backoffDelayMs,
  requiresMapRefresh,
  shouldRetry,
  validateRetryOptions,
  type RetryOptions,
} from './retry-policy.js';
import { TransportError } from './transport-error.js';

/**
 * What one attempt must return: the response's status, plus (for the trace and the ledger)
 * the node that answered and the epoch it answered at, when known (DESIGN.md §2 "Protocol").
 */
export interface RetryableResult {
  readonly status: KvStatus;
  readonly node?: string;
  readonly epoch?: number;
}

/**
 * One attempt of an operation, as the ledger stores it (DESIGN.md §4 "writes with every attempt").
 * - `n`: 1-based attempt number.
 * - `status`: the response status; undefined when the attempt threw.
 * - `errorKind`: when the attempt threw: the TransportErrorKind ("Timeout", "Transport", ...)
 *   for a TransportError, else the error's `name` ("Error", "TypeError", ...) or, for a thrown
 *   non-Error, `typeof` the value.
 * - `node`, `epoch`: as the response reported them (undefined when it threw or did not say).
 * - `startMs`, `endMs`: clock readings (ms, the deps' clock) when the attempt was started and
 *   when its response or error arrived.
 * - `mayHaveApplied`: true when this attempt took effect (Ok) or may have (a TransportError
 *   with mayHaveBeenSent); false for every other status and for other errors.
 */
export interface AttemptTrace {
  readonly n: number;
  readonly status?: KvStatus;
  readonly errorKind?: string;
  readonly node?: string;
  readonly epoch?: number;
  readonly startMs: number;
  readonly endMs: number;
  readonly mayHaveApplied: boolean;
}

/**
 * How the ledger records the operation (DESIGN.md §4, Jepsen's names):
 * `ok` acknowledged; `fail` definitely not applied; `info` indeterminate.
 */
export type LedgerOutcome = 'ok' | 'fail' | 'info';

/** The fields every {@link RetryOutcome} has. */
export interface RetryOutcomeBase {
  /** Every attempt made, in order; at least one. */
  readonly attempts: readonly AttemptTrace[];
  /** How many map refreshes the loop asked for (each `deps.refreshMap()` call). */
  readonly refreshes: number;
  /** The backoff sleeps between attempts, ms, in order (a 0 ms entry means no timer was set). */
  readonly delaysMs: readonly number[];
  /**
   * `ok` when the last attempt returned Ok; else `info` when any attempt may have been applied
   * (a timeout or transport failure after the request was written, and whatever followed it:
   * a Conflict, an exhausted loop, a thrown error); else `fail` (DESIGN.md §2 "Client").
   */
  readonly ledgerOutcome: LedgerOutcome;
}

/**
 * The result of {@link runWithRetry}: discriminated by `result`.
 * - The last attempt returned: `result` is its response (Ok, an answer such as Conflict or
 *   NotFound, or the last retryable status when the bounds ran out), `error` is absent.
 * - The last attempt threw: `result` is undefined and `error` is what it threw (a non-retryable
 *   error, or a TransportError when the bounds ran out).
 */
export type RetryOutcome<R> = RetryOutcomeBase &
  ({ readonly result: R; readonly error?: undefined } | { readonly result: undefined; readonly error: unknown });

/** A monotonic clock reading ms (real default: performance.now()). */
export interface RetryClock {
  now(): number;
}

/**
 * What the loop needs from its surroundings (injectable so tests run on virtual time).
 * - `clock`: monotonic ms.
 * - `sleep(ms)`: resolves after `ms` ms (called only with ms > 0).
 * - `refreshMap()`: refreshes the partition map (normally {@link SharedMapRefresher}.refresh);
 *   a rejection is swallowed: the next attempt then runs on the map it has.
 */
export interface RetryDeps {
  readonly clock: RetryClock;
  readonly sleep: (ms: number) => Promise<void>;
  readonly refreshMap: () => Promise<unknown>;
}

/** The real clock: `performance.now()` (ms, monotonic, the harness's own clock). */
export const MONOTONIC_CLOCK: RetryClock = Object.freeze({ now: () => performance.now() });

/** The real sleep: resolves after `ms` ms (one Node timer, `timers/promises` setTimeout). */
export function timerSleep(ms: number): Promise<void> {
  return sleepTimer(ms) as Promise<void>;
}

/** Real {@link RetryDeps}: {@link MONOTONIC_CLOCK}, {@link timerSleep} and the given refresh. */
export function defaultRetryDeps(refreshMap: () => Promise<unknown>): RetryDeps {
  return { clock: MONOTONIC_CLOCK, sleep: timerSleep, refreshMap };
}

/**
 * Thrown by {@link unwrapRetryOutcome} when the operation's last attempt threw. `cause` is the
 * thrown value; `outcome` is the full outcome (attempt trace, refreshes, ledgerOutcome).
 */
export class RetryAbortedError extends Error {
  override readonly name = 'RetryAbortedError';
  readonly outcome: RetryOutcome<unknown>;

  constructor(outcome: RetryOutcome<unknown>) {
    const last = outcome.attempts[outcome.attempts.length - 1];
    const cause = outcome.error;
    const what = cause instanceof Error ? cause.message : String(cause);
    super(`operation failed after ${outcome.attempts.length} attempt(s) (${last?.errorKind ?? 'error'}): ${what}`, {
      cause,
    });
    this.outcome = outcome;
  }
}

/**
 * The outcome's response, or a throw when its last attempt threw.
 * @throws RetryAbortedError carrying the thrown value as `cause` and the outcome.
 */
export function unwrapRetryOutcome<R>(outcome: RetryOutcome<R>): R {
  if (outcome.result !== undefined) return outcome.result;
  throw new RetryAbortedError(outcome);
}

const NO_DELAYS: readonly number[] = Object.freeze([]);

function errorKindOf(e: unknown): string {
  if (e instanceof TransportError) return e.kind;
  if (e instanceof Error) return e.name;
  return typeof e;
}

function makeOutcome<R>(
  result: R | undefined,
  error: unknown,
  threw: boolean,
  attempts: AttemptTrace[],
  refreshes: number,
  delaysMs: readonly number[],
  ledgerOutcome: LedgerOutcome,
): RetryOutcome<R> {
  // Both shapes carry the same keys so the objects share one hidden class.
  return (threw
    ? { result: undefined, error, attempts, refreshes, delaysMs, ledgerOutcome }
    : { result, error: undefined, attempts, refreshes, delaysMs, ledgerOutcome }) as RetryOutcome<R>;
}

/**
 * Runs `operation` with the client's retries (seed 000; DESIGN.md §2 "Client").
 *
 * Loop, for attempt n = 1, 2, ...:
 * 1. `operation(n)` against the current map. A returned status that is Ok, or that
 *    {@link shouldRetry} says is an answer (NotFound, Conflict, InvalidInput), ends the loop. A
 *    thrown {@link TransportError} is retryable and needs a map refresh; any other thrown value
 *    ends the loop at once (seed 000: "rethrown immediately"; here: returned as `error`).
 * 2. Another attempt can follow only if n < maxAttempts (1 when disableRetries) AND the
 *    deadline (first attempt's start + timeoutMs) has not passed; otherwise the loop ends with
 *    no refresh and no sleep ("Two bounds, not one").
 * 3. Refresh the map when {@link requiresMapRefresh}(status) or on a TransportError (one
 *    `deps.refreshMap()` call; a rejection is ignored). If the deadline passed meanwhile, stop.
 * 4. Sleep {@link backoffDelayMs}(n, backoffMillis, status, ms left) (no timer when 0). If the
 *    deadline has passed after the sleep, stop.
 *
 * The first attempt is always made (timeoutMs > 0). The no-retry path reads the clock twice
 * and allocates the trace entry, its array and the outcome; it creates no timer.
 *
 * @param operation one attempt; receives the 1-based attempt number; may throw.
 * @param options the bounds and backoff (e.g. DEFAULT_RETRY_OPTIONS or retryOptionsFromEnv()).
 * @param deps clock, sleep and map refresh.
 * @returns the outcome (never rejects because of the operation; see {@link RetryOutcome}).
 * @throws RangeError (as a rejection) when `options` are invalid ({@link validateRetryOptions}).
 */
export async function runWithRetry<R extends RetryableResult>(
  operation: (attempt: number) => Promise<R>,
  options: RetryOptions,
  deps: RetryDeps,
): Promise<RetryOutcome<R>> {
  validateRetryOptions(options);
  const maxAttempts = options.disableRetries ? 1 : options.maxAttempts;
  const clock = deps.clock;
  let attemptStart = clock.now();
  const deadline = options.timeoutMs === null ? null : attemptStart + options.timeoutMs;
  const attempts: AttemptTrace[] = [];
  let delaysMs: readonly number[] = NO_DELAYS;
  let refreshes = 0;
  let anyMayHaveApplied = false;

  for (let n = 1; ; n++) {
    let result: R | undefined;
    let error: unknown;
    let threw = false;
    try {
      result = await operation(n);
    } catch (e) {
      threw = true;
      error = e;
    }
    const endMs = clock.now();

    let status: KvStatus | undefined;
    let retryable: boolean;
    let refresh: boolean;
    let trace: AttemptTrace;
    if (!threw) {
      const r = result as R;
      status = r.status;
      retryable = shouldRetry(status);
      refresh = retryable && requiresMapRefresh(status);
      trace = {
        n,
        status,
        errorKind: undefined,
        node: r.node,
        epoch: r.epoch,
        startMs: attemptStart,
        endMs,
        mayHaveApplied: status === KvStatus.Ok,
      };
    } else if (error instanceof TransportError) {
      retryable = true;
      refresh = true;
      trace = {
        n,
        status: undefined,
        errorKind: error.kind,
        node: undefined,
        epoch: undefined,
        startMs: attemptStart,
        endMs,
        mayHaveApplied: error.mayHaveBeenSent,
      };
    } else {
      retryable = false;
      refresh = false;
      trace = {
        n,
        status: undefined,
        errorKind: errorKindOf(error),
        node: undefined,
        epoch: undefined,
        startMs: attemptStart,
        endMs,
        mayHaveApplied: false,
      };
    }
    attempts.push(trace);
    if (trace.mayHaveApplied) anyMayHaveApplied = true;

    let more = retryable && n < maxAttempts && (deadline === null || endMs < deadline);
    let now = endMs;
    if (more && refresh) {
      refreshes++;
      try {
        await deps.refreshMap();
      } catch {
        // A failed refresh leaves the map as it was; the next attempt finds out (seed 000,
        // TryRefreshClusterMapSafe).
      }
      now = clock.now();
      more = deadline === null || now < deadline;
    }
    if (more) {
      const delay = backoffDelayMs(n, options.backoffMillis, status, deadline === null ? null : deadline - now);
      if (delaysMs === NO_DELAYS) delaysMs = [delay];
      else (delaysMs as number[]).push(delay);
      if (delay > 0) {
        await deps.sleep(delay);
        now = clock.now();
        more = deadline === null || now < deadline;
      }
      attemptStart = now;
    }
    if (!more) {
      const ledgerOutcome: LedgerOutcome =
        status === KvStatus.Ok ? 'ok' : anyMayHaveApplied ? 'info' : 'fail';
      return makeOutcome(result, error, threw, attempts, refreshes, delaysMs, ledgerOutcome);
    }
  }
}
