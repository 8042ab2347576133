import { describe, expect, it } from 'vitest';
import { MAX_SPARES, spareIdsOf } from './certify.js';
import { UsageError } from './usage-error.js';

describe('certify: spare nodes (issue 14, SPARES=)', () => {
  it('one spare after the voters when membership changes are planned, none otherwise; SPARES= sets the count', () => {
    expect(spareIdsOf(3, undefined, true)).toEqual(['n4']);
    expect(spareIdsOf(5, undefined, true)).toEqual(['n6']);
    expect(spareIdsOf(3, undefined, false)).toEqual([]);
    expect(spareIdsOf(3, 2, true)).toEqual(['n4', 'n5']);
    expect(spareIdsOf(3, 1, false)).toEqual(['n4']);
    expect(spareIdsOf(3, 0, false)).toEqual([]);
    expect(spareIdsOf(5, MAX_SPARES, true)).toEqual(['n6', 'n7', 'n8']);
  });
  it('refuses SPARES=0 with membership changes and a count out of range, in one line (a usage error)', () => {
    expect(() => spareIdsOf(3, 0, true)).toThrow(new UsageError('membership changes need a spare node to join (SPARES=0 given): use SPARES=1 or drop membership from FAULTS'));
    expect(() => spareIdsOf(3, 4, true)).toThrow(new UsageError('SPARES must be 0 to 3, got 4'));
    expect(() => spareIdsOf(3, -1, false)).toThrow(UsageError);
    expect(() => spareIdsOf(3, 1.5, false)).toThrow(UsageError);
  });
});
