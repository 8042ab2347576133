import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NO_LOCAL_SETTINGS, resolveBatchGetRetryDelay, resolveComputeRetryDelay } from './retry-policy-precedence.js';
import { DEFAULT_BATCH_GET_TABLE, parseRetryRangeTableOrThrow } from './retry-range-table.js';

const server = parseRetryRangeTableOrThrow('1-10:30,11-:300');
const local = parseRetryRangeTableOrThrow('1-10:20,11-:200');
const explicitDefault = parseRetryRangeTableOrThrow(DEFAULT_BATCH_GET_TABLE);

describe('batch-get precedence (seed 004)', () => {
  it('a positive fixed threshold wins, converted from µs to ms', () => {
    const settings = { batchGetFixedThresholdMicros: 2500, batchGetRange: local };
    expect(resolveBatchGetRetryDelay(settings, server, 1)).toEqual({ delayMs: 2.5, source: 'fixed-local' });
    expect(resolveBatchGetRetryDelay(settings, server, 400)).toEqual({ delayMs: 2.5, source: 'fixed-local' });
  });

  it('a zero or negative fixed threshold is unset', () => {
    for (const fixed of [0, -1, -5000]) {
      expect(resolveBatchGetRetryDelay({ batchGetFixedThresholdMicros: fixed, batchGetRange: local }, server, 11)).toEqual({ delayMs: 200, source: 'local-range' });
      expect(resolveBatchGetRetryDelay({ batchGetFixedThresholdMicros: fixed }, server, 11)).toEqual({ delayMs: 300, source: 'server' });
    }
  });

  it('a local range set to the default string is still an override', () => {
    const settings = { batchGetFixedThresholdMicros: 0, batchGetRange: explicitDefault };
    expect(resolveBatchGetRetryDelay(settings, server, 13)).toEqual({ delayMs: 30, source: 'local-range' });
    expect(resolveBatchGetRetryDelay(settings, server, 10)).toEqual({ delayMs: 8, source: 'local-range' });
  });

  it('without local settings: the server policy, else the default table', () => {
    expect(resolveBatchGetRetryDelay(NO_LOCAL_SETTINGS, server, 10)).toEqual({ delayMs: 30, source: 'server' });
    expect(resolveBatchGetRetryDelay(NO_LOCAL_SETTINGS, null, 501)).toEqual({ delayMs: 500, source: 'default' });
    expect(resolveBatchGetRetryDelay(NO_LOCAL_SETTINGS, null, 500)).toEqual({ delayMs: 100, source: 'default' });
  });

  it('ignores the compute range', () => {
    expect(resolveBatchGetRetryDelay({ batchGetFixedThresholdMicros: 0, computeRange: local }, null, 5)).toEqual({ delayMs: 8, source: 'default' });
  });

  it('answers "no retry" for an empty request, and refuses a fractional or negative key count and a non-finite fixed threshold', () => {
    expect(resolveBatchGetRetryDelay(NO_LOCAL_SETTINGS, server, 0)).toEqual({ delayMs: null, source: 'no-keys' });
    expect(resolveComputeRetryDelay(NO_LOCAL_SETTINGS, server, 0)).toEqual({ delayMs: null, source: 'no-keys' });
    expect(() => resolveBatchGetRetryDelay(NO_LOCAL_SETTINGS, server, 2.5)).toThrow(RangeError);
    expect(() => resolveBatchGetRetryDelay(NO_LOCAL_SETTINGS, server, -1)).toThrow(RangeError);
    expect(() => resolveBatchGetRetryDelay({ batchGetFixedThresholdMicros: Number.NaN }, server, 1)).toThrow(RangeError);
  });

  it('the fixed threshold wins over any table for any key count', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2_147_483_647 }), fc.integer({ min: 1, max: 100_000 }), fc.boolean(), (micros, keys, withLocal) => {
        const settings = withLocal ? { batchGetFixedThresholdMicros: micros, batchGetRange: local } : { batchGetFixedThresholdMicros: micros };
        expect(resolveBatchGetRetryDelay(settings, server, keys)).toEqual({ delayMs: micros / 1000, source: 'fixed-local' });
      }),
    );
  });
});

describe('compute precedence (seed 004)', () => {
  it('explicit compute range > server policy > compute default; the fixed batch-get threshold does not apply', () => {
    const fixed = { batchGetFixedThresholdMicros: 5000 };
    expect(resolveComputeRetryDelay({ ...fixed, computeRange: local }, server, 10)).toEqual({ delayMs: 20, source: 'local-range' });
    expect(resolveComputeRetryDelay({ ...fixed, computeRange: explicitDefault }, server, 10)).toEqual({ delayMs: 8, source: 'local-range' });
    expect(resolveComputeRetryDelay(fixed, server, 10)).toEqual({ delayMs: 30, source: 'server' });
    expect(resolveComputeRetryDelay(fixed, null, 13)).toEqual({ delayMs: 30, source: 'default' });
    expect(resolveComputeRetryDelay({ ...fixed, batchGetRange: local }, null, 13)).toEqual({ delayMs: 30, source: 'default' });
  });
});
