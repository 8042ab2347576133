import { KvStatus } from '../nodes/kv-status.js';
import { setPolicyCommand, type AdminAnswer } from '../nodes/node-admin.js';
import type { BatchGetPolicySeen } from './workload.js';

/**
 * Seed 004 in certification (issue 14): a certify run sets a non-empty multi-key retry policy on
 * one store right after the cluster is up, and changes it halfway through the fault phase, both
 * through the admin request `set-policy` (recorded as `set-policy` ledger events). The workload
 * client picks each one up on a metadata refresh (periodic, 60 s, or on an error) and its batch
 * gets then capture the new table's delay (`batch-get-policy` events, workload.ts).
 *
 * The batch get stands in for the seed's compute operation: the store has no compute operation,
 * and the seed gives both the same range table, the same precedence shape (local > server >
 * default), the same whole-request distinct-key count and the same 500-key cap, so what differs
 * is only which local setter wins; the batch get exercises every server-policy path a compute
 * would.
 */

/** The store whose policy a certify run sets and changes. */
export const POLICY_STORE = 'sync3';

/**
 * The two tables: set at start, then halfway. Both valid by seed 004 and different for the
 * workload's 8-key batch gets (40 ms, then 25 ms), so a batch get shows which one it ran under.
 */
export const POLICY_TABLES = ['1-4:15,5-:40', '1-4:5,5-:25'] as const;

/** The ledger event of one set-policy request of the harness. */
export const SET_POLICY_EVENT = 'set-policy';

/** What one set-policy did (also the `set-policy` event detail). */
export interface SetPolicyRecord {
  store: string;
  policy: string;
  ok: boolean;
  /** The leader's one line (or why no leader answered). */
  message: string;
  /** Run clock when the accepted request was answered (or the last attempt ended), ms. */
  atMs: number;
  /** Attempts made. */
  attempts: number;
}

/** Options of {@link setStorePolicy}. */
export interface SetStorePolicyOptions {
  /** Sends one admin request (ZarisClient.admin); may throw a transport error. */
  admin: (command: string) => Promise<{ status: KvStatus; answer: AdminAnswer }>;
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  ledger: { event(tMs: number, kind: string, detail?: unknown): void };
  /** Give up after this long, ms (default 15,000). */
  deadlineMs?: number;
  /** Between attempts, ms (default 250). */
  retryEveryMs?: number;
}

/**
 * Sets `store`'s multi-key retry policy to `policy` through the leader, asking again while the
 * answer is Unavailable or Moved or none comes (a fault may be under way), until the deadline;
 * an InvalidInput answer is final. Records one `set-policy` event with the outcome.
 * @returns the record (never throws for a cluster that refuses or does not answer).
 */
export async function setStorePolicy(store: string, policy: string, o: SetStorePolicyOptions): Promise<SetPolicyRecord> {
  const deadline = o.now() + (o.deadlineMs ?? 15_000);
  let attempts = 0;
  let message = 'not asked';
  let ok = false;
  for (;;) {
    attempts++;
    try {
      const r = await o.admin(setPolicyCommand(store, policy));
      message = r.answer.message;
      if (r.status === KvStatus.Ok) ok = true;
      if (r.status === KvStatus.Ok || r.status === KvStatus.InvalidInput) break;
    } catch (e) {
      message = `no answer: ${(e as Error).message}`;
    }
    if (o.now() + (o.retryEveryMs ?? 250) > deadline) break;
    await o.sleep(o.retryEveryMs ?? 250);
  }
  const rec: SetPolicyRecord = { store, policy, ok, message, atMs: o.now(), attempts };
  o.ledger.event(rec.atMs, SET_POLICY_EVENT, rec);
  return rec;
}

/**
 * One line per policy set: when it was set, and when the store's batch gets first ran under it
 * (the first `batch-get-policy` change to that table at or after the set), or that they never did
 * before the run ended.
 */
export function describePolicyFollow(sets: readonly SetPolicyRecord[], seen: readonly BatchGetPolicySeen[]): string[] {
  return sets.map((s) => {
    if (!s.ok) return `seed 004: set-policy ${s.store} "${s.policy}" was not accepted: ${s.message}`;
    const f = seen.find((x) => x.store === s.store && x.policy === s.policy && x.atMs >= s.atMs - 1_000);
    const at = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
    return f
      ? `seed 004: ${s.store} policy "${s.policy}" set at ${at(s.atMs)}; batch gets followed it from ${at(f.atMs)} (${at(f.atMs - s.atMs)} later; ${f.delayMs} ms for ${f.keys} keys)`
      : `seed 004: ${s.store} policy "${s.policy}" set at ${at(s.atMs)}; no batch get ran under it before the end (the client refreshes every 60 s, or on an error)`;
  });
}
