import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  canonicalJson,
  CRASH_KINDS,
  FAULT_KINDS,
  faultDurations,
  leaveCandidates,
  MEMBERSHIP_KINDS,
  planMembership,
  MIN_KILLS,
  parseFaultKinds,
  parseFaults,
  planSchedule,
  PRESET_FOR_BUG,
  PRESET_NAMES,
  PRESETS,
  scheduleDigest,
  scheduleFromJson,
  scheduleToJson,
  ScheduleError,
  SCHEDULE_FORMAT,
  type FaultKind,
  type PlanOptions,
  type PlannedFault,
  type Schedule,
} from './schedule.js';

const PARTS = ['sync3', 'async3', 'rf1'].flatMap((store) => [0, 1, 2].map((partition) => ({ store, partition, replicationFactor: store === 'rf1' ? 1 : 3 })));

const kindsArb = fc.subarray([...FAULT_KINDS], { minLength: 1 });
const optsArb = fc.record({
  seed: fc.integer({ min: 0, max: 2 ** 48 }),
  durationMs: fc.integer({ min: 5_000, max: 1_200_000 }),
  kinds: kindsArb,
  preset: fc.constantFrom(...PRESET_NAMES),
  escalationTimeoutMs: fc.integer({ min: 500, max: 20_000 }),
  evictionTimeoutMs: fc.integer({ min: 5_000, max: 90_000 }),
  nodeCount: fc.constantFrom(3, 5),
  beyondBudget: fc.boolean(),
});
const plan = (o: Omit<PlanOptions, 'partitions'>): Schedule => planSchedule({ ...o, partitions: PARTS });
const base = { escalationTimeoutMs: 10_000, evictionTimeoutMs: 60_000, nodeCount: 3 };

/** Recursively rebuilds objects with their keys in a permuted order. */
function shuffleKeys(v: unknown, order: number[]): unknown {
  if (Array.isArray(v)) return v.map((x) => shuffleKeys(x, order));
  if (typeof v === 'object' && v !== null) {
    const keys = Object.keys(v);
    const permuted = keys.map((_, i) => keys[(i + (order[i % order.length] ?? 0)) % keys.length]);
    const out: Record<string, unknown> = {};
    for (const k of [...new Set([...permuted, ...keys])]) out[k] = shuffleKeys((v as Record<string, unknown>)[k], order);
    return out;
  }
  return v;
}

const ends = (f: PlannedFault): number => f.atMs + f.durationMs;

describe('parseFaults', () => {
  it('parses lists, all, none and presets', () => {
    expect(parseFaultKinds('kill,stop,pause,partition')).toEqual(['kill', 'stop', 'pause', 'partition']);
    expect(parseFaultKinds(' client-cut , KILL,kill,clock')).toEqual(['kill', 'clock', 'client-cut']);
    expect(parseFaults('all')).toEqual({ kinds: [...FAULT_KINDS], preset: 'random' });
    expect(parseFaults('none')).toEqual({ kinds: [], preset: 'random' });
    expect(parseFaults('preset:catch-up')).toEqual({ kinds: ['kill', 'pause', 'partition'], preset: 'catch-up' });
    expect(parseFaults(' PRESET:lease ')).toEqual({ kinds: ['kill', 'pause', 'partition'], preset: 'lease' });
  });

  it('rejects unknown kinds, presets and empty lists with one line', () => {
    expect(() => parseFaults('kill,nuke')).toThrow(new ScheduleError('FAULTS: unknown fault kind "nuke" (choose from kill, stop, pause, partition, power, clock, client-cut, membership (join, leave, rebalance), or all, none, preset:<name>)'));
    expect(() => parseFaults('preset:chaos')).toThrow(new ScheduleError('FAULTS: unknown preset "chaos" (choose from random, promotion, fencing, sync-ack, liveness, catch-up, lease, async)'));
    expect(() => parseFaults(' , ')).toThrow(ScheduleError);
    expect(() => parseFaults('kill,none')).toThrow('unknown fault kind "none"');
  });

  it('any selection in any order with repeats parses to that selection, in canonical order', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...FAULT_KINDS), { minLength: 1, maxLength: 12 }), (picked) => {
        const sel = parseFaults(picked.join(','));
        expect(sel.preset).toBe('random');
        expect(sel.kinds).toEqual(FAULT_KINDS.filter((k) => picked.includes(k)));
      }),
    );
  });

  it('every store bug of issue 12 has a preset, and every preset names only real kinds and episodes', () => {
    expect(Object.keys(PRESET_FOR_BUG).sort()).toEqual(
      ['catchup-skips-last-op', 'fencing-off-by-one', 'lose-on-promotion', 'never-replicate-async', 'no-possession-proof', 'skip-liveness-recheck', 'stale-owner-acks', 'sync-ack-before-replica'].sort(),
    );
    expect(PRESET_FOR_BUG['catchup-skips-last-op']).toBe('catch-up');
    expect(PRESET_FOR_BUG['stale-owner-acks']).toBe('lease');
    for (const p of PRESET_NAMES) for (const k of PRESETS[p].kinds) expect(FAULT_KINDS).toContain(k);
  });
});

describe('planSchedule', () => {
  it('is deterministic, and every plan validates and round-trips through JSON', () => {
    fc.assert(
      fc.property(optsArb, (o) => {
        const s = plan(o);
        expect(plan(o)).toEqual(s);
        expect(scheduleFromJson(scheduleToJson(s))).toEqual(s);
        for (let i = 0; i < s.faults.length; i++) {
          const f = s.faults[i];
          expect(ends(f)).toBeLessThanOrEqual(s.durationMs);
          expect(s.kinds).toContain(f.kind);
          if (i > 0) expect(f.atMs).toBeGreaterThanOrEqual(s.faults[i - 1].atMs);
          // references point back, and the event of a catch-up trigger is a crash
          if ('fault' in f.target) expect(f.target.fault).toBeLessThan(i);
          if (f.after?.fault !== undefined) expect(f.after.fault).toBeLessThan(i);
          if (f.after && (f.after.event === 'catching-up' || f.after.event === 'caught-up')) expect(CRASH_KINDS).toContain(s.faults[f.after.fault!].kind);
          // owner targets never name an RF1 partition (its crash losses are allowed by contract)
          if (f.target.role === 'active' || f.target.role === 'replica') expect(f.target.store).not.toBe('rf1');
        }
      }),
      { numRuns: 120 },
    );
  });

  it('durations do not shrink with the run: every run of 60 s or more has a pause and a partition past the escalation timeout', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1e9 }), fc.integer({ min: 60_000, max: 600_000 }), fc.constantFrom(2_000, 10_000), (seed, durationMs, esc) => {
        const s = plan({ ...base, seed, durationMs, escalationTimeoutMs: esc, kinds: ['kill', 'pause', 'partition'] });
        expect(s.faults.some((f) => f.kind === 'pause' && f.durationMs > esc)).toBe(true);
        expect(s.faults.some((f) => f.kind === 'partition' && f.durationMs > esc)).toBe(true);
      }),
      { numRuns: Number(process.env.ZARIS_SCHEDULE_RUNS ?? 60) },
    );
    // the counterexample fast-check found (a 140 s phase just holds the eviction-long fault; the
    // opening's long pause did not fit before it and was dropped): now planned after it
    const tight = plan({ ...base, seed: 2, durationMs: 140_000, escalationTimeoutMs: 10_000, kinds: ['kill', 'pause', 'partition'] });
    expect(tight.faults.some((f) => f.kind === 'pause' && f.durationMs > 10_000)).toBe(true);
    expect(tight.faults.some((f) => f.kind === 'partition' && f.durationMs > 10_000)).toBe(true);
    // and some stay under it
    const long = plan({ ...base, seed: 5, durationMs: 3_600_000, kinds: ['pause', 'partition'] });
    expect(long.faults.filter((f) => f.durationMs < 10_000).length).toBeGreaterThan(long.faults.length / 10);
    expect(long.faults.filter((f) => f.durationMs > 10_000).length).toBeGreaterThan(long.faults.length / 3);
  });

  it('one fault past the eviction timeout, ending 40 s before the phase, when the phase holds it twice over and a minute more; a crash within budget when a store has RF1', () => {
    for (const seed of [1, 2, 3, 4]) {
      const long = plan({ ...base, seed, durationMs: 200_000, kinds: ['kill', 'pause', 'partition'] });
      const evicting = long.faults.filter((f) => f.durationMs > 60_000);
      expect(evicting.length).toBe(1);
      expect(ends(evicting[0])).toBe(200_000 - 40_000);
      expect(['kill', 'stop']).toContain(evicting[0].kind);
      // the rest of the phase has faults again
      expect(long.faults.some((f) => f.atMs > ends(evicting[0]))).toBe(true);
      // a 3-minute run is left to its episodes (on 3 nodes the budget lets little run beside it)
      expect(plan({ ...base, seed, durationMs: 199_000, kinds: ['kill', 'pause', 'partition'] }).faults.every((f) => f.durationMs < 60_000)).toBe(true);
    }
    // without RF1 partitions, or beyond budget, a pause or an isolation may outlast the eviction timeout too
    const noRf1 = PARTS.filter((p) => p.replicationFactor > 1);
    const kinds = new Set(
      [1, 2, 3, 4, 5, 6, 7, 8].flatMap((seed) => planSchedule({ ...base, seed, durationMs: 200_000, kinds: ['kill', 'pause', 'partition'], partitions: noRf1 }).faults.filter((f) => f.durationMs > 60_000).map((f) => f.kind)),
    );
    expect([...kinds].sort()).toEqual(['kill', 'partition', 'pause']);
    expect(faultDurations(10_000, 60_000).isolateEvict.lo).toBe(61_000);
  });

  it('every selected kind is planned in a run of 90 s (the opening has one of each)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1e9 }), kindsArb, (seed, kinds) => {
        const s = plan({ ...base, seed, durationMs: 90_000, kinds, nodeCount: 5 });
        for (const k of kinds) expect(s.faults.some((f) => f.kind === k), k).toBe(true);
      }),
      { numRuns: 100 },
    );
  });

  it(`plans at least ${MIN_KILLS} kills in the first 15 s when kill is selected`, () => {
    fc.assert(
      fc.property(optsArb, fc.integer({ min: 15_000, max: 120_000 }), (o, durationMs) => {
        const kinds: FaultKind[] = o.kinds.includes('kill') ? o.kinds : ['kill', ...o.kinds];
        const s = plan({ ...o, kinds, durationMs, preset: 'random' });
        expect(s.faults.filter((f) => f.kind === 'kill' && f.atMs < 15_000).length).toBeGreaterThanOrEqual(MIN_KILLS);
      }),
      { numRuns: 150 },
    );
  });

  it('faults overlap within budget, and the dangerous follow-ups are planned: while and right after a replica catches up, at a failback, when an isolation heals', () => {
    const s = plan({ ...base, seed: 8, durationMs: 1_800_000, kinds: [...FAULT_KINDS] });
    const overlapping = s.faults.filter((f, i) => s.faults.slice(0, i).some((g) => ends(g) > f.atMs));
    expect(overlapping.length).toBeGreaterThan(s.faults.length / 5);
    const events = new Set(s.faults.map((f) => f.after?.event).filter(Boolean));
    expect([...events].sort()).toEqual(['catching-up', 'caught-up', 'ended', 'failback', 'node-caught-up', 'started']);
    const roles = new Set(s.faults.map((f) => f.target.role));
    for (const r of ['active', 'leader', 'replica', 'random', 'catching-up', 'same', 'active-over', 'active-of']) expect(roles).toContain(r);
    // every kind is aimed at a replica catching up somewhere in a long run
    const day = plan({ ...base, seed: 8, durationMs: 4 * 3_600_000, kinds: [...FAULT_KINDS] });
    for (const k of ['kill', 'stop', 'pause', 'partition', 'clock', 'client-cut'] as FaultKind[]) expect(day.faults.some((f) => f.kind === k && f.target.role === 'catching-up'), k).toBe(true);
  });

  it('aimed like the simulation (issue 12): promotion opens with a lag-crash of an async partition, catch-up with a resync-crash of a sync one, fencing with a zombie-crash of an async one', () => {
    const parts = PARTS.map((p) => ({ ...p, ackMode: p.store === 'async3' ? ('async' as const) : ('sync' as const) }));
    for (let seed = 1; seed <= 30; seed++) {
      const pr = planSchedule({ ...base, seed, durationMs: 180_000, kinds: [...PRESETS.promotion.kinds], preset: 'promotion', partitions: parts });
      // the heir drops its active's traffic; LAG ms after the cut took effect the active is killed
      const [cut, kill] = pr.faults;
      expect(cut).toMatchObject({ kind: 'partition', topology: 'one-way', direction: 'in', target: { role: 'heir', store: 'async3' } });
      expect(cut.peer?.target).toEqual({ role: 'active', store: (cut.target as { store: string }).store, partition: (cut.target as { partition: number }).partition });
      expect(kill).toMatchObject({ kind: 'kill', target: { role: 'active-of', fault: 0 }, after: { event: 'started', fault: 0 } });
      // under the nodes' replication timeout (600 ms), past which the heir would leave the in-sync set
      expect(kill.after!.delayMs).toBeGreaterThanOrEqual(200);
      expect(kill.after!.delayMs).toBeLessThanOrEqual(400);
      expect(cut.durationMs).toBeGreaterThan(kill.after!.delayMs);
      const lagCrashes = pr.faults.filter((f) => f.kind === 'kill' && f.after?.event === 'started').length;
      expect(lagCrashes).toBeGreaterThanOrEqual(2);
      const cu = planSchedule({ ...base, seed, durationMs: 180_000, kinds: [...PRESETS['catch-up'].kinds], preset: 'catch-up', partitions: parts });
      const [hit, crash] = cu.faults;
      expect(['pause', 'partition']).toContain(hit.kind);
      expect(hit.target).toMatchObject({ role: 'heir', store: 'sync3' });
      expect(hit.durationMs).toBeLessThan(base.escalationTimeoutMs);
      expect(crash).toMatchObject({ kind: 'kill', target: { role: 'active-of', fault: 0 }, after: { event: 'node-caught-up', name: hit.bind } });
      const names = cu.faults.map((f) => f.bind).filter((b) => b !== undefined);
      expect(new Set(names).size).toBe(names.length);
      expect(names.length).toBeGreaterThanOrEqual(3);
      const fe = planSchedule({ ...base, seed, durationMs: 180_000, kinds: [...PRESETS.fencing.kinds], preset: 'fencing', partitions: parts });
      const [cut0, succ] = fe.faults;
      expect(cut0).toMatchObject({ kind: 'partition', topology: 'isolate', target: { role: 'preferred', store: 'async3' } });
      expect(cut0.durationMs).toBeGreaterThan(base.escalationTimeoutMs);
      // the successor's crash waits for the zombie back in sync in the partition aimed at, not in every one
      const aimed = cut0.target as { store: string; partition: number };
      expect(succ).toMatchObject({ kind: 'kill', target: { role: 'active-of', fault: 0 }, after: { event: 'node-caught-up', name: cut0.bind, store: aimed.store, partition: aimed.partition } });
      // the third copy crashed the moment the successor is back (both rebuild from the new owner)
      expect(fe.faults[2]).toMatchObject({ kind: 'kill', target: { role: 'heir', store: (cut0.target as { store: string }).store, partition: (cut0.target as { partition: number }).partition }, after: { event: 'ended', fault: 1 } });
      expect(fe.faults[2].after!.delayMs).toBeLessThanOrEqual(150);
      // two zombie-crash episodes lead the fencing preset
      expect(fe.faults.filter((f) => f.kind === 'kill' && f.target.role === 'heir' && f.after?.event === 'ended').length).toBeGreaterThanOrEqual(2);
      expect(scheduleFromJson(scheduleToJson(fe))).toEqual(fe);
      // replayable: the new roles and triggers validate
      expect(scheduleFromJson(scheduleToJson(pr))).toEqual(pr);
      expect(scheduleFromJson(scheduleToJson(cu))).toEqual(cu);
    }
  });

  it('the default mix (no FAULTS=) meets every bug class in 3 minutes: an early kill of a sync and of an async owner, an async owner cut off past its lease, a lag-crash, a resync-crash and a zombie-crash of an async partition, a short isolation of an owner and a flapping cut', () => {
    const parts = PARTS.map((p) => ({ ...p, ackMode: p.store === 'sync3' ? ('sync' as const) : ('async' as const) }));
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1e9 }), (seed) => {
        const s = planSchedule({ ...base, seed, durationMs: 180_000, kinds: [...FAULT_KINDS], partitions: parts });
        expect(s.preset).toBe('random');
        const storeOf = (f: PlannedFault): string | undefined => (f.target as { store?: string }).store;
        const kills = s.faults.filter((f) => f.kind === 'kill' && f.target.role === 'active');
        expect(storeOf(kills[0])).toBe('sync3');
        expect(storeOf(kills[1])).toBe('async3');
        expect(s.faults.some((f) => f.kind === 'partition' && f.topology === 'isolate' && f.target.role === 'active' && storeOf(f) === 'async3' && f.durationMs > base.escalationTimeoutMs)).toBe(true);
        // lag-crash: the heir of an async partition drops its active's traffic, then the active is killed
        expect(s.faults.some((f, i) => f.topology === 'one-way' && f.target.role === 'heir' && storeOf(f) === 'async3' && s.faults.some((g) => g.kind === 'kill' && g.after?.event === 'started' && g.after.fault === i))).toBe(true);
        // resync-crash: the heir of a sync partition, then its active killed when it is back in sync
        expect(s.faults.some((f) => f.target.role === 'heir' && storeOf(f) === 'sync3' && f.bind !== undefined && s.faults.some((g) => g.after?.event === 'node-caught-up' && g.after.name === f.bind))).toBe(true);
        // zombie-crash: an async partition's preferred primary cut off past the escalation timeout
        const zombie = s.faults.find((f) => f.target.role === 'preferred' && storeOf(f) === 'async3' && f.durationMs > base.escalationTimeoutMs && f.bind !== undefined);
        expect(zombie).toBeDefined();
        // its successor killed once the zombie is back in sync in that partition (in a mix of faults it may lag elsewhere)
        const zt = zombie!.target as { store: string; partition: number };
        expect(s.faults.some((g) => g.after?.event === 'node-caught-up' && g.after.name === zombie!.bind && g.after.store === zt.store && g.after.partition === zt.partition)).toBe(true);
        // brief silences of owners (skip-liveness-recheck): a short isolation of an active, below
        // the escalation timeout, and a flapping cut
        expect(s.faults.some((f) => f.kind === 'partition' && f.topology === 'isolate' && f.target.role === 'active' && f.flap === undefined && f.durationMs < base.escalationTimeoutMs)).toBe(true);
        expect(s.faults.some((f) => f.kind === 'partition' && f.flap !== undefined)).toBe(true);
        // nothing outlasts the eviction timeout in a 3-minute run
        expect(s.faults.every((f) => f.durationMs < 60_000)).toBe(true);
      }),
      { numRuns: 60 },
    );
  });

  it('every fault kind is aimed at active owners and at the leader', () => {
    const s = plan({ ...base, seed: 21, durationMs: 7_200_000, kinds: [...FAULT_KINDS], nodeCount: 5 });
    for (const k of ['kill', 'stop', 'pause', 'partition', 'clock', 'client-cut'] as FaultKind[]) {
      const roles = new Set(s.faults.filter((f) => f.kind === k).map((f) => f.target.role));
      expect(roles, k).toContain('active');
      if (k !== 'client-cut') expect(roles, k).toContain('leader');
    }
    const topologies = new Set(s.faults.filter((f) => f.kind === 'partition').map((f) => f.topology));
    expect([...topologies].sort()).toEqual(['bridge', 'halves', 'isolate', 'one-way']);
    expect(s.faults.some((f) => f.flap !== undefined)).toBe(true);
    const clocks = s.faults.filter((f) => f.kind === 'clock');
    expect(clocks.every((f) => f.clock!.jumpMs % 1000 === 0 && Math.abs(f.clock!.jumpMs) >= 5_000 && f.clock!.rate >= 0.5 && f.clock!.rate <= 2)).toBe(true);
  });

  it('power failures: never within budget with 3 nodes, two of five within budget, up to all beyond it', () => {
    const k: FaultKind[] = ['kill', 'power'];
    expect(plan({ ...base, seed: 3, durationMs: 3_600_000, kinds: k }).faults.some((f) => f.kind === 'power')).toBe(false);
    const five = plan({ ...base, seed: 3, durationMs: 3_600_000, kinds: k, nodeCount: 5 }).faults.filter((f) => f.kind === 'power');
    expect(five.length).toBeGreaterThan(0);
    expect(five.every((f) => f.count === 2)).toBe(true);
    const beyond = plan({ ...base, seed: 3, durationMs: 3_600_000, kinds: k, beyondBudget: true }).faults.filter((f) => f.kind === 'power');
    expect(beyond.some((f) => f.count === 3)).toBe(true);
  });

  it('presets draw only their kinds, and aim owner faults at their stores', () => {
    for (const name of PRESET_NAMES) {
      const p = PRESETS[name];
      const s = plan({ ...base, seed: 31, durationMs: 1_200_000, kinds: [...p.kinds], preset: name, nodeCount: 5 });
      expect(s.preset).toBe(name);
      expect(s.faults.length).toBeGreaterThan(10);
      for (const f of s.faults) expect(p.kinds).toContain(f.kind);
      if (p.stores) {
        const owners = s.faults.filter((f) => f.target.role === 'active' || f.target.role === 'replica');
        expect(owners.length).toBeGreaterThan(0);
        for (const f of owners) expect(p.stores).toContain((f.target as { store: string }).store);
      }
    }
    const cu = plan({ ...base, seed: 4, durationMs: 600_000, kinds: [...PRESETS['catch-up'].kinds], preset: 'catch-up' });
    expect(cu.faults.filter((f) => f.after?.event === 'caught-up').length).toBeGreaterThan(3);
  });

  it('small clusters: no halves or bridge under 3 nodes; partitions refused with 1 node; no kinds, no faults', () => {
    const s = plan({ ...base, seed: 3, durationMs: 600_000, kinds: ['partition'], nodeCount: 2 });
    expect(s.faults.length).toBeGreaterThan(0);
    expect(s.faults.every((f) => f.topology !== 'halves' && f.topology !== 'bridge')).toBe(true);
    expect(() => plan({ ...base, seed: 3, durationMs: 60_000, kinds: ['partition'], nodeCount: 1 })).toThrow('partition faults need at least 2 nodes');
    expect(plan({ ...base, seed: 3, durationMs: 60_000, kinds: [] }).faults).toEqual([]);
  });

  it('the digest of a fixed plan changes only with the generator', () => {
    const s = planSchedule({ seed: 42, durationMs: 60_000, kinds: [...FAULT_KINDS], escalationTimeoutMs: 10_000, nodeCount: 3, partitions: PARTS });
    expect(scheduleDigest(s)).toBe(GOLDEN_DIGEST_SEED_42);
  });
});

/** Digest of seed 42, 60 s, every kind, escalation 10 s, eviction 60 s, 3 nodes, PARTS. */
const GOLDEN_DIGEST_SEED_42 = 'c2c4ae8e05f3f3ce0b7ebf4b804ba8125816deb1a1245bf624be1b2cba59744f';

describe('digest and replay', () => {
  it('the digest does not depend on JSON key order; replay gives the same schedule', () => {
    fc.assert(
      fc.property(optsArb, fc.array(fc.nat(7), { minLength: 1, maxLength: 5 }), (o, order) => {
        const s = plan({ ...o, durationMs: Math.min(o.durationMs, 300_000) });
        const text = JSON.stringify(shuffleKeys(JSON.parse(scheduleToJson(s)), order), null, 1);
        const back = scheduleFromJson(text);
        expect(back).toEqual(s);
        expect(scheduleDigest(back)).toBe(scheduleDigest(s));
      }),
      { numRuns: 50 },
    );
  });

  it('canonicalJson sorts keys at every level and drops undefined members', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: 2 }], c: undefined } })).toBe('{"a":{"d":[1,{"y":2,"z":1}]},"b":1}');
    expect(() => canonicalJson({ a: Number.NaN })).toThrow('non-finite');
  });

  it('reads a zaris-schedule/1 (the runs before issue 12) as the same faults', () => {
    const v1 = {
      format: 'zaris-schedule/1',
      seed: 4,
      durationMs: 60_000,
      kinds: ['kill', 'partition'],
      escalationTimeoutMs: 10_000,
      nodeCount: 3,
      beyondBudget: false,
      faults: [
        { kind: 'kill', target: { role: 'leader' }, atMs: 1_000, durationMs: 2_000, calmMs: 1_000 },
        { kind: 'partition', topology: 'active', target: { role: 'active', store: 'sync3', partition: 1 }, atMs: 5_000, durationMs: 3_000, calmMs: 1_000 },
      ],
    };
    const s = scheduleFromJson(JSON.stringify(v1));
    expect(s.format).toBe(SCHEDULE_FORMAT);
    expect(s.preset).toBe('random');
    expect(s.evictionTimeoutMs).toBe(60_000);
    expect(s.faults).toEqual([
      { kind: 'kill', target: { role: 'leader' }, atMs: 1_000, durationMs: 2_000 },
      { kind: 'partition', topology: 'active', target: { role: 'active', store: 'sync3', partition: 1 }, atMs: 5_000, durationMs: 3_000 },
    ]);
    const overlap = { ...v1, faults: [v1.faults[0], { ...v1.faults[1], atMs: 3_500 }] };
    expect(() => scheduleFromJson(JSON.stringify(overlap))).toThrow('faults[1] overlaps faults[0] and its calm gap, which only a beyondBudget schedule allows');
  });

  it('rejects bad recorded schedules with one line', () => {
    // the first seed whose 5-minute plan has every kind the cases edit
    let good = plan({ ...base, seed: 0, durationMs: 300_000, kinds: ['kill', 'partition', 'clock', 'power'], nodeCount: 5 });
    for (let seed = 1; !['kill', 'partition', 'clock', 'power'].every((k) => good.faults.some((f) => f.kind === k)); seed++) {
      good = plan({ ...base, seed, durationMs: 300_000, kinds: ['kill', 'partition', 'clock', 'power'], nodeCount: 5 });
    }
    const idx = (p: (f: PlannedFault) => boolean): number => {
      const i = good.faults.findIndex(p);
      expect(i).toBeGreaterThanOrEqual(0);
      return i;
    };
    const k = idx((f) => f.kind === 'kill');
    // a partition with no peer (the default mix's lead lag-crash opens with a one-way cut, whose peer
    // the bridge case would be refused for first)
    const p = idx((f) => f.kind === 'partition' && (f as { peer?: unknown }).peer === undefined);
    const c = idx((f) => f.kind === 'clock');
    const w = idx((f) => f.kind === 'power');
    const edit = (f: (s: Record<string, any>) => void): string => {
      const s = JSON.parse(scheduleToJson(good));
      f(s);
      return JSON.stringify(s);
    };
    const cases: Array<[string, string]> = [
      ['{', 'schedule: not valid JSON'],
      [edit((s) => (s.format = 'x')), 'format must be "zaris-schedule/2" (or "zaris-schedule/1")'],
      [edit((s) => (s.extra = 1)), 'top level: unknown field "extra"'],
      [edit((s) => (s.preset = 'chaos')), 'preset must be one of random, promotion'],
      [edit((s) => (s.faults[0].durationMs = 0)), 'faults[0].durationMs must be an integer >= 1'],
      [edit((s) => (s.faults[k].kind = 'pause')), `faults[${k}].kind must be one of the schedule's kinds`],
      [edit((s) => (s.faults[1].atMs = s.faults[0].atMs - 1)), 'faults[1] starts before faults[0]'],
      [edit((s) => (s.faults[0].atMs = s.durationMs)), 'after the fault phase'],
      [edit((s) => (s.faults[0].target = { role: 'boss' })), 'faults[0].target.role must be one of node, leader, random, active, replica'],
      [edit((s) => (s.faults[0].target = { role: 'same', fault: 0 })), 'faults[0].target.fault must name an earlier fault (< 0), got 0'],
      [edit((s) => (s.kinds = ['kill', 'kill'])), 'kinds: a kind is listed twice'],
      [edit((s) => Object.assign(s.faults[k], { topology: 'halves' })), `faults[${k}]: topology is only for partition faults`],
      [edit((s) => Object.assign(s.faults[p], { topology: 'bridge', target: { role: 'leader' } })), `faults[${p}]: topology bridge cannot take a leader target`],
      [edit((s) => Object.assign(s.faults[p], { topology: 'isolate', direction: 'in' })), `faults[${p}]: direction is only for one-way partitions`],
      [edit((s) => Object.assign(s.faults[p], { flap: { onMs: 50, offMs: 500 } })), `faults[${p}].flap.onMs must be an integer >= 100`],
      [edit((s) => (s.faults[c].clock.rate = 9)), `faults[${c}].clock.rate must be within 0.25..4, got 9`],
      [edit((s) => (s.faults[c].clock.jumpMs = 1500)), `faults[${c}].clock.jumpMs must be whole seconds within a day, got 1500`],
      [edit((s) => (s.faults[w].count = 6)), `faults[${w}].count must be at most the node count (5), got 6`],
      [edit((s) => Object.assign(s.faults[1], { after: { event: 'soon', fault: 0, delayMs: 0, waitMs: 0 } })), 'faults[1].after.event must be one of catching-up, caught-up, failback, ended'],
      [edit((s) => Object.assign(s.faults[1], { after: { event: 'ended', delayMs: 0, waitMs: 0 } })), 'faults[1].after.fault is required for ended'],
      [edit((s) => Object.assign(s.faults[p + 1], { after: { event: 'caught-up', fault: p, delayMs: 0, waitMs: 0 } })), `faults[${p + 1}].after: caught-up needs a crash fault (kill, stop, power), faults[${p}] is a partition`],
    ];
    for (const [text, msg] of cases) {
      let err: unknown;
      try {
        scheduleFromJson(text);
      } catch (e) {
        err = e;
      }
      expect(err, msg).toBeInstanceOf(ScheduleError);
      expect((err as Error).message).toContain(msg);
      expect((err as Error).message).not.toContain('\n');
    }
  });
});

describe('membership changes (issue 14)', () => {
  it('FAULTS: membership selects join, leave and rebalance (or those by name); all leaves them out (they need a spare)', () => {
    expect(parseFaultKinds('kill,membership,pause')).toEqual(['kill', 'pause', 'join', 'leave', 'rebalance']);
    expect(parseFaultKinds('leave, JOIN')).toEqual(['join', 'leave']);
    expect(parseFaults('all').kinds).not.toContain('join');
    expect(MEMBERSHIP_KINDS).toEqual(['join', 'leave', 'rebalance']);
  });

  it('one change every 60-90 s from 20-40 s in, join before leave, never fewer members than at the start; half followed by a crash mid-move', () => {
    const isM = (f: PlannedFault): boolean => (MEMBERSHIP_KINDS as readonly string[]).includes(f.kind);
    let crashes = 0;
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 48 }), fc.integer({ min: 1_000, max: 1_200_000 }), fc.subarray([...MEMBERSHIP_KINDS], { minLength: 1 }), fc.constantFrom(3, 5), fc.boolean(), fc.integer({ min: 0, max: 40 }), (seed, durationMs, mk, voters, withKill, base) => {
        const kinds: FaultKind[] = withKill ? ['kill', ...mk] : [...mk];
        const all = planMembership(seed, durationMs, kinds, base);
        expect(planMembership(seed, durationMs, kinds, base)).toEqual(all);
        const fs = all.filter(isM);
        let members = voters;
        for (let i = 0; i < fs.length; i++) {
          const f = fs[i];
          expect(kinds).toContain(f.kind);
          expect(f.durationMs).toBe(0);
          expect(f.atMs).toBeLessThanOrEqual(durationMs - 15_000);
          if (i === 0) expect(f.atMs).toBeGreaterThanOrEqual(20_000), expect(f.atMs).toBeLessThanOrEqual(40_000);
          else expect(f.atMs - fs[i - 1].atMs).toBeGreaterThanOrEqual(60_000), expect(f.atMs - fs[i - 1].atMs).toBeLessThanOrEqual(90_000);
          expect(f.target).toEqual(f.kind === 'join' ? { role: 'outside' } : f.kind === 'leave' ? { role: 'member' } : { role: 'leader' });
          // the plan's own count (with joins and leaves both selected they alternate, a join first)
          if (kinds.includes('join') && kinds.includes('leave')) {
            members += f.kind === 'join' ? 1 : f.kind === 'leave' ? -1 : 0;
            expect(members).toBeGreaterThanOrEqual(voters);
            expect(members).toBeLessThanOrEqual(voters + 1);
          }
        }
        // the crashes: right after their request (by index, base-relative), short, within the phase, only with kill selected
        all.forEach((f, i) => {
          if (isM(f)) return;
          crashes++;
          expect(withKill).toBe(true);
          expect(f.kind).toBe('kill');
          const req = all[i - 1];
          expect(['join', 'leave']).toContain(req.kind);
          expect(f.target).toEqual(req.kind === 'join' ? { role: 'active-over', fault: base + i - 1 } : { role: 'same', fault: base + i - 1 });
          expect(f.after).toMatchObject({ event: 'started', fault: base + i - 1, onMiss: 'skip' });
          expect(f.after!.delayMs).toBeGreaterThanOrEqual(1_000);
          expect(f.atMs + f.after!.delayMs + f.durationMs).toBeLessThanOrEqual(durationMs);
          expect(f.durationMs).toBeGreaterThanOrEqual(1_000);
          expect(f.durationMs).toBeLessThanOrEqual(3_000);
        });
      }),
      { numRuns: 300 },
    );
    expect(crashes).toBeGreaterThan(0);
    // a 10-minute run holds several joins and leaves
    const ten = planMembership(5, 600_000, MEMBERSHIP_KINDS);
    expect(ten.filter((f) => f.kind === 'join').length).toBeGreaterThanOrEqual(3);
    expect(ten.filter((f) => f.kind === 'leave').length).toBeGreaterThanOrEqual(3);
    expect(ten.filter((f) => f.kind === 'rebalance').length).toBeGreaterThanOrEqual(1);
    expect(planMembership(5, 30_000, MEMBERSHIP_KINDS)).toEqual([]);
  });

  it('selecting membership adds the changes and leaves every other fault of the seed as it was', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 40 }), fc.integer({ min: 30_000, max: 700_000 }), (seed, durationMs) => {
        const base: PlanOptions = { seed, durationMs, kinds: ['kill', 'pause', 'partition'], escalationTimeoutMs: 10_000, nodeCount: 3, partitions: PARTS };
        const without = planSchedule(base);
        const withM = planSchedule({ ...base, kinds: ['kill', 'pause', 'partition', 'join', 'leave', 'rebalance'] });
        expect(withM.kinds).toEqual(['kill', 'pause', 'partition', 'join', 'leave', 'rebalance']);
        // the membership track: the requests and the crashes that wait for one of them
        const isM = (f: PlannedFault): boolean => (MEMBERSHIP_KINDS as readonly string[]).includes(f.kind);
        const track = (f: PlannedFault): boolean => isM(f) || (f.after?.event === 'started' && isM(withM.faults[f.after.fault!]));
        const shape = (f: PlannedFault) => [f.kind, f.atMs, f.durationMs, f.target.role, f.topology ?? null];
        expect(withM.faults.filter((f) => !track(f)).map(shape)).toEqual(without.faults.map(shape));
        expect(withM.faults.filter(track).map(shape)).toEqual(planMembership(seed, durationMs, withM.kinds).map(shape));
        expect(scheduleFromJson(scheduleToJson(withM))).toEqual(withM);
      }),
      { numRuns: 60 },
    );
  });

  it('a leave is only offered when nothing is pending and at least the voters stay members (never fewer than 1); joined nodes first', () => {
    const entry = fc.record({ id: fc.constantFrom('n1', 'n2', 'n3', 'n4', 'n5', 'n6'), state: fc.constantFrom('joining' as const, 'member' as const, 'leaving' as const) });
    fc.assert(
      fc.property(fc.uniqueArray(entry, { selector: (e) => e.id, maxLength: 6 }), fc.integer({ min: -1, max: 6 }), fc.array(fc.constantFrom('n1', 'n4', 'n5', 'n9')), (members, min, joined) => {
        const c = leaveCandidates(members, min, joined);
        if (c.length === 0) return;
        expect(members.every((m) => m.state === 'member')).toBe(true);
        expect(members.length - 1).toBeGreaterThanOrEqual(Math.max(1, min));
        expect([...c].sort()).toEqual(members.map((m) => m.id).sort());
        const late = [...joined].reverse().filter((n, i, a) => members.some((m) => m.id === n) && a.indexOf(n) === i);
        expect(c.slice(0, late.length)).toEqual(late);
      }),
      { numRuns: 500 },
    );
    const m = (ids: string[]) => ids.map((id) => ({ id, state: 'member' as const }));
    expect(leaveCandidates(m(['n1', 'n2', 'n3', 'n4']), 3, ['n4'])).toEqual(['n4', 'n1', 'n2', 'n3']);
    expect(leaveCandidates(m(['n1', 'n2', 'n3']), 3, [])).toEqual([]);
    expect(leaveCandidates(m(['n1']), 0, [])).toEqual([]);
    expect(leaveCandidates(m(['n1', 'n2']), 0, [])).toEqual(['n1', 'n2']);
  });
});
