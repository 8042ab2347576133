import type Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { History } from '../harness/verifier/history.js';
import { validateHistory } from '../harness/verifier/history.js';
import { verifyLedger } from '../harness/verifier/verifier.js';
import { importHistory } from '../ledger/history-import.js';
import { TIMELINE_DATA_ID, uplotAssets } from './chart-script.js';
import { HTML_SECTIONS, renderHtmlReport } from './html-report.js';
import { buildResults } from './results.js';
import type { TimelineData } from './timeline-data.js';

const open: Database.Database[] = [];
afterEach(() => {
  while (open.length > 0) open.pop()!.close();
});

const EVIL = '<img src=x onerror=alert(1)>';
const EVIL_STATUS = '<script>alert("st")</script>';
const EVIL_NODE = 'n"3\'<b>';
const EVIL_REASON = '</pre><script>alert(2)</script>';

function history(): History {
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

/** A small ledger with every table the report reads, hostile strings where the store puts strings. */
function ledger(): Database.Database {
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

function render(db: Database.Database): string {
  return renderHtmlReport(db, buildResults(db, verifyLedger(db)));
}

/** Undoes escape-html (the five characters it escapes), as a browser does for an attribute. */
function unescapeAttr(s: string): string {
  return s.replace(/&(quot|#39|lt|gt|amp);/g, (_, e: string) => ({ quot: '"', '#39': "'", lt: '<', gt: '>', amp: '&' })[e]!);
}

function timelineData(html: string): TimelineData & { faultColors: Record<string, string> } {
  const m = new RegExp(`<div id="${TIMELINE_DATA_ID}" hidden data-json="([^"]*)"></div>`).exec(html);
  expect(m).not.toBeNull();
  return JSON.parse(unescapeAttr(m![1])) as TimelineData & { faultColors: Record<string, string> };
}

function section(html: string, id: string): string {
  const start = html.indexOf(`<section id="${id}">`);
  expect(start).toBeGreaterThanOrEqual(0);
  return html.slice(start, html.indexOf('</section>', start));
}

/** The page with the inlined uPlot script taken out (it is third-party code, checked separately). */
function ownMarkup(html: string): string {
  const { js } = uplotAssets();
  expect(html.split(js)).toHaveLength(2);
  return html.replace(js, '');
}

describe('renderHtmlReport', () => {
  it('renders the sections in order, the verdict banner and a how-to line per class', () => {
    const db = ledger();
    const html = render(db);
    const ids = [...html.matchAll(/<section id="([^"]+)">/g)].map((m) => m[1]);
    expect(ids).toEqual(['verdict', 'run', 'counts', 'class-violation', 'class-rf1', 'class-async-ack', 'class-beyond-budget', 'class-info', 'charts', 'faults', 'epochs', 'retries']);
    expect(html).toContain('<div class="banner b-FAILED"><p class="verdict">FAILED <span class="exit">exit code 1</span></p>');
    for (const cls of ['violation', 'rf1', 'async-ack', 'beyond-budget', 'info']) expect(section(html, `class-${cls}`)).toMatch(/<p class="howto">[A-Z][^<]{40,}<\/p>/);
    expect(section(html, 'class-rf1')).toContain('replication factor 1');
  });

  it('shows the runtime that ran and why, the seed, rate, versions and schedule digest', () => {
    const db = ledger();
    const run = section(render(db), 'run');
    expect(run).toContain('<tr><td>runtime</td><td>process</td></tr>');
    expect(run).toContain('<tr><td>why this runtime</td><td>process: &lt;/pre&gt;&lt;script&gt;alert(2)&lt;/script&gt;</td></tr>');
    expect(run).toContain('<tr><td>seed</td><td>42</td></tr>');
    expect(run).toContain('<tr><td>rate</td><td>3000 writes/s</td></tr>');
    expect(run).toContain('<tr><td>fault kinds</td><td>kill, partition</td></tr>');
    expect(run).toContain('<tr><td>version: node</td><td>v20.20.2</td></tr>');
    expect(run).toContain('<tr><td>schedule digest</td><td>(not recorded)</td></tr>');
  });

  it('shows an INCONCLUSIVE reason in the banner', () => {
    const db = ledger();
    db.exec("UPDATE final_reads SET value = 'w2', value_seq = 2 WHERE value = 'w1'; DELETE FROM faults; INSERT INTO meta (key, value) VALUES ('inconclusive_reason', 'the cluster did not return to Healthy <in 60 s>')");
    const html = render(db);
    expect(html).toContain('<div class="banner b-INCONCLUSIVE">');
    expect(section(html, 'verdict')).toMatch(/<p class="reason">Why inconclusive: [^<]*the cluster did not return to Healthy &lt;in 60 s&gt;[^<]*no fault was injected<\/p>/);
  });

  it('holds the chart data: writes, latency and statuses per second per store, epochs, faults and phases', () => {
    const db = ledger();
    const d = timelineData(render(db));
    expect(d.widthS).toBe(1);
    expect(d.endS).toBe(71); // the pause fault ends at 70.1 s
    expect(d.x).toHaveLength(71);
    expect(d.x.slice(0, 5)).toEqual([0, 1, 2, 3, 4]);
    expect(d.charts.map((c) => c.id)).toEqual(['chart-writes-0', 'chart-writes-1', 'chart-latency-0', 'chart-latency-1', 'chart-statuses', 'chart-epochs']);
    const byId = new Map(d.charts.map((c) => [c.id, c]));
    expect(byId.get('chart-writes-0')!.title).toBe('Writes per second: sync3');
    expect(byId.get('chart-writes-0')!.values.map((v) => v.slice(0, 5))).toEqual([[10, 4, 0, 8, 0], [0, 2, 0, 0, 0], [0, 1, 0, 0, 0]]);
    expect(byId.get('chart-writes-1')!.values[0].slice(0, 5)).toEqual([0, 6, 0, 0, 0]);
    expect(byId.get('chart-latency-0')!.lines.map((l) => l.label)).toEqual(['p50', 'p95', 'p99', 'max']);
    expect(byId.get('chart-latency-0')!.values[3].slice(0, 5)).toEqual([4.5, 400.25, null, 4, null]);
    const statuses = byId.get('chart-statuses')!;
    expect(statuses.lines.map((l) => l.label)).toEqual(['ConnectRefused', 'Unavailable', EVIL_STATUS]); // by total, Ok left out
    expect(statuses.values[0].slice(0, 5)).toEqual([0, 1, 0, 5, 0]);
    expect(statuses.values[0].slice(5).every((v) => v === 0)).toBe(true);
    const epochs = byId.get('chart-epochs')!;
    expect(epochs.lines).toEqual([{ label: 'sync3/0', step: true }, { label: 'rf1/0', step: true }]);
    expect(epochs.values[0].slice(0, 5)).toEqual([1, 2, 2, 3, null]);
    expect(d.faults).toEqual([[0.3, 2, 'kill', 'kill n1', 1], [3, 4.5, 'partition', `partition ${EVIL_NODE}`, 2], [70, 70.1, 'pause', 'pause n2', 3]]);
    expect(d.phases).toEqual([[0.05, 'faults'], [4.6, 'heal'], [4.8, EVIL_STATUS]]);
    expect(d.faultColors.kill).toMatch(/^rgba\(/);
    for (const c of d.charts) for (const v of c.values) expect(v).toHaveLength(d.x.length);
  });

  it('escapes every string from the store or the ledger: keys, statuses, node ids, reasons', () => {
    const db = ledger();
    const html = ownMarkup(render(db));
    expect(html).toContain('lost — sync3/&lt;img src=x onerror=alert(1)&gt; — w2');
    expect(html).not.toContain('<img');
    expect(html).not.toContain('<b>\'');
    expect(html).not.toContain(EVIL_NODE);
    expect(html).not.toContain(EVIL_STATUS);
    expect(html).toContain('n&quot;3&#39;&lt;b&gt;');
    expect(html).toContain('&lt;script&gt;alert(&quot;st&quot;)&lt;/script&gt;');
    // the only script elements are the two the page inlines (uPlot, then the chart script)
    expect([...html.matchAll(/<script\b[^>]*>/g)].map((m) => m[0])).toEqual(['<script>', '<script>']);
    expect(html).toContain('&lt;/pre&gt;&lt;script&gt;alert(2)&lt;/script&gt;');
    // the chart data round-trips the hostile strings exactly (escaped in the attribute, intact after)
    expect(JSON.stringify(timelineData(html))).toContain(JSON.stringify(EVIL_STATUS).slice(1, -1));
  });

  it('is self-contained: no external resource, uPlot and its stylesheet inlined', () => {
    const db = ledger();
    const html = render(db);
    const { js, css } = uplotAssets();
    expect(html).toContain(`<script>${js}</script>`);
    expect(html).toContain(`<style>${css}</style>`);
    expect(html).not.toMatch(/\b(src|href)\s*=\s*["']?\s*(https?:|\/\/)/i);
    expect(html).not.toMatch(/\b(src|href)\s*=\s*"(?!#)/i);
    expect(html).not.toMatch(/<link\b|@import|url\(/i);
    // no URL at all in the page's own markup; uPlot names its home page only in its licence comment
    expect(ownMarkup(html)).not.toMatch(/https?:\/\//);
    expect([...js.matchAll(/https?:\/\/[^\s*]*/g)].map((m) => [m.index < 20, m[0]])).toEqual([[true, 'https://github.com/leeoniya/uPlot']]);
  });

  it('is deterministic: the same ledger gives the same bytes, twice and from a second copy', () => {
    const a = ledger();
    const b = ledger();
    const first = render(a);
    expect(render(a)).toBe(first);
    expect(render(b)).toBe(first);
    b.exec("UPDATE stats SET acked = 11 WHERE t_s = 0 AND store = 'sync3'");
    expect(render(b)).not.toBe(first);
  });

  it('drills down into a lost key: writes with readable traces, faults and runtime map around the ack, the final read', () => {
    const db = ledger();
    const html = render(db);
    const v = section(html, 'class-violation');
    expect(v).toContain('<tr class="named"><td>2</td><td>w2</td><td>put</td><td>200</td><td>204.3</td><td>ok</td><td>Ok</td><td>2</td>');
    expect(v).toContain('<li>#1 <b class="st">&lt;script&gt;alert(&quot;st&quot;)&lt;/script&gt;</b> · n&quot;3&#39;&lt;b&gt; · e1 · 200 → 201.5 (1.5 ms)</li>');
    expect(v).toContain('<tr class="read"><td>1</td><td>w1</td>');
    expect(v).toContain('Faults around the ack (t = 204.3 ms, run time 0:00.2; 10 s before to 60 s after)');
    expect(v).toContain('<tr><td>1</td><td>kill</td><td>n1</td><td>300</td><td>2000</td><td>2500</td></tr>');
    expect(v).not.toContain('<td>pause</td>'); // 70 s later: not around the ack
    expect(v).toContain('Runtime map of sync3/0 around the ack');
    expect(v).toMatch(/<td>active, epoch, health<\/td><td>n2<\/td><td>2<\/td><td><span class="h h-Degraded">Degraded<\/span><\/td>/);
    expect(v).toContain('final read: <b>w1</b>');
    expect(section(html, 'class-info')).toContain('recovered — sync3/k2 — w3');
  });

  it('lists the fault timeline with failover times and the failover quantiles', () => {
    const db = ledger();
    const f = section(render(db), 'faults');
    expect(f).toContain('<tr><td>1</td><td>950 ms</td><td>950 ms</td><td>950 ms</td></tr>');
    expect(f).toContain('<h3>Faults (3)</h3>');
    expect(f).toMatch(/<td>1 \(f1\)<\/td><td><span class="k" style="background:rgba\([^"]+\)">kill<\/span><\/td><td><\/td><td>n1<\/td><td>0:00.3<br><span class="sub">300 ms<\/span><\/td><td>0:02.0<br><span class="sub">2000 ms<\/span><\/td><td>1.70 s<\/td><td>0:02.5 \(\+0.50 s\)<\/td>/);
    expect(f).toContain('<li>sync3/0: n1 → n&quot;3&#39;&lt;b&gt; <b>950 ms</b></li>');
    expect(f).toContain('<td>2 (f2)</td>');
  });

  it('shows each partition’s runtime-map changes only', () => {
    const db = ledger();
    const e = section(render(db), 'epochs');
    expect(e).toMatch(/<tr><td>sync3\/0<\/td><td>n1, n2, n&quot;3&#39;&lt;b&gt;<\/td><td>5<\/td><td>3<\/td><td>1 → 3<\/td>/);
    expect(e).toContain('<summary>sync3/0: 3 changes</summary>');
    expect(e).toContain('<summary>rf1/0: 0 changes</summary>');
    const rows = e.slice(e.indexOf('<summary>sync3/0')).split('</details>')[0].match(/<tr>/g);
    expect(rows).toHaveLength(5); // header + first sample + 3 changes (the 250 ms sample changed nothing)
  });

  it('counts client attempts by status per store, with the totals of results.retries', () => {
    const db = ledger();
    const r = section(render(db), 'retries');
    expect(r).toContain('<thead><tr><th>status</th><th>sync3</th><th>rf1</th><th>total</th></tr></thead>');
    expect(r).toContain('<tr><td>Ok</td><td>22</td><td>6</td><td>28</td></tr>');
    expect(r).toContain('<tr><td>ConnectRefused</td><td>5</td><td>1</td><td>6</td></tr>');
    expect(r).toContain('<tr><td>&lt;script&gt;alert(&quot;st&quot;)&lt;/script&gt;</td><td>1</td><td>0</td><td>1</td></tr>');
  });

  it('renders an empty ledger without charts data rows or errors', () => {
    const db = importHistory(validateHistory({ format: 'zaris-history/1', nodes: [], stores: [], partitions: [], faults: [], ownership: [], writes: [], finalReads: [] }), ':memory:');
    open.push(db);
    const html = render(db);
    const d = timelineData(html);
    expect(d.x).toEqual([0]);
    expect(d.charts.map((c) => [c.id, c.lines.length])).toEqual([['chart-statuses', 0], ['chart-epochs', 0]]);
    expect(section(html, 'charts')).toContain('<div class="chart" id="chart-epochs"><p class="nodata">No data recorded.</p></div>');
    expect(section(html, 'faults')).toContain('No fault was injected.');
    expect(section(html, 'epochs')).toContain('No runtime-map samples recorded.');
  });

  it('takes extra sections', () => {
    const db = ledger();
    const html = renderHtmlReport(db, buildResults(db, verifyLedger(db)), [...HTML_SECTIONS, { id: 'extra', title: 'Extra', render: () => '<p>extra</p>' }]);
    expect(html).toContain('<section id="extra">\n<h2>Extra</h2>\n<p>extra</p>\n</section>');
  });
});
