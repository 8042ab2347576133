import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { sampleLedger } from '../../ledger/test-support/sample-ledger.js';
import { BLOCK_MS, BLOCKS_KEPT, SampleBlocks } from './sample-blocks.js';

const SEED = 4040;
const open: Database.Database[] = [];
afterEach(() => {
  while (open.length > 0) open.pop()!.close();
});

type Sample = { t: number; partition: number; epoch: number; rr: number; revisions: string | null };

function ledger(samples: Sample[]): Database.Database {
  const db = sampleLedger(samples);
  open.push(db);
  return db;
}

/** The query the blocks replace (loss-classifier.ts before them), the reference. */
function reference(db: Database.Database, partition: number, from: number, to: number, epoch: number): Array<[number, string | null]> {
  return db
    .prepare("SELECT replicated_revision, revisions FROM samples WHERE store = 'async3' AND partition = ? AND t_ms >= ? AND t_ms <= ? AND epoch = ?")
    .raw(true)
    .all(partition, from, to, epoch) as Array<[number, string | null]>;
}

const sampleArb = fc.record({
  // three blocks and a bit, with instants shared by several samples and on the blocks' edges
  t: fc.oneof(fc.integer({ min: 0, max: 100 }).map((x) => x * 1_000), fc.constantFrom(BLOCK_MS - 0.5, BLOCK_MS, 2 * BLOCK_MS), fc.double({ min: 0, max: 100_000, noNaN: true })),
  partition: fc.integer({ min: 0, max: 1 }),
  epoch: fc.integer({ min: 1, max: 3 }),
  rr: fc.integer({ min: 0, max: 50 }),
  revisions: fc.option(fc.dictionary(fc.constantFrom('n1', 'n2', 'n3'), fc.integer({ min: 0, max: 50 })).map((d) => JSON.stringify(d)), { nil: null }),
});

describe('SampleBlocks', () => {
  it(`gives the rows of the window query, in its order, for any window and epoch (seed ${SEED})`, () => {
    fc.assert(
      fc.property(
        fc.array(sampleArb, { maxLength: 120 }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 1 }), fc.double({ min: -1_000, max: 110_000, noNaN: true }), fc.double({ min: 0, max: 70_000, noNaN: true }), fc.integer({ min: 1, max: 3 })), { minLength: 1, maxLength: 20 }),
        (samples, windows) => {
          const db = ledger(samples);
          const blocks = new SampleBlocks(db);
          for (const [partition, from, width, epoch] of windows) {
            const got = [...blocks.window('async3', partition, from, from + width, epoch)].map((r) => [r.replicatedRevision, r.revisions()]);
            const want = reference(db, partition, from, from + width, epoch).map(([rr, text]) => [rr, text === null ? null : JSON.parse(text)]);
            expect(got).toEqual(want);
          }
          db.close();
          open.pop();
        },
      ),
      { seed: SEED, numRuns: 200 },
    );
  });

  it('answers the same after dropping its least recently used blocks', () => {
    const samples: Sample[] = [];
    for (let t = 0; t < (BLOCKS_KEPT + 10) * BLOCK_MS; t += 7_000) samples.push({ t, partition: 0, epoch: 1, rr: t / 1_000, revisions: JSON.stringify({ n2: t / 1_000 }) });
    const db = ledger(samples);
    const blocks = new SampleBlocks(db);
    const all = (): number[] => [...blocks.window('async3', 0, 0, samples[samples.length - 1].t, 1)].map((r) => r.revisions()!.n2);
    const first = all();
    expect(first).toEqual(samples.map((s) => s.t / 1_000));
    expect((blocks as unknown as { blocks: Map<string, unknown> }).blocks.size).toBe(BLOCKS_KEPT);
    expect(all()).toEqual(first);
    expect([...blocks.window('async3', 0, 10, 5, 1)]).toEqual([]);
  });

  it('throws JSON\'s error for revisions that are not JSON, only when that row is asked', () => {
    const db = ledger([
      { t: 0, partition: 0, epoch: 1, rr: 1, revisions: '{"n2":1}' },
      { t: 10, partition: 0, epoch: 1, rr: 2, revisions: 'not json' },
    ]);
    const rows = [...new SampleBlocks(db).window('async3', 0, 0, 100, 1)];
    expect(rows[0].revisions()).toEqual({ n2: 1 });
    expect(() => rows[1].revisions()).toThrow(SyntaxError);
  });
});
