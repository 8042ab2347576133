import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { StoreConfig } from '../cluster-config.js';
import type { Member, RuntimeEntry } from '../cluster-messages.js';
import { PartitionData, type ReplicatedOp } from '../partition-data.js';
import type { KeyHistory } from './sim-client.js';
import { DurabilityChecker, prefixDivergence, type DurableView, type PeekedRecord } from './sim-durability.js';
import { InvariantViolation } from './sim-invariants.js';

const rec = (value: string | null, version: number, revision: number): PeekedRecord => ({ value: value === null ? null : Buffer.from(value), version, revision });

/** Every key lives in segment 0 or 1 by its last digit (the tests' own routing). */
const segOf = (key: string): number => Number(key.slice(-1)) % 2;

/** An op of key `k` at revision `rev`, with a version and value that name the log it belongs to. */
function op(log: string, rev: number, key: string, del = false): ReplicatedOp {
  return { rev, seg: segOf(key), key, value: del ? null : Buffer.from(`${log}:${key}@${rev}`), version: (log === 'a' ? 0 : 1_000_000) + rev };
}

describe('prefixDivergence', () => {
  const keys = ['k0', 'k1', 'k2'];
  it('accepts a copy that holds every key as the log stood, absent and tombstones included', () => {
    const at: Record<string, PeekedRecord | null> = { k0: rec('x', 3, 3), k1: rec(null, 5, 5), k2: null };
    const mine: Record<string, PeekedRecord | undefined> = { k0: rec('x', 3, 3), k1: rec(null, 5, 5), k2: undefined };
    expect(prefixDivergence(keys, (k) => at[k], (k) => mine[k])).toBeNull();
  });

  it('names a key held at another version, with another value, missing, or held where the log had none', () => {
    const at: Record<string, PeekedRecord | null> = { k0: rec('x', 3, 3), k1: rec('y', 5, 5), k2: null };
    expect(prefixDivergence(keys, (k) => at[k], (k) => (k === 'k0' ? rec('x', 2, 2) : at[k] ?? undefined))).toMatch(/^k0: the log held x v3 \(rev 3\), the replica holds x v2/);
    expect(prefixDivergence(keys, (k) => at[k], (k) => (k === 'k1' ? rec('z', 5, 5) : at[k] ?? undefined))).toMatch(/^k1: /);
    expect(prefixDivergence(keys, (k) => at[k], (k) => (k === 'k1' ? undefined : at[k] ?? undefined))).toMatch(/^k1: .*holds nothing/);
    expect(prefixDivergence(keys, (k) => at[k], (k) => (k === 'k2' ? rec('w', 1, 1) : at[k] ?? undefined))).toMatch(/^k2: the log had no record of it/);
    // a tombstone is not a value, nor nothing
    expect(prefixDivergence(['k1'], () => rec(null, 5, 5), () => rec('y', 5, 5))).toMatch(/^k1: /);
    expect(prefixDivergence(['k1'], () => rec(null, 5, 5), () => undefined)).toMatch(/^k1: /);
  });

  it('does not judge a key whose state the active can no longer tell', () => {
    expect(prefixDivergence(keys, () => undefined, () => rec('anything', 9, 9))).toBeNull();
  });
});

/** The state of every key after replaying `ops` (a model of a copy, independent of PartitionData). */
function replay(ops: readonly ReplicatedOp[]): Map<string, PeekedRecord> {
  const m = new Map<string, PeekedRecord>();
  for (const o of ops) m.set(o.key, { value: o.value, version: o.version, revision: o.rev });
  return m;
}

function copyOf(ops: readonly ReplicatedOp[], logCap?: number): PartitionData {
  const d = new PartitionData([0, 1], logCap);
  for (const o of ops) d.apply(o);
  return d;
}

/** Keys k0..k5, ops as (key index, delete?) pairs. */
const opsArb = (min: number, max: number) => fc.array(fc.tuple(fc.nat(5), fc.boolean()), { minLength: min, maxLength: max });
const KEYS = ['k0', 'k1', 'k2', 'k3', 'k4', 'k5'];

function logOf(name: string, from: number, spec: ReadonlyArray<[number, boolean]>): ReplicatedOp[] {
  return spec.map(([k, del], i) => op(name, from + i, KEYS[k], del && i % 3 === 0));
}

describe('PartitionData.recordAt and prefixDivergence against a model of the log (property)', () => {
  it('recordAt is the key as the log stood at any revision, or undefined only where the op log no longer reaches back', () => {
    fc.assert(
      fc.property(opsArb(0, 40), fc.integer({ min: 1, max: 50 }), (spec, logCap) => {
        const ops = logOf('a', 1, spec);
        const d = copyOf(ops, logCap);
        for (let r = 0; r <= ops.length; r++) {
          const model = replay(ops.slice(0, r));
          for (const k of KEYS) {
            const got = d.recordAt(segOf(k), k, r);
            if (got === undefined) {
              expect(logCap).toBeLessThan(ops.length);
              continue;
            }
            const want = model.get(k) ?? null;
            expect(got === null ? null : { value: got.value?.toString() ?? null, version: got.version }).toEqual(want === null ? null : { value: want.value?.toString() ?? null, version: want.version });
          }
        }
      }),
    );
  });

  it('a copy that replayed the log up to r, or caught up to r from the op log, is its prefix at r; one that forked off it is judged exactly where it differs', () => {
    fc.assert(
      fc.property(opsArb(1, 40), fc.nat(), fc.nat(), opsArb(0, 15), fc.nat(), (spec, rPick, cPick, forkSpec, catchPick) => {
        const ops = logOf('a', 1, spec);
        const active = copyOf(ops);
        const r = rPick % (ops.length + 1);
        const keys = KEYS;
        // a true prefix, replayed or caught up from an earlier position of the same log
        const replica = copyOf(ops.slice(0, r));
        expect(prefixDivergence(keys, (k) => active.recordAt(segOf(k), k, r), (k) => replica.get(segOf(k), k))).toBeNull();
        const from = catchPick % (r + 1);
        const behind = copyOf(ops.slice(0, from));
        const mid = copyOf(ops.slice(0, r));
        behind.installSync(mid.syncSince(from), r);
        expect(prefixDivergence(keys, (k) => active.recordAt(segOf(k), k, r), (k) => behind.get(segOf(k), k))).toBeNull();
        // a fork: the log's first c ops, then another log's ops; claimed at revision r2 of the active's log
        const c = cPick % (ops.length + 1);
        const forkOps = [...ops.slice(0, c), ...logOf('b', c + 1, forkSpec)];
        const fork = copyOf(forkOps);
        const r2 = Math.min(forkOps.length, ops.length);
        const truth = replay(ops.slice(0, r2));
        const mine = replay(forkOps);
        const differs = keys.some((k) => {
          const a = truth.get(k);
          const b = mine.get(k);
          return !a !== !b || (a && b && (a.version !== b.version || a.value?.toString() !== b.value?.toString()));
        });
        const d = prefixDivergence(keys, (k) => active.recordAt(segOf(k), k, r2), (k) => fork.get(segOf(k), k));
        expect(d !== null).toBe(differs);
      }),
    );
  });
});

describe('DurabilityChecker.onPositionClaim (replica-divergence)', () => {
  const m = (node: string): Member => ({ node, inc: `${node}.0` });
  const store: StoreConfig = { name: 'async3', ackMode: 'async', replicationFactor: 3, segments: 2 } as StoreConfig;
  const histories: KeyHistory[] = KEYS.map((key) => ({ store: 'async3', key, pkey: 'async3/0', writes: [] }));
  const entry: RuntimeEntry = { pkey: 'async3/0', store: 'async3', partition: 0, epoch: 4, term: 1, active: m('n1'), activeSince: 4, health: 'Healthy', inSync: [m('n1'), m('n2')], handoffTo: null, syncFrom: null, replicas: ['n1', 'n2', 'n3'], mapVersion: 1 };
  function view(id: string, d: PartitionData): DurableView {
    return {
      id,
      inc: `${id}.0`,
      isServingActive: () => id === 'n1',
      committedEntry: () => entry,
      peek: (_p, k) => d.get(segOf(k), k),
      peekAt: (_p, k, r) => d.recordAt(segOf(k), k, r),
      revisionOf: () => d.revision,
    };
  }
  const checker = (): DurabilityChecker => new DurabilityChecker({ now: () => 0, up: () => [], paused: () => false, bestEntry: () => entry }, { stores: [store], histories, asyncLagMs: 1_000, within: true });
  const claim = (c: DurabilityChecker, what: 'rep-ack' | 'sync-req', r: DurableView, a: DurableView, rev: number): string => {
    try {
      c.onPositionClaim(what, r, a, 'async3/0', 'n1:n1.0:4', rev);
      return 'none';
    } catch (e) {
      if (e instanceof InvariantViolation) return `${e.invariant}: ${e.detail}`;
      throw e;
    }
  };
  const logA = logOf('a', 1, [[0, false], [1, false], [2, false], [0, false], [3, false], [1, false]]);

  it('accepts a true position, at or behind the active', () => {
    const c = checker();
    const active = view('n1', copyOf(logA));
    expect(claim(c, 'rep-ack', view('n2', copyOf(logA)), active, 6)).toBe('none');
    expect(claim(c, 'sync-req', view('n2', copyOf(logA.slice(0, 3))), active, 3)).toBe('none');
    expect(c.positionClaimsChecked).toBe(2);
  });

  it('flags a copy of another log taken for a position in this one (fencing off by one), and a revision the log has not reached', () => {
    const c = checker();
    const active = view('n1', copyOf(logA));
    // the deposed owner's copy: the first 3 ops, then 2 of its own, asks to catch up from 5
    const other = copyOf([...logA.slice(0, 3), ...logOf('b', 4, [[4, false], [5, false]])]);
    expect(claim(c, 'sync-req', view('n3', other), active, 5)).toMatch(/^replica-divergence: n3 \(inc n3\.0\) asked to catch up from revision 5 of n1:n1\.0:4 for async3\/0 to n1 \(at revision 6, .*\), but its copy is not that log's prefix: k0: the log held a:k0@4 v4/);
    expect(claim(c, 'rep-ack', view('n2', copyOf(logA)), active, 7)).toMatch(/^replica-divergence: .*acknowledged revision 7 .*the log ends at revision 6/);
  });
});

describe('DurabilityChecker possession of an async store: every acknowledged write a surviving holder has, not only the key\'s last', () => {
  const m = (node: string): Member => ({ node, inc: `${node}.0` });
  const store: StoreConfig = { name: 'async3', ackMode: 'async', replicationFactor: 3, segments: 2 } as StoreConfig;
  /** Writes #1..#3 of k0, acknowledged by n1 at versions 1..3 (t = 10, 20, 30). */
  const history = (): KeyHistory => ({
    store: 'async3',
    key: 'k0',
    pkey: 'async3/0',
    writes: [1, 2, 3].map((v) => ({ seq: v, kind: 'put' as const, valueId: `async3/k0#${v}`, outcome: 'ok' as const, last: 'Ok', attempts: 1, invokeMs: v * 10 - 5, completeMs: v * 10, ack: { node: 'n1', epoch: 1, version: v, revision: v, copies: 1 } })),
  });
  const e1: RuntimeEntry = { pkey: 'async3/0', store: 'async3', partition: 0, epoch: 1, term: 1, active: m('n1'), activeSince: 1, health: 'Healthy', inSync: [m('n1'), m('n2'), m('n3')], handoffTo: null, syncFrom: null, replicas: ['n1', 'n2', 'n3'], mapVersion: 1 };
  const e2: RuntimeEntry = { ...e1, epoch: 2, active: m('n2'), activeSince: 2, health: 'Degraded', inSync: [m('n2'), m('n3')] };
  interface Node extends DurableView {
    version: number;
    e: RuntimeEntry;
  }
  function node(id: string, version: number): Node {
    const x: Node = {
      id,
      inc: `${id}.0`,
      version,
      e: e1,
      isServingActive: () => sameActive(x),
      committedEntry: () => x.e,
      peek: () => (x.version > 0 ? { value: Buffer.from(`async3/k0#${x.version}`), version: x.version, revision: x.version } : undefined),
      peekAt: () => undefined,
      revisionOf: () => x.version,
    };
    return x;
  }
  const sameActive = (x: Node): boolean => x.e.active?.node === x.id;
  function setup(n2v: number, n3v: number): { c: DurabilityChecker; clock: { t: number }; n1: Node; n2: Node; n3: Node; up: Node[] } {
    const clock = { t: 40 };
    const n1 = node('n1', 3);
    const n2 = node('n2', n2v);
    const n3 = node('n3', n3v);
    const up = [n1, n2, n3];
    const c = new DurabilityChecker({ now: () => clock.t, up: () => up, paused: () => false, bestEntry: () => e1 }, { stores: [store], histories: [history()], asyncLagMs: 1_000, within: true });
    return { c, clock, n1, n2, n3, up };
  }
  const outcome = (f: () => void): string => {
    try {
      f();
      return 'none';
    } catch (e) {
      if (e instanceof InvariantViolation) return `${e.invariant}: ${e.detail}`;
      throw e;
    }
  };

  it('a new tenure that lacks write #2, which an untouched in-sync member holds, is a possession violation though the key\'s last write (#3) reached nobody', () => {
    const { c, clock, n2 } = setup(1, 2);
    clock.t = 50;
    n2.e = e2;
    expect(outcome(() => c.afterEvent(n2, ['async3/0']))).toMatch(/^possession: n2 \(inc n2\.0\) serves async3\/0 in a new tenure .* without async3\/k0 async3\/k0#2 \(seq 2, v2, .*\); it holds v1, while in-sync n3, untouched by any fault since, holds v2$/);
  });

  it('the same, when the member that holds #2 was touched by a fault since #2 was invoked: the async window may lose it', () => {
    const { c, clock, n2 } = setup(1, 2);
    const end = c.faultStart(['n3']);
    clock.t = 45;
    end();
    clock.t = 50;
    n2.e = e2;
    expect(outcome(() => c.afterEvent(n2, ['async3/0']))).toBe('none');
  });

  it('after the owner\'s crash, the first new tenure must hold the latest write a surviving replica held at the crash (#2), not only the key\'s last one', () => {
    const { c, clock, n1, n2, up } = setup(1, 2);
    up.splice(up.indexOf(n1), 1);
    c.crashed('n1');
    expect(c.heldAtCrashChecked).toBe(0);
    clock.t = 60;
    // n3 holds #2 but is out of the new entry's in-sync set: only the crash rule sees it
    n2.e = { ...e2, inSync: [m('n2')] };
    expect(outcome(() => c.afterEvent(n2, ['async3/0']))).toMatch(/^possession: .* without async3\/k0 async3\/k0#2 \(seq 2, v2, .*\); it holds v1, while n3, an assigned replica that survived n1's crash/);
    expect(c.heldAtCrashChecked).toBe(1);
  });

  it('a new tenure holding what every survivor held is fine', () => {
    const { c, clock, n1, n2, up } = setup(2, 2);
    up.splice(up.indexOf(n1), 1);
    c.crashed('n1');
    clock.t = 60;
    n2.e = e2;
    expect(outcome(() => c.afterEvent(n2, ['async3/0']))).toBe('none');
  });
});

describe('DurabilityChecker replication-lag: a connection change excuses only the stream it broke', () => {
  const m = (node: string): Member => ({ node, inc: `${node}.0` });
  const store: StoreConfig = { name: 'async3', ackMode: 'async', replicationFactor: 3, segments: 2 } as StoreConfig;
  const e: RuntimeEntry = { pkey: 'async3/0', store: 'async3', partition: 0, epoch: 1, term: 1, active: m('n1'), activeSince: 1, health: 'Healthy', inSync: [m('n1'), m('n2'), m('n3')], handoffTo: null, syncFrom: null, replicas: ['n1', 'n2', 'n3'], mapVersion: 1 };
  /** n1 (active) gains one revision per 100 ms poll; n2 and n3 stay at 0 (a stream that never runs). */
  function run(change?: [string, string]): string {
    const clock = { t: 0 };
    const rev: Record<string, number> = { n1: 0, n2: 0, n3: 0 };
    const views: DurableView[] = ['n1', 'n2', 'n3'].map((id) => ({ id, inc: `${id}.0`, isServingActive: () => id === 'n1', committedEntry: () => e, peek: () => undefined, peekAt: () => undefined, revisionOf: () => rev[id] }));
    const c = new DurabilityChecker({ now: () => clock.t, up: () => views, paused: () => false, bestEntry: () => e }, { stores: [store], histories: [{ store: 'async3', key: 'k0', pkey: 'async3/0', writes: [] }], asyncLagMs: 1_000, within: true });
    try {
      for (let i = 0; i <= 20; i++) {
        clock.t = i * 100;
        rev.n1 = i;
        // a connection resets at 500 ms and is back at once, again at 1,200 ms
        if (change && (i === 5 || i === 12)) {
          c.linkChanged(change[0], change[1], false);
          c.linkChanged(change[0], change[1], true);
        }
        c.poll(['async3/0']);
      }
      return 'none';
    } catch (err) {
      if (err instanceof InvariantViolation) return `${err.invariant} ${err.detail.split(',')[0]} at ${clock.t}`;
      throw err;
    }
  }

  it('flags in-sync replicas that stay behind the active\'s revision of 1 s earlier', () => {
    expect(run()).toBe('replication-lag n2 at 1100');
  });

  it('a reset between two replicas delays neither stream', () => {
    expect(run(['n2', 'n3'])).toBe('replication-lag n2 at 1100');
  });

  it('a reset between the active and one replica excuses that replica for 1 s, not the other', () => {
    expect(run(['n1', 'n2'])).toBe('replication-lag n3 at 1100');
  });
});
