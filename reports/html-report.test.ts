import type Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { validateHistory } from '../harness/verifier/history.js';
import { verifyLedger } from '../harness/verifier/verifier.js';
import { importHistory } from '../ledger/history-import.js';
import { HTML_SECTIONS, renderHtmlReport } from './html-report.js';
import { buildResults } from './results.js';

const open: Database.Database[] = [];
afterEach(() => {
  while (open.length > 0) open.pop()!.close();
});

const EVIL = '<img src=x onerror=alert(1)>';

function ledger(): Database.Database {
  const db = importHistory(validateHistory({
    format: 'zaris-history/1',
    nodes: ['n1', 'n2', 'n3'],
    stores: [{ name: 'sync3', replicationFactor: 3, ackMode: 'sync' }],
    partitions: [{ store: 'sync3', partition: 0, replicas: ['n1', 'n2', 'n3'] }],
    faults: [
      { id: 'f1', kind: 'kill', nodes: ['n1'], start: 300, end: 2000 },
      { id: 'f2', kind: 'pause', nodes: ['n2'], start: 900000, end: 900100 },
    ],
    ownership: [],
    writes: [
      { id: 'w1', store: 'sync3', key: EVIL, partition: 0, seq: 1, op: 'put', invoke: 100, complete: 104, outcome: 'ok', ack: { node: 'n1', epoch: 1, version: 1, revision: 1, ackMode: 'sync' } },
      { id: 'w2', store: 'sync3', key: EVIL, partition: 0, seq: 2, op: 'put', invoke: 200, complete: 204, outcome: 'ok', ack: { node: 'n1', epoch: 1, version: 2, revision: 2, ackMode: 'sync' }, attempts: 2, trace: '<b>Unavailable</b> then Ok' },
      { id: 'w3', store: 'sync3', key: 'k2', partition: 0, seq: 1, op: 'put', invoke: 100, outcome: 'info' },
    ],
    finalReads: [{ store: 'sync3', key: EVIL, value: 'w1' }, { store: 'sync3', key: 'k2', value: 'w3' }],
  }), ':memory:');
  open.push(db);
  db.exec(`INSERT INTO meta (key, value) VALUES ('run_config', '{"duration":"1m","note":"</pre><script>alert(2)</script>"}')`);
  return db;
}

describe('renderHtmlReport', () => {
  it('renders the sections in order: verdict, run, counts, violations, rf1, async-ack, beyond-budget, info, faults', () => {
    const db = ledger();
    const html = renderHtmlReport(db, buildResults(db, verifyLedger(db)));
    const ids = [...html.matchAll(/<section id="([^"]+)">/g)].map((m) => m[1]);
    expect(ids).toEqual(['verdict', 'run', 'counts', 'class-violation', 'class-rf1', 'class-async-ack', 'class-beyond-budget', 'class-info', 'faults']);
    expect(html).toContain('<p class="verdict v-FAILED">FAILED <span class="exit">exit code 1</span></p>');
  });

  it('escapes every string from the store or the ledger', () => {
    const db = ledger();
    const html = renderHtmlReport(db, buildResults(db, verifyLedger(db)));
    expect(html).toContain('lost — sync3/&lt;img src=x onerror=alert(1)&gt; — w2');
    expect(html).not.toContain('<img');
    expect(html).not.toContain('<script');
    expect(html).not.toContain('<b>Unavailable');
    expect(html).toContain('&lt;b&gt;Unavailable&lt;/b&gt; then Ok');
    expect(html).toContain('&lt;/pre&gt;&lt;script&gt;');
  });

  it('is self-contained: no external resource', () => {
    const db = ledger();
    const html = renderHtmlReport(db, buildResults(db, verifyLedger(db)));
    expect(html).not.toMatch(/\b(src|href)\s*=\s*"(?!#)/i);
    expect(html).not.toMatch(/https?:\/\//);
    expect(html).not.toMatch(/<link\b/);
  });

  it('drills down into a lost key: its writes with attempts and trace, the faults around the ack, the final read', () => {
    const db = ledger();
    const html = renderHtmlReport(db, buildResults(db, verifyLedger(db)));
    const violations = html.slice(html.indexOf('<section id="class-violation">'), html.indexOf('<section id="class-rf1">'));
    expect(violations).toContain('<tr class="named"><td>2</td><td>w2</td><td>put</td><td>200</td><td>204</td><td>ok</td><td></td><td>2</td>');
    expect(violations).toContain('<tr class="read"><td>1</td><td>w1</td>');
    expect(violations).toContain('Faults around the ack (t = 204 ms)');
    expect(violations).toContain('<td>1</td><td>kill</td><td>[&quot;n1&quot;]</td><td>300</td><td>2000</td>');
    expect(violations).not.toContain('<td>pause</td>'); // 15 minutes later: not around the ack
    expect(violations).toContain('final read: <b>w1</b>');
    const info = html.slice(html.indexOf('<section id="class-info">'), html.indexOf('<section id="faults">'));
    expect(info).toContain('recovered — sync3/k2 — w3');
  });

  it('takes extra sections', () => {
    const db = ledger();
    const html = renderHtmlReport(db, buildResults(db, verifyLedger(db)), [...HTML_SECTIONS, { id: 'charts', title: 'Charts', render: () => '<p>chart</p>' }]);
    expect(html).toContain('<section id="charts">\n<h2>Charts</h2>\n<p>chart</p>\n</section>');
  });
});
