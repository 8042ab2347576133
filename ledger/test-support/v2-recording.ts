import type Database from 'better-sqlite3';
import { expect } from 'vitest';
import type { Ledger } from '../ledger-writer.js';
import { allReads, allWrites } from '../key-log.js';

/**
 * Records the v2 additions of the ledger API (CONTRACT.md "Ledger") through any writer: a sync
 * ack with copies, reads of every kind and outcome (a harness write id, an absent key, a value
 * that is not a write id, a failed read), per-node and merged samples with in-sync sets,
 * revisions and replicas, a partition fault with its isolated nodes. Shared by the SQLite and
 * the worker-thread ledger tests so that both keep one contract.
 */
export async function recordV2(ledger: Ledger): Promise<void> {
  ledger.addKey({ keyId: 3, store: 'sync3', key: 'k3', partition: 1, writer: 0 });
  const a = ledger.invoke(3, 1, 'put', 10);
  await a.committed;
  ledger.complete(a.w, { completeMs: 12, outcome: 'ok', status: 'Ok', attempts: 1, ack: { node: 'n1', epoch: 2, version: 1, revision: 5, ackMode: 'sync', copies: 2 } });
  const b = ledger.invoke(3, 2, 'put', 20);
  await b.committed;
  ledger.complete(b.w, { completeMs: 22, outcome: 'ok', status: 'Ok', attempts: 1, ack: { node: 'n1', epoch: 2, version: 2, revision: 6, ackMode: 'sync' } });
  // read order on purpose not by time: the seal sorts by (key, invoke, order recorded)
  ledger.read({ keyId: 3, invokeMs: 30, completeMs: 31, outcome: 'ok', node: 'n2', value: 'w3.2', kind: 'probe' });
  ledger.read({ keyId: 3, invokeMs: 13, completeMs: 14, outcome: 'ok', node: 'n1', value: 'w3.1', kind: 'get' });
  ledger.read({ keyId: 3, invokeMs: 13, completeMs: 14, outcome: 'ok', node: 'n1', value: null, kind: 'getMany' });
  ledger.read({ keyId: 3, invokeMs: 15, completeMs: 16, outcome: 'ok', node: null, value: 'garbage\u0000"', kind: 'get' });
  ledger.read({ keyId: 3, invokeMs: 17, completeMs: 18, outcome: 'fail', node: 'n3', value: 'w3.1', kind: 'get' });
  ledger.read({ keyId: 3, invokeMs: 19, completeMs: 20, outcome: 'ok', node: 'n1', value: 'w3.01', kind: 'get' });
  ledger.sample(40, [
    { store: 'sync3', partition: 1, active: 'n1', epoch: 2, health: 'Degraded', replicatedRevision: 5, inSync: ['n1', 'n2'], revisions: { n1: 6, n2: 5 }, replicas: ['n1', 'n2', 'n3'] },
    { store: 'sync3', partition: 1, active: 'n1', epoch: 2, health: 'Degraded', replicatedRevision: 5, node: 'n2', inSync: ['n1', 'n2'], revisions: { n2: 5 } },
    { store: 'sync3', partition: 0, active: null, epoch: 1, health: 'Unavailable', replicatedRevision: 0 },
  ]);
  const f = ledger.faultStart({ kind: 'partition', nodes: ['n3'], isolated: ['n3'], startMs: 50 });
  ledger.faultEnd(f, 60);
  ledger.faultStart({ kind: 'kill', nodes: ['n2'], startMs: 70 });
  ledger.seal();
}

/** Checks what {@link recordV2} recorded, read back from the sealed ledger file. */
export function expectV2(db: Database.Database): void {
  expect(allWrites(db).map((w) => [w.seq, w.ack_copies])).toEqual([[1, 2], [2, null]]);
  const reads = allReads(db);
  expect(reads.map((r) => [r.key_id, r.invoke_ms, r.complete_ms, r.outcome, r.node, r.value, r.value_key_id, r.value_seq, r.kind, r.id])).toEqual([
    [3, 13, 14, 'ok', 'n1', 'w3.1', 3, 1, 'get', null],
    [3, 13, 14, 'ok', 'n1', null, null, null, 'getMany', null],
    [3, 15, 16, 'ok', null, 'garbage\u0000"', null, null, 'get', null],
    [3, 17, 18, 'fail', 'n3', null, null, null, 'get', null],
    [3, 19, 20, 'ok', 'n1', 'w3.01', null, null, 'get', null],
    [3, 30, 31, 'ok', 'n2', 'w3.2', 3, 2, 'probe', null],
  ]);
  // rid: the order recorded (the probe at 30 was recorded first)
  const rids = reads.map((r) => r.rid);
  expect(rids[5]).toBeLessThan(rids[0]);
  expect(new Set(rids).size).toBe(6);
  expect(db.prepare('SELECT count(*) FROM read_log').pluck().get()).toBe(0);
  expect(db.prepare('SELECT t_ms, store, partition, active, epoch, health, replicated_revision, node, in_sync, revisions, replicas FROM samples ORDER BY rowid').raw().all()).toEqual([
    [40, 'sync3', 1, 'n1', 2, 'Degraded', 5, null, '["n1","n2"]', '{"n1":6,"n2":5}', '["n1","n2","n3"]'],
    [40, 'sync3', 1, 'n1', 2, 'Degraded', 5, 'n2', '["n1","n2"]', '{"n2":5}', null],
    [40, 'sync3', 0, null, 1, 'Unavailable', 0, null, null, null, null],
  ]);
  expect(db.prepare('SELECT kind, nodes, isolated, start_ms, end_ms FROM faults ORDER BY id').raw().all()).toEqual([
    ['partition', '["n3"]', '["n3"]', 50, 60],
    ['kill', '["n2"]', null, 70, null],
  ]);
  expect(db.prepare("SELECT value FROM meta WHERE key = 'rules'").pluck().get()).toBe('zaris-history/2');
}
