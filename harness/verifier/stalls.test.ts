import type Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { importHistory } from '../../ledger/history-import.js';
import { fault, own, v2, w } from '../../ledger/test-support/fixtures.js';
import { renderHtmlReport } from '../../reports/html-report.js';
import { buildResults } from '../../reports/results.js';
import { findStalls, stallText } from './stalls.js';
import { verifyLedger } from './verifier.js';

const open: Database.Database[] = [];
afterEach(() => {
  while (open.length > 0) open.pop()!.close();
});

/**
 * The project's own stall fixture (bound 5 s, a sample every 250 ms from 0 to 60 s):
 * - n2 killed at 10 s (f1), restarted at 20 s, back in sync at 22 s; silent from 10 s to 34 s:
 *   the fault reaches to 27 s (catch-up + the bound), so 27-34 s is a 7 s stall;
 * - n1 silent from 30 s to 42 s with no fault, then reports an 11.8 s event-loop delay (one
 *   stall, not two); silent again 45-49 s (4 s: none);
 * - n3 has no line from 44 s to 50 s, then reports a 6 s loop delay (a stall 44-50 s; its
 *   rolling window repeats the figure: one stall), then 4 s (none), then at 58 s 1,000 s while it
 *   answered every sample before (no silence backs it: none);
 * - sync3/0 Unavailable from 30.25 s to 41 s (no fault on its replicas: a stall); rf1/0 (replica
 *   n2) Unavailable from 10.1 s to 21 s (n2's kill: none).
 */
function stallLedger(): Database.Database {
  const h = v2(['sync3', 'rf1'], {
    faults: [fault('f1', 'kill', ['n2'], 10_000, 20_000, { effective: 10_010, caughtUp: 22_000 })],
    ownership: [own(0, 'sync3', 'n1', 1), own(0, 'rf1', 'n2', 1)],
    writes: [w('a1', 'sync3', 'a', 1, 100, 104, 'ok'), w('b1', 'rf1', 'b', 1, 100, 104, 'ok', { node: 'n2' })],
    finalReads: [
      { store: 'sync3', key: 'a', value: 'a1' },
      { store: 'rf1', key: 'b', value: 'b1' },
    ],
  });
  const db = importHistory(h, ':memory:');
  open.push(db);
  db.exec(`UPDATE partitions SET replicas = '["n2"]' WHERE store = 'rf1'`);
  const line = db.prepare('INSERT INTO node_samples (t_ms, node, answered, loop_max_ms, loop_p99_ms) VALUES (?, ?, ?, ?, ?)');
  const sample = db.prepare("INSERT INTO samples (t_ms, store, partition, active, epoch, health, replicated_revision) VALUES (?, ?, 0, ?, 1, ?, 0)");
  db.transaction(() => {
    for (let t = 250; t <= 60_000; t += 250) {
      const n1Silent = (t >= 30_000 && t < 42_000) || (t >= 45_000 && t < 49_000);
      line.run(t, 'n1', n1Silent ? 0 : 1, n1Silent ? null : t >= 42_000 ? 11_800 : 2, n1Silent ? null : 1);
      const n2Silent = t >= 10_000 && t < 34_000;
      line.run(t, 'n2', n2Silent ? 0 : 1, n2Silent ? null : 2, n2Silent ? null : 1);
      // n3: no line at all from 44 s to 50 s (no sample of it was taken), then a 6 s delay; at 58 s
      // a 1,000 s figure while it answered every sample (a clock fault's jump, say): no stall
      if (t <= 44_000 || t >= 50_000) line.run(t, 'n3', 1, t >= 58_000 ? 1_000_000 : t >= 55_000 ? 4_000 : t >= 50_000 ? 6_000 : 2, 1);
      sample.run(t, 'sync3', t >= 30_250 && t < 41_000 ? null : 'n1', t >= 30_250 && t < 41_000 ? 'Unavailable' : 'Healthy');
      sample.run(t, 'rf1', t >= 10_100 && t < 21_000 ? null : 'n2', t >= 10_100 && t < 21_000 ? 'Unavailable' : 'Healthy');
    }
  })();
  return db;
}

describe('stall findings (availability)', () => {
  it('finds every silent, blocked or Unavailable stretch longer than the bound outside any fault\'s reach', () => {
    const a = findStalls(stallLedger(), 5_000);
    expect(a.verdict).toBe('FAILED');
    expect(a.measured).toBe(true);
    expect(a.stalls).toEqual([
      { kind: 'node', why: 'no-answer', node: 'n2', fromMs: 27_000, toMs: 34_000, durationMs: 7_000, loopMaxMs: 2 },
      { kind: 'node', why: 'no-answer', node: 'n1', fromMs: 30_000, toMs: 42_000, durationMs: 12_000, loopMaxMs: 11_800 },
      { kind: 'partition', why: 'unavailable', store: 'sync3', partition: 0, fromMs: 30_250, toMs: 41_000, durationMs: 10_750 },
      { kind: 'node', why: 'loop-delay', node: 'n3', fromMs: 44_000, toMs: 50_000, durationMs: 6_000, loopMaxMs: 6_000 },
    ]);
    expect(stallText(a.stalls[1])).toBe('node n1 did not answer for 12.0 s, from 30.0 s to 42.0 s, with no fault touching it (longest event-loop delay it reported: 11800 ms)');
  });

  it('a larger bound (STALL=) keeps only the longer stretches; 15 s keeps none', () => {
    // with a 10 s bound n2's kill reaches to 32 s (catch-up + 10 s): sync3/0 (n2 is a replica) is left 32-41 s, 9 s: none
    expect(findStalls(stallLedger(), 10_000).stalls.map((s) => [s.node ?? s.store, s.fromMs, s.toMs])).toEqual([['n1', 30_000, 42_000]]);
    expect(findStalls(stallLedger(), 15_000)).toEqual({ verdict: 'OK', boundMs: 15_000, measured: true, stalls: [] });
  });

  it('a fault on the node (or on a replica of the partition) excuses the stretch it reaches', () => {
    const db = stallLedger();
    // a pause of n1 and n3 from 29 s to 45 s: n1's silence and the partition's Unavailable are the fault's; n3's block too
    db.exec(`INSERT INTO faults (id, kind, nodes, start_ms, end_ms) VALUES (9, 'pause', '["n1","n3"]', 29000, 45000)`);
    expect(findStalls(db, 5_000).stalls.map((s) => [s.node ?? s.store, s.fromMs, s.toMs])).toEqual([['n2', 27_000, 34_000]]);
  });

  it('results.json availability reads the run\'s bound (run config stallBoundMs); the durability verdict does not depend on it; the report shows the stalls', () => {
    const db = stallLedger();
    const v = verifyLedger(db);
    expect(v.verdict).toBe('CERTIFIED');
    let r = buildResults(db, v);
    expect(r.verdict).toBe('CERTIFIED');
    expect(r.exitCode).toBe(0);
    expect(r.availability.boundMs).toBe(5_000);
    expect(r.availability.verdict).toBe('FAILED');
    expect(r.availability.stalls).toHaveLength(4);
    const html = renderHtmlReport(db, r);
    expect(html).toContain('<a href="#stalls">Availability FAILED: 4 stalls; the first: node n2 did not answer for 7.0 s, from 27.0 s to 34.0 s, with no fault touching it');
    const timeline = html.slice(html.indexOf('<section id="faults">'), html.indexOf('</section>', html.indexOf('<section id="faults">')));
    expect(timeline).toContain('<h3 id="stalls">Stalls (availability FAILED');
    expect(timeline).toContain('<td>node n1</td><td>no-answer</td><td>0:30.0<br><span class="sub">30000 ms</span></td><td>0:42.0<br><span class="sub">42000 ms</span></td>');
    expect(timeline).toContain('<td>sync3/0</td><td>unavailable</td>');
    db.prepare("UPDATE meta SET value = json_set(value, '$.stallBoundMs', 15000) WHERE key = 'run_config'").run();
    r = buildResults(db, v);
    expect(r.availability).toEqual({ verdict: 'OK', boundMs: 15_000, measured: true, stalls: [] });
    expect(renderHtmlReport(db, r)).toContain('Availability OK: no node silent and no partition Unavailable longer than 15000 ms');
  });

  it('a ledger without node samples (older harness, imported history) is not measured, and OK', () => {
    const db = stallLedger();
    db.exec('DELETE FROM node_samples; DELETE FROM samples');
    expect(findStalls(db, 5_000)).toEqual({ verdict: 'OK', boundMs: 5_000, measured: false, stalls: [] });
  });
});
