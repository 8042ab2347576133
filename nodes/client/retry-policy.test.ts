import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KvStatus } from '../kv-status.js';
import {
  backoffDelayMs,
  DEFAULT_RETRY_OPTIONS,
  MAX_BACKOFF_MS,
  parseDisableRetries,
  parseRequestTimeout,
  requiresMapRefresh,
  retryOptionsFromEnv,
  shouldRetry,
  validateRetryOptions,
} from './retry-policy.js';

const ALL_STATUSES = Object.values(KvStatus).filter((v): v is KvStatus => typeof v === 'number');
const statusArb = fc.constantFrom(...ALL_STATUSES);

describe('shouldRetry / requiresMapRefresh (seed 000)', () => {
  it('draws the seed table for every status', () => {
    const table = ALL_STATUSES.map((s) => [KvStatus[s], shouldRetry(s), requiresMapRefresh(s)]);
    expect(table).toEqual([
      ['Ok', false, false],
      ['NotFound', false, false],
      ['Conflict', false, false],
      ['Moved', true, true],
      ['OwnershipChanging', true, true],
      ['ReplicaWriteRejected', true, true],
      ['Migrating', true, false],
      ['Unavailable', true, false],
      ['InvalidInput', false, false],
    ]);
  });

  it('answers false for a status outside the vocabulary', () => {
    expect(shouldRetry(99 as KvStatus)).toBe(false);
    expect(requiresMapRefresh(99 as KvStatus)).toBe(false);
  });
});

describe('backoffDelayMs (seed 000)', () => {
  const attemptArb = fc.integer({ min: 1, max: 10_000 });
  const backoffArb = fc.oneof(fc.integer({ min: 0, max: 5_000 }), fc.double({ min: 0, max: 1e6, noNaN: true }));
  const remainingArb = fc.oneof(
    fc.constant(null),
    fc.double({ min: -1e7, max: 1e7, noNaN: true }),
    fc.integer({ min: -10, max: 3_000 }),
  );

  it('is linear, 8x for Migrating, capped at 2,000 ms and clamped to the time left', () => {
    fc.assert(
      fc.property(attemptArb, backoffArb, fc.option(statusArb, { nil: undefined }), remainingArb, (a, b, s, rem) => {
        const d = backoffDelayMs(a, b, s, rem);
        const raw = s === KvStatus.Migrating ? a * b * 8 : a * b;
        expect(d).toBeGreaterThanOrEqual(0);
        expect(d).toBeLessThanOrEqual(MAX_BACKOFF_MS);
        if (rem === null) expect(d).toBe(Math.min(raw, 2_000));
        else if (rem <= 0) expect(d).toBe(0);
        else {
          expect(d).toBeLessThanOrEqual(rem);
          expect(d).toBe(Math.min(raw, 2_000, rem));
        }
      }),
    );
  });

  it('gives Migrating exactly 8x the delay of any other status below the cap', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 0, max: 40 }),
        statusArb.filter((s) => s !== KvStatus.Migrating),
        (a, b, other) => {
          fc.pre(a * b * 8 <= 2_000);
          expect(backoffDelayMs(a, b, KvStatus.Migrating, null)).toBe(8 * backoffDelayMs(a, b, other, null));
          expect(backoffDelayMs(a, b, undefined, null)).toBe(a * b);
        },
      ),
    );
  });

  it('never grows with the time left shrinking', () => {
    fc.assert(
      fc.property(attemptArb, backoffArb, statusArb, fc.double({ min: 0, max: 5_000, noNaN: true }), fc.double({ min: 0, max: 5_000, noNaN: true }), (a, b, s, r1, r2) => {
        const [lo, hi] = r1 <= r2 ? [r1, r2] : [r2, r1];
        expect(backoffDelayMs(a, b, s, lo)).toBeLessThanOrEqual(backoffDelayMs(a, b, s, hi));
      }),
    );
  });

  it('matches the seed examples', () => {
    expect(backoffDelayMs(1, 100, KvStatus.Moved, 60_000)).toBe(100);
    expect(backoffDelayMs(2, 100, KvStatus.Migrating, 60_000)).toBe(1_600);
    expect(backoffDelayMs(3, 100, KvStatus.Migrating, 60_000)).toBe(2_000);
    expect(backoffDelayMs(2, 100, KvStatus.Unavailable, 150)).toBe(150);
    expect(backoffDelayMs(2, 100, KvStatus.Unavailable, 0)).toBe(0);
    expect(backoffDelayMs(2, 100, KvStatus.Unavailable, -5)).toBe(0);
  });

  it('rejects a bad attempt, backoff or remaining time', () => {
    expect(() => backoffDelayMs(0, 100, undefined, null)).toThrow(RangeError);
    expect(() => backoffDelayMs(1.5, 100, undefined, null)).toThrow(RangeError);
    expect(() => backoffDelayMs(1, -1, undefined, null)).toThrow(RangeError);
    expect(() => backoffDelayMs(1, Number.POSITIVE_INFINITY, undefined, null)).toThrow(RangeError);
    expect(() => backoffDelayMs(1, 100, undefined, Number.NaN)).toThrow(RangeError);
  });
});

describe('retryOptionsFromEnv (seed 000)', () => {
  it('defaults to 3 attempts, 100 ms, 60 s, retries on', () => {
    expect(retryOptionsFromEnv({})).toEqual({ maxAttempts: 3, backoffMillis: 100, timeoutMs: 60_000, disableRetries: false });
    expect(DEFAULT_RETRY_OPTIONS).toEqual(retryOptionsFromEnv({}));
    expect(retryOptionsFromEnv({ ZARIS_REQUEST_TIMEOUT: '  ', ZARIS_DISABLE_RETRIES: '' }).timeoutMs).toBe(60_000);
  });

  it('reads a bare number as ms and a unit suffix through ms', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.constantFrom(
          ['', 1],
          ['ms', 1],
          ['s', 1_000],
          ['sec', 1_000],
          ['seconds', 1_000],
          ['m', 60_000],
          ['min', 60_000],
          ['h', 3_600_000],
          ['d', 86_400_000],
        ),
        fc.boolean(),
        fc.constantFrom('', ' ', '\t'),
        (n, [unit, factor], spaced, pad) => {
          const text = `${pad}${n}${spaced && unit !== '' ? ' ' : ''}${unit}${pad}`;
          expect(retryOptionsFromEnv({ ZARIS_REQUEST_TIMEOUT: text }).timeoutMs).toBe(n * (factor as number));
        },
      ),
    );
    expect(parseRequestTimeout('1.5s')).toBe(1_500);
    expect(parseRequestTimeout('60S')).toBe(60_000);
  });

  it('reads "infinite" in any case as no deadline', () => {
    fc.assert(
      fc.property(fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }), (upper) => {
        const text = [...'infinite'].map((ch, i) => (upper[i] ? ch.toUpperCase() : ch)).join('');
        expect(retryOptionsFromEnv({ ZARIS_REQUEST_TIMEOUT: text }).timeoutMs).toBeNull();
      }),
    );
  });

  it('rejects anything else with a one-line error naming the variable', () => {
    const bad = fc.oneof(
      // a character ms never reads
      fc
        .tuple(fc.string(), fc.constantFrom('!', '_', '/', ',', ':', '\u00e9', '\u0000', '#'), fc.string())
        .map(([a, ch, b]) => a + ch + b),
      // non-positive numbers
      fc.integer({ min: -1_000_000, max: 0 }).map(String),
      fc.integer({ min: 1, max: 1_000 }).map((n) => `-${n}s`),
      // unknown units and stray words
      fc.integer({ min: 1, max: 1_000 }).map((n) => `${n} fortnights`),
      fc.constantFrom('abc', 'forever', 'Infinity', 'NaN', '1e3', '5s5', 'infinite2', 's', '.', '0s', '0.0ms', '5\ns', '1\r\n0'),
    );
    fc.assert(
      fc.property(bad, (text) => {
        fc.pre(text.trim() !== '');
        let message = '';
        expect(() => {
          try {
            retryOptionsFromEnv({ ZARIS_REQUEST_TIMEOUT: text });
          } catch (e) {
            message = (e as Error).message;
            throw e;
          }
        }).toThrow(Error);
        expect(message).toContain('ZARIS_REQUEST_TIMEOUT=');
        expect(message).not.toMatch(/[\r\n]/);
      }),
    );
  });

  it('reads ZARIS_DISABLE_RETRIES', () => {
    fc.assert(
      fc.property(fc.constantFrom('true', 'TRUE', 'True', ' true ', '1'), (t) => {
        expect(retryOptionsFromEnv({ ZARIS_DISABLE_RETRIES: t }).disableRetries).toBe(true);
      }),
    );
    fc.assert(
      fc.property(fc.constantFrom('false', 'FALSE', '0', '', ' '), (t) => {
        expect(retryOptionsFromEnv({ ZARIS_DISABLE_RETRIES: t }).disableRetries).toBe(false);
      }),
    );
    expect(parseDisableRetries(undefined)).toBe(false);
    fc.assert(
      fc.property(fc.string(), (t) => {
        fc.pre(!['', 'true', 'false', '1', '0'].includes(t.trim().toLowerCase()));
        expect(() => parseDisableRetries(t)).toThrow(/^ZARIS_DISABLE_RETRIES=.* must be true or false$/);
      }),
    );
  });

  it('keeps maxAttempts and backoffMillis from the base and validates them', () => {
    expect(retryOptionsFromEnv({}, { maxAttempts: 7, backoffMillis: 0 })).toMatchObject({ maxAttempts: 7, backoffMillis: 0 });
    expect(() => retryOptionsFromEnv({}, { maxAttempts: 0 })).toThrow(RangeError);
    expect(() => validateRetryOptions({ ...DEFAULT_RETRY_OPTIONS, timeoutMs: 0 })).toThrow(/timeoutMs/);
    expect(() => validateRetryOptions({ ...DEFAULT_RETRY_OPTIONS, backoffMillis: Number.NaN })).toThrow(/backoffMillis/);
  });
});
