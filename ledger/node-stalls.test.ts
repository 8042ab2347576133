import Database from 'better-sqlite3';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { History } from './history-format.js';
import { judgeHistory } from './history-rules.js';
import { insertNodeStalls, observedNodeStalls, STALL_EXCUSE_LOOP_MS, type NodeStall } from './node-stalls.js';
import { applySchema } from './schema.js';
import { buildV2, planV2Arb } from './test-support/random-history-v2.js';

function ledger(): Database.Database {
  const db = new Database(':memory:');
  applySchema(db);
  return db;
}

const sample = (db: Database.Database, t: number, node: string, answered: 0 | 1, loop: number | null = null): void => {
  db.prepare('INSERT INTO node_samples (t_ms, node, answered, loop_max_ms, loop_p99_ms) VALUES (?, ?, ?, ?, NULL)').run(t, node, answered, loop);
};

/**
 * An async store whose active n1 is at revision 10 at t=0 while its in-sync replica n2 is still at
 * revision 0 at t=1,500: 1,500 ms behind with a 1,000 ms bound and no fault anywhere.
 */
function laggingHistory(stalls?: History['stalls']): History {
  const h: History = {
    format: 'zaris-history/2',
    run: { status: 'complete', inconclusiveReason: null, beyondBudget: false, asyncLagMaxMs: 1000, selfTestBug: null },
    nodes: ['n1', 'n2', 'n3'],
    stores: [{ name: 'async3', replicationFactor: 3, ackMode: 'async' }],
    partitions: [{ store: 'async3', partition: 0, replicas: ['n1', 'n2', 'n3'] }],
    faults: [{ id: 'f1', kind: 'kill', nodes: ['n3'], start: 5000, end: 5100 }],
    ownership: [0, 500, 1000, 1500].map((t) => ({
      t, store: 'async3', partition: 0, active: 'n1', epoch: 1, health: 'Healthy', replicatedRevision: 0,
      inSync: ['n1', 'n2', 'n3'], revisions: { n1: 10 + t, n2: 0, n3: 10 + t },
    })),
    writes: [{ id: 'w1', store: 'async3', key: 'k', partition: 0, seq: 1, op: 'put', invoke: 10, complete: 20, outcome: 'ok', ack: { node: 'n1', epoch: 1, version: 1, revision: 10, ackMode: 'async' } }],
    reads: [],
    finalReads: [{ store: 'async3', key: 'k', value: 'w1' }],
  };
  if (stalls !== undefined) h.stalls = stalls;
  return h;
}

describe('nodes observed not running (node_samples)', () => {
  it('a silent stretch runs from the first unanswered sample to the next answer; a new loop figure of 500 ms or more is the stretch it reports', () => {
    const db = ledger();
    for (const [t, a, loop] of [[0, 1, 20], [250, 0, null], [500, 0, null], [750, 1, 30], [1000, 1, 900], [1250, 1, 900], [1500, 1, 499], [2000, 0, null]] as const) sample(db, t, 'n1', a, loop);
    sample(db, 0, 'n2', 1, 20);
    sample(db, 3000, 'n2', 1, STALL_EXCUSE_LOOP_MS);
    expect(observedNodeStalls(db)).toEqual([
      // silent 250-750, then the 900 ms block reported at 1000 (cut to begin at the answer at 750)
      { node: 'n1', start: 250, end: 1000 },
      // the same 900 ms figure at 1250 is the rolling window, not a new block; 499 is below the bar
      { node: 'n1', start: 2000, end: 2000 },
      { node: 'n2', start: 2500, end: 3000 },
    ]);
    db.close();
  });

  it('a ledger without node_samples has none', () => {
    const db = new Database(':memory:');
    expect(observedNodeStalls(db)).toEqual([]);
    db.close();
  });

  it('property: stalls written by the import read back merged per node, by node then start', () => {
    const stallArb = fc.record({ node: fc.constantFrom('n1', 'n2', 'n3'), start: fc.nat(5000), dur: fc.nat(2000) });
    fc.assert(
      fc.property(fc.array(stallArb, { maxLength: 8 }), (list) => {
        const stalls: NodeStall[] = list.map((s) => ({ node: s.node, start: s.start, end: s.start + s.dur }));
        const db = ledger();
        insertNodeStalls(db, stalls);
        const back = observedNodeStalls(db);
        db.close();
        // every instant of the input is covered by one stretch of its node, and nothing else is
        for (const s of stalls) expect(back.some((b) => b.node === s.node && b.start <= s.start && b.end >= s.end)).toBe(true);
        for (const b of back) expect(stalls.some((s) => s.node === b.node && s.start === b.start)).toBe(true);
        for (let i = 1; i < back.length; i++) {
          const [a, b] = [back[i - 1], back[i]];
          expect(a.node < b.node || (a.node === b.node && a.end < b.start)).toBe(true);
        }
      }),
      { seed: 20261205, numRuns: 200 },
    );
  });
});

describe('the replication-lag rule and stalls', () => {
  it('a replica 1,500 ms behind with nothing in the way is a violation; a stall of its active in the window excuses it', () => {
    expect(judgeHistory(laggingHistory()).findings.map((f) => [f.kind, f.class])).toEqual([['replication-lag', 'violation']]);
    expect(judgeHistory(laggingHistory()).verdict).toBe('FAILED');
    const excused = judgeHistory(laggingHistory([{ node: 'n1', start: 700, end: 1400 }]));
    expect(excused.findings).toEqual([]);
    expect(excused.verdict).toBe('CERTIFIED');
    // a stall of a node that holds no replica of the partition, or outside every window, excuses nothing
    expect(judgeHistory(laggingHistory([{ node: 'n1', start: 3000, end: 3100 }])).verdict).toBe('FAILED');
  });

  it('property: stalls only ever take replication-lag findings away, never add or change another finding', () => {
    fc.assert(
      fc.property(planV2Arb, (plan) => {
        const h = buildV2(plan);
        const without = judgeHistory({ ...h, stalls: undefined });
        const withStalls = judgeHistory(h);
        const key = (f: { kind: string; class: string; store: string; key: string | null; write: string | null; partition?: number; read?: string }): string => JSON.stringify(f);
        const before = new Set(without.findings.map(key));
        for (const f of withStalls.findings) expect(before.has(key(f))).toBe(true);
        const after = new Set(withStalls.findings.map(key));
        for (const f of without.findings) if (!after.has(key(f))) expect(f.kind).toBe('replication-lag');
      }),
      { seed: 20261205, numRuns: 400 },
    );
  });
});
