import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EventQueue } from './event-queue.js';

describe('EventQueue', () => {
  it('pops in (time, insertion) order, whatever the pushes', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 20 }), { maxLength: 200 }), (times) => {
        const q = new EventQueue<number>();
        times.forEach((t, i) => q.push(t, i));
        const out: Array<[number, number]> = [];
        for (let e = q.pop(); e; e = q.pop()) out.push([e.at, e.item]);
        const expected = times.map((t, i) => [t, i] as [number, number]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
        expect(out).toEqual(expected);
      }),
    );
  });

  it('interleaved pushes and pops still give the earliest first', () => {
    const q = new EventQueue<string>();
    q.push(5, 'a');
    q.push(1, 'b');
    expect(q.peekTime()).toBe(1);
    expect(q.pop()).toEqual({ at: 1, item: 'b' });
    q.push(5, 'c');
    q.push(3, 'd');
    expect(q.pop()?.item).toBe('d');
    expect(q.pop()?.item).toBe('a');
    expect(q.pop()?.item).toBe('c');
    expect(q.pop()).toBeUndefined();
    expect(q.peekTime()).toBe(Infinity);
    expect(() => q.push(Number.NaN, 'x')).toThrow(RangeError);
  });
});
