import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { NullLedger, type Ledger } from './ledger-writer.js';
import { SqliteLedger } from './sqlite-ledger.js';
import { applySchema, LEDGER_DDL } from './schema.js';
import { sealLedger } from './seal.js';
import { allWrites } from './key-log.js';
import { expectV2, recordV2 } from './test-support/v2-recording.js';
import { CMP_FIELDS_V1, f64Bytes, INV_FIELDS } from './write-batches.js';

describe('SQLite ledger', () => {
  const dirs: string[] = [];
  const fresh = (): string => {
    const d = mkdtempSync(path.join(os.tmpdir(), 'zaris-certify-ledger-test-'));
    dirs.push(d);
    return path.join(d, 'ledger.sqlite');
  };
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('commits a write at invoke before the promise resolves, completes it afterwards, and seals it in key order', async () => {
    const file = fresh();
    const ledger = new SqliteLedger(file);
    // a second connection sees only what is committed
    const reader = new Database(file, { readonly: true });
    const count = (t: string): number => (reader.prepare(`SELECT count(*) AS n FROM ${t}`).get() as { n: number }).n;
    const { w: w1, committed } = ledger.invoke(7, 1, 'put', 10.5);
    expect(count('invokes')).toBe(0);
    await committed;
    expect(count('invokes')).toBe(1);
    expect(reader.prepare('SELECT w, key_id, seq, op, invoke_ms FROM invokes').get()).toEqual({ w: w1, key_id: 7, seq: 1, op: 'put', invoke_ms: 10.5 });
    ledger.complete(w1, { completeMs: 14, outcome: 'ok', status: 'Ok', attempts: 1, ack: { node: 'n1', epoch: 3, version: 7, revision: 99, ackMode: 'sync' } });
    const i2 = ledger.invoke(7, 2, 'cas', 20);
    const i0 = ledger.invoke(3, 1, 'create', 21);
    expect(i2.committed).toBe(i0.committed);
    await i0.committed;
    const w2 = i2.w;
    const w0 = i0.w;
    expect(new Set([w0, w1, w2]).size).toBe(3);
    ledger.complete(w2, { completeMs: 30, outcome: 'info', status: 'Timeout', attempts: 2, trace: '[{"n":1,"s":"Timeout"},{"n":2,"s":"Conflict"}]' });
    // w0 never completes (the harness died before): it seals as indeterminate (outcome NULL)
    ledger.seal();
    // the sealed ledger is a new file renamed over the old one: a reader opens it again
    reader.close();
    const sealed = new Database(file, { readonly: true });
    expect(sealed.prepare('SELECT count(*) FROM invokes').pluck().get()).toBe(0);
    expect(sealed.prepare('SELECT count(*) FROM key_log').pluck().get()).toBe(2);
    expect(allWrites(sealed).map(({ wid: _w, ack_copies: _c, ...r }) => r)).toEqual([
      { key_id: 3, seq: 1, op: 'create', invoke_ms: 21, complete_ms: null, outcome: null, status: null, attempts: null, ack_node: null, ack_epoch: null, ack_version: null, ack_revision: null, ack_mode: null, trace: null },
      { key_id: 7, seq: 1, op: 'put', invoke_ms: 10.5, complete_ms: 14, outcome: 'ok', status: 'Ok', attempts: 1, ack_node: 'n1', ack_epoch: 3, ack_version: 7, ack_revision: 99, ack_mode: 'sync', trace: null },
      { key_id: 7, seq: 2, op: 'cas', invoke_ms: 20, complete_ms: 30, outcome: 'info', status: 'Timeout', attempts: 2, ack_node: null, ack_epoch: null, ack_version: null, ack_revision: null, ack_mode: null, trace: '[{"n":1,"s":"Timeout"},{"n":2,"s":"Conflict"}]' },
    ]);
    // sealing again moves nothing
    ledger.seal();
    expect(allWrites(ledger.db)).toHaveLength(3);
    ledger.close();
    sealed.close();
  });

  it('records a fault (committed) before it returns, then its end', () => {
    const file = fresh();
    const ledger = new SqliteLedger(file);
    const reader = new Database(file, { readonly: true });
    const id = ledger.faultStart({ kind: 'kill', nodes: ['n2'], target: 'active:sync3/1', plannedMs: 900, startMs: 1000, detail: { index: 0 } });
    expect(reader.prepare('SELECT id, kind, nodes, target, planned_ms, start_ms, end_ms, detail FROM faults').get()).toEqual({
      id,
      kind: 'kill',
      nodes: '["n2"]',
      target: 'active:sync3/1',
      planned_ms: 900,
      start_ms: 1000,
      end_ms: null,
      detail: '{"index":0}',
    });
    ledger.faultEnd(id, 4000);
    expect((reader.prepare('SELECT end_ms FROM faults WHERE id = ?').get(id) as { end_ms: number }).end_ms).toBe(4000);
    // an undo that failed (issue 22): the end is removed, committed; a later end is recorded again
    ledger.faultEnd(id, null);
    expect((reader.prepare('SELECT end_ms FROM faults WHERE id = ?').get(id) as { end_ms: number | null }).end_ms).toBeNull();
    ledger.faultEnd(id, 6000);
    expect((reader.prepare('SELECT end_ms FROM faults WHERE id = ?').get(id) as { end_ms: number }).end_ms).toBe(6000);
    ledger.close();
    reader.close();
  });

  it('batches many invokes into few transactions and never loses an order between invoke and completion', async () => {
    const ledger = new SqliteLedger(fresh());
    const N = 20_000;
    const inv = [];
    for (let i = 1; i <= N; i++) inv.push(ledger.invoke(i, 1, 'put', i));
    // MAX_BATCH rows per commit at most: several distinct commits
    expect(new Set(inv.map((x) => x.committed)).size).toBeGreaterThan(1);
    await Promise.all(inv.map((x) => x.committed));
    const ws = inv.map((x) => x.w);
    ws.forEach((w, i) => ledger.complete(w, { completeMs: i + 2, outcome: (i + 1) % 3 === 0 ? 'fail' : 'ok', status: 'Ok', attempts: 1 }));
    ledger.seal();
    const all = allWrites(ledger.db);
    const rows = { n: all.length, ok: all.filter((w) => w.outcome === 'ok').length, open: all.filter((w) => w.outcome === null).length, paired: all.filter((w) => w.complete_ms === w.invoke_ms + 1).length };
    expect(rows).toEqual({ n: N, ok: N - Math.floor(N / 3), open: 0, paired: N });
    ledger.close();
  });

  it('rejects the waiting invokes when a commit fails, and records nothing of that batch', async () => {
    const ledger = new SqliteLedger(fresh());
    await ledger.invoke(1, 1, 'put', 1).committed;
    // the same key registered twice violates its primary key: the whole batch (both invokes) rolls back
    const a = ledger.invoke(2, 1, 'put', 2).committed;
    const b = ledger.invoke(1, 2, 'put', 3).committed;
    ledger.addKey({ keyId: 5, store: 's', key: 'k5', partition: 0, writer: 0 });
    ledger.addKey({ keyId: 5, store: 's', key: 'k5', partition: 0, writer: 0 });
    await expect(a).rejects.toThrow(/ledger commit failed/);
    await expect(b).rejects.toThrow(/ledger commit failed/);
    expect((ledger.db.prepare('SELECT count(*) AS n FROM invokes').get() as { n: number }).n).toBe(1);
    await expect(ledger.invoke(3, 1, 'put', 4).committed).rejects.toThrow(/ledger commit failed/);
    ledger.close();
  });

  it('records the v2 additions: ack copies, reads, per-node samples with in-sync sets and revisions, isolated nodes', async () => {
    const file = fresh();
    const ledger = new SqliteLedger(file);
    await recordV2(ledger);
    ledger.close();
    const db = new Database(file, { readonly: true });
    expectV2(db);
    db.close();
  });

  it('the null ledger takes every call and records nothing', async () => {
    const ledger: Ledger = new NullLedger();
    await ledger.invoke(1, 1, 'put', 1).committed;
    ledger.read({ keyId: 1, invokeMs: 1, completeMs: 2, outcome: 'ok', node: 'n1', value: null, kind: 'get' });
    expect(ledger.keysPage(0, 10)).toEqual([]);
  });

  it('opens a ledger of the first schema: adds the new columns, rebuilds the findings table, unpacks its old batches', () => {
    const file = fresh();
    const old = new Database(file);
    // the first schema, as it shipped: no v2 columns, findings with NOT NULL key and write
    for (const ddl of LEDGER_DDL) {
      if (/^CREATE INDEX/.test(ddl)) continue;
      const name = /CREATE TABLE IF NOT EXISTS (\w+)/.exec(ddl)![1];
      const firstShape: Record<string, string> = {
        write_batches: 'CREATE TABLE write_batches (id INTEGER PRIMARY KEY, inv BLOB NOT NULL, cmp BLOB NOT NULL, dict TEXT NOT NULL, traces TEXT NOT NULL)',
        completions: 'CREATE TABLE completions (w INTEGER PRIMARY KEY, complete_ms REAL NOT NULL, outcome TEXT NOT NULL, status TEXT, attempts INTEGER, ack_node TEXT, ack_epoch INTEGER, ack_version INTEGER, ack_revision INTEGER, ack_mode TEXT, trace TEXT)',
        samples: 'CREATE TABLE samples (t_ms REAL NOT NULL, store TEXT NOT NULL, partition INTEGER NOT NULL, active TEXT, epoch INTEGER NOT NULL, health TEXT NOT NULL, replicated_revision INTEGER NOT NULL)',
        faults: 'CREATE TABLE faults (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, nodes TEXT NOT NULL, target TEXT, planned_ms REAL, start_ms REAL NOT NULL, end_ms REAL, caught_up_ms REAL, detail TEXT)',
        findings: 'CREATE TABLE findings (class TEXT NOT NULL, kind TEXT NOT NULL, store TEXT NOT NULL, key TEXT NOT NULL, write TEXT NOT NULL, detail TEXT)',
        writes: 'CREATE TABLE writes (key_id INTEGER NOT NULL, seq INTEGER NOT NULL, op TEXT NOT NULL, invoke_ms REAL NOT NULL, complete_ms REAL, outcome TEXT, status TEXT, attempts INTEGER, ack_node TEXT, ack_epoch INTEGER, ack_version INTEGER, ack_revision INTEGER, ack_mode TEXT, trace TEXT, wid TEXT, PRIMARY KEY (key_id, seq)) WITHOUT ROWID',
      };
      if (name === 'read_log' || name === 'reads') continue;
      old.exec(firstShape[name] ?? ddl);
    }
    old.exec("INSERT INTO findings VALUES ('violation', 'lost', 's', 'k', 'w', NULL)");
    // an unsealed batch of the first layout: one invoke, one ack of 10 fields
    const inv = new Float64Array([1, 7, 1, 0, 5]);
    const cmp = new Float64Array([1, 6, 0, 0, 1, 1, 3, 1, 9, 1]);
    expect(inv.length).toBe(INV_FIELDS);
    expect(cmp.length).toBe(CMP_FIELDS_V1);
    old.prepare('INSERT INTO write_batches (inv, cmp, dict, traces) VALUES (?, ?, ?, ?)').run(f64Bytes(inv), f64Bytes(cmp), '[[0,"Ok"],[1,"n2"]]', '[]');
    applySchema(old);
    applySchema(old);
    expect(sealLedger(old)).toBe(1);
    expect(allWrites(old).map((w) => [w.key_id, w.seq, w.outcome, w.status, w.ack_node, w.ack_epoch, w.ack_revision, w.ack_mode, w.ack_copies])).toEqual([[7, 1, 'ok', 'Ok', 'n2', 3, 9, 'async', null]]);
    for (const [table, column] of [['samples', 'in_sync'], ['faults', 'isolated'], ['findings', 'partition'], ['findings', 'read']]) {
      expect((old.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => c.name), table).toContain(column);
    }
    // the old findings were the verifier's output: gone with the old table, rewritten by the next verification
    expect(old.prepare('SELECT count(*) FROM findings').pluck().get()).toBe(0);
    old.prepare('INSERT INTO findings (class, kind, store, key, write, partition) VALUES (?, ?, ?, NULL, NULL, 0)').run('violation', 'epoch-conflict', 's');
    old.close();
  });
});
