import { afterEach, describe, expect, it } from 'vitest';
import { verifyLedger } from '../harness/verifier/verifier.js';
import { uplotAssets } from './chart-script.js';
import { HTML_SECTIONS, renderHtmlReport, scopeHtml } from './html-report.js';
import type { Results } from './results.js';
import { buildResults } from './results.js';
import { closeLedgers, EVIL_NODE, EVIL_STATUS, ledger, ownMarkup, render, section, timelineData } from './test-support/report-ledger.js';
import { importHistory } from '../ledger/history-import.js';
import { historyOf } from '../ledger/test-support/fixtures.js';
import type Database from 'better-sqlite3';

const fixtureDbs: Database.Database[] = [];
afterEach(() => {
  closeLedgers();
  while (fixtureDbs.length > 0) fixtureDbs.pop()!.close();
});

function renderFixture(name: string): string {
  const db = importHistory(historyOf(name), ':memory:');
  fixtureDbs.push(db);
  return renderHtmlReport(db, buildResults(db, verifyLedger(db)));
}

describe('renderHtmlReport, v2 findings', () => {
  it('shows the read findings in their own section, with the read, its times, node, the value read, W and the final read', () => {
    const html = renderFixture('v2-reads');
    const reads = section(html, 'reads');
    expect(reads).toContain('3 read findings.');
    expect(reads).toContain('<tr><td>stale-read</td><td>sync3/ka</td><td>r1</td><td>300</td><td>302</td><td>n1</td><td>a1</td><td>a2</td><td>a2</td></tr>');
    expect(reads).toContain('<tr><td>phantom-read</td><td>sync3/kb</td><td>r2</td>');
    expect(reads).toContain('<tr><td>unexpected-read</td><td>sync3/kc</td><td>r3</td>');
    // the violations section keeps the keys' own findings and points to the reads
    expect(section(html, 'class-violation')).toContain("None among the keys' own findings.");
    expect(section(html, 'class-violation')).toContain('<a href="#reads">Read findings</a>');
  });

  it('shows the runtime-map findings with their evidence', () => {
    const rm = section(renderFixture('v2-runtime-map'), 'runtime-map');
    expect(rm).toContain('4 runtime-map findings.');
    expect(rm).toContain('<tr><td>epoch-conflict</td><td>sync3/0</td><td>epoch 3 had the actives n1, n2 (seen at 100 ms)</td></tr>');
    expect(rm).toContain("node n2&#39;s own entry went from epoch 3 back to 2 at 200 ms");
    expect(rm).toContain('Healthy at 300 ms with in-sync set [n1, n2], missing n3');
    expect(rm).toContain('at 5000 ms the in-sync member n2 held revision 12 while the active n1 (epoch 2) had held 400 since 3000 ms, with no fault in the 1000 ms before');
  });

  it('names the fault and the node that took over for an async-ack loss', () => {
    const a = section(renderFixture('v2-async-ack-allowed'), 'class-async-ack');
    expect(a).toContain(
      '<p class="story">acknowledged by n1 at epoch 3, revision 40, at 5000 ms; its owner n1 crashed at 5012 ms (fault f1) and n2 took over before it was replicated; replication was disrupted by fault f1 (kill of n1)</p>',
    );
  });

  it('says why no allowance applied to a loss', () => {
    const v = section(renderFixture('issue10-async-owner-never-lost'), 'class-violation');
    expect(v).toContain('no allowance applies: its owner neither crashed nor lost the partition to another node at a higher epoch');
  });
});

describe('renderHtmlReport', () => {
  it('renders the sections in order, the verdict banner and a how-to line per class', () => {
    const db = ledger();
    const html = render(db);
    const ids = [...html.matchAll(/<section id="([^"]+)">/g)].map((m) => m[1]);
    expect(ids).toEqual(['verdict', 'incidents', 'charts', 'faults', 'run', 'contract', 'counts', 'class-violation', 'reads', 'runtime-map', 'class-rf1', 'class-async-ack', 'class-beyond-budget', 'class-info', 'epochs', 'retries']);
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
    // a run from before spares shows no spare row; one with spares lists them
    expect(run).not.toContain('spare nodes');
    const cfg = JSON.parse(db.prepare("SELECT value FROM meta WHERE key = 'run_config'").pluck().get() as string) as Record<string, unknown>;
    db.prepare("UPDATE meta SET value = ? WHERE key = 'run_config'").run(JSON.stringify({ ...cfg, faults: ['kill', 'join', 'leave'], spares: ['n4'] }));
    const withSpare = section(render(db), 'run');
    expect(withSpare).toContain('<tr><td>spare nodes (outside the member set at start)</td><td>n4</td></tr>');
    expect(withSpare).toContain('<tr><td>fault kinds</td><td>kill, join, leave</td></tr>');
  });

  it('names the self-test bug (BUG=) the store ran with, in the banner and the run table', () => {
    const db = ledger();
    db.prepare("UPDATE meta SET value = json_set(value, '$.selfTestBug', ?) WHERE key = 'run_config'").run('fencing-off-by-one');
    const html = render(db);
    expect(section(html, 'verdict')).toContain('<p class="reason">Self-test run: the store ran with the deliberate bug fencing-off-by-one (BUG=fencing-off-by-one); the verdict must be FAILED</p>');
    expect(section(html, 'run')).toContain('<tr><td>self-test bug (BUG=)</td><td>fencing-off-by-one</td></tr>');
    // a real certification says nothing of it
    expect(render(ledger())).not.toContain('self-test');
  });

  it('shows an INCONCLUSIVE reason in the banner', () => {
    const db = ledger();
    db.exec("UPDATE final_reads SET value = 'w2', value_seq = 2 WHERE value = 'w1'; DELETE FROM faults; INSERT INTO meta (key, value) VALUES ('inconclusive_reason', 'the cluster did not return to Healthy <in 60 s>')");
    const html = render(db);
    expect(html).toContain('<div class="banner b-INCONCLUSIVE">');
    expect(section(html, 'verdict')).toMatch(/<p class="reason">Why inconclusive: [^<]*the cluster did not return to Healthy &lt;in 60 s&gt;[^<]*no fault was injected<\/p>/);
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

  it('counts the membership changes, migrations and Migrating answers and lists the admin requests, escaped (issue 14)', () => {
    const db = ledger();
    expect(section(render(db), 'counts')).not.toContain('Admin requests');
    const ev = db.prepare('INSERT INTO events (t_ms, kind, detail) VALUES (?, ?, ?)');
    ev.run(65_000, 'admin', JSON.stringify({ kind: 'join', command: 'join n4', node: 'n4', status: 'Ok', message: 'join of n4 <proposed>' }));
    ev.run(125_000, 'admin', JSON.stringify({ kind: 'leave', command: 'leave n1', node: 'n1', step: 'drain', status: 'Ok', message: 'leave of n1 proposed' }));
    ev.run(60_000, 'node-metrics', JSON.stringify({ node: 'n1', failovers: 1, promotions: 2, staleEpochRefusals: 0, migratingAnswers: 7, invalidPolicyValues: 0, migrations: 5, writesAcked: 0, lagMaxMs: 0, lag: {} }));
    const counts = section(render(db), 'counts');
    expect(counts).toContain('<h3>Membership changes</h3>\n<p>1 join, 1 leave, 0 rebalances: 5 partition moves (migrations), 7 Migrating answers.');
    expect(counts).toContain('<tr><td>1</td><td>2</td><td>0</td><td>7</td><td>5</td><td>0</td></tr>');
    expect(counts).toContain('<tr><td>1:05.0</td><td>join n4</td><td>n4</td><td>-</td><td>Ok: join of n4 &lt;proposed&gt;</td></tr>');
    expect(counts).toContain('<td>leave n1</td><td>n1</td><td>drain</td>');
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

  it('takes extra sections', () => {
    const db = ledger();
    const html = renderHtmlReport(db, buildResults(db, verifyLedger(db)), [...HTML_SECTIONS, { id: 'extra', title: 'Extra', render: () => '<p>extra</p>' }]);
    expect(html).toContain('<section id="extra">\n<h2>Extra</h2>\n<p>extra</p>\n</section>');
  });
});

describe('the report of a stream target', () => {
  it('shows the whole-store read and what the run tested and could not, escaped; nothing for other runs', () => {
    const r = {
      readback: { complete: true, stream: { messages: 3, firstSeq: 1, lastSeq: 3 }, read: 3, keys: 3, duplicates: 0, duplicateSamples: [], anomalies: 0, replicas: { n1: { messages: 3, firstSeq: 1, lastSeq: 3 } }, ms: 100 },
      scope: { tested: ['acks <survive>'], notTested: ['power & kernel failures'] },
    } as unknown as Results;
    const html = scopeHtml(r);
    expect(html).toContain('<h3>Final read of the whole store</h3>');
    expect(html).toContain('stream read back whole: 3 of 3 messages (sequences 1..3), 3 keys, 0 duplicates, 0 anomalies, in 0.1 s');
    expect(html).toContain('<h3>What this run tested</h3>\n<ul><li>acks &lt;survive&gt;</li></ul>');
    expect(html).toContain('<h3>What it could not test</h3>\n<ul><li>power &amp; kernel failures</li></ul>');
    expect(scopeHtml({} as Results)).toBe('');
  });
});
