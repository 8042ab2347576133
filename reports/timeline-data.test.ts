import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { LEDGER_DDL } from '../ledger/schema.js';
import { MAX_POINTS } from './downsample.js';
import { scanTimeline, timelineEndS } from './timeline-data.js';

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

const insStats = (db: Database.Database) =>
  db.prepare('INSERT INTO stats (t_s, store, acked, failed, indeterminate, p50_ms, p95_ms, p99_ms, max_ms, statuses) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');

describe('timelineEndS', () => {
  it('is the latest of stats, samples, phase events and fault times; 0 when empty', () => {
    const db = ledger();
    expect(timelineEndS(db)).toBe(0);
    insStats(db).run(9, 'sync3', 1, 0, 0, 1, 1, 1, 1, '{}');
    expect(timelineEndS(db)).toBe(10);
    db.exec("INSERT INTO samples (t_ms, store, partition, active, epoch, health, replicated_revision) VALUES (12500, 'sync3', 0, 'n1', 1, 'Healthy', 0)");
    expect(timelineEndS(db)).toBe(12.5);
    db.exec("INSERT INTO events VALUES (20000, 'failover', '{}')");
    expect(timelineEndS(db)).toBe(12.5); // only phase events count
    db.exec("INSERT INTO events VALUES (14000, 'phase', '{\"phase\":\"done\"}')");
    db.exec("INSERT INTO faults (kind, nodes, start_ms, end_ms) VALUES ('kill', '[\"n1\"]', 1000, 15500)");
    expect(timelineEndS(db)).toBe(15.5);
  });
});

describe('scanTimeline', () => {
  it('downsamples a 4-hour run to <= 2,000 points: mean per second for counts, worst second for latency', () => {
    const db = ledger();
    const ins = insStats(db);
    db.transaction(() => {
      for (let t = 0; t < 14_400; t++) {
        ins.run(t, 'sync3', 100 + (t % 8), t % 8 === 0 ? 8 : 0, 0, 1, 2, 3, t === 801 ? 999.5 : 4, JSON.stringify({ Ok: 100, Timeout: t % 2 }));
        ins.run(t, 'async3', 50, 0, 0, 1, 1, 1, 1, '{"Ok":50}');
      }
    })();
    const { data, statusesByStore } = scanTimeline(db);
    expect(data.widthS).toBe(8);
    expect(data.x).toHaveLength(1800);
    expect(data.x.length).toBeLessThanOrEqual(MAX_POINTS);
    expect(data.x.slice(0, 3)).toEqual([0, 8, 16]);
    const writes = data.charts.find((c) => c.id === 'chart-writes-0')!;
    expect(writes.title).toBe('Writes per second: sync3');
    expect(new Set(writes.values[0])).toEqual(new Set([103.5])); // (100 + ... + 107) / 8
    expect(new Set(writes.values[1])).toEqual(new Set([1]));
    const latency = data.charts.find((c) => c.id === 'chart-latency-0')!;
    expect(latency.values[3][100]).toBe(999.5); // second 801 is in bucket 100
    expect(latency.values[3][99]).toBe(4);
    const statuses = data.charts.find((c) => c.id === 'chart-statuses')!;
    expect(statuses.lines).toEqual([{ label: 'Timeout' }]);
    expect(new Set(statuses.values[0])).toEqual(new Set([0.5]));
    expect(statusesByStore).toEqual([
      { store: 'sync3', statuses: { Ok: 1_440_000, Timeout: 7200 } },
      { store: 'async3', statuses: { Ok: 720_000 } },
    ]);
  });

  it('skips statuses that are not a JSON object of numbers, and leaves seconds without acks as gaps in latency', () => {
    const db = ledger();
    const ins = insStats(db);
    ins.run(0, 'sync3', 1, 0, 0, 1, 1, 1, 1, 'not json');
    ins.run(1, 'sync3', 0, 1, 0, null, null, null, null, '[1,2]');
    ins.run(2, 'sync3', 1, 0, 0, 1, 1, 1, 1, '{"Moved":"x","Unavailable":2}');
    ins.run(2, 'other', 3, 0, 0, 1, 1, 1, 1, '{}');
    const { data, statusesByStore } = scanTimeline(db);
    expect(data.charts.map((c) => c.id)).toEqual(['chart-writes-0', 'chart-writes-1', 'chart-writes-2', 'chart-latency-0', 'chart-latency-1', 'chart-latency-2', 'chart-statuses', 'chart-epochs']);
    expect(data.charts[2].title).toBe('Writes per second: other'); // a store only stats names comes last
    expect(data.charts[3].values[0]).toEqual([1, null, 1]);
    expect(statusesByStore[0]).toEqual({ store: 'sync3', statuses: { Unavailable: 2 } });
    // async3 has no stats row: its charts have no lines (not a flat zero)
    expect([data.charts[1].lines, data.charts[1].values, data.charts[4].lines]).toEqual([[], [], []]);
    expect(data.charts[0].lines).toHaveLength(3);
  });

  it('keeps the last epoch per bucket per partition, and the faults and phases in time order', () => {
    const db = ledger();
    const s = db.prepare("INSERT INTO samples (t_ms, store, partition, active, epoch, health, replicated_revision) VALUES (?, 'sync3', ?, ?, ?, 'Healthy', 0)");
    for (const [t, p, a, e] of [[0, 0, 'n1', 1], [600, 0, 'n1', 1], [1700, 0, 'n2', 2], [1900, 0, 'n1', 3], [0, 1, 'n2', 1]] as const) s.run(t, p, a, e);
    db.exec(`INSERT INTO faults (id, kind, nodes, start_ms, end_ms) VALUES (2, 'pause', 'not json', 1500, NULL), (1, 'kill', '["n1","n2"]', 1500, 1800.4567);
             INSERT INTO events VALUES (1000, 'phase', '{"phase":"heal"}'), (100, 'phase', '{"phase":"faults"}'), (1200, 'phase', 'garbled')`);
    const { data, histories } = scanTimeline(db);
    expect(data.endS).toBe(2);
    const epochs = data.charts.find((c) => c.id === 'chart-epochs')!;
    expect(epochs.lines.map((l) => l.label)).toEqual(['sync3/0', 'sync3/1']);
    expect(epochs.values).toEqual([[1, 3], [1, null]]);
    expect(histories.map((h) => h.transitions)).toEqual([3, 1]);
    expect(data.faults).toEqual([[1.5, 1.8, 'kill', 'kill n1,n2', 1], [1.5, null, 'pause', 'pause not json', 2]]);
    expect(data.phases).toEqual([[0.1, 'faults'], [1, 'heal'], [1.2, 'garbled']]);
  });
});
