import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { budgetRefusal, evictionRefusal, grudgeNodes, majorityCliques, withEffect, type ClusterSnapshot, type FaultState, type PartitionSnapshot } from './budget.js';
import { complete, isolate, oneWay } from './grudge.js';

const N3 = ['n1', 'n2', 'n3'];
const N5 = ['n1', 'n2', 'n3', 'n4', 'n5'];

function state(nodes: string[], o: Partial<Omit<FaultState, 'nodes'>> = {}): FaultState {
  return { nodes, down: new Set(), paused: new Set(), amnesic: new Set(), grudge: {}, clocks: new Map(), ...o };
}

function part(store: string, partition: number, replicas: string[], inSync: string[], rf = replicas.length): PartitionSnapshot {
  return { store, partition, replicationFactor: rf, replicas, active: inSync[0] ?? null, health: inSync.length === replicas.length ? 'Healthy' : 'Degraded', inSync, handoffTo: null };
}

function snap(partitions: PartitionSnapshot[], answered = N3): ClusterSnapshot {
  return { leader: 'n1', answered, partitions };
}

/** Every partition of a 3-node cluster in sync on every node (RF3), plus an RF1 partition on n1. */
const healthy3 = snap([part('sync3', 0, N3, N3), part('async3', 0, N3, N3), part('rf1', 0, ['n1'], ['n1'], 1)]);

describe('the fault budget (B1 majority, B2 a good copy, B3 clocks)', () => {
  it('allows one crash, pause or isolation in a healthy 3-node cluster, never two at once', () => {
    expect(budgetRefusal(withEffect(state(N3), { down: ['n1'] }), healthy3)).toBeNull();
    expect(budgetRefusal(withEffect(state(N3), { paused: ['n2'] }), healthy3)).toBeNull();
    expect(budgetRefusal(withEffect(state(N3), { grudge: isolate(N3, 'n3').grudge }), healthy3)).toBeNull();
    expect(budgetRefusal(withEffect(state(N3, { down: new Set(['n1']) }), { paused: ['n2'] }), healthy3)).toMatch(/^no majority of 2 up, unpaused, connected nodes/);
    expect(budgetRefusal(withEffect(state(N3, { paused: new Set(['n1']) }), { grudge: isolate(N3, 'n2').grudge }), healthy3)).toMatch(/^no majority/);
  });

  it('an RF1 partition never counts (its crash loss is allowed by contract)', () => {
    // rf1/0 lives on n1 only: killing n1 leaves no copy, and that is fine
    expect(budgetRefusal(withEffect(state(N3), { down: ['n1'] }), snap([part('rf1', 0, ['n1'], ['n1'], 1)]))).toBeNull();
  });

  it('a second fault while a restarted replica catches up: allowed when another in-sync member survives in the majority', () => {
    // n3 restarted, rejoined (in sync in async3/0 already) and still catching up in sync3/0
    const s = snap([part('sync3', 0, N3, ['n1', 'n2']), part('async3', 0, N3, ['n1', 'n2', 'n3'])]);
    expect(budgetRefusal(withEffect(state(N3), { down: ['n1'] }), s)).toBeNull();
    // the only other in-sync member of sync3/0 is n2: n1 and n2 both gone is no copy
    expect(budgetRefusal(withEffect(state(N3, { down: new Set(['n1']) }), { paused: ['n2'] }), s)).toMatch(/no majority|no in-sync member/);
  });

  it('a restarted node that has not rejoined does not count toward the majority (a majority without memory)', () => {
    const s = snap([part('sync3', 0, N3, ['n1', 'n2'])]);
    const amnesic = state(N3, { amnesic: new Set(['n3']) });
    expect(budgetRefusal(amnesic, s)).toBeNull();
    expect(budgetRefusal(withEffect(amnesic, { down: ['n1'] }), s)).toBe('no majority of 2 up, unpaused, connected nodes that remember the cluster (such: n2; restarted, not yet rejoined: n3)');
    // five nodes: one amnesic and one down still leave three that remember
    const s5 = snap([part('sync3', 0, ['n1', 'n2', 'n3'], ['n1', 'n2'])], N5);
    expect(budgetRefusal(withEffect(state(N5, { amnesic: new Set(['n3']) }), { down: ['n1'] }), s5)).toBeNull();
  });

  it('refuses leaving a partition whose only in-sync member is cut off or frozen', () => {
    const s = snap([part('sync3', 0, N3, ['n3'])]);
    expect(budgetRefusal(withEffect(state(N3), { grudge: isolate(N3, 'n3').grudge }), s)).toBe('no in-sync member in the connected majority n1,n2 for sync3/0 (in sync: n3)');
    expect(budgetRefusal(withEffect(state(N3), { paused: ['n3'] }), s)).toMatch(/^no in-sync member/);
    expect(budgetRefusal(withEffect(state(N3), { paused: ['n1'] }), s)).toBeNull();
  });

  it('one connected majority must hold a good copy of every partition (not one majority per partition)', () => {
    // a bridge in 5 nodes: {n1,n2} | {n4,n5}, n3 reaches both; the majorities are {n1,n2,n3} and {n3,n4,n5}
    const g = complete([
      ['n1', 'n2'],
      ['n4', 'n5'],
    ]);
    const s = snap([part('a', 0, ['n1', 'n2', 'n4'], ['n1']), part('b', 0, ['n2', 'n4', 'n5'], ['n4'])], N5);
    expect(majorityCliques(withEffect(state(N5), { grudge: g }))).toEqual([
      ['n1', 'n2', 'n3'],
      ['n3', 'n4', 'n5'],
    ]);
    expect(budgetRefusal(withEffect(state(N5), { grudge: g }), s)).toMatch(/^no in-sync member in the connected majority/);
    const both = snap([part('a', 0, ['n1', 'n2', 'n3'], ['n1', 'n3']), part('b', 0, ['n2', 'n4', 'n5'], ['n4'])], N5);
    expect(budgetRefusal(withEffect(state(N5), { grudge: g }), both)).toBeNull();
  });

  it('a one-way cut keeps both ends in the majority; in 3 nodes it still breaks the clique of its two ends', () => {
    const g = oneWay(N3, 'n2', 'n1').grudge;
    expect(g).toEqual({ n1: ['n2'] });
    expect(majorityCliques(withEffect(state(N3), { grudge: g }))).toEqual([
      ['n1', 'n3'],
      ['n2', 'n3'],
    ]);
    expect(budgetRefusal(withEffect(state(N3), { grudge: g }), healthy3)).toBeNull();
  });

  it('B3: one clock fault at a time; a slow clock never beside a cut of its node', () => {
    const clocks = new Map([['n1', 0.5]]);
    expect(budgetRefusal(state(N3, { clocks }), healthy3)).toBeNull();
    expect(budgetRefusal(withEffect(state(N3, { clocks }), { clock: { node: 'n2', rate: 2 } }), healthy3)).toBe('more than one clock fault at once (n1, n2)');
    expect(budgetRefusal(withEffect(state(N3, { clocks }), { grudge: isolate(N3, 'n1').grudge }), healthy3)).toMatch(/^n1's clock runs slow \(x0.5\) while a link of it is cut/);
    expect(budgetRefusal(withEffect(state(N3, { clocks }), { grudge: oneWay(N3, 'n3', 'n2').grudge }), healthy3)).toBeNull();
    // a fast clock may be cut off (its lease only gets shorter)
    expect(budgetRefusal(withEffect(state(N3, { clocks: new Map([['n1', 2]]) }), { grudge: isolate(N3, 'n1').grudge }), healthy3)).toBeNull();
  });

  it('B4: an RF1 holder never stays paused or cut off past the eviction timeout less 10 s (a crash may)', () => {
    const s = snap([part('sync3', 0, N3, N3), part('rf1', 0, ['n1'], ['n1'], 1)]);
    expect(evictionRefusal(s, new Map([['n1', { since: 1_000, until: 51_000 }]]), 50_000)).toBeNull();
    expect(evictionRefusal(s, new Map([['n1', { since: 1_000, until: 51_001 }]]), 50_000)).toBe('n1 (an RF1 holder) would stay paused or cut off for 50 s, past the eviction timeout less 10 s (50 s)');
    // n2 holds no RF1 partition: its absence re-homes nothing
    expect(evictionRefusal(s, new Map([['n2', { since: 0, until: 300_000 }]]), 50_000)).toBeNull();
    expect(evictionRefusal(null, new Map(), 50_000)).toMatch(/unknown/);
  });

  it('an unknown cluster state is refused', () => {
    expect(budgetRefusal(state(N3), null)).toBe('the cluster state is unknown (no metadata answer)');
  });

  it('grudgeNodes names droppers and dropped', () => {
    expect([...grudgeNodes({ n1: ['n2'], n3: [] })].sort()).toEqual(['n1', 'n2']);
  });

  it('property: whatever the budget allows leaves a connected majority of live nodes holding an in-sync member of every replicated partition', () => {
    const nodesArb = fc.constantFrom(N3, N5);
    fc.assert(
      fc.property(
        nodesArb.chain((nodes) =>
          fc.record({
            nodes: fc.constant(nodes),
            down: fc.subarray(nodes),
            paused: fc.subarray(nodes),
            amnesic: fc.subarray(nodes),
            cuts: fc.array(fc.tuple(fc.constantFrom(...nodes), fc.constantFrom(...nodes)), { maxLength: 4 }),
            inSync: fc.array(fc.subarray(nodes, { minLength: 0 }), { minLength: 1, maxLength: 4 }),
          }),
        ),
        (r) => {
          const grudge: Record<string, string[]> = {};
          for (const [a, b] of r.cuts) if (a !== b) grudge[b] = [...(grudge[b] ?? []), a];
          const s = state(r.nodes, { down: new Set(r.down), paused: new Set(r.paused), amnesic: new Set(r.amnesic), grudge });
          const sn = snap(
            r.inSync.map((m, i) => part('s', i, r.nodes.slice(0, 3), m.filter((x) => r.nodes.slice(0, 3).includes(x)), 3)),
            r.nodes,
          );
          const refusal = budgetRefusal(s, sn);
          const live = r.nodes.filter((n) => !r.down.includes(n) && !r.paused.includes(n) && !r.amnesic.includes(n));
          const connected = (a: string, b: string): boolean => !(grudge[b] ?? []).includes(a) && !(grudge[a] ?? []).includes(b);
          // brute force: some majority set of live nodes, pairwise connected, with an in-sync member of every partition
          let ok = false;
          for (let mask = 0; mask < 1 << live.length && !ok; mask++) {
            const c = live.filter((_, i) => (mask >> i) & 1);
            if (c.length < Math.floor(r.nodes.length / 2) + 1) continue;
            if (!c.every((a) => c.every((b) => a === b || connected(a, b)))) continue;
            if (sn.partitions.every((p) => p.inSync.some((m) => c.includes(m)))) ok = true;
          }
          expect(refusal === null).toBe(ok);
        },
      ),
      { numRuns: 400 },
    );
  });
});

describe('spares (issue 14): the majority is counted over the voters', () => {
  const N4 = ['n1', 'n2', 'n3', 'n4'];
  // n4 joined: it holds copies (in sync in sync3/0 and sync3/1), but never votes
  const joined = snap([part('sync3', 0, ['n1', 'n2', 'n4'], ['n1', 'n2', 'n4']), part('sync3', 1, ['n2', 'n3', 'n4'], ['n2', 'n3', 'n4']), part('sync3', 2, N3, N3)], N4);
  it('two voters up and connected are a majority beside a spare down; counted over every node they were not', () => {
    const down = { down: ['n4', 'n1'] };
    expect(budgetRefusal(withEffect(state(N4, { voters: N3 }), down), joined)).toBeNull();
    expect(budgetRefusal(withEffect(state(N4), down), joined)).toBe('no majority of 3 up, unpaused, connected nodes that remember the cluster (such: n2, n3)');
    expect(majorityCliques(withEffect(state(N4, { voters: N3 }), down))).toEqual([['n2', 'n3']]);
  });
  it('a spare never makes a majority: one voter with the spare is none; B2 still needs a good copy in the clique', () => {
    expect(budgetRefusal(withEffect(state(N4, { voters: N3 }), { down: ['n2', 'n3'] }), joined)).toBe('no majority of 2 voters up, unpaused, connected nodes that remember the cluster (such: n1, n4)');
    // n1 and n2 down: n3 and n4 hold no majority of voters
    expect(majorityCliques(withEffect(state(N4, { voters: N3 }), { down: ['n1', 'n2'] }))).toEqual([]);
    // n3 down and n4 cut off: the clique {n1, n2} holds a good copy of every partition (n2 of sync3/1)
    expect(budgetRefusal(withEffect(state(N4, { voters: N3 }), { down: ['n3'], grudge: isolate(N4, 'n4').grudge }), joined)).toBeNull();
    // n2 and n4 down: the voters n1 and n3 are a majority, and hold a copy of each partition
    expect(budgetRefusal(withEffect(state(N4, { voters: N3 }), { down: ['n2', 'n4'] }), joined)).toBeNull();
    // n2 still catching up in sync3/1 (only n3 and the spare in sync): n3 down and n4 cut off leave none in {n1, n2}
    const behind = snap([part('sync3', 0, ['n1', 'n2', 'n4'], ['n1', 'n2', 'n4']), part('sync3', 1, ['n2', 'n3', 'n4'], ['n3', 'n4'])], N4);
    expect(budgetRefusal(withEffect(state(N4, { voters: N3 }), { down: ['n3'], grudge: isolate(N4, 'n4').grudge }), behind)).toMatch(/sync3\/1/);
  });
});
