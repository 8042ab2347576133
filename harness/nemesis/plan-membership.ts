/**
 * The membership changes of a random schedule (issue 14), on a seeded track of their own, and the
 * rule the executor uses to choose the member a leave drains.
 */
import { draw } from './episodes/episode-kit.js';
import type { Range } from './fault-durations.js';
import { createPrng, deriveSeed } from './prng.js';
import type { FaultKind, FaultTarget, PlannedFault } from './schedule-types.js';

/** Membership changes: the first comes this long into the phase, ms. */
export const MEMBERSHIP_FIRST_MS: Range = { lo: 20_000, hi: 40_000 };
/** Membership changes: the gap between two, ms (one every 60-90 s: a 10-minute run has several joins and leaves). */
export const MEMBERSHIP_GAP_MS: Range = { lo: 60_000, hi: 90_000 };
/** Membership changes: none is planned later than this before the phase ends (the move runs in the faults that follow), ms. */
export const MEMBERSHIP_TAIL_MS = 15_000;

/**
 * The membership changes of a random schedule (issue 14), on a track of their own (a PRNG derived
 * from the seed, so the other faults of a seed do not change when membership is selected): the
 * first at 20-40 s, then one every 60-90 s, none later than {@link MEMBERSHIP_TAIL_MS} before the
 * phase ends. Among the selected membership kinds they cycle join, leave, join, leave, rebalance:
 * a join brings a node outside the member set in (target `outside`: the spare, or the node that
 * left last), the leave that follows drains a member (target `member`: the executor keeps at
 * least the voters' count of members, {@link leaveCandidates}), and the next join brings it back;
 * so the member count never goes below where it started. Admin requests last 0 ms.
 *
 * A move under a fault (where field losses happened: moves that dropped the writes made during the
 * move): half of the joins and leaves, when a crash kind is selected, are followed 1-4 s after the
 * request by a short crash (1-3 s down) of the node a move is most fragile at: after a join, the
 * active owner of a partition the joining node replicates without owning it yet (`active-over`:
 * the old owner mid-move); after a leave, the leaving node itself, mid-drain (`same`).
 * @param base index of the first returned fault in the schedule (the crashes refer to their request by index)
 * @returns the planned changes (and crashes), in start order (empty when no membership kind is selected).
 */
export function planMembership(seed: number, durationMs: number, kinds: readonly FaultKind[], base = 0): PlannedFault[] {
  const cycle = (['join', 'leave', 'join', 'leave', 'rebalance'] as const).filter((k) => kinds.includes(k));
  if (cycle.length === 0) return [];
  const crash = kinds.includes('kill') ? 'kill' : kinds.includes('stop') ? 'stop' : null;
  const rng = createPrng(deriveSeed(seed, 0x6d656d62)); // "memb"
  const out: PlannedFault[] = [];
  let at = draw(rng, MEMBERSHIP_FIRST_MS);
  for (let i = 0; at <= durationMs - MEMBERSHIP_TAIL_MS; i++) {
    const kind = cycle[i % cycle.length];
    const target: FaultTarget = kind === 'join' ? { role: 'outside' } : kind === 'leave' ? { role: 'member' } : { role: 'leader' };
    const index = base + out.length;
    out.push({ kind, target, atMs: at, durationMs: 0 });
    const delayMs = rng.int(1_000, 4_000);
    const downMs = rng.int(1_000, 3_000);
    if (crash && kind !== 'rebalance' && rng.chance(0.5) && at + delayMs + downMs <= durationMs) {
      out.push({
        kind: crash,
        target: kind === 'join' ? { role: 'active-over', fault: index } : { role: 'same', fault: index },
        atMs: at,
        durationMs: downMs,
        // the request may be refused for 30 s (gateWaitMs) before it goes through; never without it
        after: { event: 'started', fault: index, delayMs, waitMs: 35_000, onMiss: 'skip' },
      });
    }
    at += draw(rng, MEMBERSHIP_GAP_MS);
  }
  return out;
}

/** One entry of the member set (the leader's metadata `members`, issue 14). */
export interface MemberEntry {
  id: string;
  state: 'joining' | 'member' | 'leaving';
}

/**
 * The members a `leave` may drain now, best first: only when no change is pending (every entry
 * `member`) and the member set keeps at least `minMembers` (>= 1; the harness passes the voters'
 * count) after it; the nodes that joined (latest first, from `joined`, the harness's record of its
 * own joins) come before the others, which keep config order.
 * @returns [] when no leave is possible now.
 */
export function leaveCandidates(members: readonly MemberEntry[], minMembers: number, joined: readonly string[]): string[] {
  const min = Math.max(1, minMembers);
  if (members.some((m) => m.state !== 'member')) return [];
  if (members.length - 1 < min) return [];
  const ids = members.map((m) => m.id);
  const late = [...joined].reverse().filter((n, i, a) => ids.includes(n) && a.indexOf(n) === i);
  return [...late, ...ids.filter((n) => !late.includes(n))];
}
