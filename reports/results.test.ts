import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { History, HistoryWrite } from '../ledger/history-format.js';
import { validateHistory } from '../ledger/history-format.js';
import { verifyLedger } from '../harness/verifier/verifier.js';
import { importHistory } from '../ledger/history-import.js';
import { buildResults, describeMembership, FINDINGS_PER_CLASS, formatResults, nearestRank, readbackOf, writeResultsJson } from './results.js';

const work = mkdtempSync(join(tmpdir(), 'zaris-certify-results-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const open: Database.Database[] = [];
afterEach(() => {
  while (open.length > 0) open.pop()!.close();
});

function okWrite(store: string, key: string, seq: number, node = 'n1'): HistoryWrite {
  return { id: `${key}.${seq}`, store, key, partition: 0, seq, op: 'put', invoke: seq * 10, complete: seq * 10 + 2, outcome: 'ok', ack: { node, epoch: 1, version: seq, revision: seq, ackMode: store === 'async3' ? 'async' : 'sync' } };
}

function ledger(extraLost = 0): Database.Database {
  const h: History = validateHistory({
    format: 'zaris-history/2',
    run: { status: 'complete', inconclusiveReason: null, beyondBudget: false, asyncLagMaxMs: 750, leaseMs: 2100, selfTestBug: null },
    nodes: ['n1', 'n2', 'n3'],
    stores: [
      { name: 'sync3', replicationFactor: 3, ackMode: 'sync' },
      { name: 'rf1', replicationFactor: 1, ackMode: 'sync' },
    ],
    partitions: [
      { store: 'sync3', partition: 0, replicas: ['n1', 'n2', 'n3'] },
      { store: 'rf1', partition: 0, replicas: ['n1'] },
    ],
    faults: [
      { id: 'f1', kind: 'kill', nodes: ['n1'], start: 500, end: 600 },
      { id: 'f2', kind: 'partition', nodes: ['n2'], start: 700, end: 800 },
      { id: 'f3', kind: 'partition', nodes: ['n3'], start: 900 },
    ],
    ownership: [
      { t: 0, store: 'sync3', partition: 0, active: 'n1', epoch: 1, health: 'Healthy', replicatedRevision: 0 },
      { t: 5, store: 'sync3', partition: 0, active: 'n1', epoch: 1, health: 'Healthy', replicatedRevision: 0, node: 'n1', inSync: ['n1', 'n2'] },
    ],
    writes: [],
    reads: [
      { id: 'ra', store: 'sync3', key: 'a', invoke: 20, complete: 21, outcome: 'ok', node: 'n1', value: null },
      { id: 'rx', store: 'sync3', key: 'a', invoke: 30, complete: 31, outcome: 'fail', node: 'n2', value: null },
    ],
    finalReads: [],
  });
  // sync3: b lost (violation), a fine; rf1: c lost (rf1: n1 killed at 500 after the ack)
  h.writes.push(okWrite('sync3', 'a', 1), okWrite('sync3', 'b', 1), okWrite('sync3', 'b', 2), okWrite('rf1', 'c', 1));
  h.writes.push({ id: 'd.1', store: 'sync3', key: 'd', partition: 0, seq: 1, op: 'put', invoke: 5, complete: 9, outcome: 'fail' });
  h.finalReads.push({ store: 'sync3', key: 'a', value: 'a.1' }, { store: 'sync3', key: 'b', value: 'b.1' }, { store: 'rf1', key: 'c', value: null }, { store: 'sync3', key: 'd', value: null });
  for (let i = 0; i < extraLost; i++) {
    h.writes.push(okWrite('sync3', `z${String(i).padStart(5, '0')}`, 1));
    h.finalReads.push({ store: 'sync3', key: `z${String(i).padStart(5, '0')}`, value: null });
  }
  const db = importHistory(h, ':memory:');
  open.push(db);
  db.prepare("UPDATE meta SET value = ? WHERE key = 'run_config'").run(
    JSON.stringify({ beyondBudget: false, asyncLagMaxMs: 750, leaseMs: 2100, selfTestBug: null, clientOptions: { maxAttempts: 7, setBy: ['ZARIS_MAX_ATTEMPTS'] } }),
  );
  db.exec(`INSERT INTO meta (key, value) VALUES ('runtime', 'process'), ('seed', '42'), ('schedule_digest', 'abc123');
    UPDATE meta SET value = '60000' WHERE key = 'duration_ms';
    INSERT INTO events (t_ms, kind, detail) VALUES
      (1, 'failover', '{"faultId":1,"store":"sync3","partition":0,"ms":900}'),
      (2, 'failover', '{"faultId":1,"store":"rf1","partition":0,"ms":300}'),
      (3, 'failover', '{"faultId":2,"store":"sync3","partition":0,"ms":1500}'),
      (4, 'failover', 'not json'),
      (5, 'phase', '{"ms":99999}');
    INSERT INTO stats (t_s, store, acked, failed, indeterminate, statuses) VALUES
      (0, 'sync3', 10, 0, 0, '{"Ok":10,"Unavailable":2}'),
      (1, 'sync3', 5, 1, 0, '{"Ok":5,"Conflict":1,"Unavailable":3}'),
      (1, 'rf1', 1, 0, 0, 'garbage');`);
  return db;
}

describe('buildResults', () => {
  it('has the shape of DESIGN.md §7 with the real figures', () => {
    const db = ledger();
    const r = buildResults(db, verifyLedger(db));
    expect(Object.keys(r)).toEqual([
      'verdict', 'exitCode', 'rules', 'asyncLagMaxMs', 'leaseMs', 'contract', 'runtime', 'seed', 'durationMs', 'scheduleDigest', 'counts', 'faults', 'failover', 'summary', 'kinds',
      'readsChecked', 'stores', 'findings', 'incidents', 'availability', 'retries', 'clientOptions',
    ]);
    expect(r).toEqual({
      verdict: 'FAILED',
      exitCode: 1,
      rules: 'zaris-history/2',
      asyncLagMaxMs: 750,
      leaseMs: 2100,
      // an imported history that declares no contract: judged by the letter
      contract: expect.objectContaining({ target: 'history-format.md', origin: 'letter' }),
      runtime: 'process',
      seed: 42,
      durationMs: 60000,
      scheduleDigest: 'abc123',
      counts: { attempted: 5, acknowledged: 4, failed: 1, indeterminate: 0 },
      faults: { kill: 1, stop: 0, pause: 0, partition: 2 },
      failover: { count: 3, p50Ms: 900, p95Ms: 1500, maxMs: 1500 },
      summary: { violation: 3, rf1: 1, 'async-ack': 0, 'beyond-budget': 0, info: 0 },
      kinds: {
        unverified: 0, unexpected: 0, lost: 2, phantom: 0, 'under-replicated-ack': 0, 'ack-not-from-active': 0, 'version-regression': 0, recovered: 0,
        'unexpected-read': 0, 'phantom-read': 0, 'stale-read': 1, 'epoch-conflict': 0, 'epoch-regression': 0, 'false-healthy': 1, 'replication-lag': 0,
      },
      readsChecked: 2,
      stores: [
        { name: 'sync3', replicationFactor: 3, ackMode: 'sync', acknowledged: 3, summary: { violation: 3, rf1: 0, 'async-ack': 0, 'beyond-budget': 0, info: 0 } },
        { name: 'rf1', replicationFactor: 1, ackMode: 'sync', acknowledged: 1, summary: { violation: 0, rf1: 1, 'async-ack': 0, 'beyond-budget': 0, info: 0 } },
      ],
      findings: [
        // the runtime map's findings of a store first, then its keys in natural order
        // each tagged with its incident (below: ids in time order)
        { class: 'violation', kind: 'false-healthy', store: 'sync3', key: null, write: null, partition: 0, incident: 1 },
        { class: 'violation', kind: 'stale-read', store: 'sync3', key: 'a', write: null, read: 'ra', incident: 3 },
        { class: 'violation', kind: 'lost', store: 'sync3', key: 'b', write: 'b.2', incident: 4 },
        { class: 'rf1', kind: 'lost', store: 'rf1', key: 'c', write: 'c.1', incident: 2 },
      ],
      incidents: expect.any(Array),
      availability: { verdict: 'OK', boundMs: 5000, measured: false, stalls: [] },
      retries: { Conflict: 1, Ok: 15, Unavailable: 5 },
      clientOptions: { maxAttempts: 7, setBy: ['ZARIS_MAX_ATTEMPTS'] },
    });
  });

  it('lists the admin requests, counts the membership changes and the nodes\' migrations and Migrating answers (issue 14)', () => {
    const db = ledger();
    const metrics = (t: number, node: string, migratingAnswers: number, migrations: number | null): void => {
      db.prepare("INSERT INTO events (t_ms, kind, detail) VALUES (?, 'node-metrics', ?)").run(t, JSON.stringify({ node, failovers: 0, promotions: 1, staleEpochRefusals: 0, migratingAnswers, invalidPolicyValues: 0, migrations, writesAcked: 0, lagMaxMs: 0, lag: {} }));
    };
    const admin = (t: number, detail: object): void => {
      db.prepare("INSERT INTO events (t_ms, kind, detail) VALUES (?, 'admin', ?)").run(t, JSON.stringify(detail));
    };
    admin(30_000, { index: 3, kind: 'join', command: 'join n4', node: 'n4', status: 'Ok', message: 'join of n4 proposed' });
    admin(95_000, { index: 9, step: 'drain', kind: 'leave', command: 'leave n1', node: 'n1', status: 'Ok', message: 'leave of n1 proposed' });
    admin(97_000, { index: 10, command: 'handoff sync3/1 to n2', status: 'Ok', message: 'handoff proposed' });
    admin(150_000, { index: 12, kind: 'rebalance', command: 'rebalance', status: 'Ok', message: 'rebalance proposed' });
    metrics(60_000, 'n1', 2, 3);
    metrics(60_000, 'n4', 5, 0);
    metrics(120_000, 'n1', 0, 1); // n1 restarted: counts from 0 again
    metrics(120_000, 'n2', 4, 2);
    const r = buildResults(db, verifyLedger(db));
    expect(r.adminRequests).toEqual([
      { tMs: 30_000, kind: 'join', command: 'join n4', node: 'n4', status: 'Ok', message: 'join of n4 proposed' },
      { tMs: 95_000, kind: 'leave', command: 'leave n1', node: 'n1', step: 'drain', status: 'Ok', message: 'leave of n1 proposed' },
      { tMs: 97_000, kind: 'handoff', command: 'handoff sync3/1 to n2', node: 'n2', status: 'Ok', message: 'handoff proposed' },
      { tMs: 150_000, kind: 'rebalance', command: 'rebalance', status: 'Ok', message: 'rebalance proposed' },
    ]);
    expect(r.nodeCounters).toEqual({ failovers: 0, promotions: 3, staleEpochRefusals: 0, migratingAnswers: 11, invalidPolicyValues: 0, migrations: 6 });
    expect(r.membership).toEqual({ joins: 1, leaves: 1, rebalances: 1, migrations: 6, migratingAnswers: 11 });
    expect(describeMembership(r.membership!)).toBe('membership: 1 join, 1 leave, 1 rebalance; 6 migrations, 11 Migrating answers (no loss excused by a move)');
    expect(describeMembership({ joins: 3, leaves: 2, rebalances: 0, migrations: null, migratingAnswers: 1 })).toBe('membership: 3 joins, 2 leaves, 0 rebalances; migrations not exported, 1 Migrating answer (no loss excused by a move)');
    // a run without admin events or samples carries none of the three
    const plain = buildResults(ledger(), verifyLedger(ledger()));
    expect(plain).not.toHaveProperty('adminRequests');
    expect(plain).not.toHaveProperty('nodeCounters');
    expect(plain).not.toHaveProperty('membership');
  });

  it('tells the findings as incidents: by store, partition and what lost them', () => {
    const db = ledger();
    const r = buildResults(db, verifyLedger(db));
    expect(r.incidents.map((i) => [i.id, i.store, i.class, i.cause.kind, i.cause.node, i.count, i.windowMs, Object.keys(i.kinds)])).toEqual([
      [1, 'sync3', 'violation', 'runtime-map', 'n1', 1, { from: 5, to: 5 }, ['false-healthy']],
      // c.1 acked at 12 ms by n1, n1 killed at 500 ms: rf1
      [2, 'rf1', 'rf1', 'crash', 'n1', 1, { from: 12, to: 12 }, ['lost']],
      // the stale read at 20 ms: the partition never changed owner
      [3, 'sync3', 'violation', 'none', null, 1, { from: 20, to: 20 }, ['stale-read']],
      // b.2 acked at 22 ms by n1 (epoch 1), missing after n1's kill (f1)
      [4, 'sync3', 'violation', 'crash', 'n1', 1, { from: 22, to: 22 }, ['lost']],
    ]);
    expect(r.incidents[3].cause).toMatchObject({ fault: 'f1', atMs: 500 });
    expect(r.incidents[3].faultBefore).toBeNull();
    expect(r.incidents[3].line).toBe('#4 sync3/0: 1 lost (1 violation), missing after the crash of n1 (fault f1 at 0:00.5); at 0:00.0; no fault before; runtime map stayed n1@e1');
  });

  it('carries the inconclusive reason', () => {
    const db = ledger();
    db.exec("UPDATE final_reads SET value = 'b.2', value_seq = 2 WHERE key_id = 2; DELETE FROM final_reads WHERE key_id = 1; DELETE FROM reads; DELETE FROM samples WHERE in_sync IS NOT NULL");
    const r = buildResults(db, verifyLedger(db));
    expect(r.verdict).toBe('INCONCLUSIVE');
    expect(r.inconclusiveReason).toBe('1 key unverified');
    expect(Object.keys(r).slice(0, 3)).toEqual(['verdict', 'exitCode', 'inconclusiveReason']);
  });

  it('lists at most 1,000 findings per class, ordered by store and key; the summary keeps the total', () => {
    const db = ledger(FINDINGS_PER_CLASS + 5);
    const r = buildResults(db, verifyLedger(db));
    const violations = r.findings.filter((f) => f.class === 'violation');
    expect(r.summary.violation).toBe(FINDINGS_PER_CLASS + 8);
    expect(violations).toHaveLength(FINDINGS_PER_CLASS);
    expect(violations.slice(0, 4).map((f) => [f.kind, f.key])).toEqual([['false-healthy', null], ['stale-read', 'a'], ['lost', 'b'], ['lost', 'z00000']]);
    expect(violations[FINDINGS_PER_CLASS - 1].key).toBe('z00996');
    expect(r.findings.filter((f) => f.class === 'rf1')).toHaveLength(1);
  });

  it('lists an incident\'s first 20 findings (violations first, then by time) and tags results.json\'s findings with their incident', () => {
    const db = ledger(FINDINGS_PER_CLASS + 5);
    const r = buildResults(db, verifyLedger(db));
    // b.2 (acked at 22 ms) and the z keys (acked at 12 ms) by n1 at epoch 1, all missing after n1's kill
    const crash = r.incidents.find((i) => i.store === 'sync3' && i.cause.kind === 'crash')!;
    expect(crash.count).toBe(FINDINGS_PER_CLASS + 6);
    expect(crash.firstFindings).toHaveLength(20);
    // the earliest acks first (the z keys at 12 ms, in ledger order); b.2 at 22 ms is not among them
    expect(crash.firstFindings.slice(0, 3)).toEqual([
      { class: 'violation', kind: 'lost', key: 'z00000', write: 'z00000.1' },
      { class: 'violation', kind: 'lost', key: 'z00001', write: 'z00001.1' },
      { class: 'violation', kind: 'lost', key: 'z00002', write: 'z00002.1' },
    ]);
    expect(crash.firstFindings.map((f) => f.key)).not.toContain('b');
    // results.json holds 1,000 violations: the two of other incidents and 998 of this one
    expect(r.findings.filter((f) => f.incident === crash.id)).toHaveLength(FINDINGS_PER_CLASS - 2);
    expect(r.findings.every((f) => typeof f.incident === 'number' && r.incidents[f.incident - 1].store === f.store)).toBe(true);
    // a one-finding incident lists that one
    const rf1 = r.incidents.find((i) => i.class === 'rf1')!;
    expect(rf1.firstFindings).toEqual([{ class: 'rf1', kind: 'lost', key: 'c', write: 'c.1' }]);
  });

  it('is reproduced byte for byte by a second verification', () => {
    const db = ledger(30);
    const first = formatResults(buildResults(db, verifyLedger(db)));
    const second = formatResults(buildResults(db, verifyLedger(db)));
    expect(second).toBe(first);
    const path = writeResultsJson(buildResults(db, verifyLedger(db)), work);
    expect(readFileSync(path, 'utf8')).toBe(first);
  });
});

describe('nearestRank', () => {
  it('takes the value at rank ceil(p * n)', () => {
    expect(nearestRank([], 0.5)).toBe(0);
    expect(nearestRank([7], 0.95)).toBe(7);
    expect(nearestRank([1, 2, 3, 4], 0.5)).toBe(2);
    expect(nearestRank([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20], 0.95)).toBe(19);
  });
});

describe('a stream target\'s final read in results.json', () => {
  it('is the last final-readback event of the ledger, or null', async () => {
    const Sqlite = (await import('better-sqlite3')).default;
    const db = new Sqlite(':memory:');
    try {
      db.exec('CREATE TABLE events (t_ms REAL NOT NULL, kind TEXT NOT NULL, detail TEXT)');
      expect(readbackOf(db)).toBeNull();
      const ins = db.prepare('INSERT INTO events (t_ms, kind, detail) VALUES (?, ?, ?)');
      ins.run(10, 'final-readback', JSON.stringify({ complete: false, read: 3 }));
      ins.run(20, 'final-readback', JSON.stringify({ complete: true, read: 7 }));
      ins.run(30, 'phase', JSON.stringify({ phase: 'seal' }));
      expect(readbackOf(db)).toEqual({ complete: true, read: 7 });
    } finally {
      db.close();
    }
  });
});
