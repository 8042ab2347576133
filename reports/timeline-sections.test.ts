import type Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { validateHistory } from '../ledger/history-format.js';
import { importHistory } from '../ledger/history-import.js';
import { closeLedgers, EVIL_NODE, EVIL_STATUS, ledger, render, section, timelineData } from './test-support/report-ledger.js';

const extra: Database.Database[] = [];
afterEach(() => {
  closeLedgers();
  while (extra.length > 0) extra.pop()!.close();
});

describe('timeline sections of report.html', () => {
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
    extra.push(db);
    const html = render(db);
    const d = timelineData(html);
    expect(d.x).toEqual([0]);
    expect(d.charts.map((c) => [c.id, c.lines.length])).toEqual([['chart-statuses', 0], ['chart-epochs', 0]]);
    expect(section(html, 'charts')).toContain('<div class="chart" id="chart-epochs"><p class="nodata">No data recorded.</p></div>');
    expect(section(html, 'faults')).toContain('No fault was injected.');
    expect(section(html, 'epochs')).toContain('No runtime-map samples recorded.');
  });

});
