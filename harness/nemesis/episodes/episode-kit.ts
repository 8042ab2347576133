/**
 * What every episode is built from: the planning context (the seeded PRNG, the drawn durations, the
 * partitions aimed at), the step an episode returns, and the helpers that draw targets and
 * durations. An episode is a pure function of the context: same context, same steps.
 */
import { type Range, faultDurations } from '../fault-durations.js';
import type { Prng } from '../prng.js';
import type { FaultKind, FaultTarget, FaultTrigger, PlannedFault } from '../schedule-types.js';

/** A step of an episode: a fault without its absolute time, refs by step index within the episode. */
export interface Step extends Omit<PlannedFault, 'atMs'> {
  /** Planned start relative to the episode's start, ms (triggered steps: an estimate). */
  offsetMs: number;
}

export interface PlanContext {
  rng: Prng;
  D: ReturnType<typeof faultDurations>;
  /** RF>1 partitions the owner targets draw from (the preset's stores when it has some). */
  parts: Array<{ store: string; partition: number }>;
  /** RF>1 partitions of async stores (lag-crash aims there); `parts` when no store is known async. */
  asyncParts: Array<{ store: string; partition: number }>;
  /** RF>1 partitions of sync stores (resync-crash aims there: a loss there is a violation); `parts` when none is known sync. */
  syncParts: Array<{ store: string; partition: number }>;
  /** Episodes placed so far (unique names for bindings). */
  placed: number;
  nodeCount: number;
  kinds: ReadonlySet<FaultKind>;
  beyondBudget: boolean;
  /** The phase can hold an eviction-long fault. */
  evictOk: boolean;
}

export const has = (c: PlanContext, ...k: FaultKind[]): boolean => k.some((x) => c.kinds.has(x));

/** kill or stop (kill 75 %), among the selected; null when neither is. */
export function crashKind(c: PlanContext): 'kill' | 'stop' | null {
  const k = c.kinds.has('kill');
  const s = c.kinds.has('stop');
  if (k && s) return c.rng.chance(0.75) ? 'kill' : 'stop';
  return k ? 'kill' : s ? 'stop' : null;
}

export function draw(rng: Prng, r: Range): number {
  return rng.int(r.lo, Math.max(r.lo, r.hi));
}

export function ownerTarget(c: PlanContext, role: 'active' | 'replica' = 'active'): FaultTarget {
  if (c.parts.length === 0) return role === 'active' ? { role: 'leader' } : { role: 'random' };
  const p = c.rng.pick(c.parts);
  return { role, store: p.store, partition: p.partition };
}

/**
 * An opening fault's owner target moved to a store of one ack mode (the same partition number as
 * `drawn` where that store has it; `drawn` when `mode` is null, `drawn` is no owner target, or no
 * store of that mode is known). Without a preset's store focus the opening's first kill hits a
 * sync store's owner and its second kill and its long isolation an async store's, so that every
 * run crashes an owner of each ack mode early and cuts an async owner off past its lease. Draws
 * nothing from the PRNG.
 */
export function openingTarget(c: PlanContext, drawn: FaultTarget, mode: 'sync' | 'async' | null): FaultTarget {
  const from = mode === 'sync' ? c.syncParts : mode === 'async' ? c.asyncParts : null;
  if (!from || from.length === 0 || drawn.role !== 'active') return drawn;
  const p = from.find((x) => x.partition === drawn.partition) ?? from[0];
  return { role: 'active', store: p.store, partition: p.partition };
}

/** A target by weights over roles: active owner, leader, in-sync replica, random node. */
export function roleTarget(c: PlanContext, w: { active: number; leader: number; replica: number; random: number }): FaultTarget {
  const role = c.rng.weighted(['active', 'leader', 'replica', 'random'] as const, [w.active, w.leader, w.replica, w.random]);
  if (role === 'active' || role === 'replica') return ownerTarget(c, role);
  return { role };
}

export function pauseDuration(c: PlanContext, long?: boolean): number {
  if (long) return draw(c.rng, c.D.pauseLong);
  const r = c.rng.next();
  if (r < 0.4) return draw(c.rng, c.D.pauseShort);
  if (r < 0.9 || !c.evictOk) return draw(c.rng, c.D.pauseLong);
  return draw(c.rng, c.D.pauseEvict);
}

export function isolateDuration(c: PlanContext, profile?: 'long' | 'short'): number {
  if (profile === 'long') return draw(c.rng, c.D.isolateLong);
  if (profile === 'short') return draw(c.rng, c.D.isolateShort);
  const r = c.rng.next();
  if (r < 0.35) return draw(c.rng, c.D.isolateShort);
  if (r < 0.9 || !c.evictOk) return draw(c.rng, c.D.isolateLong);
  return draw(c.rng, c.D.isolateEvict);
}

export function crashDuration(c: PlanContext, short?: boolean): number {
  if (short) return draw(c.rng, { lo: 1_000, hi: 4_000 });
  const r = c.rng.next();
  if (r < 0.7) return draw(c.rng, c.D.crash);
  if (r < 0.93 || !c.evictOk) return draw(c.rng, c.D.crashLong);
  return draw(c.rng, c.D.crashEvict);
}

/** A "second fault" on the node an earlier step's event points at: kill, pause or isolation, among the selected. */
export function followUp(c: PlanContext, target: FaultTarget, after: FaultTrigger, offsetMs: number): Step | null {
  const options: Array<'crash' | 'pause' | 'partition'> = [];
  const weights: number[] = [];
  if (has(c, 'kill', 'stop')) (options.push('crash'), weights.push(6));
  if (has(c, 'pause')) (options.push('pause'), weights.push(2));
  if (has(c, 'partition') && c.nodeCount >= 2) (options.push('partition'), weights.push(2));
  if (options.length === 0) return null;
  const pick = c.rng.weighted(options, weights);
  if (pick === 'crash') return { kind: crashKind(c)!, target, durationMs: crashDuration(c, true), after, offsetMs };
  if (pick === 'pause') return { kind: 'pause', target, durationMs: c.rng.chance(0.5) ? draw(c.rng, c.D.pauseShort) : draw(c.rng, c.D.pauseLong), after, offsetMs };
  return { kind: 'partition', topology: 'isolate', target, durationMs: c.rng.chance(0.4) ? draw(c.rng, c.D.isolateShort) : draw(c.rng, c.D.isolateLong), after, offsetMs };
}

/** An episode: its steps (refs are step indexes within the episode), or null when the selected kinds or the cluster size cannot make it. Step 0 starts at the episode's start. */
export type Episode = (c: PlanContext) => Step[] | null;
