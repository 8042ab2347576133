import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CrashFault } from './crash-timeline.js';
import { CrashTimeline, intersectIntervals, unionIntervals } from './crash-timeline.js';

const NODES = ['n1', 'n2', 'n3'];
// small times so that boundaries (start == t, end == t) are hit often
const faultArb = fc.record({
  nodes: fc.subarray(NODES, { minLength: 1 }),
  start: fc.nat(20),
  len: fc.nat(8),
  catch: fc.option(fc.nat(4)),
  never: fc.nat(6),
});
const faultsArb = fc.array(faultArb, { maxLength: 6 }).map((list) =>
  list.map((f, i): CrashFault => ({
    id: i + 1,
    nodes: f.nodes,
    start: f.start,
    end: f.never === 0 ? null : f.start + f.len,
    caughtUp: f.never === 0 || f.catch === null ? null : f.start + f.len + f.catch,
  })),
);

/** Down at instant p: inside [start, caughtUp or end) of a crash of the node (history-format.md). */
function downAt(faults: CrashFault[], node: string, p: number): boolean {
  return faults.some((f) => f.nodes.includes(node) && f.start <= p && p < (f.caughtUp ?? f.end ?? Infinity));
}

describe('CrashTimeline', () => {
  it('finds the earliest instant >= t with every node down, as a brute-force scan of half-steps does', () => {
    fc.assert(
      fc.property(faultsArb, fc.subarray(NODES, { minLength: 1 }), fc.nat(30), (faults, nodes, t) => {
        const tl = new CrashTimeline(faults);
        let expected: number | null = null;
        for (let p = t; p <= 60; p += 0.5) {
          if (nodes.every((n) => downAt(faults, n, p))) {
            expected = p;
            break;
          }
        }
        const never = faults.some((f) => f.end === null);
        const got = tl.allDownAtOrAfter(nodes, t);
        if (expected === null && never) {
          // an interval that never ends may start after the scanned window
          if (got !== null) expect(nodes.every((n) => downAt(faults, n, got))).toBe(true);
        } else {
          expect(got).toBe(expected);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('finds the first crash of a node with start >= t (the boundary counts)', () => {
    fc.assert(
      fc.property(faultsArb, fc.constantFrom(...NODES), fc.nat(25), (faults, node, t) => {
        const starts = faults.filter((f) => f.nodes.includes(node) && f.start >= t).sort((a, b) => a.start - b.start || a.id - b.id);
        const hit = new CrashTimeline(faults).firstCrashAtOrAfter(node, t);
        expect(hit === null ? null : [hit.start, hit.faultId]).toEqual(starts.length === 0 ? null : [starts[0].start, starts[0].id]);
      }),
      { numRuns: 300 },
    );
  });

  it('treats a fault that never ended as down forever, and caughtUp as the end of being down', () => {
    const tl = new CrashTimeline([
      { id: 1, nodes: ['n1'], start: 10, end: null, caughtUp: null },
      { id: 2, nodes: ['n2'], start: 100, end: 200, caughtUp: 300 },
    ]);
    expect(tl.allDownAtOrAfter(['n1', 'n2'], 0)).toBe(100);
    expect(tl.allDownAtOrAfter(['n1', 'n2'], 250)).toBe(250);
    expect(tl.allDownAtOrAfter(['n1', 'n2'], 300)).toBeNull();
    expect(tl.allDownAtOrAfter([], 0)).toBeNull();
    expect(tl.firstCrashOfAnyAtOrAfter(['n1', 'n2'], 50)).toEqual({ faultId: 2, node: 'n2', start: 100 });
  });

  it('merges and intersects half-open intervals', () => {
    expect(unionIntervals([{ from: 5, to: 7 }, { from: 1, to: 3 }, { from: 3, to: 4 }, { from: 9, to: 9 }])).toEqual([
      { from: 1, to: 4 },
      { from: 5, to: 7 },
    ]);
    expect(intersectIntervals([{ from: 1, to: 4 }, { from: 5, to: 7 }], [{ from: 4, to: 6 }])).toEqual([{ from: 5, to: 6 }]);
  });
});
