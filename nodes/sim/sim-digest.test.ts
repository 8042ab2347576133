/**
 * The simulation's behaviour digest (sim-batch.ts RunOutcome.digest, `make sim`'s `digest=`): the
 * same schedule gives the same digest, run after run, in one process; another schedule another
 * one; a violation none. A refactoring of the store that keeps the batch digest behaved the same.
 */
import { describe, expect, it } from 'vitest';
import { runChecked, scheduleOfRun } from './sim-batch.js';
import { RunDigest } from './sim-digest.js';

describe('RunDigest', () => {
  it('starts at the FNV offset basis, and mixes in order, times at µs resolution', () => {
    expect(new RunDigest().hex()).toBe('811c9dc5');
    const d = (...mixes: Array<[number, number, number?]>): string => {
      const r = new RunDigest();
      for (const [a, b, c] of mixes) r.mix(a, b, c);
      return r.hex();
    };
    expect(d([1, 2, 3])).toBe('ffdfffb6'); // FNV-1a style over 1, 2 and 3 ms as 3000 µs
    expect(d([1, 2, 3])).toBe(d([1, 2, 3]));
    expect(d([1, 2, 3])).not.toBe(d([2, 1, 3]));
    expect(d([1, 2], [3, 4])).not.toBe(d([3, 4], [1, 2]));
    // c defaults to 0; times closer than half a µs mix alike
    expect(d([1, 2])).toBe(d([1, 2, 0]));
    expect(d([1, 2, 5.0001])).toBe(d([1, 2, 5.0002]));
    expect(d([1, 2, 5.001])).not.toBe(d([1, 2, 5.002]));
  });
});

describe('sim behaviour digest', () => {
  it('repeats for a schedule, differs between schedules, is null for a violation', () => {
    const a = scheduleOfRun(1, 0);
    const b = scheduleOfRun(1, 1);
    const first = runChecked(a);
    expect(first.violation).toBeNull();
    expect(first.digest).toMatch(/^[0-9a-f]{8}$/);
    expect(runChecked(a).digest).toBe(first.digest);
    expect(runChecked(b).digest).not.toBe(first.digest);
    // the self-test bug that loses every promoted copy: caught in the first schedules with a failover
    const caught = Array.from({ length: 30 }, (_, i) => runChecked(scheduleOfRun(1, i), 'lose-on-promotion')).find((r) => r.violation !== null);
    expect(caught?.digest).toBeNull();
  });
});
