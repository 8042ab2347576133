/**
 * A chained takeover (async-ack, condition 3): the node that took over from an async write's
 * owner held the write, then lost the partition in its turn, disrupted within the async lag bound
 * of its takeover, to a node that never held it. Seed 002: an async write is lost when the active
 * dies before the op reaches a surviving holder; the holder that took over is that active. Seen
 * on the correct store under the default mix (a lag-crash killed the owner, its heir took over
 * holding the tail the third copy lacked, and was cut off 20 ms later by a zombie-crash). Both
 * verifiers, the reference rules on the history and the SQL verifier on its ledger, on fixtures
 * this file builds, and a property over the scenario's parameters.
 */
import type Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import type { History, HistoryFault, HistoryOwnership } from '../../ledger/history-format.js';
import { importHistory } from '../../ledger/history-import.js';
import { classifyLoss, judgeHistory } from '../../ledger/history-rules.js';
import { verifyLedger } from './verifier.js';

const SEED = process.env.ZARIS_PROPERTY_SEED === 'random' ? Date.now() : Number(process.env.ZARIS_PROPERTY_SEED ?? 20261206);
const LAG = 1000;

/** The scenario's knobs (ms, relative to the first takeover `te1` where said). */
interface Chain {
  /** n1 held the write when n2 crashed (else the first takeover alone loses it: plain async-ack). */
  aHeld: boolean;
  /** n3, which took over last, held it before it took over (then losing it is a violation). */
  bHeld: boolean;
  /** After te1: when n1 is cut off. */
  cutAfterMs: number;
  /** After the cut took effect: when the sample shows n3 at the next epoch. */
  lossAfterMs: number;
  /** n1's loss is by a crash (kill) rather than a cut and a sample at a higher epoch. */
  aCrashed: boolean;
  /** No fault touches n1 at all (its loss, by a sample, is then a handoff). */
  noFaultOnA: boolean;
  /** n2, L's owner, restarted and synced from n1 before n1's loss (it holds the write again: a surviving holder). */
  ownerBack: boolean;
}

/** n2 (owner, epoch 26) acks w2 at revision 11 at 1,005 ms; killed at 1,020; n1 active at epoch 27 at 1,100 (te1); n1 cut off or killed; n3 at epoch 28. */
export function chainHistory(c: Chain): History {
  const te1 = 1100;
  const cutAt = te1 + c.cutAfterMs;
  const lostAt = cutAt + c.lossAfterMs;
  const revs = (n1: number, n2: number | null, n3: number): Record<string, number> => ({ n1, ...(n2 === null ? {} : { n2 }), n3 });
  const sample = (t: number, active: string, epoch: number, revisions: Record<string, number>, inSync: string[]): HistoryOwnership => ({
    t,
    store: 'async3',
    partition: 0,
    active,
    epoch,
    health: inSync.length === 3 ? 'Healthy' : 'Degraded',
    replicatedRevision: Math.min(...Object.values(revisions)),
    inSync,
    revisions,
  });
  const faults: HistoryFault[] = [{ id: 'f1', kind: 'kill', nodes: ['n2'], start: 1020, effective: 1021, end: 40_000 }];
  if (!c.noFaultOnA) {
    faults.push(
      c.aCrashed
        ? { id: 'f2', kind: 'kill', nodes: ['n1'], start: cutAt, effective: cutAt + 1, end: 40_000 }
        : { id: 'f2', kind: 'partition', nodes: ['n1'], isolated: ['n1'], start: cutAt, effective: cutAt + 1, end: 40_000 },
    );
  }
  const ownership: HistoryOwnership[] = [
    sample(0, 'n2', 26, revs(10, 10, 10), ['n1', 'n2', 'n3']),
    sample(1010, 'n2', 26, revs(c.aHeld ? 11 : 10, 11, c.bHeld ? 11 : 10), ['n1', 'n2', 'n3']),
    sample(te1, 'n1', 27, revs(c.aHeld ? 11 : 10, null, c.bHeld ? 11 : 10), ['n1', 'n3']),
  ];
  if (c.ownerBack) ownership.push(sample(te1 + 3, 'n1', 27, revs(c.aHeld ? 11 : 10, c.aHeld ? 11 : 10, c.bHeld ? 11 : 10), ['n1', 'n2', 'n3']));
  // n1's loss: by its crash (the sample of n3 comes later), or by the sample of n3 at epoch 28
  ownership.push(sample(c.aCrashed && !c.noFaultOnA ? lostAt + 50 : lostAt, 'n3', 28, { n3: c.bHeld ? 11 : 10 }, ['n3']));
  return {
    format: 'zaris-history/2',
    run: { status: 'complete', inconclusiveReason: null, beyondBudget: false, asyncLagMaxMs: LAG, selfTestBug: null },
    nodes: ['n1', 'n2', 'n3'],
    stores: [{ name: 'async3', replicationFactor: 3, ackMode: 'async' }],
    partitions: [{ store: 'async3', partition: 0, replicas: ['n1', 'n2', 'n3'] }],
    faults,
    ownership,
    writes: [
      { id: 'w1', store: 'async3', key: 'k1', partition: 0, seq: 1, op: 'put', invoke: 500, complete: 504, outcome: 'ok', ack: { node: 'n2', epoch: 26, version: 1, revision: 10, ackMode: 'async' } },
      { id: 'w2', store: 'async3', key: 'k1', partition: 0, seq: 2, op: 'put', invoke: 1000, complete: 1005, outcome: 'ok', ack: { node: 'n2', epoch: 26, version: 2, revision: 11, ackMode: 'async' } },
    ],
    reads: [],
    finalReads: [{ store: 'async3', key: 'k1', value: 'w1' }],
  } as History;
}

/** What the rule says of w2's loss, worked out from the knobs (the oracle). */
function expected(c: Chain): 'async-ack' | 'violation' {
  if (c.bHeld) return 'violation';
  if (!c.aHeld) return 'async-ack'; // the first takeover alone: n1 never held it
  if (c.ownerBack) return 'violation'; // n2 came back holding it, a surviving holder
  if (c.noFaultOnA) return 'violation'; // n1 lost the partition to a handoff (nothing touched it)
  if (c.cutAfterMs > LAG) return 'violation'; // n1 had the lag bound to pass it on, undisturbed
  return 'async-ack';
}

const open: Database.Database[] = [];
afterEach(() => {
  while (open.length > 0) open.pop()!.close();
});

function sqlClass(h: History): { cls: string; detail: Record<string, unknown> } {
  const db = importHistory(h, ':memory:');
  open.push(db);
  verifyLedger(db);
  const row = db.prepare("SELECT class, detail FROM findings WHERE kind = 'lost'").get() as { class: string; detail: string };
  return { cls: row.class, detail: JSON.parse(row.detail) as Record<string, unknown> };
}

const base: Chain = { aHeld: true, bHeld: false, cutAfterMs: 20, lossAfterMs: 12_000, aCrashed: false, noFaultOnA: false, ownerBack: false };

describe('a chained takeover: the holder that took over lost the partition in its turn', () => {
  it('the holder cut off 20 ms after its takeover, the third copy takes over without the write: async-ack, through n1, in both verifiers', () => {
    const h = chainHistory(base);
    const w2 = h.writes[1];
    const ref = classifyLoss(h, w2);
    expect(ref).toMatchObject({ cls: 'async-ack', takeoverMs: 1021, takeoverNode: 'n3', via: [{ node: 'n1', fromMs: 1100, lostMs: 13_120 }] });
    expect(judgeHistory(h).verdict).toBe('CERTIFIED');
    const sql = sqlClass(h);
    expect(sql.cls).toBe('async-ack');
    expect(sql.detail).toMatchObject({ takeoverNode: 'n3', via: [{ node: 'n1', fromMs: 1100, lostMs: 13_120 }] });
  });

  it('the holder killed in its turn: async-ack, the next active named', () => {
    const h = chainHistory({ ...base, aCrashed: true });
    expect(classifyLoss(h, h.writes[1])).toMatchObject({ cls: 'async-ack', takeoverNode: 'n3', via: [{ node: 'n1', fromMs: 1100, lostMs: 1121 }] });
    expect(sqlClass(h).cls).toBe('async-ack');
  });

  it('a violation when the third copy held the write, when the holder had the lag bound undisturbed, when it handed the partition off, or when the first owner came back holding it', () => {
    for (const c of [{ ...base, bHeld: true }, { ...base, cutAfterMs: LAG + 500 }, { ...base, noFaultOnA: true }, { ...base, ownerBack: true }, { ...base, ownerBack: true, aCrashed: true }]) {
      const h = chainHistory(c);
      expect(classifyLoss(h, h.writes[1]).cls, JSON.stringify(c)).toBe('violation');
      expect(judgeHistory(h).verdict, JSON.stringify(c)).toBe('FAILED');
      expect(sqlClass(h).cls, JSON.stringify(c)).toBe('violation');
    }
  });

  it(`property: both verifiers give the class the rule gives, for every timing and holder (seed ${SEED})`, () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(
        fc.record({
          aHeld: fc.boolean(),
          bHeld: fc.boolean(),
          cutAfterMs: fc.integer({ min: 0, max: 3 * LAG }),
          lossAfterMs: fc.integer({ min: 5, max: 15_000 }),
          aCrashed: fc.boolean(),
          noFaultOnA: fc.boolean(),
          ownerBack: fc.boolean(),
        }),
        (c) => {
          const h = chainHistory(c);
          const want = expected(c);
          const ref = classifyLoss(h, h.writes[1]);
          expect(ref.cls).toBe(want);
          expect(sqlClass(h).cls).toBe(want);
          seen.add(`${want}${ref.via ? ' via' : ''}`);
        },
      ),
      { numRuns: 200, seed: SEED },
    );
    expect([...seen].sort()).toEqual(['async-ack', 'async-ack via', 'violation']);
  });
});

describe('condition 6, within the lease: counted from the moment the cut took effect', () => {
  /** n2 (owner) cut off by a partition whose row began at 1,000 ms and took effect `effectiveAfter` ms later; w2 invoked at `invokeAt`; lease 2,100 ms; n1 takes over at 14,000. */
  function cutHistory(effectiveAfter: number, invokeAt: number): History {
    const h = chainHistory(base);
    h.run = { ...h.run!, leaseMs: 2100 };
    h.faults = [{ id: 'f1', kind: 'partition', nodes: ['n2'], isolated: ['n2'], start: 1000, effective: 1000 + effectiveAfter, end: 20_000 }];
    const s = (t: number, active: string, epoch: number, r: Record<string, number>): HistoryOwnership => ({ t, store: 'async3', partition: 0, active, epoch, health: 'Healthy', replicatedRevision: Math.min(...Object.values(r)), inSync: Object.keys(r), revisions: r });
    h.ownership = [s(0, 'n2', 26, { n1: 10, n2: 10, n3: 10 }), s(invokeAt + 10, 'n2', 26, { n1: 10, n2: 11, n3: 10 }), s(14_000, 'n1', 27, { n1: 10, n3: 10 })];
    h.writes[1] = { ...h.writes[1], invoke: invokeAt, complete: invokeAt + 5 };
    return h;
  }

  it('a cut that took effect 1.5 s after its row began: a write invoked 2.5 s after the row is within the lease (async-ack); 3.7 s after, past it (violation)', () => {
    for (const [effectiveAfter, invokeAt, want] of [
      [1500, 3500, 'async-ack'],
      [1500, 4700, 'violation'],
      [0, 3500, 'violation'],
    ] as const) {
      const h = cutHistory(effectiveAfter, invokeAt);
      expect(classifyLoss(h, h.writes[1]).cls, `${effectiveAfter} ${invokeAt}`).toBe(want);
      expect(sqlClass(h).cls, `${effectiveAfter} ${invokeAt}`).toBe(want);
    }
  });
});
