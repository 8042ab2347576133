import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { History } from './history-format.js';
import { parseHistory, validateHistory } from './history-format.js';
import { FIXTURES, V2_FIXTURES } from './test-support/fixtures.js';
import { build, planArb } from './test-support/random-history.js';
import { buildV2, planV2Arb } from './test-support/random-history-v2.js';
import { verifyLedger } from '../harness/verifier/verifier.js';
import { exportHistory } from './history-export.js';
import { importHistory } from './history-import.js';

const SEED = process.env.ZARIS_PROPERTY_SEED === 'random' ? Date.now() : Number(process.env.ZARIS_PROPERTY_SEED ?? 20240610);
const work = mkdtempSync(join(tmpdir(), 'zaris-certify-export-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const open: Database.Database[] = [];
afterEach(() => {
  while (open.length > 0) open.pop()!.close();
});

function analyse(h: History): { verdict: string; reason: string | null; findings: string[] } {
  const db = importHistory(h, ':memory:');
  open.push(db);
  const v = verifyLedger(db);
  const findings = (db.prepare('SELECT class, kind, store, key, write, partition, read FROM findings').raw().all() as unknown[][]).map((r) => JSON.stringify(r)).sort();
  return { verdict: v.verdict, reason: v.inconclusiveReason, findings };
}

let n = 0;
function exported(h: History): { text: string; history: History } {
  const db = importHistory(h, ':memory:');
  open.push(db);
  const file = join(work, `h${n++}.json`);
  exportHistory(db, file);
  const text = readFileSync(file, 'utf8');
  return { text, history: parseHistory(text) };
}

describe('exportHistory', () => {
  it('round-trips every v2 fixture: same verdict, reason and findings; ids kept', () => {
    for (const f of V2_FIXTURES) {
      const back = exported(f.history).history;
      expect(back.format, f.name).toBe('zaris-history/2');
      expect(analyse(back), f.name).toEqual(analyse(f.history));
      expect(analyse(back).verdict, f.name).toBe(f.verdict);
      expect(back.writes.map((w) => w.id), f.name).toEqual(f.history.writes.map((w) => w.id));
      expect(back.faults.map((x) => x.id), f.name).toEqual(f.history.faults.map((x) => x.id));
      expect(back.reads!.map((x) => x.id).sort(), f.name).toEqual(f.history.reads!.map((x) => x.id).sort());
      expect(back.run, f.name).toEqual(f.history.run);
    }
  });

  it('exports a ledger judged by v1 as v2 (its analysis then applies the v2 rules), stable on a second export', () => {
    for (const f of FIXTURES.filter((x) => x.history.format === 'zaris-history/1')) {
      const first = exported(f.history);
      expect(first.history.format, f.name).toBe('zaris-history/2');
      expect(first.history.run, f.name).toEqual({ status: 'complete', inconclusiveReason: null, beyondBudget: false, asyncLagMaxMs: 1000, selfTestBug: null });
      expect(exported(first.history).text, f.name).toBe(first.text);
    }
  });

  it('property: export of an imported v2 history analyses the same, and exporting again gives the same bytes', () => {
    fc.assert(
      fc.property(planV2Arb, (plan) => {
        const history = buildV2(plan);
        const first = exported(history);
        expect(analyse(first.history)).toEqual(analyse(history));
        expect(exported(first.history).text).toBe(first.text);
      }),
      { numRuns: 100, seed: SEED },
    );
  });

  it('property: a v1 history exports to a v2 history that exports to the same bytes', () => {
    fc.assert(
      fc.property(planArb, (plan) => {
        const { history } = build(plan);
        const first = exported(history);
        expect(first.history.writes.map((w) => w.id)).toEqual(history.writes.map((w) => w.id));
        expect(exported(first.history).text).toBe(first.text);
      }),
      { numRuns: 50, seed: SEED + 1 },
    );
  });

  it('exports a harness ledger: generated write ids, in-flight writes as info, faults that never ended', () => {
    const db = importHistory(validateHistory({
      format: 'zaris-history/1', nodes: ['n1'], stores: [{ name: 's', replicationFactor: 1, ackMode: 'sync' }],
      partitions: [{ store: 's', partition: 0, replicas: ['n1'] }], faults: [], ownership: [], writes: [], finalReads: [],
    }), ':memory:');
    open.push(db);
    db.exec(`INSERT INTO keys VALUES (7, 's', 'k7', 0, 1);
      INSERT INTO writes (key_id, seq, op, invoke_ms, complete_ms, outcome, ack_node, ack_epoch, ack_version, ack_revision, ack_mode, attempts, trace)
        VALUES (7, 1, 'put', 10, 12, 'ok', 'n1', 1, 1, 1, 'sync', 2, '[{"status":"Unavailable"},{"status":"Ok"}]'),
               (7, 2, 'put', 20, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
      INSERT INTO faults (id, kind, nodes, start_ms, end_ms, caught_up_ms, detail) VALUES (3, 'kill', '["n1"]', 15, NULL, NULL, 'free text');
      INSERT INTO final_reads (key_id, value, value_key_id, value_seq, unreadable) VALUES (7, 'w7.1', 7, 1, 0);`);
    const file = join(work, 'harness.json');
    expect(exportHistory(db, file)).toBe(2);
    const h = parseHistory(readFileSync(file, 'utf8'));
    expect(h.writes).toEqual([
      { id: 'w7.1', store: 's', key: 'k7', partition: 0, seq: 1, op: 'put', invoke: 10, complete: 12, outcome: 'ok',
        ack: { node: 'n1', epoch: 1, version: 1, revision: 1, ackMode: 'sync' }, attempts: 2, trace: '[{"status":"Unavailable"},{"status":"Ok"}]' },
      { id: 'w7.2', store: 's', key: 'k7', partition: 0, seq: 2, op: 'put', invoke: 20, outcome: 'info' },
    ]);
    expect(h.faults).toEqual([{ id: 'f3', kind: 'kill', nodes: ['n1'], start: 15 }]);
    expect(h.finalReads).toEqual([{ store: 's', key: 'k7', value: 'w7.1' }]);
    // the re-imported history resolves the final read to the same write: the run is fine
    expect(analyse(h)).toEqual({ verdict: 'CERTIFIED', reason: null, findings: [] });
  });

  it('leaves nothing behind when the ledger is inconsistent', () => {
    const { history } = build({ keys: [{ store: 0, partition: 0, start: 0, ops: [{ op: 'put', outcome: 'ok', applied: true, node: 0, epoch: 1, revision: 1, gap: 0, dur: 1 }], readFails: 2 }], faults: [], samples: [] });
    const db = importHistory(history, ':memory:');
    open.push(db);
    db.exec('UPDATE writes SET ack_node = NULL');
    const file = join(work, 'broken.json');
    expect(() => exportHistory(db, file)).toThrow('ledger: acknowledged write k0w1 lacks its ack (node, epoch, version, revision, mode)');
    expect(existsSync(file)).toBe(false);
    expect(existsSync(`${file}.tmp`)).toBe(false);
  });
});
