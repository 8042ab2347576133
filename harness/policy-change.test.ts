import { describe, expect, it } from 'vitest';
import { KvStatus } from '../nodes/kv-status.js';
import type { AdminAnswer } from '../nodes/node-admin.js';
import { describePolicyFollow, POLICY_TABLES, setStorePolicy, SET_POLICY_EVENT } from './policy-change.js';
import { parseRetryRangeTable } from '../nodes/multikey/retry-range-table.js';

const answer = (message: string): AdminAnswer => ({ ok: false, node: 'n1', leader: 'n1', message });

/** A virtual clock whose sleep advances it. */
function clock(): { now: () => number; sleep: (ms: number) => Promise<void> } {
  let t = 1_000;
  return { now: () => t, sleep: async (ms) => void (t += ms) };
}

describe('seed 004 in certification: set-policy by the harness (policy-change.ts)', () => {
  it('uses two valid tables that give the workload\'s 8-key batch gets different delays', () => {
    const [a, b] = POLICY_TABLES.map((t) => parseRetryRangeTable(t));
    expect(a.kind).toBe('table');
    expect(b.kind).toBe('table');
    if (a.kind !== 'table' || b.kind !== 'table') return;
    expect([a.table.delayMsFor(8), b.table.delayMsFor(8)]).toEqual([40, 25]);
    expect(POLICY_TABLES.map((t) => (parseRetryRangeTable(t) as { table: { toString(): string } }).table.toString())).toEqual([...POLICY_TABLES]);
  });

  it('asks again while the leader says Unavailable or no answer comes, and records one event', async () => {
    const c = clock();
    const events: Array<[number, string, unknown]> = [];
    const answers: Array<() => { status: KvStatus; answer: AdminAnswer }> = [
      () => ({ status: KvStatus.Unavailable, answer: answer('another change of sync3/1 is in flight') }),
      () => {
        throw new Error('timed out');
      },
      () => ({ status: KvStatus.Ok, answer: { ...answer('policy version 2 of sync3 proposed for 4 partitions: 1-:5'), ok: true } }),
    ];
    const sent: string[] = [];
    const r = await setStorePolicy('sync3', '1-:5', { admin: async (cmd) => (sent.push(cmd), answers.shift()!()), ...c, ledger: { event: (t, k, d) => events.push([t, k, d]) } });
    expect(sent).toEqual(['set-policy sync3 "1-:5"', 'set-policy sync3 "1-:5"', 'set-policy sync3 "1-:5"']);
    expect(r).toEqual({ store: 'sync3', policy: '1-:5', ok: true, message: 'policy version 2 of sync3 proposed for 4 partitions: 1-:5', atMs: 1_500, attempts: 3 });
    expect(events).toEqual([[1_500, SET_POLICY_EVENT, r]]);
  });

  it('stops at an InvalidInput answer, and at the deadline', async () => {
    const c = clock();
    const bad = await setStorePolicy('sync3', '1-3:5', { admin: async () => ({ status: KvStatus.InvalidInput, answer: answer('invalid retry range table "1-3:5": ...') }), ...c, ledger: { event: () => undefined } });
    expect([bad.ok, bad.attempts]).toEqual([false, 1]);
    const c2 = clock();
    const gone = await setStorePolicy('sync3', '1-:5', {
      admin: async () => {
        throw new Error('no node answered');
      },
      ...c2,
      ledger: { event: () => undefined },
      deadlineMs: 2_000,
    });
    expect(gone).toMatchObject({ ok: false, message: 'no answer: no node answered', attempts: 9, atMs: 3_000 });
  });

  it('says when the batch gets followed each policy, or that they did not', () => {
    const sets = [
      { store: 'sync3', policy: POLICY_TABLES[0], ok: true, message: '', atMs: 2_000, attempts: 1 },
      { store: 'sync3', policy: POLICY_TABLES[1], ok: true, message: '', atMs: 30_000, attempts: 1 },
      { store: 'sync3', policy: '1-:9', ok: false, message: 'no answer: x', atMs: 40_000, attempts: 60 },
    ];
    const seen = [
      { store: 'sync3', policy: null, delayMs: 8, keys: 8, atMs: 1_000 },
      { store: 'sync3', policy: POLICY_TABLES[0], delayMs: 40, keys: 8, atMs: 5_500 },
    ];
    expect(describePolicyFollow(sets, seen)).toEqual([
      'seed 004: sync3 policy "1-4:15,5-:40" set at 2.0 s; batch gets followed it from 5.5 s (3.5 s later; 40 ms for 8 keys)',
      'seed 004: sync3 policy "1-4:5,5-:25" set at 30.0 s; no batch get ran under it before the end (the client refreshes every 60 s, or on an error)',
      'seed 004: set-policy sync3 "1-:9" was not accepted: no answer: x',
    ]);
  });
});
