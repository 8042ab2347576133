import Database from 'better-sqlite3';
import { LEDGER_DDL } from '../../ledger/schema.js';
import { expect } from 'vitest';
import type { History } from '../../ledger/history-format.js';
import { validateHistory } from '../../ledger/history-format.js';
import { verifyLedger } from '../../harness/verifier/verifier.js';
import { importHistory } from '../../ledger/history-import.js';
import { TIMELINE_DATA_ID, uplotAssets } from '../chart-script.js';
import { renderHtmlReport } from '../html-report.js';
import { buildResults } from '../results.js';
import type { TimelineData } from '../timeline-data.js';

/** Ledgers opened by {@link ledger}; a test file closes them after each test ({@link closeLedgers}). */
const open: Database.Database[] = [];

/** Closes every ledger {@link ledger} opened. */
export function closeLedgers(): void {
  while (open.length > 0) open.pop()!.close();
}

/** Hostile strings the fixture puts in a key, a status, a node id and a reason (each must come out escaped). */
export const EVIL = '<img src=x onerror=alert(1)>';
export const EVIL_STATUS = '<script>alert("st")</script>';
export const EVIL_NODE = 'n"3\'<b>';
export const EVIL_REASON = '</pre><script>alert(2)</script>';

/** The fixture's history: two stores, three faults, samples, four writes; hostile strings where the store puts strings. */
export function history(): History {
  return validateHistory({
    format: 'zaris-history/1',
    nodes: ['n1', 'n2', EVIL_NODE],
    stores: [{ name: 'sync3', replicationFactor: 3, ackMode: 'sync' }, { name: 'rf1', replicationFactor: 1, ackMode: 'sync' }],
    partitions: [{ store: 'sync3', partition: 0, replicas: ['n1', 'n2', EVIL_NODE] }, { store: 'rf1', partition: 0, replicas: ['n1'] }],
    faults: [
      { id: 'f1', kind: 'kill', nodes: ['n1'], start: 300, end: 2000, caughtUp: 2500 },
      { id: 'f2', kind: 'partition', nodes: [EVIL_NODE], start: 3000, end: 4500 },
      { id: 'f3', kind: 'pause', nodes: ['n2'], start: 70000, end: 70100 },
    ],
    ownership: [
      { t: 0, store: 'sync3', partition: 0, active: 'n1', epoch: 1, health: 'Healthy', replicatedRevision: 0 },
      { t: 250, store: 'sync3', partition: 0, active: 'n1', epoch: 1, health: 'Healthy', replicatedRevision: 2 },
      { t: 1200, store: 'sync3', partition: 0, active: 'n2', epoch: 2, health: 'Degraded', replicatedRevision: 2 },
      { t: 2600, store: 'sync3', partition: 0, active: 'n2', epoch: 2, health: 'Healthy', replicatedRevision: 3 },
      { t: 3200, store: 'sync3', partition: 0, active: EVIL_NODE, epoch: 3, health: EVIL_STATUS, replicatedRevision: 3 },
      { t: 0, store: 'rf1', partition: 0, active: 'n1', epoch: 1, health: 'Healthy', replicatedRevision: 0 },
    ],
    writes: [
      { id: 'w1', store: 'sync3', key: EVIL, partition: 0, seq: 1, op: 'put', invoke: 100, complete: 104, outcome: 'ok', ack: { node: 'n1', epoch: 1, version: 1, revision: 1, ackMode: 'sync' } },
      {
        id: 'w2', store: 'sync3', key: EVIL, partition: 0, seq: 2, op: 'put', invoke: 200, complete: 204.25, outcome: 'ok',
        ack: { node: EVIL_NODE, epoch: 1, version: 2, revision: 2, ackMode: 'sync' }, attempts: 2, status: 'Ok',
        trace: JSON.stringify([{ n: 1, s: EVIL_STATUS, node: EVIL_NODE, e: 1, t0: 200, t1: 201.5 }, { n: 2, s: 'Ok', node: 'n1', e: 1, t0: 202, t1: 204.25 }]),
      },
      { id: 'w3', store: 'sync3', key: 'k2', partition: 0, seq: 1, op: 'put', invoke: 100, outcome: 'info' },
      { id: 'w4', store: 'rf1', key: 'k3', partition: 0, seq: 1, op: 'put', invoke: 100, complete: 102, outcome: 'ok', ack: { node: 'n1', epoch: 1, version: 1, revision: 1, ackMode: 'sync' } },
    ],
    finalReads: [{ store: 'sync3', key: EVIL, value: 'w1' }, { store: 'sync3', key: 'k2', value: 'w3' }, { store: 'rf1', key: 'k3', value: 'w4' }],
  });
}

/** An empty in-memory ledger (every table, no rows but the store `sync3`); closed by {@link closeLedgers}. */
export function emptyLedger(): Database.Database {
  const db = new Database(':memory:');
  open.push(db);
  for (const ddl of LEDGER_DDL) db.exec(ddl);
  db.exec("INSERT INTO stores VALUES ('sync3', 3, 'sync', 64)");
  return db;
}

/** An in-memory ledger with every table the report reads, hostile strings where the store puts strings. */
export function ledger(): Database.Database {
  const db = importHistory(history(), ':memory:');
  open.push(db);
  const meta = db.prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)');
  meta.run('run_config', JSON.stringify({ durationMs: 5000, runtime: 'process', runtimeReason: `process: ${EVIL_REASON}`, faults: ['kill', 'partition'], rate: 3000, writersPerStore: 2, keysPerWriter: 1, beyondBudget: false, escalationTimeoutMs: 10000, replay: null }));
  meta.run('versions', JSON.stringify({ node: 'v20.20.2', zarisCertify: '0.1.0' }));
  meta.run('runtime', 'process');
  meta.run('seed', '42');
  const stats = db.prepare('INSERT INTO stats (t_s, store, acked, failed, indeterminate, p50_ms, p95_ms, p99_ms, max_ms, statuses) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
  stats.run(0, 'sync3', 10, 0, 0, 1.5, 2.5, 3.5, 4.5, JSON.stringify({ Ok: 10 }));
  stats.run(1, 'sync3', 4, 2, 1, 2, 20, 30, 400.25, JSON.stringify({ Ok: 4, Unavailable: 3, [EVIL_STATUS]: 1 }));
  stats.run(3, 'sync3', 8, 0, 0, 1, 2, 3, 4, JSON.stringify({ Ok: 8, ConnectRefused: 5 }));
  stats.run(1, 'rf1', 6, 1, 0, 1, 1, 1, 1, JSON.stringify({ Ok: 6, ConnectRefused: 1 }));
  stats.run(2, 'rf1', 0, 0, 0, null, null, null, null, 'not json');
  const ev = db.prepare('INSERT INTO events (t_ms, kind, detail) VALUES (?, ?, ?)');
  ev.run(50, 'phase', JSON.stringify({ phase: 'faults' }));
  ev.run(1250, 'failover', JSON.stringify({ faultId: 1, store: 'sync3', partition: 0, node: EVIL_NODE, from: 'n1', ms: 950.04 }));
  ev.run(4600, 'phase', JSON.stringify({ phase: 'heal' }));
  ev.run(4800, 'phase', JSON.stringify({ phase: EVIL_STATUS }));
  return db;
}

/** Verifies the ledger and renders its page. */
export function render(db: Database.Database): string {
  return renderHtmlReport(db, buildResults(db, verifyLedger(db)));
}

/** Undoes escape-html (the five characters it escapes), as a browser does for an attribute. */
export function unescapeAttr(s: string): string {
  return s.replace(/&(quot|#39|lt|gt|amp);/g, (_, e: string) => ({ quot: '"', '#39': "'", lt: '<', gt: '>', amp: '&' })[e]!);
}

/** The chart data of a page (the decoded data-json attribute). */
export function timelineData(html: string): TimelineData & { faultColors: Record<string, string> } {
  const m = new RegExp(`<div id="${TIMELINE_DATA_ID}" hidden data-json="([^"]*)"></div>`).exec(html);
  expect(m).not.toBeNull();
  return JSON.parse(unescapeAttr(m![1])) as TimelineData & { faultColors: Record<string, string> };
}

/** One section of a page, from its opening tag to its end. */
export function section(html: string, id: string): string {
  const start = html.indexOf(`<section id="${id}">`);
  expect(start).toBeGreaterThanOrEqual(0);
  return html.slice(start, html.indexOf('</section>', start));
}

/** The page with the inlined uPlot script taken out (it is third-party code, checked separately). */
export function ownMarkup(html: string): string {
  const { js } = uplotAssets();
  expect(html.split(js)).toHaveLength(2);
  return html.replace(js, '');
}

