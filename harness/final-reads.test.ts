import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { KeyRow } from '../ledger/ledger-writer.js';
import { finalReadAll, type FinalReadRound } from './final-reads.js';

interface Recorded {
  keyId: number;
  value: string | null;
  resolved: { keyId: number; seq: number } | null;
  unreadable: boolean;
}

/** A ledger of `keys` (key_id 1..n) that records final reads, as the keys table pages them. */
function fakeLedger(keys: KeyRow[]) {
  const reads: Recorded[] = [];
  let flushed = 0;
  return {
    reads,
    flushed: () => flushed,
    keysPage: (after: number, limit: number) => keys.filter((k) => k.keyId > after).slice(0, limit),
    finalRead: (keyId: number, value: string | null, resolved: { keyId: number; seq: number } | null, unreadable: boolean) => {
      reads.push({ keyId, value, resolved, unreadable });
    },
    flush: () => {
      flushed++;
    },
  };
}

const clock = { now: () => 42 };
const key = (keyId: number, store: string): KeyRow => ({ keyId, store, key: `k${keyId}`, partition: 0, writer: 0 });

describe('finalReadAll', () => {
  it('records values, absences, retries a key no round answered, and names it unreadable after three rounds', async () => {
    const l = fakeLedger([key(1, 'a'), key(2, 'a'), key(3, 'b'), key(4, 'a')]);
    const asked: string[][] = [];
    const read: FinalReadRound = async (_store, keys) => {
      asked.push([...keys]);
      return keys.map((k) => (k === 'k1' ? 'w1.7' : k === 'k2' ? null : k === 'k3' && asked.length > 2 ? 'w9.1' : undefined));
    };
    const n = await finalReadAll(l, clock, read, 3, 0);
    expect(n).toBe(4);
    expect(l.flushed()).toBe(1);
    const byKey = new Map(l.reads.map((r) => [r.keyId, r]));
    // a value naming this key's write resolves; a value naming another key's write does not
    expect(byKey.get(1)).toEqual({ keyId: 1, value: 'w1.7', resolved: { keyId: 1, seq: 7 }, unreadable: false });
    expect(byKey.get(2)).toEqual({ keyId: 2, value: null, resolved: null, unreadable: false });
    expect(byKey.get(3)).toEqual({ keyId: 3, value: 'w9.1', resolved: null, unreadable: false });
    expect(byKey.get(4)).toEqual({ keyId: 4, value: null, resolved: null, unreadable: true });
    // page 1 (keys 1-3): store a once, store b twice (unanswered once); page 2: key 4 three times
    expect(asked).toEqual([['k1', 'k2'], ['k3'], ['k3'], ['k4'], ['k4'], ['k4']]);
  });

  it('records every key exactly once, whatever the page size and which rounds answer', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.constantFrom('a', 'b', 'c'), fc.integer({ min: 0, max: 3 })), { maxLength: 40 }), fc.integer({ min: 1, max: 7 }), async (spec, pageSize) => {
        const keys = spec.map(([store], i) => key(i + 1, store));
        const answersAfter = new Map(keys.map((k, i) => [k.key, spec[i][1]]));
        const tries = new Map<string, number>();
        const l = fakeLedger(keys);
        const n = await finalReadAll(l, clock, async (_s, ks) => ks.map((k) => {
          const t = (tries.get(k) ?? 0) + 1;
          tries.set(k, t);
          return t > answersAfter.get(k)! ? `w${k.slice(1)}.1` : undefined;
        }), pageSize, 0);
        expect(n).toBe(keys.length);
        expect(l.reads.map((r) => r.keyId).sort((x, y) => x - y)).toEqual(keys.map((k) => k.keyId));
        for (const r of l.reads) {
          const k = `k${r.keyId}`;
          // answered in round answersAfter + 1 when that is within three rounds, else unreadable
          expect(r.unreadable).toBe(answersAfter.get(k)! >= 3);
          expect(tries.get(k)).toBe(Math.min(answersAfter.get(k)! + 1, 3));
        }
      }),
      { seed: 20261130, numRuns: 200 },
    );
  });
});
