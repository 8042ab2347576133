import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import type { History } from '../../ledger/history-format.js';
import { exportHistory } from '../../ledger/history-export.js';
import { importHistory } from '../../ledger/history-import.js';
import { countWrites } from '../../ledger/key-log.js';
import { sealLedgerFile } from '../../ledger/seal.js';
import { V2_FIXTURES } from '../../ledger/test-support/fixtures.js';
import { buildV2, planV2Arb } from '../../ledger/test-support/random-history-v2.js';
import { buildIncidents } from '../../reports/incidents.js';
import { verifyLedger } from './verifier.js';

/**
 * The sealed form (one packed key_log row per key: ledger/key-log.ts) is judged exactly like the
 * rows of the `writes` and `reads` tables: a history imported as rows, and the same ledger with
 * those rows moved into the hot tables and sealed (ledger/seal.ts), give the same verdict,
 * counts, findings and evidence, incidents, and export to the same bytes.
 */
const dir = mkdtempSync(join(tmpdir(), 'zaris-certify-packed-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

/**
 * The history with harness-style ids (what a sealed ledger can hold): writes `w<key_id>.<seq>`
 * by the import's key numbering, reads `r<position>`, read and final values renamed with them.
 */
function harnessIds(h: History): History {
  const keyIds = new Map<string, number>();
  for (const w of h.writes) {
    const k = `${w.store}\u0000${w.key}`;
    if (!keyIds.has(k)) keyIds.set(k, keyIds.size + 1);
  }
  const rename = new Map<string, string>();
  const writes = h.writes.map((w) => {
    const id = `w${keyIds.get(`${w.store}\u0000${w.key}`)}.${w.seq}`;
    rename.set(`${w.store}\u0000${w.key}\u0000${w.id}`, id);
    return { ...w, id };
  });
  const value = (store: string, key: string, v: string | null): string | null => (v === null ? null : (rename.get(`${store}\u0000${key}\u0000${v}`) ?? v));
  return {
    ...h,
    writes,
    reads: (h.reads ?? []).map((r, i) => ({ ...r, id: `r${i + 1}`, value: value(r.store, r.key, r.value) })),
    finalReads: h.finalReads.map((f) => ({ ...f, value: value(f.store, f.key, f.value) })),
  };
}

/** Moves a ledger's `writes` and `reads` rows into the hot tables (as the plain writer records them). */
function unseal(db: Database.Database): void {
  db.transaction(() => {
    db.exec(`INSERT INTO invokes (w, key_id, seq, op, invoke_ms) SELECT row_number() OVER (ORDER BY key_id, seq), key_id, seq, op, invoke_ms FROM writes`);
    db.exec(`INSERT INTO completions (w, complete_ms, outcome, status, attempts, ack_node, ack_epoch, ack_version, ack_revision, ack_mode, trace, ack_copies)
             SELECT w, complete_ms, outcome, status, attempts, ack_node, ack_epoch, ack_version, ack_revision, ack_mode, trace, ack_copies
             FROM (SELECT row_number() OVER (ORDER BY key_id, seq) AS w, * FROM writes) WHERE complete_ms IS NOT NULL AND outcome IS NOT NULL`);
    db.exec(`INSERT INTO read_log (rid, key_id, invoke_ms, complete_ms, outcome, node, value, value_key_id, value_seq, kind)
             SELECT rid, key_id, invoke_ms, complete_ms, outcome, node, value, value_key_id, value_seq, kind FROM reads`);
    db.exec('DELETE FROM writes');
    db.exec('DELETE FROM reads');
  })();
}

function findingsOf(db: Database.Database): unknown[] {
  return db.prepare('SELECT class, kind, store, key, write, detail, partition, read FROM findings ORDER BY class, kind, store, key, write, read, partition').raw().all();
}

function compare(h: History): void {
  const a = join(dir, `a${++n}.sqlite`);
  const b = join(dir, `b${n}.sqlite`);
  const rows = importHistory(harnessIds(h), a);
  const va = verifyLedger(rows);
  const fa = findingsOf(rows);
  const ia = buildIncidents(rows);
  exportHistory(rows, `${a}.json`);
  const writes = countWrites(rows);
  rows.close();
  copyFileSync(a, b);
  const hot = new Database(b);
  unseal(hot);
  hot.close();
  sealLedgerFile(b);
  const packed = new Database(b);
  try {
    expect(packed.prepare('SELECT count(*) FROM writes').pluck().get()).toBe(0);
    expect(countWrites(packed)).toBe(writes);
    const vb = verifyLedger(packed);
    expect(vb).toEqual(va);
    expect(findingsOf(packed)).toEqual(fa);
    expect(buildIncidents(packed)).toEqual(ia);
    exportHistory(packed, `${b}.json`);
    expect(readFileSync(`${b}.json`, 'utf8')).toBe(readFileSync(`${a}.json`, 'utf8'));
  } finally {
    packed.close();
    for (const f of [a, b]) for (const s of ['', '.json', '-wal', '-shm']) rmSync(f + s, { force: true });
  }
}

describe('the packed form of writes and reads is judged like their rows', () => {
  it('every v2 fixture', () => {
    for (const f of V2_FIXTURES) compare(f.history);
  });

  it('property: generated v2 histories (every rule and class)', () => {
    fc.assert(
      fc.property(planV2Arb, (plan) => compare(buildV2(plan))),
      { numRuns: 150, seed: 1107 },
    );
  });
});
