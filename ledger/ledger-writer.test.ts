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

  it('commits a write at invoke before the promise resolves, and completes it afterwards', async () => {
    const file = fresh();
    const ledger = new SqliteLedger(file);
    // a second connection sees only what is committed
    const reader = new Database(file, { readonly: true });
    const count = (): number => (reader.prepare('SELECT count(*) AS n FROM writes').get() as { n: number }).n;
    const p = ledger.invoke(1, 1, 'put', 10.5);
    expect(count()).toBe(0);
    await p;
    expect(count()).toBe(1);
    expect(reader.prepare('SELECT key_id, seq, op, invoke_ms, outcome FROM writes').get()).toEqual({ key_id: 1, seq: 1, op: 'put', invoke_ms: 10.5, outcome: null });
    ledger.complete(1, 1, { completeMs: 14, outcome: 'ok', status: 'Ok', attempts: 1, ack: { node: 'n1', epoch: 3, version: 7, revision: 99, ackMode: 'sync' } });
    ledger.flush();
    expect(reader.prepare('SELECT complete_ms, outcome, status, attempts, ack_node, ack_epoch, ack_version, ack_revision, ack_mode, trace FROM writes').get()).toEqual({
      complete_ms: 14,
      outcome: 'ok',
      status: 'Ok',
      attempts: 1,
      ack_node: 'n1',
      ack_epoch: 3,
      ack_version: 7,
      ack_revision: 99,
      ack_mode: 'sync',
      trace: null,
    });
    const p2 = ledger.invoke(1, 2, 'cas', 20);
    await p2;
    ledger.complete(1, 2, { completeMs: 30, outcome: 'info', status: 'Timeout', attempts: 2, trace: '[{"n":1,"s":"Timeout"},{"n":2,"s":"Conflict"}]' });
    ledger.close();
    expect(reader.prepare('SELECT outcome, status, attempts, ack_node, trace FROM writes WHERE seq = 2').get()).toEqual({
      outcome: 'info',
      status: 'Timeout',
      attempts: 2,
      ack_node: null,
      trace: '[{"n":1,"s":"Timeout"},{"n":2,"s":"Conflict"}]',
    });
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
    const ps: Promise<void>[] = [];
    for (let i = 1; i <= N; i++) ps.push(ledger.invoke(i, 1, 'put', i));
    await Promise.all(ps);
    for (let i = 1; i <= N; i++) ledger.complete(i, 1, { completeMs: i + 1, outcome: i % 3 === 0 ? 'fail' : 'ok', status: 'Ok', attempts: 1 });
    ledger.flush();
    const rows = ledger.db.prepare("SELECT count(*) AS n, sum(outcome = 'ok') AS ok, sum(outcome IS NULL) AS open FROM writes").get();
    expect(rows).toEqual({ n: N, ok: N - Math.floor(N / 3), open: 0 });
    ledger.close();
  });

  it('rejects the waiting invokes when a commit fails, and records nothing of that batch', async () => {
    const ledger = new SqliteLedger(fresh());
    await ledger.invoke(1, 1, 'put', 1);
    // the same (key_id, seq) twice violates the primary key: the whole batch rolls back
    const a = ledger.invoke(2, 1, 'put', 2);
    const b = ledger.invoke(1, 1, 'put', 3);
    await expect(a).rejects.toThrow(/ledger commit failed/);
    await expect(b).rejects.toThrow(/ledger commit failed/);
    expect((ledger.db.prepare('SELECT count(*) AS n FROM writes').get() as { n: number }).n).toBe(1);
    await expect(ledger.invoke(3, 1, 'put', 4)).rejects.toThrow(/ledger commit failed/);
    ledger.close();
  });
});
