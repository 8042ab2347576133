import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  canonicalJson,
  FAULT_KINDS,
  faultRanges,
  MIN_KILLS,
  parseFaultKinds,
  planSchedule,
  scheduleDigest,
  scheduleFromJson,
  scheduleToJson,
  ScheduleError,
  type FaultKind,
  type PlanOptions,
  type Schedule,
} from './schedule.js';

const PARTS = ['sync3', 'async3', 'rf1'].flatMap((store) => [0, 1, 2].map((partition) => ({ store, partition })));

const kindsArb = fc.subarray([...FAULT_KINDS], { minLength: 1 });
const optsArb = fc.record({
  seed: fc.integer({ min: 0, max: 2 ** 48 }),
  durationMs: fc.integer({ min: 5_000, max: 1_200_000 }),
  kinds: kindsArb,
  escalationTimeoutMs: fc.integer({ min: 500, max: 20_000 }),
  nodeCount: fc.integer({ min: 3, max: 7 }),
  beyondBudget: fc.boolean(),
});
const plan = (o: Omit<PlanOptions, 'partitions'>): Schedule => planSchedule({ ...o, partitions: PARTS });

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

describe('parseFaultKinds', () => {
  it('parses lists, all and none', () => {
    expect(parseFaultKinds('kill,stop,pause,partition')).toEqual(['kill', 'stop', 'pause', 'partition']);
    expect(parseFaultKinds(' partition , KILL,kill')).toEqual(['kill', 'partition']);
    expect(parseFaultKinds('all')).toEqual([...FAULT_KINDS]);
    expect(parseFaultKinds('none')).toEqual([]);
  });

  it('rejects unknown kinds and empty lists with one line', () => {
    expect(() => parseFaultKinds('kill,nuke')).toThrow(new ScheduleError('FAULTS: unknown fault kind "nuke" (choose from kill, stop, pause, partition, or all, none)'));
    expect(() => parseFaultKinds(' , ')).toThrow(ScheduleError);
    expect(() => parseFaultKinds('kill,none')).toThrow('unknown fault kind "none"');
  });

  it('any selection in any order with repeats parses to that selection, in canonical order', () => {
    fc.assert(
      fc.property(kindsArb, fc.array(fc.nat(), { maxLength: 8 }), (kinds, noise) => {
        const words = [...kinds, ...noise.map((n) => kinds[n % kinds.length])].reverse();
        expect(parseFaultKinds(words.join(','))).toEqual(FAULT_KINDS.filter((k) => kinds.includes(k)));
      }),
    );
  });
});

describe('planSchedule', () => {
  it('the same inputs give the same schedule and digest', () => {
    fc.assert(
      fc.property(optsArb, (o) => {
        const a = plan(o);
        const b = plan(o);
        expect(a).toEqual(b);
        expect(scheduleDigest(a)).toBe(scheduleDigest(b));
        expect(scheduleDigest(a)).toMatch(/^[0-9a-f]{64}$/);
      }),
      { numRuns: 60 },
    );
  });

  it('different seeds give different fault lists', () => {
    fc.assert(
      fc.property(fc.nat(), fc.nat(), (s1, s2) => {
        fc.pre(s1 !== s2);
        const o = { durationMs: 120_000, kinds: [...FAULT_KINDS], escalationTimeoutMs: 10_000, nodeCount: 5 };
        expect(plan({ ...o, seed: s1 }).faults).not.toEqual(plan({ ...o, seed: s2 }).faults);
      }),
      { numRuns: 60 },
    );
  });

  it('a fixed seed keeps its digest across versions (replay and results.json compare it)', () => {
    const s = plan({ seed: 42, durationMs: 60_000, kinds: [...FAULT_KINDS], escalationTimeoutMs: 10_000, nodeCount: 3 });
    expect(s.faults.length).toBeGreaterThan(3);
    expect(scheduleDigest(s)).toBe(GOLDEN_DIGEST_SEED_42);
  });

  it('only selected kinds appear; every fault ends within the phase; topology only on partitions', () => {
    fc.assert(
      fc.property(optsArb, (o) => {
        const s = plan(o);
        for (const f of s.faults) {
          expect(o.kinds).toContain(f.kind);
          expect(f.atMs + f.durationMs).toBeLessThanOrEqual(o.durationMs);
          expect(f.topology !== undefined).toBe(f.kind === 'partition');
        }
      }),
      { numRuns: 80 },
    );
  });

  it('within budget, a fault starts at or after the previous end plus its calm gap', () => {
    fc.assert(
      fc.property(optsArb, (o) => {
        const s = plan({ ...o, beyondBudget: false });
        for (let i = 1; i < s.faults.length; i++) {
          const p = s.faults[i - 1];
          expect(s.faults[i].atMs).toBeGreaterThanOrEqual(p.atMs + p.durationMs + p.calmMs);
        }
      }),
      { numRuns: 80 },
    );
  });

  it('beyond budget, faults do overlap in a long run and the schedule still validates', () => {
    const s = plan({ seed: 9, durationMs: 600_000, kinds: [...FAULT_KINDS], escalationTimeoutMs: 10_000, nodeCount: 5, beyondBudget: true });
    const overlaps = s.faults.filter((f, i) => i > 0 && f.atMs < s.faults[i - 1].atMs + s.faults[i - 1].durationMs).length;
    expect(overlaps).toBeGreaterThan(5);
    expect(scheduleFromJson(scheduleToJson(s))).toEqual(s);
  });

  it(`short runs still plan >= ${MIN_KILLS} kills when kill is selected`, () => {
    fc.assert(
      fc.property(optsArb, fc.integer({ min: 15_000, max: 120_000 }), (o, durationMs) => {
        const kinds: FaultKind[] = o.kinds.includes('kill') ? o.kinds : ['kill', ...o.kinds];
        const s = plan({ ...o, kinds, durationMs });
        expect(s.faults.filter((f) => f.kind === 'kill').length).toBeGreaterThanOrEqual(MIN_KILLS);
      }),
      { numRuns: 150 },
    );
    const sixty = plan({ seed: 1, durationMs: 60_000, kinds: ['kill'], escalationTimeoutMs: 10_000, nodeCount: 3 });
    expect(sixty.faults.length).toBeGreaterThanOrEqual(MIN_KILLS);
  });

  it('durations follow the ranges: crash 1-6 s, pause 1-15 s, partition 3-25 s, calm 1-5 s', () => {
    fc.assert(
      fc.property(optsArb, (o) => {
        const s = plan({ ...o, escalationTimeoutMs: 10_000 });
        for (const f of s.faults) {
          const [lo, hi] = f.kind === 'kill' || f.kind === 'stop' ? [1_000, 6_000] : f.kind === 'pause' ? [1_000, 15_000] : [3_000, 25_000];
          expect(f.durationMs).toBeGreaterThanOrEqual(lo);
          expect(f.durationMs).toBeLessThanOrEqual(hi);
          expect(f.calmMs).toBeGreaterThanOrEqual(1_000);
          expect(f.calmMs).toBeLessThanOrEqual(5_000);
        }
      }),
      { numRuns: 80 },
    );
  });

  it('some pauses outlast the escalation timeout and some do not', () => {
    for (const esc of [2_000, 10_000]) {
      const s = plan({ seed: 5, durationMs: 3_600_000, kinds: ['pause'], escalationTimeoutMs: esc, nodeCount: 3 });
      expect(s.faults.filter((f) => f.durationMs > esc).length).toBeGreaterThan(s.faults.length / 5);
      expect(s.faults.filter((f) => f.durationMs < esc).length).toBeGreaterThan(s.faults.length / 5);
    }
    expect(faultRanges(60_000, 10_000).longPause.lo).toBe(10_500);
  });

  it('targeted kills of the leader and of active owners are the common case', () => {
    const s = plan({ seed: 11, durationMs: 3_600_000, kinds: ['kill', 'partition'], escalationTimeoutMs: 10_000, nodeCount: 5 });
    const kills = s.faults.filter((f) => f.kind === 'kill');
    const leader = kills.filter((f) => f.target.role === 'leader').length;
    const active = kills.filter((f) => f.target.role === 'active').length;
    expect(leader).toBeGreaterThan(kills.length / 5);
    expect(active).toBeGreaterThan(kills.length / 5);
    expect(leader + active).toBeGreaterThan(kills.length / 2);
    const topologies = new Set(s.faults.filter((f) => f.kind === 'partition').map((f) => f.topology));
    expect([...topologies].sort()).toEqual(['active', 'bridge', 'halves', 'isolate', 'leader']);
  });

  it('small clusters: no halves or bridge under 3 nodes; partitions refused with 1 node', () => {
    const s = plan({ seed: 3, durationMs: 600_000, kinds: ['partition'], escalationTimeoutMs: 10_000, nodeCount: 2 });
    expect(s.faults.length).toBeGreaterThan(0);
    expect(s.faults.every((f) => f.topology !== 'halves' && f.topology !== 'bridge')).toBe(true);
    expect(() => plan({ seed: 3, durationMs: 60_000, kinds: ['partition'], escalationTimeoutMs: 10_000, nodeCount: 1 })).toThrow('partition faults need at least 2 nodes');
    expect(plan({ seed: 3, durationMs: 60_000, kinds: [], escalationTimeoutMs: 10_000, nodeCount: 3 }).faults).toEqual([]);
  });
});

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

  it('rejects bad recorded schedules with one line', () => {
    const good = plan({ seed: 4, durationMs: 60_000, kinds: ['kill', 'partition'], escalationTimeoutMs: 10_000, nodeCount: 3 });
    const edit = (f: (s: Record<string, any>) => void): string => {
      const s = JSON.parse(scheduleToJson(good));
      f(s);
      return JSON.stringify(s);
    };
    const cases: Array<[string, string]> = [
      ['{', 'schedule: not valid JSON'],
      [edit((s) => (s.format = 'x')), 'format must be "zaris-schedule/1"'],
      [edit((s) => (s.extra = 1)), 'top level: unknown field "extra"'],
      [edit((s) => (s.faults[0].durationMs = 0)), 'faults[0].durationMs must be an integer >= 1'],
      [edit((s) => (s.faults[0].kind = 'pause')), "faults[0].kind must be one of the schedule's kinds"],
      [edit((s) => (s.faults[1].atMs = s.faults[0].atMs + 1)), 'faults[1] overlaps faults[0]'],
      [edit((s) => (s.faults[0].atMs = s.durationMs)), 'after the fault phase'],
      [edit((s) => (s.faults[0].target = { role: 'boss' })), 'faults[0].target.role must be node, leader, active or random'],
      [edit((s) => (s.kinds = ['kill', 'kill'])), 'kinds: a kind is listed twice'],
      [edit((s) => Object.assign(s.faults[0], { kind: 'kill', topology: 'halves' })), 'faults[0]: topology is only for partition faults'],
      [
        edit((s) => Object.assign(s.faults[0], { kind: 'partition', topology: 'leader', target: { role: 'random' } })),
        'faults[0]: topology leader cannot take a random target',
      ],
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

/** Digest of seed 42, 60 s, every kind, escalation 10 s, 3 nodes, PARTS (changes only with the generator). */
const GOLDEN_DIGEST_SEED_42 = 'e72580eed3cba3ce33f5095ccabc9b97197c9a4dbf2cce726482d95a540a8066';

describe('schedule opening rounds', () => {
  it('opens with MIN_KILLS rounds of every selected kind, kill first in each', () => {
    const s = planSchedule({ seed: 104, durationMs: 60_000, kinds: ['kill', 'stop', 'pause', 'partition'], escalationTimeoutMs: 10_000, nodeCount: 3, partitions: [{ store: 'sync3', partition: 0 }] });
    const first = s.faults.slice(0, 12).map((f) => f.kind);
    for (let round = 0; round < 3; round++) {
      const r = first.slice(round * 4, round * 4 + 4);
      expect(r[0]).toBe('kill');
      expect([...r].sort()).toEqual(['kill', 'partition', 'pause', 'stop']);
    }
  });
});
