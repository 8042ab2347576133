import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { sampleLedger } from '../../ledger/test-support/sample-ledger.js';
import { ReplicaTimeline } from './replica-timeline.js';

const SEED = 20261130;
const open: Database.Database[] = [];
afterEach(() => {
  while (open.length > 0) open.pop()!.close();
});

type Sample = { t: number; store: string; partition: number; replicas: string | null; node: string | null };

function ledger(samples: Sample[]): Database.Database {
  const db = sampleLedger(samples);
  open.push(db);
  return db;
}

/** The point query the timeline replaces (loss-classifier.ts before it), the reference. */
function pointQuery(db: Database.Database): (store: string, partition: number, t: number) => string | undefined {
  const st = db.prepare('SELECT replicas FROM samples WHERE store = ? AND partition = ? AND t_ms <= ? AND replicas IS NOT NULL ORDER BY t_ms DESC, rowid DESC LIMIT 1').pluck();
  return (store, partition, t) => st.get(store, partition, t) as string | undefined;
}

const LISTS = ['["n1"]', '["n2"]', '["n1","n2","n3"]', '["n2","n3","n4"]'];
const sampleArb = fc.record({
  // few distinct instants, so that several samples share one (ties: the last recorded wins)
  t: fc.integer({ min: 0, max: 40 }).map((x) => x * 25),
  store: fc.constantFrom('sync3', 'rf1'),
  partition: fc.integer({ min: 0, max: 1 }),
  replicas: fc.option(fc.constantFrom(...LISTS), { freq: 3, nil: null }),
  node: fc.option(fc.constantFrom('n1', 'n2'), { nil: null }),
});

describe('ReplicaTimeline', () => {
  it(`answers what the point query answers, for every partition and instant (seed ${SEED})`, () => {
    fc.assert(
      fc.property(fc.array(sampleArb, { maxLength: 80 }), (samples) => {
        const db = ledger(samples);
        const ref = pointQuery(db);
        const timeline = new ReplicaTimeline(db);
        for (const store of ['sync3', 'rf1', 'none']) {
          for (const partition of [0, 1, 2]) {
            for (let t = -25; t <= 1_025; t += 12.5) {
              const want = ref(store, partition, t);
              expect(timeline.textAt(store, partition, t)).toBe(want);
              expect(timeline.at(store, partition, t)).toEqual(want === undefined ? undefined : JSON.parse(want));
            }
          }
        }
        db.close();
        open.pop();
      }),
      { seed: SEED, numRuns: 150 },
    );
  });

  it('keeps one entry per change, and the last recorded of samples at one instant', () => {
    const db = ledger([
      { t: 0, store: 's', partition: 0, replicas: '["n1","n2"]', node: null },
      { t: 250, store: 's', partition: 0, replicas: null, node: null },
      { t: 500, store: 's', partition: 0, replicas: '["n1","n2"]', node: null },
      { t: 750, store: 's', partition: 0, replicas: '["n2","n3"]', node: null },
      { t: 750, store: 's', partition: 0, replicas: '["n3","n1"]', node: 'n3' },
      { t: 1000, store: 's', partition: 0, replicas: '["n3","n1"]', node: null },
    ]);
    const timeline = new ReplicaTimeline(db);
    expect(timeline.at('s', 0, -1)).toBeUndefined();
    expect(timeline.at('s', 0, 0)).toEqual(['n1', 'n2']);
    expect(timeline.at('s', 0, 749.9)).toEqual(['n1', 'n2']);
    expect(timeline.at('s', 0, 750)).toEqual(['n3', 'n1']);
    expect(timeline.at('s', 0, 5000)).toEqual(['n3', 'n1']);
    expect(timeline.at('s', 1, 5000)).toBeUndefined();
    // the two samples at 750: both start a run (the later one answers)
    expect((timeline as unknown as { runs: Map<string, { starts: number[] }> }).runs.get('s\u00000')!.starts).toEqual([0, 750, 750]);
  });

  it('throws a ledger error for replicas that are not a JSON array of node ids, only when that sample answers', () => {
    const db = ledger([
      { t: 0, store: 's', partition: 0, replicas: '["n1"]', node: null },
      { t: 100, store: 's', partition: 0, replicas: '{"n1":1}', node: null },
      { t: 200, store: 's', partition: 0, replicas: 'not json', node: null },
    ]);
    const timeline = new ReplicaTimeline(db);
    expect(timeline.at('s', 0, 50)).toEqual(['n1']);
    expect(() => timeline.at('s', 0, 150)).toThrow('ledger: samples(s, 0).replicas is not a JSON array of node ids');
    expect(() => timeline.at('s', 0, 250)).toThrow('ledger: samples(s, 0).replicas is not a JSON array of node ids');
  });
});
