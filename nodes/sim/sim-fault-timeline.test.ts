import { describe, expect, it } from 'vitest';
import { FaultTimeline } from './sim-fault-timeline.js';

describe('FaultTimeline', () => {
  const clock = { t: 0 };
  const timeline = (): FaultTimeline => {
    clock.t = 0;
    return new FaultTimeline(() => clock.t);
  };

  it('a fault touches its nodes over [start, end], closed at both ends, and only them; an open fault lasts', () => {
    const tl = timeline();
    clock.t = 100;
    const end = tl.faultStart(['n1', 'n2']);
    clock.t = 250;
    end();
    clock.t = 400;
    end(); // a second end changes nothing
    expect(tl.touched('n1', 0, 99.9)).toBe(false);
    expect(tl.touched('n1', 0, 100)).toBe(true);
    expect(tl.touched('n2', 250, 300)).toBe(true);
    expect(tl.touched('n2', 250.1, 300)).toBe(false);
    expect(tl.touched('n3', 0, 1_000)).toBe(false);
    tl.faultStart(['n3']);
    expect(tl.touched('n3', 10_000, 20_000)).toBe(true);
  });

  it('keeps each node\'s crash instants in order', () => {
    const tl = timeline();
    clock.t = 5;
    tl.noteCrash('n1');
    clock.t = 70;
    tl.noteCrash('n1');
    expect(tl.crashTimes('n1')).toEqual([5, 70]);
    expect(tl.crashTimes('n2')).toEqual([]);
  });

  it('a connection is disturbed from its last change on, in either direction, and while one direction is down', () => {
    const tl = timeline();
    clock.t = 1_000;
    tl.linkChanged('n2', 'n1', false);
    expect(tl.linkDisturbed('n1', 'n2', 5_000)).toBe(true); // n2>n1 still down
    clock.t = 1_200;
    tl.linkChanged('n2', 'n1', true);
    expect(tl.linkDisturbed('n1', 'n2', 1_200)).toBe(true);
    expect(tl.linkDisturbed('n2', 'n1', 1_200.1)).toBe(false);
    expect(tl.linkDisturbed('n1', 'n3', 0)).toBe(false);
  });
});
