import type Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { closeLedgers, emptyLedger } from './test-support/report-ledger.js';
import { timeGrid } from './downsample.js';
import { nodeCounterTotals, nodeMetricsCharts, NODE_METRICS_EVENT } from './node-metrics.js';
import { scanTimeline } from './timeline-data.js';
import { chartsSection } from './timeline-sections.js';
import { reportContext } from './html-kit.js';
import type { Results } from './results.js';
import { NODE_METRICS_EVENT as SAMPLER_EVENT } from '../harness/metrics-sampler.js';

afterEach(closeLedgers);
const ledger = emptyLedger;
const event = (db: Database.Database, tMs: number, detail: object): void => {
  db.prepare('INSERT INTO events VALUES (?, ?, ?)').run(tMs, NODE_METRICS_EVENT, JSON.stringify(detail));
};
const m = (node: string, over: object = {}): object => ({ node, failovers: 0, promotions: 0, staleEpochRefusals: 0, migratingAnswers: 0, invalidPolicyValues: 0, writesAcked: 0, lagMaxMs: 0, lag: {}, ...over });

describe('nodeMetricsCharts', () => {
  it('totals each counter over the nodes across restarts, and charts the lag per node', () => {
    const db = ledger();
    expect(SAMPLER_EVENT).toBe(NODE_METRICS_EVENT);
    event(db, 5_000, m('n1', { promotions: 1, lagMaxMs: 3 }));
    event(db, 5_000, m('n2', { staleEpochRefusals: 2, lagMaxMs: 10 }));
    event(db, 10_000, m('n1', { promotions: 2, failovers: 1, lagMaxMs: 40 }));
    event(db, 10_000, m('n2', { staleEpochRefusals: 2, invalidPolicyValues: 1, lagMaxMs: 0 }));
    // n1 restarted: its counters start again from 0; the totals keep what it counted before
    event(db, 12_000, m('n1', { promotions: 1 }));
    db.prepare('INSERT INTO events VALUES (?, ?, ?)').run(7_000, 'harness', JSON.stringify({ rssMb: 100 }));
    const [counters, lag] = nodeMetricsCharts(db, timeGrid(15));
    expect(counters.id).toBe('chart-node-counters');
    expect(counters.lines.map((l) => l.label)).toEqual(['failovers', 'promotions', 'stale-epoch refusals', 'Migrating answers', 'invalid multi-key policy values', 'migrations (partition moves)']);
    const [failovers, promotions, stale, migrating, invalid] = counters.values;
    expect(promotions[5]).toBe(1);
    expect(promotions[7]).toBe(1); // held between samples
    expect(promotions[10]).toBe(2);
    expect(promotions[12]).toBe(3);
    expect(failovers[12]).toBe(1);
    expect(failovers[5]).toBe(0);
    expect(failovers[10]).toBe(1);
    expect(stale[5]).toBe(2);
    expect(stale[10]).toBe(2);
    expect(migrating[10]).toBe(0);
    expect(invalid[10]).toBe(1);
    expect(promotions[4]).toBeNull();
    expect(lag.id).toBe('chart-replication-lag');
    expect(lag.lines.map((l) => l.label)).toEqual(['n1', 'n2']);
    expect(lag.values[0][5]).toBe(3);
    expect(lag.values[0][10]).toBe(40);
    expect(lag.values[1][10]).toBe(0);
  });

  it('gives no chart without node-metrics events, and joins the timeline when there are some', () => {
    const db = ledger();
    expect(nodeMetricsCharts(db, timeGrid(10))).toEqual([]);
    expect(scanTimeline(db).data.charts.map((c) => c.id)).not.toContain('chart-node-counters');
    event(db, 1_000, m('n1', { failovers: 2 }));
    const ids = scanTimeline(db).data.charts.map((c) => c.id);
    expect(ids).toContain('chart-node-counters');
    expect(ids).toContain('chart-replication-lag');
  });

  it('the report page has a titled place for each node chart (and the harness memory chart) only when its samples exist', () => {
    const db = ledger();
    const page = (): string => chartsSection.render(reportContext(db, {} as Results));
    expect(page()).not.toContain('id="chart-node-counters"');
    event(db, 1_000, m('n1', { failovers: 2, lagMaxMs: 5 }));
    db.prepare('INSERT INTO events VALUES (?, ?, ?)').run(2_000, 'harness', JSON.stringify({ rssMb: 100, heapUsedMb: 20 }));
    const html = page();
    expect(html).toContain("<h3>Store node counters (each node&#39;s metrics endpoint, sampled every 5 s)</h3>\n<div class=\"chart\" id=\"chart-node-counters\"></div>");
    expect(html).toContain('<div class="chart" id="chart-replication-lag"></div>');
    expect(html).toContain('<h3>Harness memory (RSS, heap)</h3>\n<div class="chart" id="chart-harness-memory"></div>');
  });
});


describe('nodeCounterTotals (results.json nodeCounters)', () => {
  it('sums each counter over the nodes across restarts; a counter no node exports stays null', () => {
    const db = ledger();
    expect(nodeCounterTotals(db)).toBeNull();
    event(db, 5_000, m('n1', { migratingAnswers: 4, migrations: 2 }));
    event(db, 5_000, m('n2', { migratingAnswers: 1, migrations: null }));
    event(db, 10_000, m('n1', { migratingAnswers: 9, migrations: 5 }));
    // n1 restarted (counts from 0 again), then counted 1 more migration; n2 counted 3 more Migrating answers
    event(db, 15_000, m('n1', { migratingAnswers: 0, migrations: 1 }));
    event(db, 15_000, m('n2', { migratingAnswers: 4, migrations: null }));
    expect(nodeCounterTotals(db)).toEqual({ failovers: 0, promotions: 0, staleEpochRefusals: 0, migratingAnswers: 13, invalidPolicyValues: 0, migrations: 6 });
    const old = ledger();
    event(old, 1_000, m('n1', { failovers: 1 }));
    expect(nodeCounterTotals(old)).toEqual({ failovers: 1, promotions: 0, staleEpochRefusals: 0, migratingAnswers: 0, invalidPolicyValues: 0, migrations: null });
  });
});
