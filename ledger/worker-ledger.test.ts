import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { expectV2, recordV2 } from './test-support/v2-recording.js';
import { WorkerLedger } from './worker-ledger.js';
import { BATCH_FMT, decodeBatch, OPS, type BatchRow } from './write-batches.js';
import { allWrites } from './key-log.js';

/** The ledger on a worker thread keeps the SQLite ledger's contract (needs the build: make test builds first). */
describe('worker-thread ledger', () => {
  const dirs: string[] = [];
  const fresh = (): string => {
    const d = mkdtempSync(path.join(os.tmpdir(), 'zaris-certify-wledger-test-'));
    dirs.push(d);
    return path.join(d, 'ledger.sqlite');
  };
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('commits invokes before `committed` resolves, records completions with acks and traces, seals in key order', async () => {
    const file = fresh();
    const ledger = new WorkerLedger(file);
    const reader = new Database(file, { readonly: true });
    ledger.addKey({ keyId: 4, store: 'sync3', key: 'k4', partition: 1, writer: 0 });
    const a = ledger.invoke(4, 1, 'create', 1.5);
    const b = ledger.invoke(4, 2, 'cas', 2.5);
    expect(a.committed).toBe(b.committed);
    const batches = (): number => (reader.prepare('SELECT count(*) AS n FROM write_batches').get() as { n: number }).n;
    expect(batches()).toBe(0);
    await a.committed;
    // both invokes went in as one packed row, committed before `committed` resolved
    expect(batches()).toBe(1);
    const packed = reader.prepare('SELECT inv, cmp, dict, traces, fmt, rd, rdx FROM write_batches').get() as BatchRow;
    expect(packed.fmt).toBe(BATCH_FMT);
    expect([...decodeBatch(packed).inv]).toEqual([a.w, 4, 1, OPS.indexOf('create'), 1.5, b.w, 4, 2, OPS.indexOf('cas'), 2.5]);
    expect(reader.prepare('SELECT key_id, store, key FROM keys').all()).toEqual([{ key_id: 4, store: 'sync3', key: 'k4' }]);
    ledger.complete(a.w, { completeMs: 3, outcome: 'ok', status: 'Ok', attempts: 1, ack: { node: 'n2', epoch: 9, version: 4294967297 * 9, revision: 17, ackMode: 'async' } });
    ledger.complete(b.w, { completeMs: 4, outcome: 'info', status: 'Timeout', attempts: 3, trace: '[{"n":1}]' });
    const id = ledger.faultStart({ kind: 'kill', nodes: ['n2'], startMs: 5 });
    // a synchronous call commits what was queued before it
    expect(batches()).toBe(2);
    expect(reader.prepare('SELECT kind, nodes, start_ms FROM faults WHERE id = ?').get(id)).toEqual({ kind: 'kill', nodes: '["n2"]', start_ms: 5 });
    ledger.faultEnd(id, 8);
    ledger.seal();
    reader.close();
    const sealed = new Database(file, { readonly: true });
    expect(allWrites(sealed).map((w) => ({ seq: w.seq, outcome: w.outcome, status: w.status, attempts: w.attempts, ack_node: w.ack_node, ack_epoch: w.ack_epoch, ack_version: w.ack_version, ack_revision: w.ack_revision, ack_mode: w.ack_mode, trace: w.trace }))).toEqual([
      { seq: 1, outcome: 'ok', status: 'Ok', attempts: 1, ack_node: 'n2', ack_epoch: 9, ack_version: 4294967297 * 9, ack_revision: 17, ack_mode: 'async', trace: null },
      { seq: 2, outcome: 'info', status: 'Timeout', attempts: 3, ack_node: null, ack_epoch: null, ack_version: null, ack_revision: null, ack_mode: null, trace: '[{"n":1}]' },
    ]);
    expect(ledger.keysPage(0, 10)).toEqual([{ keyId: 4, store: 'sync3', key: 'k4', partition: 1, writer: 0 }]);
    ledger.close();
    ledger.close();
    sealed.close();
  });

  it('rejects the waiting invokes and every later call when a commit fails', async () => {
    const ledger = new WorkerLedger(fresh());
    ledger.addKey({ keyId: 1, store: 's', key: 'k1', partition: 0, writer: 0 });
    await ledger.invoke(1, 1, 'put', 1).committed;
    // the same key twice violates its primary key: the batch rolls back
    ledger.addKey({ keyId: 1, store: 's', key: 'k1', partition: 0, writer: 0 });
    const x = ledger.invoke(1, 2, 'put', 2);
    await expect(x.committed).rejects.toThrow(/UNIQUE|PRIMARY KEY|constraint/i);
    expect(() => ledger.setMeta('k', 'v')).toThrow(/UNIQUE|PRIMARY KEY|constraint/i);
    await expect(ledger.invoke(1, 3, 'put', 3).committed).rejects.toThrow();
    ledger.close();
  });

  it('refuses a path it cannot create with a one-line error', () => {
    expect(() => new WorkerLedger('/nonexistent-zaris-dir/x/ledger.sqlite')).toThrow(/cannot open the ledger/);
  });

  it('records the v2 additions like the SQLite ledger: ack copies, reads packed with the writes, samples, isolated nodes', async () => {
    const file = fresh();
    const ledger = new WorkerLedger(file);
    await recordV2(ledger);
    ledger.close();
    const db = new Database(file, { readonly: true });
    expectV2(db);
    db.close();
  });
});
