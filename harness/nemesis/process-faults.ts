/**
 * Process faults: kill (SIGKILL), stop (SIGTERM) and pause (SIGSTOP or the engine's pause) of a
 * node, undone by a restart or a resume; power-fault.ts builds on them.
 */
import type { FaultRuntime } from '../runtime/runtime.js';
import type { FaultHandler, StartAttempt, StartRequest } from './fault-handler.js';
import { resolveTarget } from './live-targets.js';
import type { Holding, PlayerState } from './player-state.js';
import type { RecordedKind } from './schedule.js';

/** What sets one kind of process fault apart. */
export interface ProcessFaultSpec {
  /** Its nodes while it lasts: down (a crash: restarted at the end) or paused (resumed at the end). */
  hold: 'down' | 'paused';
  /** The kind of its ledger rows, one row per node. */
  recorded: RecordedKind;
  /** The runtime call that applies it to one node. */
  apply(rt: FaultRuntime, node: string): Promise<void>;
  /** Every node it hits, the resolved one first, or why it cannot start now. Default: the resolved one. */
  victims?(req: StartRequest, first: string): string[] | { skip: string };
  /** What each row's detail adds after `node`. Default: nothing. */
  rowDetail?(req: StartRequest, victims: string[]): Record<string, unknown>;
}

/** The handler of a process fault kind. */
export function processFault(spec: ProcessFaultSpec): FaultHandler {
  return { start: (ps, req) => startProcessFault(ps, req, spec), end: (ps, h) => endProcessFault(ps, h, spec) };
}

/** kill: SIGKILL of one node (a crash), restarted at the end. */
export const killFault = processFault({ hold: 'down', recorded: 'kill', apply: (rt, node) => rt.kill(node) });
/** stop: SIGTERM of one node, restarted at the end. */
export const stopFault = processFault({ hold: 'down', recorded: 'stop', apply: (rt, node) => rt.stop(node) });
/** pause: one node frozen, resumed at the end (it comes back believing it still owns what it owned). */
export const pauseFault = processFault({ hold: 'paused', recorded: 'pause', apply: (rt, node) => rt.pause(node) });

/** Crash (kill, stop, power) and pause: one node, or several for a power failure; one row per node. */
function startProcessFault(ps: PlayerState, req: StartRequest, spec: ProcessFaultSpec): StartAttempt {
  const { index, f, rng, nodes, snap, detail, plannedMs, target, st, usable, check } = req;
  const rt = ps.o.runtime;
  const first = resolveTarget(ps, f.target, index, rng, nodes.filter(usable), snap, detail, f.except);
  if (typeof first !== 'string') return { skip: first?.why ?? 'no eligible node (every node is down or held by another fault)' };
  if (!nodes.includes(first)) return { skip: `target ${first} is not a node of the cluster`, final: true };
  if (!usable(first)) return { skip: `target ${first} is already ${ps.held.get(first) ?? 'down'}` };
  const picked = spec.victims ? spec.victims(req, first) : [first];
  if (!Array.isArray(picked)) return picked;
  const victims = picked;
  const refusal = check(spec.hold === 'paused' ? { paused: victims } : { down: victims });
  if (refusal) return { skip: refusal };
  for (const v of victims) ps.held.set(v, spec.hold);
  st.nodes = victims;
  const recKind = spec.recorded;
  const h: Holding = { startedMs: ps.o.clock.now(), untilMs: ps.o.clock.now() + f.durationMs, index, kind: f.kind, records: [], nodes: victims, installed: false };
  ps.holdings.set(index, h);
  try {
    for (const v of victims) {
      const d = { ...detail, node: v, ...(spec.rowDetail ? spec.rowDetail(req, victims) : {}) };
      h.records.push({ id: ps.o.recorder.faultStart({ kind: recKind, nodes: [v], target, plannedMs, detail: JSON.stringify(d) }), kind: recKind, node: v, ended: false });
    }
  } catch (e) {
    for (const v of victims) if (!h.records.some((r) => r.node === v)) ps.held.delete(v);
    if (h.records.length === 0) ps.holdings.delete(index);
    throw e;
  }
  // a power failure: every node's SIGKILL sent at once (within a few ms of each other)
  const apply = async (): Promise<void> => {
    await Promise.all(
      h.records.map(async (r) => {
        await spec.apply(rt, r.node!);
        ps.o.recorder.faultEffective?.(r.id);
      }),
    );
  };
  return { started: { holding: h, apply } };
}

/** Records the ends, then restarts the crashed nodes (amnesic until they rejoin) or resumes the paused ones. */
async function endProcessFault(ps: PlayerState, h: Holding, spec: ProcessFaultSpec): Promise<void> {
  const rt = ps.o.runtime;
  const st = ps.status[h.index];
  const paused = spec.hold === 'paused';
  const open = ps.endOpen(h);
  try {
    // (a crash whose runtime call failed may have left its node up: nothing to restart there)
    const undo = paused ? open : open.filter((r) => !rt.isUp(r.node!));
    if (!paused) for (const r of undo) ps.amnesic.add(r.node!);
    const done = await Promise.allSettled(undo.map((r) => (paused ? rt.resume(r.node!) : rt.restart(r.node!))));
    const failed = undo.filter((_, i) => done[i].status === 'rejected');
    if (!paused) {
      for (const r of undo) if (!failed.includes(r)) ps.pendingCatchUp.set(r.id, { node: r.node!, index: h.index });
      if (failed.length === 0) st.restarted = true;
    }
    if (failed.length > 0) ps.goOn(failed.map((r) => ({ id: r.id, kind: r.kind, nodes: [r.node!], index: h.index })), (done[undo.indexOf(failed[0])] as PromiseRejectedResult).reason);
  } finally {
    for (const r of open) ps.held.delete(r.node!);
  }
}
