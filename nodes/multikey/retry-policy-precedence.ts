/**
 * Which long-tail retry delay a multi-key request gets (seed 004, "Precedence and refresh").
 * Pure functions of the client's local settings, the server policy and the distinct key count.
 */
import {
  DEFAULT_BATCH_GET_TABLE,
  DEFAULT_COMPUTE_TABLE,
  parseRetryRangeTableOrThrow,
  type RetryRangeTable,
} from './retry-range-table.js';

const BATCH_GET_DEFAULT: RetryRangeTable = parseRetryRangeTableOrThrow(DEFAULT_BATCH_GET_TABLE);
const COMPUTE_DEFAULT: RetryRangeTable = parseRetryRangeTableOrThrow(DEFAULT_COMPUTE_TABLE);

/**
 * The client's local multi-key retry settings, as its builder left them.
 *
 * A range is present only when its setter was called; calling it with the default string still
 * counts as explicit (seed 004). A wrapper that skips the setter leaves it undefined, and the
 * server policy then applies.
 */
export interface LocalMultiKeyRetrySettings {
  /**
   * Fixed batch-get long-tail threshold, microseconds. A positive value beats every range;
   * 0 or negative means unset (seed 004).
   */
  readonly batchGetFixedThresholdMicros: number;
  /** Explicitly set batch-get range, or undefined when the setter was never called. */
  readonly batchGetRange?: RetryRangeTable;
  /** Explicitly set compute range, or undefined when the setter was never called. */
  readonly computeRange?: RetryRangeTable;
}

/** Local settings with nothing set: the server policy, else the defaults, apply. */
export const NO_LOCAL_SETTINGS: LocalMultiKeyRetrySettings = Object.freeze({ batchGetFixedThresholdMicros: 0 });

/** Where an effective delay came from, highest precedence first. */
export type RetryDelaySource = 'fixed-local' | 'local-range' | 'server' | 'default';

/**
 * The effective long-tail retry delay of one request: a delay and the rule that supplied it, or,
 * for a request of no keys, no retry at all (seed 004: "Empty requests delegate without looking up
 * a range or scheduling a retry timer").
 */
export type RetryDelayDecision =
  | {
      /** Delay before the retry, ms (fractional only for a fixed threshold not a multiple of 1000 µs). */
      readonly delayMs: number;
      /** The rule that supplied it. */
      readonly source: RetryDelaySource;
    }
  | {
      /** No retry: nothing to look up, no timer (an empty request). */
      readonly delayMs: null;
      readonly source: 'no-keys';
    };

/** The decision for a request of no keys: no range looked up, no retry timer (seed 004). */
export const NO_KEYS_NO_RETRY: RetryDelayDecision = Object.freeze({ delayMs: null, source: 'no-keys' });

/** @returns true for an empty request (0 keys); throws for a count that is no key count at all. */
function isEmptyRequest(distinctKeyCount: number): boolean {
  if (!Number.isSafeInteger(distinctKeyCount) || distinctKeyCount < 0) {
    throw new RangeError(`distinct key count must be a non-negative integer, got ${distinctKeyCount}`);
  }
  return distinctKeyCount === 0;
}

/**
 * Batch-get precedence (seed 004): positive fixed local µs threshold > explicit local batch-get
 * range > server policy > batch-get default (1-12:8,13-20:30,21-150:50,151-500:100,501-:500).
 *
 * @param local the client's local settings.
 * @param serverPolicy the server policy currently published for this store's cluster, or null.
 * @param distinctKeyCount the request's whole distinct key count, >= 0.
 * @returns the delay in ms (fixed µs / 1000) and its source; {@link NO_KEYS_NO_RETRY} for 0 keys
 *   (no range is looked up, whatever the settings).
 * @throws RangeError for a key count that is not a non-negative integer, or a fixed threshold
 *   that is not a finite number.
 */
export function resolveBatchGetRetryDelay(
  local: LocalMultiKeyRetrySettings,
  serverPolicy: RetryRangeTable | null,
  distinctKeyCount: number,
): RetryDelayDecision {
  if (isEmptyRequest(distinctKeyCount)) return NO_KEYS_NO_RETRY;
  const fixed = local.batchGetFixedThresholdMicros;
  if (!Number.isFinite(fixed)) throw new RangeError(`fixed batch-get threshold must be a finite number of microseconds, got ${fixed}`);
  if (fixed > 0) return { delayMs: fixed / 1000, source: 'fixed-local' };
  if (local.batchGetRange !== undefined) return { delayMs: local.batchGetRange.delayMsFor(distinctKeyCount), source: 'local-range' };
  if (serverPolicy !== null) return { delayMs: serverPolicy.delayMsFor(distinctKeyCount), source: 'server' };
  return { delayMs: BATCH_GET_DEFAULT.delayMsFor(distinctKeyCount), source: 'default' };
}

/**
 * Compute precedence (seed 004): explicit local compute range > server policy > compute default.
 *
 * @param local the client's local settings (only `computeRange` matters).
 * @param serverPolicy the server policy currently published for this store's cluster, or null.
 * @param distinctKeyCount the request's whole distinct key count, >= 0.
 * @returns the delay in ms and its source; {@link NO_KEYS_NO_RETRY} for 0 keys.
 * @throws RangeError for a key count that is not a non-negative integer.
 */
export function resolveComputeRetryDelay(
  local: LocalMultiKeyRetrySettings,
  serverPolicy: RetryRangeTable | null,
  distinctKeyCount: number,
): RetryDelayDecision {
  if (isEmptyRequest(distinctKeyCount)) return NO_KEYS_NO_RETRY;
  if (local.computeRange !== undefined) return { delayMs: local.computeRange.delayMsFor(distinctKeyCount), source: 'local-range' };
  if (serverPolicy !== null) return { delayMs: serverPolicy.delayMsFor(distinctKeyCount), source: 'server' };
  return { delayMs: COMPUTE_DEFAULT.delayMsFor(distinctKeyCount), source: 'default' };
}
