/**
 * The multi-key long-tail retry range table (seed 004): which long-tail retry delay a batch-get
 * or compute request gets, by its number of distinct keys.
 *
 * Text format: `lower-upper:milliseconds,...,lower-:milliseconds`. Pure logic, no I/O.
 */

/** Name of the server property carrying the table (seed 004, "Configuration"). */
export const SERVER_PROPERTY_NAME = 'server.fast.client.multi.key.long.tail.retry.thresholds.ms';

/** The existing client default for batch-get, in ms by distinct key count (seed 004). */
export const DEFAULT_BATCH_GET_TABLE = '1-12:8,13-20:30,21-150:50,151-500:100,501-:500';

/**
 * The existing client default for compute (seed 004 calls it "existing compute default" without
 * spelling it out; the reference client's compute default is the same string as batch-get's).
 */
export const DEFAULT_COMPUTE_TABLE = DEFAULT_BATCH_GET_TABLE;

/** Largest key-count bound: a positive Java int (seed 004, "Bounds must fit a positive Java integer"). */
export const MAX_KEY_BOUND = 2_147_483_647;

/**
 * Largest delay in ms: 2,147,483 ms, so that ms * 1000 still fits the integer-microsecond timer
 * API (seed 004).
 */
export const MAX_DELAY_MS = 2_147_483;

/** One range of the table: keys counts `lower..upper` inclusive (`upper` null = open-ended) get `delayMs`. */
export interface RetryRange {
  /** Smallest distinct key count of the range, 1..MAX_KEY_BOUND. */
  readonly lower: number;
  /** Largest distinct key count, inclusive; null for the open-ended last range (`lower-`). */
  readonly upper: number | null;
  /** Long-tail retry delay, ms, 1..MAX_DELAY_MS. */
  readonly delayMs: number;
}

/** A value of the range-table property that cannot be used; the message is one line. */
export class RetryRangeTableError extends Error {
  override name = 'RetryRangeTableError';
}

/**
 * An immutable, validated range table, obtained only from {@link parseRetryRangeTable}.
 * Its ranges are sorted by `lower`, contiguous from 1, the last one open-ended.
 */
export interface RetryRangeTable {
  /** The ranges, sorted by `lower` (frozen). */
  readonly ranges: readonly RetryRange[];
  /**
   * The retry delay in ms for a request of `distinctKeyCount` distinct keys (binary search,
   * O(log ranges)). Counts above MAX_KEY_BOUND fall in the open-ended range.
   * @throws RangeError when `distinctKeyCount` is not a positive integer (an empty request never
   *   looks up a range, seed 004).
   */
  delayMsFor(distinctKeyCount: number): number;
  /** The canonical text (ranges sorted by lower), which parses back to an equal table. */
  toString(): string;
}

/** The one implementation; not exported, so every table in existence passed validation. */
class ValidatedRetryRangeTable implements RetryRangeTable {
  readonly ranges: readonly RetryRange[];
  readonly #lowers: readonly number[];

  constructor(ranges: readonly RetryRange[]) {
    this.ranges = Object.freeze(ranges.map((r) => Object.freeze({ lower: r.lower, upper: r.upper, delayMs: r.delayMs })));
    this.#lowers = Object.freeze(this.ranges.map((r) => r.lower));
    Object.freeze(this);
  }

  delayMsFor(distinctKeyCount: number): number {
    if (!Number.isSafeInteger(distinctKeyCount) || distinctKeyCount < 1) {
      throw new RangeError(`distinct key count must be a positive integer, got ${distinctKeyCount}`);
    }
    const lowers = this.#lowers;
    // the last index whose lower <= distinctKeyCount; lowers[0] is 1, so it exists
    let lo = 0;
    let hi = lowers.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (lowers[mid] <= distinctKeyCount) lo = mid;
      else hi = mid - 1;
    }
    return this.ranges[lo].delayMs;
  }

  toString(): string {
    return this.ranges.map((r) => `${r.lower}-${r.upper ?? ''}:${r.delayMs}`).join(',');
  }
}

/**
 * The result of parsing the property:
 * - `table`: a valid table;
 * - `empty`: the exact empty string, meaning "no policy" (seed 004: only "" withdraws a policy);
 * - `invalid`: anything else that does not parse or validate, with a one-line error.
 */
export type RetryRangeTableParse =
  | { readonly kind: 'table'; readonly table: RetryRangeTable }
  | { readonly kind: 'empty' }
  | { readonly kind: 'invalid'; readonly error: RetryRangeTableError };

const ENTRY = /^([0-9]+)-([0-9]*):([0-9]+)$/;

/** A decimal digit string as a number, or null when it exceeds `max` (checked before float rounding). */
function boundedInt(digits: string, max: number): number | null {
  const trimmed = digits.replace(/^0+(?=[0-9])/, '');
  if (trimmed.length > String(max).length) return null;
  const n = Number(trimmed);
  return n <= max ? n : null;
}

/** One-line, length-bounded rendering of an input for error messages. */
function show(value: string): string {
  return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}...` : value);
}

/**
 * Parses and validates a range table (seed 004, "Configuration").
 *
 * Rules: comma-separated entries `lower-upper:ms` or `lower-:ms`, decimal digits only (no sign,
 * no whitespace anywhere); ranges in any order; together they cover 1..infinity contiguously with
 * no gap or overlap, exactly one open-ended range, last in key order; every bound 1..2,147,483,647
 * (so a closed range ending at 2,147,483,647 is invalid: no range can follow it); upper >= lower;
 * delays 1..2,147,483 ms.
 *
 * @param value the property text; "" gives `{kind: 'empty'}`, never a table.
 * @returns a {@link RetryRangeTableParse}; never throws for any string.
 */
export function parseRetryRangeTable(value: string): RetryRangeTableParse {
  if (value === '') return Object.freeze({ kind: 'empty' as const });
  const invalid = (reason: string): RetryRangeTableParse =>
    Object.freeze({ kind: 'invalid' as const, error: new RetryRangeTableError(`invalid retry range table ${show(value)}: ${reason}`) });

  const ranges: RetryRange[] = [];
  const entries = value.split(',');
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i];
    const m = ENTRY.exec(entry);
    if (m === null) return invalid(`entry ${i + 1} ${show(entry)} is not lower-upper:ms or lower-:ms`);
    const lower = boundedInt(m[1], MAX_KEY_BOUND);
    if (lower === null) return invalid(`entry ${i + 1}: lower bound ${m[1]} exceeds ${MAX_KEY_BOUND}`);
    if (lower < 1) return invalid(`entry ${i + 1}: lower bound must be at least 1, got ${m[1]}`);
    let upper: number | null = null;
    if (m[2] !== '') {
      upper = boundedInt(m[2], MAX_KEY_BOUND);
      if (upper === null) return invalid(`entry ${i + 1}: upper bound ${m[2]} exceeds ${MAX_KEY_BOUND}`);
      if (upper < lower) return invalid(`entry ${i + 1}: upper bound ${upper} is below lower bound ${lower}`);
    }
    const delayMs = boundedInt(m[3], MAX_DELAY_MS);
    if (delayMs === null) return invalid(`entry ${i + 1}: delay ${m[3]} ms exceeds ${MAX_DELAY_MS} ms`);
    if (delayMs < 1) return invalid(`entry ${i + 1}: delay must be at least 1 ms, got ${m[3]}`);
    ranges.push({ lower, upper, delayMs });
  }

  ranges.sort((a, b) => a.lower - b.lower);
  if (ranges[0].lower !== 1) return invalid(`ranges must start at 1, first starts at ${ranges[0].lower}`);
  for (let i = 0; i < ranges.length - 1; i++) {
    const r = ranges[i];
    const next = ranges[i + 1];
    if (r.upper === null) return invalid(`open-ended range ${r.lower}- overlaps ${next.lower}-${next.upper ?? ''}`);
    if (next.lower <= r.upper) return invalid(`ranges ${r.lower}-${r.upper} and ${next.lower}-${next.upper ?? ''} overlap`);
    if (next.lower !== r.upper + 1) return invalid(`gap between ${r.upper} and ${next.lower}`);
  }
  const last = ranges[ranges.length - 1];
  if (last.upper !== null) {
    return last.upper === MAX_KEY_BOUND
      ? invalid(`closed range ${last.lower}-${last.upper} ends at ${MAX_KEY_BOUND}, so no open-ended range can follow it`)
      : invalid(`no open-ended range: the last range ${last.lower}-${last.upper} must be followed by ${last.upper + 1}-:ms`);
  }
  return Object.freeze({ kind: 'table' as const, table: new ValidatedRetryRangeTable(ranges) });
}

/**
 * Parses a table that must be valid (client-side local settings, defaults).
 * @throws RetryRangeTableError (one line) for "" or an invalid value.
 */
export function parseRetryRangeTableOrThrow(value: string): RetryRangeTable {
  const p = parseRetryRangeTable(value);
  if (p.kind === 'table') return p.table;
  if (p.kind === 'empty') throw new RetryRangeTableError('invalid retry range table "": empty');
  throw p.error;
}

/**
 * Startup validation of the server property (seed 004: "Server config is validated at startup";
 * the node refuses to start on an invalid value).
 * @param value the configured value; "" (the default) advertises no policy and is valid.
 * @returns null when the value is usable, else a one-line reason naming the property.
 */
export function validateServerProperty(value: string): string | null {
  const p = parseRetryRangeTable(value);
  return p.kind === 'invalid' ? `${SERVER_PROPERTY_NAME}: ${p.error.message}` : null;
}
