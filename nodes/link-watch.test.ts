import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LINK_ACK_MS, LinkAcker, LinkWatch } from './link-watch.js';

describe('LinkWatch (issue 11: a peer link that delivers nothing is replaced)', () => {
  it('reports how long the oldest unacknowledged write has waited', () => {
    const w = new LinkWatch();
    expect(w.stalledFor(0)).toBe(0);
    w.sent(100, 1_000);
    w.sent(50, 1_100);
    expect(w.stalledFor(1_500)).toBe(500);
    w.acked(100, 1_050);
    expect(w.stalledFor(1_500)).toBe(400);
    w.acked(150, 1_600);
    expect(w.stalledFor(9_000)).toBe(0);
  });

  it('a large write acknowledged bit by bit is no stall; acknowledgements that stop are', () => {
    const w = new LinkWatch();
    w.sent(10, 0);
    w.sent(1_000_000, 5); // same 20 ms bucket as the first: one mark, time 0
    for (let t = 100; t <= 3_000; t += 100) w.acked(t * 100, t);
    expect(w.stalledFor(3_050)).toBe(50);
    // the peer stops reading: the stall counts from the last progress
    expect(w.stalledFor(5_500)).toBe(2_500);
    w.acked(1_000_010, 5_600);
    expect(w.stalledFor(9_000)).toBe(0);
  });

  it('ignores stale, repeated and over-large acks', () => {
    const w = new LinkWatch();
    w.sent(10, 0);
    w.acked(10, 50);
    w.sent(10, 100);
    w.acked(5, 150);
    w.acked(10, 160);
    expect(w.stalledFor(300)).toBe(200);
    w.acked(1_000_000, 310);
    expect(w.ackedUnits).toBe(20);
    w.sent(1, 400);
    expect(w.stalledFor(450)).toBe(50);
  });

  it('rejects a negative count', () => {
    expect(() => new LinkWatch().sent(-1, 0)).toThrow(RangeError);
  });

  it('holds few marks on a long busy link (property: stall time equals the oldest unacked write)', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ units: fc.integer({ min: 1, max: 1_000 }), gap: fc.integer({ min: 0, max: 60 }), ackLag: fc.integer({ min: 0, max: 5 }) }), { minLength: 1, maxLength: 300 }), (steps) => {
        const w = new LinkWatch();
        const writes: Array<{ total: number; at: number }> = [];
        let lastProgress = -Infinity;
        let now = 0;
        let total = 0;
        for (const s of steps) {
          now += s.gap;
          total += s.units;
          w.sent(s.units, now);
          writes.push({ total, at: now });
          const ackIdx = writes.length - 1 - s.ackLag;
          const before = w.ackedUnits;
          if (ackIdx >= 0) w.acked(writes[ackIdx].total, now);
          if (w.ackedUnits > before) lastProgress = now;
          const acked = w.ackedUnits;
          const oldest = writes.find((x) => x.total > acked);
          // bucketed marks may report a slightly earlier time (never later): never under-report
          if (oldest) {
            const expected = now - Math.max(oldest.at, lastProgress);
            expect(w.stalledFor(now)).toBeGreaterThanOrEqual(expected);
            expect(w.stalledFor(now)).toBeLessThanOrEqual(expected + 20);
          } else expect(w.stalledFor(now)).toBe(0);
          expect(w.pendingMarks).toBeLessThanOrEqual(s.ackLag + 1);
        }
      }),
      { seed: 11, numRuns: 200 },
    );
  });
});

describe('LinkAcker', () => {
  it('acknowledges what was read, at most every LINK_ACK_MS', () => {
    const a = new LinkAcker();
    expect(a.due(0)).toBeNull();
    a.read(10);
    expect(a.due(0)).toBe(10);
    a.read(5);
    expect(a.due(LINK_ACK_MS - 1)).toBeNull();
    expect(a.due(LINK_ACK_MS)).toBe(15);
    expect(a.due(10 * LINK_ACK_MS)).toBeNull();
  });
});
