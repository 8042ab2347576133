import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { allReads, allWrites, type ReadsRow } from './key-log.js';
import { SqliteLedger } from './sqlite-ledger.js';
import type { WritesRow } from './schema.js';
import { KeyPacker } from './key-packer.js';
import { needsSeal, sealLedgerFile } from './seal.js';
import { CMP_FIELDS, INV_FIELDS, OPS, OUTCOMES, RD_FIELDS, READ_KINDS, toMicros } from './write-batches.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'zaris-certify-seal-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

/** mulberry32: the test's own deterministic stream. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Plan = { seed: number; crashAt: number | null; packEvery: number; idleMs: number; stagingRows: number };

/**
 * Records a random run through the worker's batch path (SqliteLedger.appendWriteBatch, as the
 * ledger worker does): slots writing keys in sequence, completions one or more batches later,
 * some never (in flight at the end), reads of live and old keys (some with values that are not
 * write ids), traces; a packer stepping between batches (as during a run); optionally a crash
 * (the packer's memory lost) before the seal. Returns the rows the sealed ledger must hold.
 */
function record(file: string, plan: Plan): { writes: Array<Partial<WritesRow>>; reads: Array<Partial<ReadsRow>> } {
  const r = prng(plan.seed);
  const ledger = new SqliteLedger(file, { packWhileRunning: false });
  let packer: KeyPacker | null = new KeyPacker(ledger.db, { idleMs: plan.idleMs, stagingRows: plan.stagingRows });
  const strings = ['Ok', 'Timeout', 'Conflict', 'n1', 'n2', 'n3'];
  const writes: Array<Partial<WritesRow>> = [];
  const reads: Array<Partial<ReadsRow>> = [];
  let w = 0;
  let nextKey = 1;
  let rid = 0;
  let t = 0;
  const slots = Array.from({ length: 4 }, () => ({ key: nextKey++, seq: 0, left: 1 + Math.floor(r() * 6) }));
  const inflight: Array<{ w: number; row: Partial<WritesRow>; at: number }> = [];
  const batches = 30 + Math.floor(r() * 40);
  for (let b = 0; b < batches; b++) {
    const inv: number[] = [];
    const cmp: number[] = [];
    const rd: number[] = [];
    const traces: Array<[number, string]> = [];
    const rdx: Array<[number, string]> = [];
    t += 10 + r() * 40;
    for (const s of slots) {
      // (batch 0 always has a write: it carries the string codes, as the worker's first batch does)
      if (r() < 0.4 && !(b === 0 && s === slots[0])) continue;
      if (s.left === 0) {
        s.key = nextKey++;
        s.seq = 0;
        s.left = 1 + Math.floor(r() * 6);
      }
      s.left--;
      const seq = ++s.seq;
      const op = Math.floor(r() * 4);
      const invoke = toMicros(t + r());
      inv.push(++w, s.key, seq, op, invoke);
      const row: Partial<WritesRow> = { key_id: s.key, seq, op: OPS[op], invoke_ms: invoke, complete_ms: null, outcome: null, status: null, attempts: null, ack_node: null, ack_epoch: null, ack_version: null, ack_revision: null, ack_mode: null, trace: null, ack_copies: null };
      writes.push(row);
      inflight.push({ w, row, at: b + Math.floor(r() * 3) + (r() < 0.05 ? 1000 : 0) });
    }
    for (let i = 0; i < inflight.length; ) {
      const f = inflight[i];
      if (f.at > b) {
        i++;
        continue;
      }
      inflight.splice(i, 1);
      const outcome = Math.floor(r() * 3);
      const complete = toMicros(f.row.invoke_ms! + 1 + r() * 5);
      const acked = outcome === 0;
      const epoch = 1 + Math.floor(r() * 3);
      cmp.push(f.w, complete, outcome, outcome === 0 ? 0 : outcome === 1 ? 2 : 1, 1 + Math.floor(r() * 3), acked ? 3 + Math.floor(r() * 3) : -1, acked ? epoch : 0, acked ? epoch * 2 ** 32 + f.w : 0, acked ? f.w * 7 : 0, acked ? (r() < 0.5 ? 1 : 0) : -1, acked && r() < 0.5 ? 2 : -1);
      Object.assign(f.row, {
        complete_ms: complete,
        outcome: OUTCOMES[outcome],
        status: strings[outcome === 0 ? 0 : outcome === 1 ? 2 : 1],
        attempts: cmp[cmp.length - 7],
        ack_node: acked ? strings[cmp[cmp.length - 6]] : null,
        ack_epoch: acked ? epoch : null,
        ack_version: acked ? epoch * 2 ** 32 + f.w : null,
        ack_revision: acked ? f.w * 7 : null,
        ack_mode: acked ? (cmp[cmp.length - 2] === 1 ? 'async' : 'sync') : null,
        ack_copies: acked && cmp[cmp.length - 1] >= 0 ? cmp[cmp.length - 1] : null,
      });
      if (r() < 0.3) {
        const trace = JSON.stringify([{ n: 1, s: 'Timeout', t0: f.row.invoke_ms }, { n: 2, s: f.row.status }]);
        traces.push([f.w, trace]);
        f.row.trace = trace;
      }
    }
    // reads: mostly of the slots' keys, sometimes of an old key (packed already)
    for (let i = Math.floor(r() * 3); i > 0; i--) {
      const key = r() < 0.8 ? slots[Math.floor(r() * slots.length)].key : 1 + Math.floor(r() * (nextKey - 1));
      const invoke = toMicros(t + r());
      const kind = Math.floor(r() * 3);
      const v = r();
      // only an ok read has a value (the worker ledger records none for fail / info)
      const outcome = r() < 0.9 ? 0 : 1;
      const text = v < 0.1 && outcome === 0 ? `zz"${rid}` : null;
      const vk = text !== null ? -2 : v < 0.3 || outcome !== 0 ? -1 : key;
      const vs = vk >= 0 ? 1 + Math.floor(r() * 5) : 0;
      if (text !== null) rdx.push([rd.length / RD_FIELDS, text]);
      rd.push(key, invoke, toMicros(invoke + 2), outcome, 3 + Math.floor(r() * 3), vk, vs, kind);
      rid++;
      const value = outcome !== 0 ? null : text !== null ? text : vk === -1 ? null : `w${vk}.${vs}`;
      reads.push({ key_id: key, invoke_ms: invoke, rid, complete_ms: toMicros(invoke + 2), outcome: OUTCOMES[outcome], value, value_key_id: value !== null && vk >= 0 ? vk : null, value_seq: value !== null && vk >= 0 ? vs : null, kind: READ_KINDS[kind] });
    }
    ledger.appendWriteBatch({ inv: Float64Array.from(inv), cmp: Float64Array.from(cmp), rd: Float64Array.from(rd), dict: b === 0 ? strings.map((s, i) => [i, s] as [number, string]) : [], traces, rdx });
    ledger.flush();
    expect(inv.length % INV_FIELDS).toBe(0);
    expect(cmp.length % CMP_FIELDS).toBe(0);
    if (packer !== null && b % plan.packEvery === 0) packer.step(1e9);
    if (plan.crashAt !== null && b === plan.crashAt) packer = null;
  }
  if (packer !== null) {
    // the run's own seal continues its packer
    packer.finish();
  }
  ledger.close();
  return { writes, reads };
}

const sortWrites = (rows: Array<Partial<WritesRow>>): unknown[] => [...rows].sort((a, b) => a.key_id! - b.key_id! || a.seq! - b.seq!).map(({ wid: _w, ...x }) => x);
const sortReads = (rows: Array<Partial<ReadsRow>>): unknown[] =>
  [...rows].sort((a, b) => a.key_id! - b.key_id! || a.invoke_ms! - b.invoke_ms! || a.rid! - b.rid!).map(({ id: _i, node: _n, ...x }) => x);

describe('the seal', () => {
  it('property: packed while the run goes on, crashed or not, sealed again: every write and read once, exactly', () => {
    fc.assert(
      fc.property(
        fc.record({
          seed: fc.integer({ min: 1, max: 2 ** 30 }),
          crashAt: fc.option(fc.integer({ min: 0, max: 60 }), { nil: null }),
          packEvery: fc.integer({ min: 1, max: 7 }),
          idleMs: fc.constantFrom(0, 30, 200, 5000),
          stagingRows: fc.constantFrom(4, 50, 100_000),
        }),
        (plan) => {
          const file = path.join(dir, `p${++n}.sqlite`);
          const expected = record(file, plan);
          sealLedgerFile(file);
          const db = new Database(file, { readonly: true });
          try {
            expect(needsSeal(db)).toBe(false);
            expect(db.prepare('SELECT count(*) FROM write_batches').pluck().get()).toBe(0);
            expect(sortWrites(allWrites(db))).toEqual(sortWrites(expected.writes));
            expect(sortReads(allReads(db))).toEqual(sortReads(expected.reads));
          } finally {
            db.close();
            for (const s of ['', '-wal', '-shm']) rmSync(file + s, { force: true });
          }
        },
      ),
      { seed: 1108, numRuns: 120 },
    );
  });

  it('deletes each batch once every row of it is packed, so a long run keeps only its last seconds unpacked', () => {
    const file = path.join(dir, 'window.sqlite');
    const ledger = new SqliteLedger(file, { packWhileRunning: false });
    const packer = new KeyPacker(ledger.db, { idleMs: 100 });
    // key k written at 10k ms, completed in the next batch; 50 keys, 1 s apart
    for (let k = 1; k <= 50; k++) {
      ledger.appendWriteBatch({ inv: Float64Array.from([k, k, 1, 0, k * 1000]), cmp: k > 1 ? Float64Array.from([k - 1, (k - 1) * 1000 + 5, 0, 0, 1, 1, 1, 2 ** 32 + k, k, 0, 2]) : new Float64Array(0), rd: new Float64Array(0), dict: k === 1 ? [[0, 'Ok'], [1, 'n1']] : [], traces: [], rdx: [] });
      ledger.flush();
      packer.step(1e9);
    }
    const left = ledger.db.prepare('SELECT count(*) FROM write_batches').pluck().get() as number;
    // the last key's invoke waits for its completion; the one before went idle under 100 ms ago
    expect(left).toBeLessThanOrEqual(3);
    expect(ledger.db.prepare('SELECT count(*) FROM key_log').pluck().get()).toBeGreaterThanOrEqual(47);
    packer.finish();
    expect(allWrites(ledger.db)).toHaveLength(50);
    ledger.close();
  });
});
