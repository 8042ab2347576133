import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { LEDGER_DDL } from '../ledger/schema.js';
import { timeGrid } from './downsample.js';
import { harnessMemoryChart, holdBetweenSamples } from './harness-memory.js';
import { scanTimeline } from './timeline-data.js';

const open: Database.Database[] = [];
afterEach(() => {
  while (open.length > 0) open.pop()!.close();
});

function ledger(): Database.Database {
  const db = new Database(':memory:');
  open.push(db);
  for (const ddl of LEDGER_DDL) db.exec(ddl);
  db.exec("INSERT INTO stores VALUES ('sync3', 3, 'sync', 64)");
  return db;
}
const event = (db: Database.Database, tMs: number, kind: string, detail: object): void => {
  db.prepare('INSERT INTO events VALUES (?, ?, ?)').run(tMs, kind, JSON.stringify(detail));
};

describe('harnessMemoryChart', () => {
  it("plots the harness events' RSS and heap, peak per bucket, held between samples", () => {
    const db = ledger();
    event(db, 10_000, 'harness', { rssMb: 150, heapUsedMb: 40, acked: 1 });
    event(db, 20_000, 'harness', { rssMb: 152, heapUsedMb: 41, acked: 2 });
    event(db, 20_500, 'harness', { rssMb: 180, heapUsedMb: 43, acked: 2 }); // a peak in the same bucket
    event(db, 30_000, 'harness', { rssMb: 151, heapUsedMb: 39, acked: 3 });
    event(db, 25_000, 'failover', { ms: 900 }); // not a harness event
    const chart = harnessMemoryChart(db, timeGrid(40))!;
    expect(chart.id).toBe('chart-harness-memory');
    expect(chart.unit).toBe('MB');
    expect(chart.lines.map((l) => l.label)).toEqual(['RSS', 'heap used']);
    const [rss, heap] = chart.values;
    expect(rss).toHaveLength(40);
    expect(rss.slice(0, 10)).toEqual(new Array(10).fill(null));
    expect(rss[10]).toBe(150);
    expect(rss[15]).toBe(150); // held until the next sample
    expect(rss[20]).toBe(180);
    expect(rss[30]).toBe(151);
    expect(rss.slice(31)).toEqual(new Array(9).fill(null));
    expect(heap[20]).toBe(43);
  });

  it('gives no chart for a ledger without harness events, and joins the timeline when there are some', () => {
    const db = ledger();
    expect(harnessMemoryChart(db, timeGrid(10))).toBeNull();
    expect(scanTimeline(db).data.charts.map((c) => c.id)).not.toContain('chart-harness-memory');
    db.exec("INSERT INTO events VALUES (4000, 'phase', '{\"phase\":\"done\"}')");
    event(db, 2_000, 'harness', { rssMb: 100, heapUsedMb: 20 });
    expect(scanTimeline(db).data.charts.map((c) => c.id).at(-1)).toBe('chart-harness-memory');
  });

  it('holds a sampled level only between samples', () => {
    expect(holdBetweenSamples([null, 1, null, null, 2, null])).toEqual([null, 1, 1, 1, 2, null]);
    expect(holdBetweenSamples([null, null])).toEqual([null, null]);
    expect(holdBetweenSamples([3])).toEqual([3]);
  });
});
