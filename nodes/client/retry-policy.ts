/**
 * The client's retry policy (seed 000, "The retry brain"): which statuses are retried, which
 * also refresh the partition map first, the backoff between attempts, and the options with
 * their environment variables. Pure functions; the loop itself is in retry-loop.ts.
 */
import ms from 'ms';
import { KvStatus } from '../kv-status.js';

/** Hard cap on one backoff sleep, in ms (seed 000, "capped at two seconds"). */
export const MAX_BACKOFF_MS = 2_000;

/** Backoff multiplier for a Migrating status (seed 000, "an 8x longer delay"). */
export const MIGRATING_BACKOFF_FACTOR = 8;

/** Default operation deadline, in ms, when ZARIS_REQUEST_TIMEOUT is unset (seed 000: 60 s). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;

/** Environment variable holding the operation deadline (seed 000). */
export const ENV_REQUEST_TIMEOUT = 'ZARIS_REQUEST_TIMEOUT';

/** Environment variable that collapses the attempt budget to one attempt (seed 000). */
export const ENV_DISABLE_RETRIES = 'ZARIS_DISABLE_RETRIES';

/**
 * True when the same request can succeed shortly, so another attempt is worth making
 * (seed 000, `ShouldRetry`): Moved, ReplicaWriteRejected, Unavailable, Migrating and
 * OwnershipChanging. Ok, NotFound, Conflict and InvalidInput are answers and are never retried
 * (a retried Conflict would defeat optimistic concurrency).
 */
export function shouldRetry(status: KvStatus): boolean {
  switch (status) {
    case KvStatus.Moved:
    case KvStatus.ReplicaWriteRejected:
    case KvStatus.Unavailable:
    case KvStatus.Migrating:
    case KvStatus.OwnershipChanging:
      return true;
    default:
      return false;
  }
}

/**
 * True when the status means "you reached the wrong node": the partition map must be
 * refreshed before the next attempt (seed 000, `RequiresMapRefresh`): Moved,
 * ReplicaWriteRejected and OwnershipChanging. Unavailable and Migrating retry without a refresh.
 */
export function requiresMapRefresh(status: KvStatus): boolean {
  return (
    status === KvStatus.Moved ||
    status === KvStatus.ReplicaWriteRejected ||
    status === KvStatus.OwnershipChanging
  );
}

/**
 * The sleep before the next attempt, in ms (seed 000, "Backoff that respects the deadline"):
 * linear `backoffMillis * attempt`, times 8 when `status` is Migrating, capped at
 * {@link MAX_BACKOFF_MS}, then clamped to `remainingMs`; 0 when no time is left.
 *
 * @param attempt the 1-based number of the attempt that just failed (integer >= 1).
 * @param backoffMillis the base backoff in ms (finite, >= 0).
 * @param status the failed attempt's status; undefined when it threw (a transport failure).
 * @param remainingMs ms left before the operation deadline, or null when there is no deadline.
 * @returns a delay in ms, 0 <= delay <= min(2000, max(remainingMs, 0)).
 * @throws RangeError on an attempt below 1 or not an integer, a negative or non-finite
 *   backoffMillis, or a NaN remainingMs.
 */
export function backoffDelayMs(
  attempt: number,
  backoffMillis: number,
  status: KvStatus | undefined,
  remainingMs: number | null,
): number {
  if (!Number.isInteger(attempt) || attempt < 1) {
    throw new RangeError(`backoff attempt must be an integer >= 1, got ${attempt}`);
  }
  if (!Number.isFinite(backoffMillis) || backoffMillis < 0) {
    throw new RangeError(`backoffMillis must be a finite number >= 0, got ${backoffMillis}`);
  }
  if (remainingMs !== null && Number.isNaN(remainingMs)) {
    throw new RangeError('remainingMs must be a number or null, got NaN');
  }
  const linear = backoffMillis * attempt;
  const raw = status === KvStatus.Migrating ? linear * MIGRATING_BACKOFF_FACTOR : linear;
  const capped = raw < MAX_BACKOFF_MS ? raw : MAX_BACKOFF_MS;
  if (remainingMs === null) return capped;
  if (remainingMs <= 0) return 0;
  return capped < remainingMs ? capped : remainingMs;
}

/**
 * How one client operation retries (seed 000, "Two bounds, not one").
 * - `maxAttempts`: attempt budget, an integer >= 1 (default 3).
 * - `backoffMillis`: base of the linear backoff, ms, finite >= 0 (default 100).
 * - `timeoutMs`: the operation deadline in ms from the first attempt, > 0, or null for none
 *   (default 60,000; ZARIS_REQUEST_TIMEOUT).
 * - `disableRetries`: when true, exactly one attempt whatever maxAttempts says
 *   (ZARIS_DISABLE_RETRIES=true).
 */
export interface RetryOptions {
  readonly maxAttempts: number;
  readonly backoffMillis: number;
  readonly timeoutMs: number | null;
  readonly disableRetries: boolean;
}

/** The seed's defaults: 3 attempts, 100 ms backoff, 60 s deadline, retries on (seed 000). */
export const DEFAULT_RETRY_OPTIONS: RetryOptions = Object.freeze({
  maxAttempts: 3,
  backoffMillis: 100,
  timeoutMs: DEFAULT_REQUEST_TIMEOUT_MS,
  disableRetries: false,
});

/**
 * Checks a {@link RetryOptions}; returns it unchanged when valid.
 * @throws RangeError (one line) naming the first invalid field.
 */
export function validateRetryOptions(o: RetryOptions): RetryOptions {
  if (!Number.isInteger(o.maxAttempts) || o.maxAttempts < 1) {
    throw new RangeError(`retry option maxAttempts must be an integer >= 1, got ${o.maxAttempts}`);
  }
  if (!Number.isFinite(o.backoffMillis) || o.backoffMillis < 0) {
    throw new RangeError(`retry option backoffMillis must be a finite number >= 0, got ${o.backoffMillis}`);
  }
  if (o.timeoutMs !== null && !(Number.isFinite(o.timeoutMs) && o.timeoutMs > 0)) {
    throw new RangeError(`retry option timeoutMs must be a finite number > 0 or null, got ${o.timeoutMs}`);
  }
  if (typeof o.disableRetries !== 'boolean') {
    throw new RangeError(`retry option disableRetries must be a boolean, got ${String(o.disableRetries)}`);
  }
  return o;
}

/**
 * Parses a ZARIS_REQUEST_TIMEOUT value into a deadline in ms (seed 000).
 * - undefined, empty or blank: the default, 60,000.
 * - "infinite" (any case): null, no deadline.
 * - a duration the `ms` package reads: "1500" (ms), "250ms", "60s", "5m", "1.5h" ...; must be
 *   finite and > 0.
 * @throws Error with a one-line message naming the variable and the (quoted) bad value.
 */
export function parseRequestTimeout(value: string | undefined): number | null {
  if (value === undefined) return DEFAULT_REQUEST_TIMEOUT_MS;
  const text = value.trim();
  if (text === '') return DEFAULT_REQUEST_TIMEOUT_MS;
  if (text.toLowerCase() === 'infinite') return null;
  // ms() returns undefined for text it cannot read (and for text over 100 characters).
  const parsed: number | undefined = ms(text as ms.StringValue);
  if (typeof parsed !== 'number' || !Number.isFinite(parsed) || parsed <= 0) {
    throw new Error(
      `${ENV_REQUEST_TIMEOUT}=${JSON.stringify(value)} is not a positive duration ` +
        `(e.g. 60000, "60s", "5m") or "infinite"`,
    );
  }
  return parsed;
}

/**
 * Parses a ZARIS_DISABLE_RETRIES value (seed 000): "true"/"1" disable retries, "false"/"0",
 * empty or unset keep them (case and surrounding blanks ignored).
 * @throws Error with a one-line message on any other value.
 */
export function parseDisableRetries(value: string | undefined): boolean {
  if (value === undefined) return false;
  const text = value.trim().toLowerCase();
  if (text === '' || text === 'false' || text === '0') return false;
  if (text === 'true' || text === '1') return true;
  throw new Error(`${ENV_DISABLE_RETRIES}=${JSON.stringify(value)} must be true or false`);
}

/**
 * Builds {@link RetryOptions} from the environment (seed 000): `timeoutMs` from
 * ZARIS_REQUEST_TIMEOUT ({@link parseRequestTimeout}), `disableRetries` from
 * ZARIS_DISABLE_RETRIES ({@link parseDisableRetries}); maxAttempts and backoffMillis from
 * `base` (default 3 and 100 ms), which the environment does not set.
 *
 * @param env the environment to read (default process.env).
 * @param base overrides of maxAttempts / backoffMillis (timeoutMs, disableRetries come from env).
 * @throws Error (one line) on an invalid variable; RangeError on an invalid `base`.
 */
export function retryOptionsFromEnv(
  env: Readonly<Record<string, string | undefined>> = process.env,
  base: Partial<Pick<RetryOptions, 'maxAttempts' | 'backoffMillis'>> = {},
): RetryOptions {
  return validateRetryOptions({
    maxAttempts: base.maxAttempts ?? DEFAULT_RETRY_OPTIONS.maxAttempts,
    backoffMillis: base.backoffMillis ?? DEFAULT_RETRY_OPTIONS.backoffMillis,
    timeoutMs: parseRequestTimeout(env[ENV_REQUEST_TIMEOUT]),
    disableRetries: parseDisableRetries(env[ENV_DISABLE_RETRIES]),
  });
}
