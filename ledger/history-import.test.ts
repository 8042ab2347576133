import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { History } from './history-format.js';
import { validateHistory } from './history-format.js';
import { importHistory, UNKNOWN_PARTITION } from './history-import.js';

const work = mkdtempSync(join(tmpdir(), 'zaris-certify-import-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function history(): History {
  return validateHistory({
    format: 'zaris-history/1',
    nodes: ['n1', 'n2'],
    stores: [{ name: 's', replicationFactor: 2, ackMode: 'async' }],
    partitions: [{ store: 's', partition: 0, replicas: ['n2', 'n1'] }],
    faults: [{ id: 'boom', kind: 'stop', nodes: ['n1'], start: 50, end: 80, caughtUp: 95 }],
    ownership: [{ t: 0, store: 's', partition: 0, active: null, epoch: 2, health: 'Unavailable', replicatedRevision: 4 }],
    writes: [
      { id: 'a', store: 's', key: 'x', partition: 0, seq: 2, op: 'cas', invoke: 30, complete: 40, outcome: 'ok', ack: { node: 'n2', epoch: 2, version: 9, revision: 5, ackMode: 'async' } },
      { id: 'b', store: 's', key: 'y', partition: 0, seq: 1, op: 'put', invoke: 10, complete: 20, outcome: 'fail', status: 'Conflict' },
    ],
    finalReads: [
      { store: 's', key: 'x', value: 'a' },
      { store: 's', key: 'y', value: 'a' },
      { store: 's', key: 'z', value: null, unreadable: true },
    ],
  });
}

describe('importHistory', () => {
  it('fills the ledger tables and resolves final reads within the same key', () => {
    const db = importHistory(history(), ':memory:');
    try {
      expect(db.prepare('SELECT key_id, store, key, partition FROM keys ORDER BY key_id').raw().all()).toEqual([
        [1, 's', 'x', 0], [2, 's', 'y', 0], [3, 's', 'z', UNKNOWN_PARTITION],
      ]);
      expect(db.prepare('SELECT key_id, seq, op, outcome, status, ack_node, ack_epoch, ack_version, ack_revision, ack_mode, wid FROM writes ORDER BY key_id').raw().all()).toEqual([
        [1, 2, 'cas', 'ok', null, 'n2', 2, 9, 5, 'async', 'a'],
        [2, 1, 'put', 'fail', 'Conflict', null, null, null, null, null, 'b'],
      ]);
      // y read "a", which is a write of x, not of y: unresolved
      expect(db.prepare('SELECT key_id, value, value_key_id, value_seq, unreadable FROM final_reads ORDER BY key_id').raw().all()).toEqual([
        [1, 'a', 1, 2, 0], [2, 'a', null, null, 0], [3, null, null, null, 1],
      ]);
      expect(db.prepare('SELECT id, kind, nodes, start_ms, end_ms, caught_up_ms, detail FROM faults').raw().all()).toEqual([
        [1, 'stop', '["n1"]', 50, 80, 95, '{"historyId":"boom"}'],
      ]);
      expect(db.prepare('SELECT active, epoch, health, replicated_revision FROM samples').raw().all()).toEqual([[null, 2, 'Unavailable', 4]]);
      expect(db.prepare('SELECT id, preferred_primary FROM nodes ORDER BY id').raw().all()).toEqual([['n1', 0], ['n2', 1]]);
      expect(db.prepare("SELECT value FROM meta WHERE key = 'duration_ms'").pluck().get()).toBe('95');
    } finally {
      db.close();
    }
  });

  it('refuses to import over an existing file and leaves it alone', () => {
    const path = join(work, 'exists.sqlite');
    writeFileSync(path, 'keep me');
    expect(() => importHistory(history(), path)).toThrow(`cannot import into ${path}: the file already exists`);
    expect(existsSync(path)).toBe(true);
  });

  it('writes a WAL ledger file that can be reopened', () => {
    const path = join(work, 'new.sqlite');
    const db = importHistory(history(), path);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    db.close();
    expect(existsSync(path)).toBe(true);
  });
});
