import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import Database from 'better-sqlite3';
import { applySchema } from '../../ledger/schema.js';
import { DEFAULT_STORES } from '../certify/options.js';
import { parseScenario } from '../scenario/scenario.js';
import { ddmin, recordedItems, subsetScenario, type ShrinkConfig } from './shrink.js';

describe('make shrink (harness/commands/shrink.ts)', () => {
  it('ddmin finds exactly the faults a failure needs, whichever they are (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 24 }), fc.array(fc.nat(), { minLength: 1, maxLength: 3 }), async (n, picks) => {
        const items = Array.from({ length: n }, (_, i) => i);
        const culprits = new Set(picks.map((p) => p % n));
        const fails = async (s: number[]): Promise<boolean> => [...culprits].every((c) => s.includes(c));
        const r = await ddmin(items, fails, 1_000);
        expect(r.exhausted).toBe(false);
        expect(new Set(r.result)).toEqual(culprits);
      }),
      { numRuns: 200 },
    );
  });

  it('ddmin stops at its budget with the smallest failing subset found so far', async () => {
    const items = Array.from({ length: 16 }, (_, i) => i);
    let calls = 0;
    const r = await ddmin(items, async (s) => (calls++, s.includes(11)), 3);
    expect(r.tests).toBe(3);
    expect(calls).toBe(3);
    expect(r.exhausted).toBe(true);
    expect(r.result).toContain(11);
    expect(r.result.length).toBeLessThanOrEqual(4);
  });

  it('reads the recorded faults as scenario steps: nodes hit, power groups, flapping cuts, one-way ends, clocks, admin requests', () => {
    const db = new Database(':memory:');
    applySchema(db);
    db.prepare(`INSERT INTO events (t_ms, kind, detail) VALUES (1000, 'phase', '{"phase":"faults"}'), (90000, 'phase', '{"phase":"heal"}'), (40000, 'admin', '{"index":9,"command":"handoff sync3/0 to n3"}')`).run();
    const ins = db.prepare('INSERT INTO faults (kind, nodes, target, planned_ms, start_ms, end_ms, detail) VALUES (?, ?, ?, 0, ?, ?, ?)');
    ins.run('kill', '["n1"]', 'active:sync3/0', 3000, 5000, JSON.stringify({ index: 0, node: 'n1' }));
    ins.run('kill', '["n2"]', 'leader', 10000, 12000, JSON.stringify({ index: 1, node: 'n2', power: 1, group: ['n2', 'n3'] }));
    ins.run('kill', '["n3"]', 'leader', 10002, 12001, JSON.stringify({ index: 1, node: 'n3', power: 1, group: ['n2', 'n3'] }));
    ins.run('partition', '["n1"]', 'random', 20000, 21000, JSON.stringify({ index: 2, topology: 'isolate', node: 'n1', flap: { onMs: 1000, offMs: 500, cycle: 0 } }));
    ins.run('partition', '["n1"]', 'random', 21500, 22500, JSON.stringify({ index: 2, topology: 'isolate', grudge: {}, flap: { onMs: 1000, offMs: 500, cycle: 1, of: 4 } }));
    ins.run('partition', '["n1","n3"]', 'leader', 30000, 36000, JSON.stringify({ index: 3, topology: 'one-way', node: 'n1', grudge: { n1: ['n3'] } }));
    ins.run('clock', '["n2"]', 'leader', 50000, 60000, JSON.stringify({ index: 4, node: 'n2', mode: 'wall', offsetMs: -30000 }));
    const { items } = recordedItems(db);
    expect(items.map((i) => i.label)).toEqual(['kill n1 @2.0s', 'power n2+n3 @9.0s', 'isolate n1 (flapping) @19.0s', 'one-way n3->n1 @29.0s', 'handoff sync3/0 to n3 @39.0s', 'clock n2 -30s @49.0s']);
    expect(items[1].steps).toEqual([
      { fault: 'kill', target: 'node n2', duration: '2000ms', offsetMs: 0 },
      { fault: 'kill', target: 'node n3', duration: '1999ms', offsetMs: 2 },
    ]);
    expect(items[2].steps[0]).toMatchObject({ fault: 'partition', topology: 'isolate', target: 'node n1', flap: { on: '1000ms', off: '500ms' }, duration: '2500ms' });
    expect(items[3].steps[0]).toMatchObject({ fault: 'partition', topology: 'one-way', target: 'node n1', direction: 'in', peer: 'node n3', duration: '6000ms' });
    const cfg: ShrinkConfig = { seed: 7, nodes: 3, stores: DEFAULT_STORES, escalationMs: 10_000, evictionMs: 60_000, beyondBudget: true, bug: 'lose-on-promotion' };
    // a subset is a scenario: its first fault 3 s into the phase, relative timings kept
    const text = subsetScenario([items[1], items[3], items[4]], cfg, ['header line'], 'shrunk');
    expect(text.startsWith('# header line\nname: shrunk\n')).toBe(true);
    const sc = parseScenario(text, 'shrunk.yaml');
    expect(sc.bug).toBe('lose-on-promotion');
    expect(sc.seed).toBe(7);
    expect(sc.beyondBudget).toBe(true);
    expect(sc.faults.map((f) => [f.kind, f.atMs, f.durationMs])).toEqual([
      ['kill', 3000, 2000],
      ['kill', 3002, 1999],
      ['partition', 23000, 6000],
      ['handoff', 33000, 0],
    ]);
    expect(sc.faults[3]).toMatchObject({ target: { role: 'node', node: 'n3' }, admin: { store: 'sync3', partition: 0 } });
    db.close();
  });

  it('reads membership changes as steps on the same nodes, and a run with a spare replays with it (issue 14)', () => {
    const db = new Database(':memory:');
    applySchema(db);
    db.prepare(`INSERT INTO events (t_ms, kind, detail) VALUES (1000, 'phase', '{"phase":"faults"}'), (90000, 'phase', '{"phase":"heal"}'),
      (30000, 'admin', '{"index":5,"kind":"join","command":"join n4","node":"n4"}'), (70000, 'admin', '{"index":9,"kind":"leave","command":"leave n1","node":"n1"}'), (80000, 'admin', '{"index":12,"kind":"rebalance","command":"rebalance"}')`).run();
    db.prepare('INSERT INTO faults (kind, nodes, target, planned_ms, start_ms, end_ms, detail) VALUES (?, ?, ?, 0, ?, ?, ?)').run('kill', '["n4"]', 'replica:sync3/0', 40000, 42000, JSON.stringify({ index: 6, node: 'n4' }));
    const { items } = recordedItems(db);
    expect(items.map((i) => i.label)).toEqual(['join n4 @29.0s', 'kill n4 @39.0s', 'leave n1 @69.0s', 'rebalance @79.0s']);
    expect(items.map((i) => i.steps)).toEqual([
      [{ fault: 'join', target: 'node n4', offsetMs: 0 }],
      [{ fault: 'kill', target: 'node n4', duration: '2000ms', offsetMs: 0 }],
      [{ fault: 'leave', target: 'node n1', offsetMs: 0 }],
      [{ fault: 'rebalance', offsetMs: 0 }],
    ]);
    const cfg: ShrinkConfig = { seed: 7, nodes: 3, stores: DEFAULT_STORES, escalationMs: 10_000, evictionMs: 60_000, beyondBudget: false, bug: null, spares: 1 };
    // the kill of the spare alone (no membership step left) still parses: the scenario keeps the spare
    const alone = parseScenario(subsetScenario([items[1]], cfg, [], 'shrunk'), 'shrunk.yaml');
    expect([alone.spares, alone.faults.map((f) => [f.kind, f.target])]).toEqual([1, [['kill', { role: 'node', node: 'n4' }]]]);
    const all = parseScenario(subsetScenario(items, cfg, [], 'shrunk'), 'shrunk.yaml');
    expect(all.faults.map((f) => [f.kind, f.atMs])).toEqual([['join', 3000], ['kill', 13000], ['leave', 43000], ['rebalance', 53000]]);
    db.close();
  });
});
