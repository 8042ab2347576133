import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bridge, complete, halves, isolate } from './nemesis/grudge.js';
import { createPrng } from './nemesis/prng.js';
import { isolatedNodes } from './isolation.js';

const N3 = ['n1', 'n2', 'n3'];
const N5 = ['n1', 'n2', 'n3', 'n4', 'n5'];

describe('isolatedNodes: the nodes a partition cuts off from a majority', () => {
  it('one node isolated: that node only', () => {
    expect(isolatedNodes(isolate(N3, 'n2').grudge, N3)).toEqual(['n2']);
    expect(isolatedNodes(isolate(N5, 'n5').grudge, N5)).toEqual(['n5']);
  });

  it('halves: the minority side', () => {
    const p = halves(N5, createPrng(7));
    expect(p.minority).toHaveLength(2);
    expect(isolatedNodes(p.grudge, N5)).toEqual(p.minority);
    expect(isolatedNodes(complete([['n1', 'n2'], ['n3', 'n4', 'n5']]), N5)).toEqual(['n1', 'n2']);
  });

  it('a bridge of 3: nobody (each half reaches the bridge, itself and the bridge make 2 of 3)', () => {
    const p = bridge(N3, createPrng(3));
    expect(isolatedNodes(p.grudge, N3)).toEqual([]);
  });

  it('a bridge of 5: nobody; the bridge node relays nothing, but each half of 2 plus the bridge is 3 of 5', () => {
    expect(isolatedNodes(complete([['n1', 'n2'], ['n4', 'n5']]), N5)).toEqual([]);
  });

  it('a ring cut of 5 where each node keeps only its two neighbours: nobody (3 of 5 each)', () => {
    const g = { n1: ['n3', 'n4'], n2: ['n4', 'n5'], n3: ['n5', 'n1'], n4: ['n1', 'n2'], n5: ['n2', 'n3'] };
    expect(isolatedNodes(g, N5)).toEqual([]);
  });

  it('a one-way cut isolates too: a node that hears nobody cannot renew anything', () => {
    // n1 drops everyone's traffic, but everyone still hears n1
    expect(isolatedNodes({ n1: ['n2', 'n3'] }, N3)).toEqual(['n1']);
    // n2 and n3 drop n1's traffic: n1 cannot reach them either
    expect(isolatedNodes({ n2: ['n1'], n3: ['n1'] }, N3)).toEqual(['n1']);
  });

  it('no grudge: nobody; every node cut from every other: everybody', () => {
    expect(isolatedNodes({}, N3)).toEqual([]);
    expect(isolatedNodes(complete([['n1'], ['n2'], ['n3']]), N3)).toEqual(N3);
  });

  it('ignores grudge entries of nodes outside the cluster and refuses bad node lists', () => {
    expect(isolatedNodes({ n9: ['n1'], n1: ['n9'] }, N3)).toEqual([]);
    expect(() => isolatedNodes({}, [])).toThrow(RangeError);
    expect(() => isolatedNodes({}, ['n1', 'n1'])).toThrow(/duplicate/);
  });

  it('for any split into components: exactly the nodes of components below a majority', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 9 }), fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 9, maxLength: 9 }), (n, labels) => {
        const nodes = Array.from({ length: n }, (_, i) => `n${i + 1}`);
        const comps = new Map<number, string[]>();
        nodes.forEach((id, i) => comps.set(labels[i], [...(comps.get(labels[i]) ?? []), id]));
        const expected = nodes.filter((id) => [...comps.values()].find((c) => c.includes(id))!.length < Math.floor(n / 2) + 1);
        expect(isolatedNodes(complete([...comps.values()]), nodes)).toEqual(expected);
      }),
      { seed: 10, numRuns: 300 },
    );
  });
});
