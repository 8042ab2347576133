import { describe, expect, it } from 'vitest';
import { FAULT_HANDLERS, handlerOf } from './fault-registry.js';
import { ALL_FAULT_KINDS, type FaultKind } from './schedule.js';

describe('fault registry', () => {
  it('maps every kind a schedule may hold, and nothing else, to a handler with a start and an end', () => {
    expect(Object.keys(FAULT_HANDLERS).sort()).toEqual([...ALL_FAULT_KINDS].sort());
    for (const k of ALL_FAULT_KINDS) {
      expect(typeof handlerOf(k).start, k).toBe('function');
      expect(typeof handlerOf(k).end, k).toBe('function');
    }
    expect(handlerOf('partition').hold).toBeTypeOf('function');
  });

  it('refuses a kind it does not know, inherited properties included', () => {
    expect(() => handlerOf('meteor' as FaultKind)).toThrow('nemesis: no handler for fault kind meteor');
    expect(() => handlerOf('toString' as FaultKind)).toThrow('nemesis: no handler for fault kind toString');
  });
});
