import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { History } from './history-format.js';
import { parseHistory, validateHistory } from './history-format.js';
import { build, planArb } from './test-support/random-history.js';
import { verifyLedger } from '../harness/verifier/verifier.js';
import { exportHistory } from './history-export.js';
import { importHistory } from './history-import.js';

const repoRoot = fileURLToPath(new URL('../', import.meta.url));
const casesDir = join(process.env.ZARIS_CASES_DIR ? resolve(process.env.ZARIS_CASES_DIR) : resolve(repoRoot, '../shared/cases'), 'verifier');
const work = mkdtempSync(join(tmpdir(), 'zaris-certify-export-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const open: Database.Database[] = [];
afterEach(() => {
  while (open.length > 0) open.pop()!.close();
});

function analyse(h: History): { verdict: string; findings: string[] } {
  const db = importHistory(h, ':memory:');
  open.push(db);
  const v = verifyLedger(db);
  const findings = (db.prepare('SELECT class, kind, store, key, write FROM findings').raw().all() as string[][]).map((r) => r.join(' ')).sort();
  return { verdict: v.verdict, findings };
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
  it('round-trips every shared verifier case: same verdict and findings', () => {
    const files = readdirSync(casesDir).filter((f) => f.endsWith('.json'));
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) {
      const c = JSON.parse(readFileSync(join(casesDir, f), 'utf8')) as { history: unknown; expected: { verdict: string } };
      const original = validateHistory(c.history);
      const back = exported(original).history;
      expect(analyse(back), f).toEqual(analyse(original));
      expect(analyse(back).verdict, f).toBe(c.expected.verdict);
      expect(back.writes.map((w) => w.id), f).toEqual(original.writes.map((w) => w.id));
      expect(back.faults.map((x) => x.id), f).toEqual(original.faults.map((x) => x.id));
    }
  });

  it('property: export of an imported history analyses the same, and exporting again gives the same bytes', () => {
    fc.assert(
      fc.property(planArb, (plan) => {
        const { history } = build(plan);
        const first = exported(history);
        expect(analyse(first.history)).toEqual(analyse(history));
        expect(exported(first.history).text).toBe(first.text);
      }),
      { numRuns: 100 },
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
    expect(analyse(h)).toEqual({ verdict: 'CERTIFIED', findings: [] });
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
