import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { planRebalance, type PartitionPlacement } from './rebalance.js';

const UNIVERSE = ['n1', 'n2', 'n3', 'n4', 'n5', 'n6', 'n7'];

/** A ring placement as the initial partition map makes one (partitioning.ts): partition i from node i. */
function ring(store: string, nodes: string[], partitions: number, rf: number): PartitionPlacement[] {
  return Array.from({ length: partitions }, (_, p) => ({ store, partition: p, replicas: Array.from({ length: Math.min(rf, nodes.length) }, (_, k) => nodes[(p + k) % nodes.length]) }));
}

function counts(parts: PartitionPlacement[], store: string, members: string[], ownersOnly: boolean): number[] {
  return members.map((m) => parts.filter((p) => p.store === store && (ownersOnly ? p.replicas[0] === m : p.replicas.includes(m))).length);
}
const spread = (xs: number[]): number => Math.max(...xs) - Math.min(...xs);

describe('planRebalance (examples)', () => {
  it('a fourth node joins three nodes, rf 2 over 3 partitions: one copy moves to it, owners stay', () => {
    const before = ring('s', ['n1', 'n2', 'n3'], 3, 2);
    const plan = planRebalance(before, ['n1', 'n2', 'n3', 'n4'], { s: 2 });
    expect(plan.moves).toHaveLength(1);
    expect(plan.moves[0].to).toBe('n4');
    expect(plan.ownerChanges).toEqual([]);
    expect(counts(plan.placements, 's', ['n1', 'n2', 'n3', 'n4'], false).sort()).toEqual([1, 2, 2, 1].sort());
  });

  it('n3 leaves three nodes, rf 2: its copies go to the two left, its owned partition to one of them', () => {
    const before = ring('s', ['n1', 'n2', 'n3'], 3, 2); // [n1,n2] [n2,n3] [n3,n1]
    const plan = planRebalance(before, ['n1', 'n2'], { s: 2 });
    expect(plan.placements.map((p) => [...p.replicas].sort())).toEqual([['n1', 'n2'], ['n1', 'n2'], ['n1', 'n2']]);
    expect(plan.moves).toEqual([
      { store: 's', partition: 1, from: 'n3', to: 'n1' },
      { store: 's', partition: 2, from: 'n3', to: 'n2' },
    ]);
    expect(plan.ownerChanges).toEqual([{ store: 's', partition: 2, from: 'n3', to: 'n1' }]);
    expect(spread(counts(plan.placements, 's', ['n1', 'n2'], true))).toBeLessThanOrEqual(1);
  });

  it('rf 3 on two members keeps two copies; rf 1 stays one copy per partition', () => {
    const plan = planRebalance(ring('a', ['n1', 'n2', 'n3'], 3, 3), ['n1', 'n2'], { a: 3 });
    expect(plan.placements.every((p) => p.replicas.length === 2)).toBe(true);
    const one = planRebalance(ring('b', ['n1', 'n2', 'n3'], 3, 1), ['n1', 'n2', 'n3', 'n4', 'n5', 'n6'], { b: 1 });
    expect(one.moves).toEqual([]);
  });

  it('refuses no members, a duplicate member, a replication factor that is not a positive integer', () => {
    expect(() => planRebalance([], [])).toThrow(/no members/);
    expect(() => planRebalance([], ['n1', 'n1'])).toThrow(/duplicate member/);
    expect(() => planRebalance([], ['n1'], { s: 0 })).toThrow(/positive integer, got 0/);
    expect(() => planRebalance([], ['n1'], { s: 1.5 })).toThrow(/positive integer/);
  });
});

/** A cluster's map (1-3 stores, a ring over some nodes, sometimes scrambled), then a new member list. */
const change = fc
  .record({
    before: fc.shuffledSubarray(UNIVERSE, { minLength: 1 }),
    after: fc.shuffledSubarray(UNIVERSE, { minLength: 1 }),
    stores: fc.array(fc.record({ partitions: fc.integer({ min: 1, max: 7 }), rf: fc.integer({ min: 1, max: 4 }) }), { minLength: 1, maxLength: 3 }),
    scramble: fc.array(fc.array(fc.constantFrom(...UNIVERSE), { maxLength: 5 }), { maxLength: 8 }),
  })
  .map(({ before, after, stores, scramble }) => {
    const placements = stores.flatMap((s, i) => ring(`s${i}`, before, s.partitions, s.rf));
    // some partitions arrive with arbitrary replica lists (duplicates, departed nodes, too many)
    scramble.forEach((r, i) => {
      if (i < placements.length && r.length > 0) placements[i].replicas = r;
    });
    const rf = Object.fromEntries(stores.map((s, i) => [`s${i}`, s.rf]));
    return { placements, members: after, rf };
  });

describe('planRebalance (properties)', () => {
  it('every partition gets min(rf, members) distinct member copies; copies and owners balanced within one per store', () => {
    fc.assert(
      fc.property(change, ({ placements, members, rf }) => {
        const plan = planRebalance(placements, members, rf);
        expect(plan.placements.map((p) => [p.store, p.partition])).toEqual(placements.map((p) => [p.store, p.partition]));
        for (const p of plan.placements) {
          expect(p.replicas).toHaveLength(Math.min(rf[p.store], members.length));
          expect(new Set(p.replicas).size).toBe(p.replicas.length);
          for (const n of p.replicas) expect(members).toContain(n);
        }
        for (const store of Object.keys(rf)) {
          expect(spread(counts(plan.placements, store, members, false))).toBeLessThanOrEqual(1);
          expect(spread(counts(plan.placements, store, members, true))).toBeLessThanOrEqual(1);
        }
      }),
      { numRuns: 500, seed: 14 },
    );
  });

  it('the moves and owner changes lead from the old map to the new one', () => {
    fc.assert(
      fc.property(change, ({ placements, members, rf }) => {
        const plan = planRebalance(placements, members, rf);
        plan.placements.forEach((after, i) => {
          const before = new Set(placements[i].replicas);
          const mine = plan.moves.filter((m) => m.store === after.store && m.partition === after.partition);
          for (const m of mine) {
            expect(before.has(m.to)).toBe(false);
            if (m.from !== null) before.delete(m.from);
            before.add(m.to);
          }
          // what is left of the old copies beyond the new ones is dropped without a move of its own
          expect(after.replicas.every((n) => before.has(n))).toBe(true);
          const change = plan.ownerChanges.find((c) => c.store === after.store && c.partition === after.partition);
          if (placements[i].replicas[0] !== after.replicas[0]) expect(change).toEqual({ store: after.store, partition: after.partition, from: placements[i].replicas[0], to: after.replicas[0] });
          else expect(change).toBeUndefined();
        });
      }),
      { numRuns: 300, seed: 15 },
    );
  });

  it('a balanced map over the same members moves nothing (a plan is a fixed point)', () => {
    fc.assert(
      fc.property(change, ({ placements, members, rf }) => {
        const once = planRebalance(placements, members, rf);
        const twice = planRebalance(once.placements, members, rf);
        expect(twice.moves).toEqual([]);
        expect(twice.ownerChanges).toEqual([]);
        expect(twice.placements).toEqual(once.placements);
      }),
      { numRuns: 300, seed: 16 },
    );
  });

  it('copies move only from departed nodes and from members over their share (at most twice that, for a swap)', () => {
    fc.assert(
      fc.property(change, ({ placements, members, rf }) => {
        const plan = planRebalance(placements, members, rf);
        for (const store of Object.keys(rf)) {
          const parts = placements.filter((p) => p.store === store);
          const r = Math.min(rf[store], members.length);
          // the copies no balanced map can keep: the missing ones, and each member's excess over its
          // share when the ceil shares go to the members holding most (what keeps the most copies)
          const kept = parts.map((p) => p.replicas.filter((n, k) => members.includes(n) && p.replicas.indexOf(n) === k).slice(0, r));
          const held = members.map((m) => kept.filter((k) => k.includes(m)).length).sort((a, b) => b - a);
          const floor = Math.floor((parts.length * r) / members.length);
          const extra = parts.length * r - floor * members.length;
          const missing = parts.length * r - kept.reduce((a, k) => a + k.length, 0);
          const excess = held.reduce((a, h, i) => a + Math.max(0, h - floor - (i < extra ? 1 : 0)), 0);
          const moved = plan.moves.filter((m) => m.store === store).length;
          // (a partition listing more than rf copies may keep a listed one where the rest go: no move)
          if (parts.every((p, i) => new Set(p.replicas.filter((n) => members.includes(n))).size === kept[i].length)) expect(moved).toBeGreaterThanOrEqual(missing + excess);
          expect(moved).toBeLessThanOrEqual(2 * (missing + excess));
        }
      }),
      { numRuns: 300, seed: 17 },
    );
  });

  it('a node joining a balanced ring map takes copies only (every move is to the joiner, from a member over its share)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 8 }), fc.integer({ min: 1, max: 3 }), (n, partitions, rf) => {
        const nodes = UNIVERSE.slice(0, n);
        const balanced = planRebalance(ring('s', nodes, partitions, rf), nodes, { s: rf }).placements;
        const joiner = UNIVERSE[n];
        const plan = planRebalance(balanced, [...nodes, joiner], { s: rf });
        for (const m of plan.moves) expect(m.to).toBe(joiner);
        // the joiner takes its floor share at least
        const got = plan.placements.filter((p) => p.replicas.includes(joiner)).length;
        expect(got).toBeGreaterThanOrEqual(Math.floor((partitions * Math.min(rf, n + 1)) / (n + 1)));
      }),
      { numRuns: 200, seed: 18 },
    );
  });
});
