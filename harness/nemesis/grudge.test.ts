import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  bridge,
  buildPartition,
  canReach,
  complete,
  halves,
  isolate,
  isolateActive,
  isolateLeader,
  isolatedNodes,
  isSymmetric,
  majoritySize,
  unionGrudges,
} from './grudge.js';
import { createPrng } from './prng.js';

/** 3..9 distinct node ids. */
const nodeIds = (min = 3) => fc.uniqueArray(fc.stringMatching(/^[a-z][a-z0-9]{0,3}$/), { minLength: min, maxLength: 9 });
const seed = fc.integer({ min: -(2 ** 40), max: 2 ** 40 });

function reachAllWithin(g: Parameters<typeof canReach>[0], side: string[]): boolean {
  return side.every((a) => side.every((b) => canReach(g, a, b)));
}
function noneAcross(g: Parameters<typeof canReach>[0], x: string[], y: string[]): boolean {
  return x.every((a) => y.every((b) => !canReach(g, a, b) && !canReach(g, b, a)));
}

describe('complete', () => {
  it('drops every node outside the component, both ways', () => {
    expect(complete([['a', 'b'], ['c']])).toEqual({ a: ['c'], b: ['c'], c: ['a', 'b'] });
    expect(complete([['a', 'b', 'c']])).toEqual({});
  });

  it('rejects a node in two components', () => {
    expect(() => complete([['a', 'b'], ['b', 'c']])).toThrow('node b is in two components');
  });

  it('any split into components: full reach within, none across, symmetric', () => {
    fc.assert(
      fc.property(nodeIds(2), fc.array(fc.nat(3), { minLength: 9, maxLength: 9 }), (nodes, labels) => {
        const groups = new Map<number, string[]>();
        nodes.forEach((n, i) => groups.set(labels[i], [...(groups.get(labels[i]) ?? []), n]));
        const comps = [...groups.values()];
        const g = complete(comps);
        expect(isSymmetric(g)).toBe(true);
        for (const c of comps) {
          expect(reachAllWithin(g, c)).toBe(true);
          for (const d of comps) if (d !== c) expect(noneAcross(g, c, d)).toBe(true);
        }
      }),
    );
  });
});

describe('isolate / leader / active', () => {
  it('the isolated node reaches nobody and nobody reaches it; the rest stay connected', () => {
    fc.assert(
      fc.property(nodeIds(2), fc.nat(), (nodes, k) => {
        const x = nodes[k % nodes.length];
        const rest = nodes.filter((n) => n !== x);
        for (const build of [isolate, isolateLeader, isolateActive]) {
          const p = build(nodes, x);
          expect(p.cutOff).toEqual([x]);
          expect(noneAcross(p.grudge, [x], rest)).toBe(true);
          expect(reachAllWithin(p.grudge, rest)).toBe(true);
          expect(isSymmetric(p.grudge)).toBe(true);
        }
      }),
    );
  });

  it('labels the topology and rejects unknown nodes and too few nodes', () => {
    expect(isolate(['a', 'b', 'c'], 'b').topology).toBe('isolate');
    expect(isolateLeader(['a', 'b', 'c'], 'b').topology).toBe('leader');
    expect(isolateActive(['a', 'b', 'c'], 'b').topology).toBe('active');
    expect(isolate(['a', 'b', 'c'], 'b').grudge).toEqual({ a: ['b'], b: ['a', 'c'], c: ['b'] });
    expect(() => isolate(['a', 'b', 'c'], 'z')).toThrow('isolate: z is not one of [a, b, c]');
    expect(() => isolate(['a'], 'a')).toThrow('needs at least 2 nodes');
    expect(() => isolate(['a', 'a'], 'a')).toThrow('duplicate node ids');
  });
});

describe('halves', () => {
  it('a real majority and a minority, full reach within each, none across', () => {
    fc.assert(
      fc.property(nodeIds(), seed, (nodes, s) => {
        const p = halves(nodes, createPrng(s));
        const maj = p.majority ?? [];
        const min = p.minority ?? [];
        expect(maj.length * 2).toBeGreaterThan(nodes.length);
        expect(maj.length).toBe(majoritySize(nodes.length));
        expect(min.length).toBeGreaterThan(0);
        expect([...maj, ...min].sort()).toEqual([...nodes].sort());
        expect(p.cutOff).toEqual(min);
        expect(reachAllWithin(p.grudge, maj)).toBe(true);
        expect(reachAllWithin(p.grudge, min)).toBe(true);
        expect(noneAcross(p.grudge, maj, min)).toBe(true);
      }),
    );
  });

  it('the split is a function of the seed, and seeds give different splits', () => {
    const nodes = ['n1', 'n2', 'n3', 'n4', 'n5'];
    expect(halves(nodes, createPrng(7))).toEqual(halves(nodes, createPrng(7)));
    const splits = new Set(Array.from({ length: 50 }, (_, s) => (halves(nodes, createPrng(s)).minority ?? []).join(',')));
    expect(splits.size).toBeGreaterThan(5); // C(5,2) = 10 possible minorities
  });

  it('needs 3 nodes', () => {
    expect(() => halves(['a', 'b'], createPrng(1))).toThrow('halves: needs at least 3 nodes, got 2');
  });
});

describe('bridge', () => {
  it('the bridge reaches both halves both ways; the halves do not reach each other', () => {
    fc.assert(
      fc.property(nodeIds(), seed, (nodes, s) => {
        const p = bridge(nodes, createPrng(s));
        const b = p.bridge as string;
        const [x, y] = p.components;
        expect(nodes).toContain(b);
        expect([b, ...x, ...y].sort()).toEqual([...nodes].sort());
        expect(x.length).toBeGreaterThan(0);
        expect(y.length).toBeGreaterThan(0);
        expect(Math.abs(x.length - y.length)).toBeLessThanOrEqual(1);
        for (const n of nodes) {
          expect(canReach(p.grudge, b, n)).toBe(true);
          expect(canReach(p.grudge, n, b)).toBe(true);
        }
        expect(reachAllWithin(p.grudge, x)).toBe(true);
        expect(reachAllWithin(p.grudge, y)).toBe(true);
        expect(noneAcross(p.grudge, x, y)).toBe(true);
        expect(p.cutOff).toEqual([...x, ...y].sort());
        expect(isSymmetric(p.grudge)).toBe(true);
      }),
    );
  });

  it('three nodes: a bridge and two single-node halves', () => {
    const p = bridge(['a', 'b', 'c'], createPrng(3));
    expect(p.components.map((c) => c.length)).toEqual([1, 1]);
    expect(Object.keys(p.grudge).length).toBe(2);
  });
});

describe('buildPartition / canReach / unionGrudges', () => {
  it('dispatches by topology and asks for the node where needed', () => {
    const rng = createPrng(1);
    expect(buildPartition('leader', ['a', 'b', 'c'], { rng, node: 'c' }).cutOff).toEqual(['c']);
    expect(buildPartition('halves', ['a', 'b', 'c'], { rng }).topology).toBe('halves');
    expect(() => buildPartition('active', ['a', 'b', 'c'], { rng })).toThrow('active: needs the node to isolate');
  });

  it('canReach is directional and reflexive', () => {
    const g = { a: ['b'] }; // a drops b's traffic: b -> a is cut, a -> b is not
    expect(canReach(g, 'b', 'a')).toBe(false);
    expect(canReach(g, 'a', 'b')).toBe(true);
    expect(canReach(g, 'a', 'a')).toBe(true);
    expect(isSymmetric(g)).toBe(false);
  });

  it('a link is cut in the union iff some grudge cuts it', () => {
    const grudge = fc.dictionary(fc.constantFrom('a', 'b', 'c', 'd'), fc.uniqueArray(fc.constantFrom('a', 'b', 'c', 'd')));
    fc.assert(
      fc.property(fc.array(grudge, { maxLength: 4 }), (gs) => {
        const u = unionGrudges(gs);
        for (const from of ['a', 'b', 'c', 'd']) {
          for (const to of ['a', 'b', 'c', 'd']) {
            if (from === to) continue;
            expect(canReach(u, from, to)).toBe(gs.every((g) => canReach(g, from, to)));
          }
        }
      }),
    );
  });
});

describe('isolatedNodes with spares (issue 14): a majority of the voters', () => {
  const N4 = ['n1', 'n2', 'n3', 'n4'];
  const V = ['n1', 'n2', 'n3'];
  it('the side with two of three voters is not isolated, the spare\'s side is; without voters every half of 2|2 is', () => {
    const halves = complete([['n1', 'n2'], ['n3', 'n4']]);
    expect(isolatedNodes(N4, halves, V)).toEqual(['n3', 'n4']);
    expect(isolatedNodes(N4, halves)).toEqual(['n1', 'n2', 'n3', 'n4']);
    expect(isolatedNodes(N4, isolate(N4, 'n4').grudge, V)).toEqual(['n4']);
    expect(isolatedNodes(N4, isolate(N4, 'n1').grudge, V)).toEqual(['n1']);
    expect(isolatedNodes(N4, {}, V)).toEqual([]);
  });
});
