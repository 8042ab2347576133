import type Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { importHistory } from '../../ledger/history-import.js';
import { fixture } from '../../ledger/test-support/fixtures.js';
import { loadRunFacts } from './run-facts.js';
import { DownTimeline, lifeAt } from './total-loss.js';

const open: Database.Database[] = [];
afterEach(() => {
  while (open.length > 0) open.pop()!.close();
});

function timeline(name: string): DownTimeline {
  const db = importHistory(fixture(name).history, ':memory:');
  open.push(db);
  return new DownTimeline(db, loadRunFacts(db));
}

describe('lifeAt', () => {
  it('counts the total losses that began strictly before the instant (an ack at the crash instant is of the old life)', () => {
    expect(lifeAt([], 5)).toBe(0);
    expect(lifeAt(null, 5)).toBe(0);
    expect(lifeAt([1001, 5000], 1000)).toBe(0);
    expect(lifeAt([1001, 5000], 1001)).toBe(0);
    expect(lifeAt([1001, 5000], 1002)).toBe(1);
    expect(lifeAt([1001, 5000], 5000)).toBe(1);
    expect(lifeAt([1001, 5000], 9000)).toBe(2);
  });
});

describe('DownTimeline', () => {
  it('finds the power failure of every replica past the budget, none within it', () => {
    const past = timeline('v2-total-loss-between-writes');
    expect(past.down('sync3', 0, 'n2')).toEqual([{ from: 1001, to: 1600 }]);
    expect(past.lossStarts('sync3', 0)).toEqual([1001]);
    expect(past.losses()).toEqual([['sync3', 0, [1001]]]);
    const within = timeline('v2-total-loss-within-budget');
    expect(within.down('sync3', 0, 'n2')).toEqual([{ from: 1001, to: 1600 }]);
    expect(within.lossStarts('sync3', 0)).toEqual([]);
    expect(within.losses()).toEqual([]);
  });

  it('ends a restarted node\'s down time only at a listing in sync that records a revision for it', () => {
    const dead = timeline('v2-down-until-listed-with-a-revision');
    expect(dead.down('sync3', 0, 'n3')).toEqual([{ from: 1001, to: 3000 }]);
    expect(dead.lossStarts('sync3', 0)).toEqual([2001]);
    const back = timeline('v2-down-ends-at-a-listing-with-a-revision');
    expect(back.down('sync3', 0, 'n3')).toEqual([{ from: 1001, to: 1300 }]);
    expect(back.lossStarts('sync3', 0)).toEqual([]);
  });
});
