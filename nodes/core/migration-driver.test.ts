import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { StoreConfig } from '../cluster-config.js';
import type { Member, RuntimeEntry } from '../cluster-messages.js';
import type { MemberSet } from '../membership/members.js';
import { planRebalance } from '../membership/rebalance.js';
import { MAX_CONCURRENT_MOVES, MigrationDriver, placementNodes } from './migration-driver.js';

const NODES = ['n1', 'n2', 'n3', 'n4', 'n5'];
const m = (node: string): Member => ({ node, inc: `${node}-i1` });

function entry(store: string, partition: number, replicas: string[]): RuntimeEntry {
  return {
    pkey: `${store}/${partition}`,
    store,
    partition,
    epoch: 1,
    term: 1,
    active: m(replicas[0]),
    activeSince: 1,
    health: 'Healthy',
    inSync: replicas.map(m),
    handoffTo: null,
    syncFrom: null,
    replicas,
    mapVersion: 1,
  };
}

function memberSet(version: number, states: Record<string, 'joining' | 'member' | 'leaving'>): MemberSet {
  return { version, members: Object.entries(states).map(([id, state]) => ({ id, host: '127.0.0.1', clientPort: 1, peerPort: 2, state })) };
}

/**
 * A model cluster the driver runs against: a proposal commits at once; a copy added catches up
 * and the active asks to add it after `catchUpTicks` ticks; a handoff commits the next tick; each
 * committed entry is checked against the safety rules of a move (module doc).
 */
class Model {
  readonly committed = new Map<string, RuntimeEntry>();
  readonly proposals: RuntimeEntry[] = [];
  private readonly catching = new Map<string, number>();
  readonly counters = { migrations: 0 };
  readonly driver: MigrationDriver;
  readonly violations: string[] = [];

  constructor(
    readonly stores: StoreConfig[],
    entries: RuntimeEntry[],
    readonly live: Set<string> = new Set(NODES),
    private readonly catchUpTicks = 2,
  ) {
    for (const e of entries) this.committed.set(e.pkey, e);
    this.driver = new MigrationDriver({
      stores,
      partitionKeys: () => [...this.committed.keys()],
      committed: (pkey) => this.committed.get(pkey),
      inflight: () => false,
      propose: (e) => this.commit(e),
      liveMember: (node) => (this.live.has(node) ? m(node) : null),
      log: () => undefined,
      counters: this.counters,
    });
  }

  private commit(e: RuntimeEntry): void {
    const prev = this.committed.get(e.pkey)!;
    const next = { ...e, epoch: prev.epoch + 1 };
    this.proposals.push(next);
    // a move never leaves the owner without an in-sync copy, nor fewer in-sync copies than the
    // partition had or will have (the smaller of before and the planned count)
    const target = this.driver.target(e.pkey);
    if (!next.active || !next.inSync.some((x) => x.node === next.active!.node)) this.violations.push(`${e.pkey}: active outside the in-sync set`);
    const floor = Math.min(prev.inSync.length, target?.length ?? prev.inSync.length);
    if (next.inSync.length < floor) this.violations.push(`${e.pkey}: in-sync ${next.inSync.length} < ${floor}`);
    if (next.inSync.some((x) => !next.replicas.includes(x.node))) this.violations.push(`${e.pkey}: in sync but not assigned`);
    this.committed.set(e.pkey, next);
  }

  tick(set: MemberSet): void {
    this.driver.tick(set, 0);
    for (const [pkey, e] of this.committed) {
      // copies catching up join the in-sync set through the active's req-add
      for (const n of e.replicas) {
        if (e.inSync.some((x) => x.node === n)) continue;
        const k = `${pkey}:${n}`;
        const left = this.catching.get(k) ?? this.catchUpTicks;
        if (left > 0) this.catching.set(k, left - 1);
        else {
          this.catching.delete(k);
          this.committed.set(pkey, { ...e, epoch: e.epoch + 1, inSync: [...e.inSync, m(n)] });
        }
      }
      // a handoff commits once the target is in sync
      const cur = this.committed.get(pkey)!;
      if (cur.handoffTo && cur.inSync.some((x) => x.node === cur.handoffTo!.node)) this.committed.set(pkey, { ...cur, epoch: cur.epoch + 1, active: cur.handoffTo, handoffTo: null, migrating: false });
    }
  }

  run(set: MemberSet, maxTicks = 400): number {
    for (let i = 0; i < maxTicks; i++) {
      this.tick(set);
      if (this.driver.settled(set)) return i;
    }
    return -1;
  }
}

const STORES: StoreConfig[] = [
  { name: 'r3', replicationFactor: 3, ackMode: 'sync', segments: 6 },
  { name: 'r2', replicationFactor: 2, ackMode: 'async', segments: 6 },
  { name: 'r1', replicationFactor: 1, ackMode: 'sync', segments: 6 },
];

function ring(nodes: string[]): RuntimeEntry[] {
  return STORES.flatMap((s) => nodes.map((_, p) => entry(s.name, p, Array.from({ length: s.replicationFactor }, (_, k) => nodes[(p + k) % nodes.length]))));
}

describe('MigrationDriver (nodes/core/migration-driver.ts): the leader carries out a rebalance one runtime-entry change at a time', () => {
  it('a joiner receives its share of copies: add, wait in sync, fenced handoff marked migrating, drop; each moved partition counted once', () => {
    const model = new Model(STORES, ring(['n1', 'n2', 'n3']));
    const set = memberSet(2, { n1: 'member', n2: 'member', n3: 'member', n4: 'joining' });
    const ticks = model.run(set);
    expect(ticks).toBeGreaterThan(0);
    expect(model.violations).toEqual([]);
    const plan = planRebalance(ring(['n1', 'n2', 'n3']).map((e) => ({ store: e.store, partition: e.partition, replicas: e.replicas })), placementNodes(set), { r3: 3, r2: 2, r1: 1 });
    for (const p of plan.placements) {
      const e = model.committed.get(`${p.store}/${p.partition}`)!;
      expect(e.replicas).toEqual(p.replicas);
      expect(e.active!.node).toBe(p.replicas[0]);
      expect(e.inSync.map((x) => x.node).sort()).toEqual([...p.replicas].sort());
    }
    const moved = plan.placements.filter((p, i) => p.replicas.join() !== ring(['n1', 'n2', 'n3'])[i].replicas.join()).length;
    expect(moved).toBeGreaterThan(0);
    expect(model.counters.migrations).toBe(moved);
    // n4 now holds copies of each store; a handoff to it was a migrating one
    expect([...model.committed.values()].filter((e) => e.replicas.includes('n4')).length).toBeGreaterThanOrEqual(3);
    // three partitions per store over four members: every owner keeps its partition (no handoff)
    expect(model.proposals.filter((e) => e.handoffTo !== null)).toEqual([]);
    // the copies drop only after the planned ones are in sync: every proposal that removes a node
    // from the replicas keeps every planned node in sync
    for (const e of model.proposals) {
      const t = plan.placements.find((p) => p.store === e.store && p.partition === e.partition)!.replicas;
      if (e.replicas.join() === t.join()) expect(t.every((n) => e.inSync.some((x) => x.node === n))).toBe(true);
    }
  });

  it('a leaver is drained: no partition lists it once settled', () => {
    const model = new Model(STORES, ring(['n1', 'n2', 'n3', 'n4']));
    const set = memberSet(3, { n1: 'member', n2: 'member', n3: 'member', n4: 'leaving' });
    expect(model.run(set)).toBeGreaterThan(0);
    expect(model.violations).toEqual([]);
    for (const e of model.committed.values()) expect(e.replicas).not.toContain('n4');
    // n4 owned one partition of each store: ownership moved by a fenced handoff marked migrating
    const handoffs = model.proposals.filter((e) => e.handoffTo !== null);
    expect(handoffs.length).toBe(3);
    expect(handoffs.every((e) => e.migrating === true && e.active!.node === 'n4')).toBe(true);
    for (const e of model.committed.values()) expect(e.active!.node).toBe(e.replicas[0]);
  });

  it('waits while a planned node is not live, and moves at most MAX_CONCURRENT_MOVES partitions at once', () => {
    const model = new Model(STORES, ring(['n1', 'n2', 'n3']), new Set(['n1', 'n2', 'n3']));
    const set = memberSet(2, { n1: 'member', n2: 'member', n3: 'member', n4: 'joining' });
    for (let i = 0; i < 20; i++) model.tick(set);
    expect(model.proposals).toEqual([]);
    expect(model.driver.settled(set)).toBe(false);
    model.live.add('n4');
    model.tick(set);
    expect(model.proposals.length).toBeLessThanOrEqual(MAX_CONCURRENT_MOVES);
    expect(model.proposals.length).toBeGreaterThan(0);
    expect(model.driver.movingPartitions.length).toBeLessThanOrEqual(MAX_CONCURRENT_MOVES);
  });

  it('leaves a partition alone while it is Recovering or Unavailable, or a failback runs', () => {
    const entries = ring(['n1', 'n2', 'n3']).map((e) => ({ ...e, health: 'Recovering' as const }));
    const model = new Model(STORES, entries);
    model.tick(memberSet(2, { n1: 'member', n2: 'member', n3: 'member', n4: 'joining' }));
    expect(model.proposals).toEqual([]);
  });

  it('property: from any ring of 2-5 nodes and any single join or leave, the moves reach the plan and keep every partition safe', () => {
    fc.assert(
      fc.property(fc.integer({ min: 3, max: 5 }), fc.boolean(), fc.nat(), fc.integer({ min: 0, max: 4 }), (n, join, pick, slowness) => {
        const nodes = NODES.slice(0, n);
        const model = new Model(STORES, ring(nodes), new Set(NODES), slowness);
        const states: Record<string, 'joining' | 'member' | 'leaving'> = {};
        for (const x of nodes) states[x] = 'member';
        if (join && n < 5) states[NODES[n]] = 'joining';
        else states[nodes[pick % n]] = 'leaving';
        const set = memberSet(2, states);
        const ticks = model.run(set, 1_000);
        expect(ticks).toBeGreaterThanOrEqual(0);
        expect(model.violations).toEqual([]);
        const holders = new Set(placementNodes(set));
        for (const e of model.committed.values()) {
          expect(e.replicas.every((x) => holders.has(x))).toBe(true);
          expect(e.active && e.inSync.some((x) => x.node === e.active!.node)).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });
});
