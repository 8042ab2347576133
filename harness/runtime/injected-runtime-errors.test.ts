import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatInjections, INJECT_ENV, INJECTABLE_CALLS, injectedFails, parseInjections, type Injection } from './injected-runtime-errors.js';

const injection: fc.Arbitrary<Injection> = fc
  .record({ call: fc.constantFrom(...INJECTABLE_CALLS), nth: fc.integer({ min: 1, max: 1_000_000 }), how: fc.constantFrom<Injection['how']>('transient', 'permanent', 'bug'), times: fc.integer({ min: 1, max: 1_000_000 }) })
  .map((i) => ({ ...i, times: i.how === 'transient' ? i.times : 1 }));

describe('injected runtime errors: the text', () => {
  it('reads the forms the documentation gives', () => {
    expect(parseInjections('partition@2:transient*8')).toEqual([{ call: 'partition', nth: 2, how: 'transient', times: 8 }]);
    expect(parseInjections(' restart , any@5:transient, heal:bug ,cut-client@3:permanent')).toEqual([
      { call: 'restart', nth: 1, how: 'permanent', times: 1 },
      { call: 'any', nth: 5, how: 'transient', times: 1 },
      { call: 'heal', nth: 1, how: 'bug', times: 1 },
      { call: 'cut-client', nth: 3, how: 'permanent', times: 1 },
    ]);
    expect(parseInjections('')).toEqual([]);
  });

  it('refuses a bad entry in one line that names it and the grammar', () => {
    for (const [text, why] of [
      ['partiton', 'names no runtime call'],
      ['kill@0', 'counts calls from 1'],
      ['kill@1:transient*0', 'fails from 1'],
      ['kill:sometimes', 'is not an injection'],
      ['kill@-1', 'is not an injection'],
      ['kill@2@3', 'is not an injection'],
    ] as const) {
      let msg = '';
      try {
        parseInjections(text);
      } catch (e) {
        msg = (e as Error).message;
      }
      expect(msg, text).toContain(`${INJECT_ENV}: "${text}" ${why}`);
      expect(msg).toContain('expected <call>[@<n>]');
      expect(msg.includes('\n')).toBe(false);
    }
  });

  it('property: format and parse are inverse', () => {
    fc.assert(
      fc.property(fc.array(injection, { maxLength: 5 }), (list) => {
        expect(parseInjections(formatInjections(list))).toEqual(list);
      }),
    );
  });

  it('property: parse never throws anything but a one-line Error', () => {
    fc.assert(
      fc.property(fc.string(), (text) => {
        try {
          parseInjections(text);
        } catch (e) {
          expect(e).toBeInstanceOf(Error);
          expect(e).not.toBeInstanceOf(TypeError);
        }
      }),
    );
  });

  it('property: which attempts fail: permanent from the n-th on, transient k in a row, a bug once', () => {
    fc.assert(
      fc.property(injection, fc.integer({ min: 1, max: 2_000_000 }), (i, n) => {
        const want = i.how === 'permanent' ? n >= i.nth : i.how === 'bug' ? n === i.nth : n >= i.nth && n < i.nth + i.times;
        expect(injectedFails(i, n)).toBe(want);
      }),
    );
  });
});
