/**
 * The fault budget as the player applies it (budget.ts decides): the faults in effect as the budget
 * sees them, which nodes are out and for how long, and the check one fault's start makes.
 */
import type { Grudge } from '../runtime/runtime.js';
import { budgetRefusal, evictionRefusal, withEffect, type ClusterSnapshot, type FaultState } from './budget.js';
import { isolatedNodes, unionGrudges } from './grudge.js';
import type { PlayerState } from './player-state.js';
import type { PlannedFault } from './schedule.js';

/** What a fault would add to the faults in effect (budget.ts withEffect). */
export type Effect = Parameters<typeof withEffect>[1];

/** The faults in effect, as the budget sees them. */
export function faultState(ps: PlayerState): FaultState {
  const down = new Set<string>();
  const paused = new Set<string>();
  for (const n of ps.o.runtime.nodeIds()) if (!ps.o.runtime.isUp(n)) down.add(n);
  for (const [n, how] of ps.held) (how === 'down' ? down : paused).add(n);
  const clocks = new Map<string, number>();
  const grudges: Grudge[] = [];
  for (const h of ps.holdings.values()) {
    if (h.grudge) grudges.push(h.grudge);
    if (h.clock) clocks.set(h.clock.node, h.clock.rate);
  }
  return { nodes: ps.o.runtime.nodeIds(), voters: ps.o.voters, down, paused, amnesic: new Set(ps.amnesic), grudge: unionGrudges(grudges), clocks };
}

/** The nodes out (paused, or cut off from a majority) in a state. */
export function outNodes(s: FaultState): Set<string> {
  return new Set([...s.paused, ...isolatedNodes([...s.nodes], s.grudge, s.voters)].filter((n) => !s.down.has(n)));
}

/**
 * Every node out after a change, with how long it stays out continuously: since it went out
 * (now when it is not out yet), until the latest planned end of the faults keeping it out (the
 * new fault's included, `durationMs` from now).
 */
export function outIntervals(ps: PlayerState, after: FaultState, effect: Effect, durationMs: number): Map<string, { since: number; until: number }> {
  const now = ps.o.clock.now();
  const out = new Map<string, { since: number; until: number }>();
  const touched = (h: { nodes: string[]; grudge?: Grudge }, n: string): boolean => h.nodes.includes(n) || (h.grudge !== undefined && Object.entries(h.grudge).some(([to, from]) => to === n || from.includes(n)));
  for (const n of outNodes(after)) {
    let until = now;
    for (const h of ps.holdings.values()) if (touched(h, n)) until = Math.max(until, h.untilMs);
    if ((effect.paused ?? []).includes(n) || (effect.grudge && touched({ nodes: [], grudge: effect.grudge }, n))) until = Math.max(until, now + durationMs);
    out.set(n, { since: ps.outSince.get(n) ?? now, until });
  }
  return out;
}

/** Updates when each node went out (after every start and end). */
export function noteOut(ps: PlayerState): void {
  const now = ps.o.clock.now();
  const out = outNodes(faultState(ps));
  for (const n of out) if (!ps.outSince.has(n)) ps.outSince.set(n, now);
  for (const n of [...ps.outSince.keys()]) if (!out.has(n)) ps.outSince.delete(n);
}

/**
 * The check a start of fault `f` makes of its effect: null when the budget allows it (always
 * beyond budget), else the refusal (one line). Notes in `detail.inSync` the partitions not fully
 * in sync in `snap` (why the budget allowed it, for the report).
 */
export function budgetCheck(ps: PlayerState, f: PlannedFault, snap: ClusterSnapshot | null, detail: Record<string, unknown>): (effect: Effect) => string | null {
  return (effect) => {
    if (snap) {
      // the partitions not fully in sync when it started (why the budget allowed it, for the report)
      const behind = Object.fromEntries(snap.partitions.filter((p) => p.replicationFactor > 1 && p.replicas.some((r) => !p.inSync.includes(r))).map((p) => [`${p.store}/${p.partition}`, p.inSync]));
      if (Object.keys(behind).length > 0) detail.inSync = behind;
    }
    if (ps.o.beyondBudget) return null;
    const after = withEffect(faultState(ps), effect);
    return budgetRefusal(after, snap) ?? evictionRefusal(snap, outIntervals(ps, after, effect, f.durationMs), Math.max(0, ps.o.schedule.evictionTimeoutMs - 10_000));
  };
}
