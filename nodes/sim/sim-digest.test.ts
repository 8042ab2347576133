/**
 * The simulation's behaviour digest (sim-batch.ts RunOutcome.digest, `make sim`'s `digest=`): the
 * same schedule gives the same digest, run after run, in one process; another schedule another
 * one; a violation none. A refactoring of the store that keeps the batch digest behaved the same.
 */
import { describe, expect, it } from 'vitest';
import { runChecked, scheduleOfRun } from './sim-batch.js';

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
