import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sealLedgerFile } from '../ledger/seal.js';
import { DrillDetails, renderHtmlReport } from '../reports/html-report.js';
import { buildResults, type Results } from '../reports/results.js';
import { writeSyntheticRun } from './synthetic-run.js';
import { verifyLedger, type Verification } from './verifier/verifier.js';

/**
 * The end phase with many findings, small (make bench-endphase runs it at 40 minutes): a synthetic
 * run with lossEvery = 1, sealed, verified and reported.
 */
describe('a synthetic run with allowed losses (lossEvery)', () => {
  let dir: string;
  let db: Database.Database;
  let v: Verification;
  let results: Results;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'zaris-synthetic-loss-'));
    const path = join(dir, 'ledger.sqlite');
    // 5 minutes at 1,200 writes/s: ~15 crashes of the nodes, a few thousand keys
    writeSyntheticRun({ path, durationMs: 300_000, rate: 1200, seed: 7, lossEvery: 1 });
    sealLedgerFile(path);
    db = new Database(path);
    v = verifyLedger(db, { parallel: false });
    results = buildResults(db, v);
  }, 120_000);

  afterAll(() => {
    db?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('loses rf1 keys to their node\'s next crash, async keys to their owner\'s crash, and a few sync keys (violations)', () => {
    const byStore = Object.fromEntries(v.stores.map((s) => [s.name, s.summary]));
    // every lost rf1 ack is followed by its node's crash: all rf1; the only violations of rf1 and
    // async3 are the generator's 1 key in 10,000 that loses its last ack whatever the knob
    expect(byStore.rf1.rf1).toBeGreaterThan(500);
    expect(byStore.async3['async-ack']).toBeGreaterThan(20);
    const others = db.prepare("SELECT key FROM findings WHERE class = 'violation' AND store IN ('rf1', 'async3')").pluck().all() as string[];
    for (const key of others) expect(Number(key.slice(1)) % 10_000).toBe(0);
    expect(others.length).toBeLessThanOrEqual(2);
    expect(byStore.sync3.violation).toBeGreaterThan(0);
    expect(byStore.sync3.violation).toBeLessThan(byStore.rf1.rf1 / 20);
    expect(v.verdict).toBe('FAILED');
    expect(v.kinds['replication-lag']).toBe(0);
  });

  it('gives the same evidence to every drill-down as the per-key query did (DrillDetails: one pass over the findings)', () => {
    const one = db.prepare('SELECT detail FROM findings WHERE store = ? AND key = ? AND read IS NULL LIMIT 1').pluck();
    const details = new DrillDetails(db, results);
    const keys = db.prepare('SELECT DISTINCT store, key FROM findings WHERE key IS NOT NULL').all() as Array<{ store: string; key: string }>;
    expect(keys.length).toBeGreaterThan(1_000);
    let asked = 0;
    for (const k of keys) {
      expect(details.get(k.store, k.key)).toBe(one.get(k.store, k.key));
      asked++;
    }
    expect(asked).toBe(keys.length);
    expect(details.get('rf1', 'no-such-key')).toBeUndefined();
  });

  it('renders the report with every incident listed and the per-class lists capped', () => {
    const html = renderHtmlReport(db, results);
    for (const inc of results.incidents) expect(html).toContain(`id="incident-${inc.id}"`);
    expect(html).toContain(`${v.summary.rf1 - 1_000} more in the ledger's findings table.`);
  });
});
