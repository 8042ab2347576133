import { describe, expect, it } from 'vitest';
import { validateHistory } from './history-format.js';
import { judgeHistory } from './history-rules.js';
import { FIXTURES, type FixtureFinding } from './test-support/fixtures.js';

const canon = (f: FixtureFinding): string => JSON.stringify([f.class, f.kind, f.store, f.key, f.write, f.partition ?? null, f.read ?? null]);

describe('judgeHistory (the reference model of history-format.md v1 and v2)', () => {
  it.each(FIXTURES.map((f) => [f.name, f] as const))('%s', (_name, f) => {
    // through the parser: the fixture is a valid history of its version
    const h = validateHistory(JSON.parse(JSON.stringify(f.history)));
    const j = judgeHistory(h);
    expect(j.verdict, f.why).toBe(f.verdict);
    expect(j.findings.map(canon).sort(), f.why).toEqual(f.findings.map(canon).sort());
    if (f.reason !== undefined) expect(j.reasons.join('; ')).toBe(f.reason);
    if (f.verdict !== 'INCONCLUSIVE') expect(j.reasons).toEqual([]);
  });

  it('is pure: judging twice gives the same answer and leaves the history unchanged', () => {
    for (const f of FIXTURES) {
      const before = JSON.stringify(f.history);
      expect(judgeHistory(f.history)).toEqual(judgeHistory(f.history));
      expect(JSON.stringify(f.history)).toBe(before);
    }
  });

  it('judges a history of 10,000 writes, 10,000 reads and 2,000 samples (the size the simulation emits)', () => {
    const writes = [];
    const reads = [];
    const finalReads = [];
    for (let k = 0; k < 1000; k++) {
      for (let s = 1; s <= 10; s++) {
        const t = k + s * 2000;
        writes.push({ id: `k${k}.${s}`, store: 'async3', key: `k${k}`, partition: 0, seq: s, op: 'put', invoke: t, complete: t + 5, outcome: 'ok', ack: { node: 'n1', epoch: 1, version: s, revision: k * 10 + s, ackMode: 'async' } });
        reads.push({ id: `r${k}.${s}`, store: 'async3', key: `k${k}`, invoke: t + 10, complete: t + 12, outcome: 'ok', node: 'n1', value: `k${k}.${s}` });
      }
      finalReads.push({ store: 'async3', key: `k${k}`, value: `k${k}.10` });
    }
    const ownership = Array.from({ length: 2000 }, (_, i) => ({ t: i * 12, store: 'async3', partition: 0, active: 'n1', epoch: 1, health: 'Healthy', replicatedRevision: 0, inSync: ['n1', 'n2', 'n3'], revisions: { n1: i, n2: i, n3: i } }));
    const h = validateHistory({
      format: 'zaris-history/2',
      run: { status: 'complete', inconclusiveReason: null, beyondBudget: false, asyncLagMaxMs: 1000, selfTestBug: null },
      nodes: ['n1', 'n2', 'n3'],
      stores: [{ name: 'async3', replicationFactor: 3, ackMode: 'async' }],
      partitions: [{ store: 'async3', partition: 0, replicas: ['n1', 'n2', 'n3'] }],
      faults: [{ id: 'f1', kind: 'pause', nodes: ['n3'], start: 100, end: 200 }],
      ownership,
      writes,
      reads,
      finalReads,
    });
    const j = judgeHistory(h);
    expect(j.verdict).toBe('CERTIFIED');
    expect(j.findings).toEqual([]);
  });
});
