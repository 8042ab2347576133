import { describe, expect, it } from 'vitest';
import { TraceRing } from './sim-trace-ring.js';

describe('TraceRing', () => {
  it('keeps the newest lines, oldest first, each stamped with its virtual time', () => {
    const ring = new TraceRing(3);
    expect(ring.lines()).toEqual([]);
    ring.add(1, 'a');
    ring.add(2.25, 'b');
    expect(ring.lines()).toEqual(['1.0 a', '2.3 b']);
    ring.add(3, 'c');
    ring.add(4, 'd');
    expect(ring.lines()).toEqual(['2.3 b', '3.0 c', '4.0 d']);
  });

  it('renders a line given as a function only when asked, with the time it was added at', () => {
    const ring = new TraceRing(2);
    let rendered = 0;
    ring.add(7, () => {
      rendered++;
      return 'lazy';
    });
    expect(rendered).toBe(0);
    expect(ring.lines()).toEqual(['7.0 lazy']);
    expect(rendered).toBe(1);
    ring.add(8, 'x');
    ring.add(9, 'y');
    expect(ring.lines()).toEqual(['8.0 x', '9.0 y']);
    expect(rendered).toBe(1);
  });
});
