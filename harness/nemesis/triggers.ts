/**
 * Triggers, the live part of the episodes and scenarios: a fault waiting for an event (an earlier
 * fault's node restarted or caught up, a handoff or failback, a promotion, a suspicion).
 */
import type { ClusterSnapshot, PartitionSnapshot } from './budget.js';
import { nodeCaughtUp } from './cluster-queries.js';
import { sleep, type PlayerState } from './player-state.js';
import type { PlannedFault } from './schedule.js';

/**
 * Waits for a fault's trigger (bounded by its waitMs). Returns how it went, for the fault's
 * detail (`trigger`: `unreachable` when the fault it waits on never started, `missed` when the
 * event did not come in time, `aborted`).
 */
export async function waitTrigger(ps: PlayerState, f: PlannedFault, stop: AbortSignal): Promise<Record<string, unknown>> {
  const t = f.after!;
  const deadline = ps.o.clock.now() + t.waitMs;
  const ref = t.fault === undefined ? undefined : ps.status[t.fault];
  const nodeOf = (): string | undefined => t.node ?? (t.name !== undefined ? ps.bindings.get(t.name) : undefined);
  // node-caught-up: the node must be seen down, frozen or behind after the wait began
  let sawBehind = false;
  // promoted: the partition's active when the wait began (from the first snapshot seen)
  let baseline: string | null | undefined;
  // handoff-started, failback: the snapshot looked at last, and how the handoff was seen
  let prevSnap: ClusterSnapshot | null = null;
  let seen: 'in-progress' | 'committed' | undefined;
  const fired = (): boolean => {
    const s = ps.snap;
    switch (t.event) {
      case 'catching-up':
        // from its restart on (a fast catch-up must not make the trigger wait for nothing)
        return ref !== undefined && ref.restarted;
      case 'caught-up':
        return ref !== undefined && ref.caughtUp;
      case 'ended':
        return ref !== undefined && ref.ended;
      case 'started':
        return ref !== undefined && ref.started;
      case 'failback':
      case 'handoff-started': {
        if (s === null) return false;
        const to = t.event === 'handoff-started' ? nodeOf() : undefined;
        if (t.event === 'handoff-started' && (t.node !== undefined || t.name !== undefined) && to === undefined) return false;
        const wanted = (p: PartitionSnapshot, n: string): boolean =>
          (t.store === undefined || (p.store === t.store && p.partition === t.partition)) && (to === undefined || n === to) && (ref === undefined || ref.nodes.includes(n));
        if (s.partitions.some((p) => p.handoffTo !== null && wanted(p, p.handoffTo))) {
          seen = 'in-progress';
          return true;
        }
        // A handoff to a caught-up node commits in tens of ms (the store's handoff-ready round:
        // runs/20261130T184018Z-1, 35 ms), mostly between two polls: a partition whose active
        // moved since the previous snapshot to another node while the old active is still in
        // sync was handed off (a failover moves away from an active that left the in-sync set).
        const prev = prevSnap;
        prevSnap = s;
        if (prev === null || prev === s) return false;
        const moved = s.partitions.some((p) => {
          const q = prev.partitions.find((x) => x.store === p.store && x.partition === p.partition);
          return q !== undefined && q.active !== null && p.active !== null && p.active !== q.active && p.inSync.includes(q.active) && wanted(p, p.active);
        });
        if (moved) seen = 'committed';
        return moved;
      }
      case 'node-caught-up': {
        const n = nodeOf();
        if (n === undefined || s === null) return false;
        const caught = ps.o.runtime.isUp(n) && !ps.held.has(n) && nodeCaughtUp(s, n, t.store !== undefined ? { store: t.store, partition: t.partition! } : undefined);
        if (!caught) sawBehind = true;
        return sawBehind && caught;
      }
      case 'promoted': {
        if (s === null) return false;
        const p = s.partitions.find((x) => x.store === t.store && x.partition === t.partition);
        if (p === undefined) return false;
        if (baseline === undefined) {
          baseline = p.active;
          return false;
        }
        return p.active !== null && p.active !== baseline;
      }
      case 'suspected': {
        const n = nodeOf();
        return n !== undefined && s !== null && (s.suspected ?? []).includes(n);
      }
    }
    return false;
  };
  const t0 = ps.o.clock.now();
  for (;;) {
    if (ref !== undefined && ref.skipped && !ref.started) return { event: t.event, fault: t.fault, trigger: 'unreachable' };
    if (fired()) {
      const waited = Math.round(ps.o.clock.now() - t0);
      await sleep(t.delayMs, stop);
      return { event: t.event, fault: t.fault, waitedMs: waited, ...(seen !== undefined ? { handoff: seen } : {}) };
    }
    if (stop.aborted) return { event: t.event, fault: t.fault, trigger: 'aborted' };
    if (ps.o.clock.now() >= deadline) return { event: t.event, fault: t.fault, trigger: 'missed', waitedMs: t.waitMs };
    await ps.nextChange(Math.min(ps.o.pollMs, Math.max(1, deadline - ps.o.clock.now())), stop);
  }
}

/** One phrase for a fault's trigger event (skip reasons): `step cut-a ended`, `promoted sync3/0`, ... */
export function describeEvent(f: PlannedFault): string {
  const t = f.after;
  if (!t) return 'no event';
  const who = t.node ?? t.name;
  const part = t.store !== undefined ? ` ${t.store}/${t.partition}` : '';
  switch (t.event) {
    case 'node-caught-up':
      return `caught-up ${who}`;
    case 'suspected':
      return `suspected ${who}`;
    case 'promoted':
      return `promoted${part}`;
    case 'handoff-started':
      return `handoff-started${part}${who !== undefined ? ` to ${who}` : ''}`;
    default:
      return `${t.event} of fault ${t.fault ?? '?'}`;
  }
}
