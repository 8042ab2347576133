import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteLedger } from './ledger-writer.js';

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
    expect(count('invokes')).toBe(0);
    expect(reader.prepare('SELECT key_id, seq, op, invoke_ms, complete_ms, outcome, status, attempts, ack_node, ack_epoch, ack_version, ack_revision, ack_mode, trace FROM writes').all()).toEqual([
      { key_id: 3, seq: 1, op: 'create', invoke_ms: 21, complete_ms: null, outcome: null, status: null, attempts: null, ack_node: null, ack_epoch: null, ack_version: null, ack_revision: null, ack_mode: null, trace: null },
      { key_id: 7, seq: 1, op: 'put', invoke_ms: 10.5, complete_ms: 14, outcome: 'ok', status: 'Ok', attempts: 1, ack_node: 'n1', ack_epoch: 3, ack_version: 7, ack_revision: 99, ack_mode: 'sync', trace: null },
      { key_id: 7, seq: 2, op: 'cas', invoke_ms: 20, complete_ms: 30, outcome: 'info', status: 'Timeout', attempts: 2, ack_node: null, ack_epoch: null, ack_version: null, ack_revision: null, ack_mode: null, trace: '[{"n":1,"s":"Timeout"},{"n":2,"s":"Conflict"}]' },
    ]);
    // sealing again moves nothing
    ledger.seal();
    expect(count('writes')).toBe(3);
    ledger.close();
    reader.close();
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
    const rows = ledger.db.prepare("SELECT count(*) AS n, sum(outcome = 'ok') AS ok, sum(outcome IS NULL) AS open, sum(complete_ms = invoke_ms + 1) AS paired FROM writes").get();
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
});
