import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { migrationSteps, type MigrationStep } from './migration.js';
import { planRebalance, type PartitionPlacement } from './rebalance.js';

const UNIVERSE = ['n1', 'n2', 'n3', 'n4', 'n5'];

function ring(store: string, nodes: string[], partitions: number, rf: number): PartitionPlacement[] {
  return Array.from({ length: partitions }, (_, p) => ({ store, partition: p, replicas: Array.from({ length: Math.min(rf, nodes.length) }, (_, k) => nodes[(p + k) % nodes.length]) }));
}

/**
 * Carries the steps out on a model of each partition's copies (catching up / in sync) and owner,
 * checking at every step: the owner holds an in-sync copy; a copy is dropped only once no copy of
 * the partition still catches up and it is not the owner; in-sync copies never fall below the
 * smaller of the counts before and after. Returns the final model.
 */
function carryOut(before: readonly PartitionPlacement[], after: readonly PartitionPlacement[], steps: readonly MigrationStep[]): Map<string, { inSync: Set<string>; catching: Set<string>; owner: string | undefined }> {
  const model = new Map<string, { inSync: Set<string>; catching: Set<string>; owner: string | undefined }>(before.map((p) => [`${p.store}/${p.partition}`, { inSync: new Set(p.replicas), catching: new Set<string>(), owner: p.replicas[0] }]));
  const floor = new Map(before.map((p, i) => [`${p.store}/${p.partition}`, Math.min(new Set(p.replicas).size, new Set(after[i].replicas).size)]));
  for (const s of steps) {
    const key = `${s.store}/${s.partition}`;
    const m = model.get(key)!;
    switch (s.kind) {
      case 'add-copy':
        expect(m.inSync.has(s.node) || m.catching.has(s.node)).toBe(false);
        m.catching.add(s.node);
        break;
      case 'await-in-sync':
        expect(m.catching.delete(s.node)).toBe(true);
        m.inSync.add(s.node);
        break;
      case 'handoff':
        expect(m.owner).toBe(s.from);
        expect(m.inSync.has(s.to)).toBe(true);
        m.owner = s.to;
        break;
      case 'drop-copy':
        expect(m.catching.size).toBe(0);
        expect(m.owner === s.node && m.inSync.size > 1).toBe(false);
        expect(m.inSync.delete(s.node)).toBe(true);
        if (m.owner === s.node) m.owner = undefined;
        break;
    }
    if (m.owner !== undefined) expect(m.inSync.has(m.owner)).toBe(true);
    expect(m.inSync.size).toBeGreaterThanOrEqual(Math.min(floor.get(key)!, m.inSync.size + m.catching.size));
  }
  return model;
}

describe('migrationSteps (nodes/membership/migration.ts): carrying out a new partition map', () => {
  it('a fourth node joins: its new copy is added and in sync before the copy it replaces is dropped, and before ownership moves to it', () => {
    const before = ring('s', ['n1', 'n2', 'n3'], 3, 2);
    const plan = planRebalance(before, ['n1', 'n2', 'n3', 'n4'], { s: 2 });
    const steps = migrationSteps(before, plan.placements);
    expect(steps.filter((x) => x.kind === 'add-copy').map((x) => (x as { node: string }).node)).toEqual(['n4']);
    const i = steps.findIndex((x) => x.kind === 'await-in-sync');
    const j = steps.findIndex((x) => x.kind === 'drop-copy');
    expect(i).toBeGreaterThanOrEqual(0);
    expect(j).toBeGreaterThan(i);
    carryOut(before, plan.placements, steps);
  });

  it('a node leaves: its owned partitions are handed off before its copies drop', () => {
    const before = ring('s', ['n1', 'n2', 'n3'], 3, 2);
    const plan = planRebalance(before, ['n1', 'n2'], { s: 2 });
    const steps = migrationSteps(before, plan.placements);
    const handoffs = steps.filter((x) => x.kind === 'handoff') as Array<Extract<MigrationStep, { kind: 'handoff' }>>;
    expect(handoffs.map((h) => h.from)).toContain('n3');
    for (const h of handoffs.filter((x) => x.from === 'n3')) {
      const k = steps.indexOf(h);
      const drop = steps.findIndex((x) => x.kind === 'drop-copy' && x.node === 'n3' && x.partition === h.partition);
      expect(drop).toBeGreaterThan(k);
    }
    carryOut(before, plan.placements, steps);
    expect(() => migrationSteps(before, plan.placements.slice(1))).toThrow(RangeError);
  });

  it('property: over random maps and member changes, the steps lead to the planned map and never leave a partition short of in-sync copies or its owner without one', () => {
    fc.assert(
      fc.property(
        fc.subarray(UNIVERSE, { minLength: 1 }),
        fc.subarray(UNIVERSE, { minLength: 1 }),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 3 }),
        (beforeNodes, afterNodes, partitions, rf) => {
          const before = ring('s', beforeNodes, partitions, rf);
          const plan = planRebalance(before, afterNodes, { s: rf });
          const model = carryOut(before, plan.placements, migrationSteps(before, plan.placements));
          for (const p of plan.placements) {
            const m = model.get(`${p.store}/${p.partition}`)!;
            expect([...m.inSync].sort()).toEqual([...new Set(p.replicas)].sort());
            expect(m.catching.size).toBe(0);
            expect(m.owner).toBe(p.replicas[0]);
          }
        },
      ),
      { seed: 20261201, numRuns: 2_000 },
    );
  });
});
