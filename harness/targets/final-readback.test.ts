import { describe, expect, it } from 'vitest';
import { describeReadback, FINAL_READBACK_EVENT, replicasDisagree } from './final-readback.js';
import { finalReadsWhole } from './target-session.js';
import type { FinalReadback, FinalReader } from './target.js';

const whole: FinalReadback = {
  complete: true,
  stream: { messages: 1200, firstSeq: 1, lastSeq: 1200 },
  read: 1200,
  keys: 1198,
  duplicates: 2,
  duplicateSamples: [{ id: 'w5.1', seqs: [5, 9] }],
  anomalies: 0,
  replicas: { n1: { messages: 1200, firstSeq: 1, lastSeq: 1200 }, n2: { messages: 1200, firstSeq: 1, lastSeq: 1200 }, n3: null },
  ms: 1300,
};

describe('a whole-store final read', () => {
  it('is described in one line: counts, duplicates, each node\'s copy', () => {
    expect(describeReadback(whole)).toBe(
      "stream read back whole: 1,200 of 1,200 messages (sequences 1..1,200), 1,198 keys, 2 duplicates, 0 anomalies, in 1.3 s; each node's copy: n1 1,200 (last 1,200), n2 1,200 (last 1,200), n3 no answer",
    );
  });

  it('says when it stopped early, and names the nodes whose copy is not the leader\'s', () => {
    const r: FinalReadback = { ...whole, complete: false, reason: 'no message for 30 s after sequence 900', read: 900, replicas: { ...whole.replicas, n1: { messages: 1584, firstSeq: 1, lastSeq: 1584 } } };
    expect(replicasDisagree(r)).toEqual(['n1']);
    expect(replicasDisagree(whole)).toEqual([]);
    const line = describeReadback(r);
    expect(line).toContain('stream read back INCOMPLETE (no message for 30 s after sequence 900): 900 of 1,200 messages');
    expect(line).toContain('n1 1,584 (last 1,584)');
    expect(line.endsWith('(COPIES DISAGREE: n1 differ from the leader\'s)')).toBe(true);
  });

  it('answers every key of the ledger from one read, records the read, and closes the reader', async () => {
    const keys = [1, 2, 3, 4].map((keyId) => ({ keyId, store: 'nats', key: `k${keyId}`, partition: 0, writer: 0 }));
    const finals: Array<[number, string | null, boolean]> = [];
    const events: Array<[string, unknown]> = [];
    const ledger = {
      keysPage: (after: number, limit: number) => keys.filter((k) => k.keyId > after).slice(0, limit),
      finalRead: (keyId: number, value: string | null, _r: unknown, unreadable: boolean) => void finals.push([keyId, value, unreadable]),
      flush: () => undefined,
      event: (_t: number, kind: string, detail: unknown) => void events.push([kind, detail]),
    };
    let reads = 0;
    let closed = false;
    const reader: FinalReader = {
      readAll: async () => {
        reads++;
        return whole;
      },
      // k1 present, k2 absent, k3 an id never written, k4 unknown (never answered)
      valueOf: (_s, key) => ({ k1: 'w1.1', k2: null, k3: 'w9.1' } as Record<string, string | null>)[key],
      close: async () => {
        closed = true;
      },
    };
    const lines: string[] = [];
    const n = await finalReadsWhole(reader as FinalReader, ledger as never, { now: () => 1 }, (l) => lines.push(l));
    expect(n).toBe(4);
    expect(reads).toBe(1);
    expect(closed).toBe(true);
    expect(events).toEqual([[FINAL_READBACK_EVENT, whole]]);
    expect(lines).toEqual([describeReadback(whole)]);
    expect(finals).toEqual([
      [1, 'w1.1', false],
      [2, null, false],
      [3, 'w9.1', false],
      [4, null, true],
    ]);
  });
});
