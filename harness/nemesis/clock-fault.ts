/**
 * Clock faults (Debian's libfaketime): one node's wall clock jumps, or its clocks run at another
 * rate, as its libfaketime mode allows; restored to the normal clock at the end.
 */
import { NORMAL_CLOCK, type ClockSetting } from '../runtime/faketime.js';
import type { FaultHandler, StartAttempt, StartRequest } from './fault-handler.js';
import { resolveTarget } from './live-targets.js';
import type { Holding, PlayerState } from './player-state.js';

/** clock: recorded as `clock` with the node's mode and the rate or the jump. */
export const clockFault: FaultHandler = { start: startClock, end: endClock };

/** Resolves an up node, picks the setting its mode can make, asks the budget (a rate counts), records the row. */
function startClock(ps: PlayerState, req: StartRequest): StartAttempt {
  const { index, f, rng, nodes, snap, detail, plannedMs, target, st, usable, check } = req;
  const rt = ps.o.runtime;
  const modes = rt.clockModes();
  if (modes === null) return { skip: 'clock faults are not enabled in this run', final: true };
  const node = resolveTarget(ps, f.target, index, rng, nodes.filter(usable), snap, detail, f.except);
  if (typeof node !== 'string') return { skip: node?.why ?? 'no node for a clock fault' };
  if (!nodes.includes(node)) return { skip: `target ${node} is not a node of the cluster`, final: true };
  if (!usable(node)) return { skip: `target ${node} is ${ps.held.get(node) ?? 'down'}` };
  const mode = modes[node];
  const plan = f.clock ?? { rate: 0.5, jumpMs: 30_000 };
  // a scenario asks for one kind of clock fault: a node whose libfaketime mode cannot make it is no target
  if (ps.o.schedule.scenario !== undefined && ((mode === 'wall' && plan.jumpMs === 0) || (mode === 'monotonic' && plan.rate === 1))) {
    const fit = Object.keys(modes).filter((n) => modes[n] !== mode).join(', ');
    return { skip: `${node} runs libfaketime in ${mode} mode, which cannot make a ${mode === 'wall' ? 'clock rate' : 'wall-clock jump'} (nodes in the other mode: ${fit || 'none'})` };
  }
  const setting: ClockSetting = mode === 'wall' ? { offsetMs: plan.jumpMs, rate: 1 } : { offsetMs: 0, rate: plan.rate };
  const refusal = check({ clock: { node, rate: setting.rate } });
  if (refusal) return { skip: refusal };
  Object.assign(detail, { node, mode, ...(mode === 'wall' ? { offsetMs: setting.offsetMs } : { rate: setting.rate }) });
  st.nodes = [node];
  const h: Holding = { startedMs: ps.o.clock.now(), untilMs: ps.o.clock.now() + f.durationMs, index, kind: 'clock', records: [], nodes: [node], installed: false, clock: { node, rate: setting.rate } };
  ps.holdings.set(index, h);
  const id = ps.record(h, { kind: 'clock', nodes: [node], target, plannedMs, detail: JSON.stringify(detail) });
  const apply = async (): Promise<void> => {
    await rt.setClock(node, setting);
    ps.o.recorder.faultEffective?.(id);
  };
  return { started: { holding: h, apply } };
}

/** Records the end, then restores the node's normal clock. */
function endClock(ps: PlayerState, h: Holding): Promise<void> {
  const rt = ps.o.runtime;
  const open = ps.endOpen(h);
  return rt.setClock(h.clock!.node, NORMAL_CLOCK).catch((e: unknown) => ps.goOnAll(h, open, e));
}
