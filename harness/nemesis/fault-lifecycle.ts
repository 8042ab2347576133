/**
 * One fault's life as the player drives it (nemesis.ts play), the same for every family: one
 * attempt to start it (a fresh snapshot, the {@link StartRequest}, its family's start), its hold,
 * and its end (the family's end, then the fault no longer in effect). The family is the one
 * fault-registry.ts maps the kind to.
 */
import { budgetCheck, noteOut } from './budget-gate.js';
import { fetchSnapshot } from './cluster-readback.js';
import type { StartAttempt, StartRequest } from './fault-handler.js';
import { handlerOf } from './fault-registry.js';
import { sleep, type Holding, type PlayerState } from './player-state.js';
import type { Prng } from './prng.js';
import { describeTarget, type PlannedFault } from './schedule.js';

/**
 * One attempt to start fault `index`: a fresh snapshot (bounded by probeTimeoutMs), the request
 * (detail `index`, `step`, `after` = `triggered`; planned at fault-phase start + atMs, run clock
 * ms), then the family's start: the target, the budget, then its rows recorded and the change
 * returned as `started.apply`. `final` skips are not retried (no such node, impossible topology);
 * nothing is returned (neither started nor skipped) when `stop` aborted.
 * @throws what the recorder throws; Error when the kind has no handler (fault-registry.ts).
 */
export async function startFault(ps: PlayerState, index: number, f: PlannedFault, rng: Prng, triggered: Record<string, unknown> | undefined, stop: AbortSignal): Promise<StartAttempt> {
  if (stop.aborted) return {};
  const rt = ps.o.runtime;
  const nodes = rt.nodeIds();
  const snap = await fetchSnapshot(ps);
  if (stop.aborted) return {};
  const detail: Record<string, unknown> = { index, ...(f.name !== undefined ? { step: f.name } : {}) };
  if (triggered) detail.after = triggered;
  const plannedMs = ps.phaseStart + f.atMs;
  const target = describeTarget(f.target);
  const st = ps.status[index];
  const usable = (n: string): boolean => rt.isUp(n) && !ps.held.has(n);
  const check = budgetCheck(ps, f, snap, detail);
  const req: StartRequest = { index, f, rng, nodes, snap, detail, plannedMs, target, st, usable, check };
  return handlerOf(f.kind).start(ps, req);
}

/**
 * Holds a started fault until its end: its family's hold (a flapping partition's on- and
 * off-phases), else `f.durationMs`; less when `stop` aborts. Never rejects but for a family's
 * hold that throws (a recorder or runtime error).
 */
export function holdFault(ps: PlayerState, h: Holding, f: PlannedFault, stop: AbortSignal): Promise<void> {
  const hold = handlerOf(f.kind).hold;
  return hold ? hold(ps, h, f, stop) : sleep(f.durationMs, stop);
}

/**
 * Ends a fault once (a fault no longer held is left alone): its family records the ends of its
 * open rows, then undoes it (restart, resume, heal, clock restore); whatever happens, the fault is
 * then no longer in effect (out of the holdings, ended in its status, the out nodes noted, the
 * waiters woken).
 * @throws the undo's error, the fault left in effect with its rows reopened (stuck-faults.ts).
 */
export async function endFault(ps: PlayerState, h: Holding): Promise<void> {
  if (!ps.holdings.has(h.index)) return;
  const st = ps.status[h.index];
  try {
    // (an end with nothing to undo, an admin request's, returns at once: nothing is awaited)
    const undo = handlerOf(h.kind).end(ps, h);
    if (undo) await undo;
  } finally {
    ps.holdings.delete(h.index);
    noteOut(ps);
    st.ended = true;
    ps.poke();
  }
}
