import { describe, expect, it } from 'vitest';
import { renderExposition } from '../nodes/metrics-text.js';
import { nodeMetricFamilies } from '../nodes/node-metrics.js';
import { NODE_METRICS_EVENT, sampleFromExposition, startMetricsSampler } from './metrics-sampler.js';

const counters = (over: Partial<{ failovers: number; promotions: number; migrations: number }> = {}) => ({
  writesAcked: 9,
  writesRefused: 0,
  indeterminate: 0,
  promotions: over.promotions ?? 0,
  syncsServed: 0,
  snapshotsInstalled: 0,
  failovers: over.failovers ?? 0,
  staleEpochRefusals: { proposal: 1, replication: 2 },
  migratingAnswers: 0,
  migrations: over.migrations ?? 0,
  invalidPolicyValues: new Map([['async3', 4]]),
});
const text = (node: string, over: Partial<{ failovers: number; promotions: number; migrations: number }> = {}, lag = [{ store: 'sync3', partition: 0, lagMs: 7 }]): string =>
  renderExposition(nodeMetricFamilies({ id: node, counters: counters(over), replicationLagMs: () => lag }, ['sync3', 'async3']));

describe('metrics sampler (harness/metrics-sampler.ts)', () => {
  it("reads a node's exposition into one sample", () => {
    expect(sampleFromExposition('n1', text('n1', { promotions: 3 }, [{ store: 'sync3', partition: 0, lagMs: 7 }, { store: 'rf1', partition: 2, lagMs: 30 }]))).toEqual({
      node: 'n1',
      failovers: 0,
      promotions: 3,
      staleEpochRefusals: 3,
      migratingAnswers: 0,
      migrations: 0,
      invalidPolicyValues: 4,
      writesAcked: 9,
      lagMaxMs: 30,
      lag: { 'sync3/0': 7, 'rf1/2': 30 },
    });
    expect(sampleFromExposition('n1', text('n1', {}, [])).lagMaxMs).toBe(0);
    // issue 14: zaris_migrations_total, and null from a node that does not export it (a store from before membership changes)
    expect(sampleFromExposition('n1', text('n1', { migrations: 7 })).migrations).toBe(7);
    const withoutMoves = text('n1', { migrations: 7 }).split('\n').filter((l) => !l.includes('zaris_migrations_total')).join('\n');
    expect(withoutMoves).not.toContain('migrations');
    expect(sampleFromExposition('n1', withoutMoves)).toMatchObject({ migrations: null, failovers: 0 });
    expect(() => sampleFromExposition('n2', text('n1'))).toThrow('n2: metric zaris_failovers_total missing');
    expect(() => sampleFromExposition('n1', 'garbage')).toThrow(/exposition line 1/);
  });

  it('records one node-metrics event per answering node per round, skipping nodes that do not answer', async () => {
    const events: Array<[number, string, unknown]> = [];
    let t = 1_000;
    let failovers = 0;
    const s = startMetricsSampler({
      endpoints: [
        { node: 'n1', host: '127.0.0.1', port: 1 },
        { node: 'n2', host: '127.0.0.2', port: 1 },
      ],
      now: () => t,
      ledger: { event: (tMs, kind, detail) => events.push([tMs, kind, detail]) },
      everyMs: 3_600_000,
      get: async (url) => {
        if (url === 'http://127.0.0.2:1/metrics') throw new Error('down');
        expect(url).toBe('http://127.0.0.1:1/metrics');
        return text('n1', { failovers });
      },
    });
    await s.sampleNow();
    failovers = 2;
    t = 6_000;
    await s.sampleNow();
    await s.stop();
    expect(events.map(([tm, k, d]) => [tm, k, (d as { node: string }).node, (d as { failovers: number }).failovers])).toEqual([
      [1_000, NODE_METRICS_EVENT, 'n1', 0],
      [6_000, NODE_METRICS_EVENT, 'n1', 2],
    ]);
    expect(s.latest().get('n1')!.failovers).toBe(2);
    expect(s.latest().has('n2')).toBe(false);
  });
});
