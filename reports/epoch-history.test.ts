import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { LEDGER_DDL } from '../ledger/schema.js';
import type { RuntimeSample } from './epoch-history.js';
import { sampledPartitions, scanEpochHistory, TransitionTracker, transitionsBetween } from './epoch-history.js';

const open: Database.Database[] = [];
afterEach(() => {
  while (open.length > 0) open.pop()!.close();
});

function ledger(): Database.Database {
  const db = new Database(':memory:');
  open.push(db);
  for (const ddl of LEDGER_DDL) db.exec(ddl);
  db.exec("INSERT INTO stores VALUES ('sync3', 3, 'sync', 64), ('async3', 3, 'async', 64)");
  return db;
}

function insert(db: Database.Database, store: string, partition: number, samples: RuntimeSample[]): void {
  const ins = db.prepare('INSERT INTO samples (t_ms, store, partition, active, epoch, health, replicated_revision) VALUES (?, ?, ?, ?, ?, ?, ?)');
  for (const s of samples) ins.run(s.tMs, store, partition, s.active, s.epoch, s.health, s.replicatedRevision);
}

const s = (tMs: number, active: string | null, epoch: number, health: string, rev = 0): RuntimeSample => ({ tMs, active, epoch, health, replicatedRevision: rev });

describe('TransitionTracker', () => {
  it('keeps the first sample and every change of owner, epoch or health, not revision moves', () => {
    const tr = new TransitionTracker();
    expect(tr.push(s(0, 'n1', 1, 'Healthy', 5))?.changed).toEqual(['first']);
    expect(tr.push(s(250, 'n1', 1, 'Healthy', 9))).toBeNull();
    expect(tr.push(s(500, 'n2', 2, 'Degraded', 9))?.changed).toEqual(['active', 'epoch', 'health']);
    expect(tr.push(s(750, 'n2', 2, 'Healthy', 12))).toEqual({ ...s(750, 'n2', 2, 'Healthy', 12), changed: ['health'] });
    expect(tr.push(s(1000, null, 3, 'Healthy'))?.changed).toEqual(['active', 'epoch']);
  });

  it('property: the transitions reproduce the state at every sample', () => {
    const sample = fc.record({ active: fc.constantFrom('n1', 'n2', null), epoch: fc.integer({ min: 1, max: 3 }), health: fc.constantFrom('Healthy', 'Degraded', 'Unavailable'), replicatedRevision: fc.nat(9) });
    fc.assert(fc.property(fc.array(sample, { minLength: 1, maxLength: 60 }), (list) => {
      const tr = new TransitionTracker();
      let state: RuntimeSample | null = null;
      let count = 0;
      list.forEach((x, i) => {
        const t = tr.push({ tMs: i, ...x });
        if (t !== null) {
          state = t;
          count++;
        }
        expect(state).not.toBeNull();
        expect([state!.active, state!.epoch, state!.health]).toEqual([x.active, x.epoch, x.health]);
      });
      const changes = list.slice(1).filter((x, i) => x.active !== list[i].active || x.epoch !== list[i].epoch || x.health !== list[i].health).length;
      expect(count).toBe(1 + changes);
    }));
  });
});

describe('scanEpochHistory', () => {
  it('orders partitions as the stores table does, then by number; counts and keeps the changes', () => {
    const db = ledger();
    insert(db, 'async3', 0, [s(0, 'n1', 1, 'Healthy'), s(250, 'n1', 1, 'Healthy')]);
    insert(db, 'sync3', 1, [s(0, 'n2', 1, 'Healthy', 3), s(250, 'n2', 1, 'Healthy', 7), s(500, 'n3', 2, 'Degraded', 7), s(750, 'n3', 2, 'Healthy', 8), s(1000, 'n2', 3, 'Healthy', 9)]);
    insert(db, 'sync3', 0, [s(0, 'n1', 1, 'Healthy')]);
    insert(db, 'zz', 0, [s(0, null, 0, 'Unavailable')]);
    expect(sampledPartitions(db)).toEqual([{ store: 'sync3', partition: 0 }, { store: 'sync3', partition: 1 }, { store: 'async3', partition: 0 }, { store: 'zz', partition: 0 }]);
    const seen: string[] = [];
    const h = scanEpochHistory(db, { onSample: (i, tMs, epoch) => seen.push(`${i}@${tMs}:e${epoch}`) });
    expect(h.map((x) => [x.store, x.partition, x.samples, x.transitions])).toEqual([['sync3', 0, 1, 1], ['sync3', 1, 5, 4], ['async3', 0, 2, 1], ['zz', 0, 1, 1]]);
    const p1 = h[1];
    expect(p1.owners).toEqual(['n2', 'n3']);
    expect([p1.firstEpoch, p1.lastEpoch]).toEqual([1, 3]);
    expect(p1.healthSamples).toEqual({ Degraded: 1, Healthy: 4 });
    expect(p1.head.map((t) => [t.tMs, t.changed.join('+')])).toEqual([[0, 'first'], [500, 'active+epoch+health'], [750, 'health'], [1000, 'active+epoch']]);
    expect(p1.tail).toEqual([]);
    expect(h[3].owners).toEqual([]);
    expect(seen.slice(0, 4)).toEqual(['0@0:e1', '1@0:e1', '1@250:e1', '1@500:e2']);
    expect(seen).toHaveLength(9);
  });

  it('property: the scan finds exactly the transitions the tracker finds, with the counts', () => {
    const sample = fc.record({ active: fc.constantFrom('n1', 'n2', null), epoch: fc.integer({ min: 1, max: 3 }), health: fc.constantFrom('Healthy', 'Degraded'), replicatedRevision: fc.nat(9) });
    fc.assert(fc.property(fc.array(sample, { minLength: 1, maxLength: 40 }), fc.integer({ min: 1, max: 10 }), (list, keep) => {
      const db = ledger();
      const samples = list.map((x, i) => ({ tMs: i * 250, ...x }));
      insert(db, 'sync3', 0, samples);
      const tr = new TransitionTracker();
      const expected = samples.map((x) => tr.push(x)).filter((t) => t !== null);
      const [h] = scanEpochHistory(db, { keep });
      expect(h.transitions).toBe(expected.length);
      expect(h.head).toEqual(expected.slice(0, keep));
      expect(h.tail).toEqual(expected.slice(keep).slice(-keep));
      expect(h.lastEpoch).toBe(list[list.length - 1].epoch);
      expect(Object.values(h.healthSamples).reduce((a, b) => a + b, 0)).toBe(list.length);
      db.close();
    }), { numRuns: 60 });
  });

  it('keeps the first and the last transitions of a long history, counting all', () => {
    const db = ledger();
    insert(db, 'sync3', 0, Array.from({ length: 50 }, (_, i) => s(i * 250, i % 2 ? 'n1' : 'n2', i + 1, 'Healthy')));
    const [h] = scanEpochHistory(db, { keep: 5 });
    expect(h.transitions).toBe(50);
    expect(h.head.map((t) => t.epoch)).toEqual([1, 2, 3, 4, 5]);
    expect(h.tail.map((t) => t.epoch)).toEqual([46, 47, 48, 49, 50]);
  });
});

describe('transitionsBetween', () => {
  it('gives the state in force at the window start, then the changes inside it', () => {
    const db = ledger();
    insert(db, 'sync3', 0, [s(0, 'n1', 1, 'Healthy'), s(1000, 'n2', 2, 'Degraded'), s(2000, 'n2', 2, 'Degraded'), s(3000, 'n2', 2, 'Healthy'), s(9000, 'n1', 3, 'Healthy')]);
    const t = transitionsBetween(db, 'sync3', 0, 1500, 5000);
    expect(t.map((x) => [x.tMs, x.active, x.epoch, x.health, x.changed.join('+')])).toEqual([
      [1000, 'n2', 2, 'Degraded', 'first'],
      [3000, 'n2', 2, 'Healthy', 'health'],
    ]);
    expect(transitionsBetween(db, 'sync3', 0, 0, 10_000, 2).map((x) => x.tMs)).toEqual([0, 1000]);
    expect(transitionsBetween(db, 'sync3', 7, 0, 10_000)).toEqual([]);
  });
});
