/**
 * Ownership changes on demand (handoff, regenerate): admin requests sent to the leader through the
 * probe and recorded as ledger events `admin`, never as faults (an ownership change must lose
 * nothing), and not undone at their end (the store fails back by itself where it should).
 */
import type { FaultHandler, StartAttempt, StartRequest } from './fault-handler.js';
import { resolveTarget } from './live-targets.js';
import { oneLine, type Holding, type PlayerState } from './player-state.js';

/** handoff: `handoff <store>/<partition> to <node>`, the node resolved from the fault's target. */
export const handoffFault: FaultHandler = { start: startOwnership, end: () => undefined };
/** regenerate: `regenerate <store>/<partition>` (the fault's nodes: the partition's active now). */
export const regenerateFault: FaultHandler = { start: startOwnership, end: () => undefined };

/**
 * An ownership change on demand (handoff, regenerate): resolves the node to hand to, sends the
 * admin request through the probe, and records it as a ledger event `admin` (not a fault: it
 * must lose nothing). A refusal (a change in flight, the node not in sync) is retried like a
 * budget refusal, up to gateWaitMs; a probe without admin requests, or a fault naming no
 * partition, is a final skip.
 */
async function startOwnership(ps: PlayerState, req: StartRequest): Promise<StartAttempt> {
  const { index, f, rng, nodes, snap, detail, st } = req;
  const probe = ps.o.probe;
  if (!probe.admin) return { skip: 'this cluster probe cannot send admin requests', final: true };
  if (!f.admin) return { skip: `a ${f.kind} fault names no partition`, final: true };
  const { store, partition } = f.admin;
  let command: string;
  if (f.kind === 'handoff') {
    const to = resolveTarget(ps, f.target, index, rng, nodes, snap, detail, f.except);
    if (typeof to !== 'string') return { skip: to?.why ?? 'no node to hand off to' };
    if (!nodes.includes(to)) return { skip: `target ${to} is not a node of the cluster`, final: true };
    command = `handoff ${store}/${partition} to ${to}`;
    st.nodes = [to];
  } else {
    command = `regenerate ${store}/${partition}`;
    const active = snap?.partitions.find((p) => p.store === store && p.partition === partition)?.active;
    st.nodes = active ? [active] : [];
  }
  let r: { ok: boolean; message: string; status: string };
  try {
    r = await probe.admin(command);
  } catch (e) {
    return { skip: `${command}: ${oneLine(e)}` };
  }
  if (!r.ok) return { skip: `${command}: ${r.status}: ${r.message}` };
  ps.event('admin', { ...detail, command, status: r.status, message: r.message });
  st.partition = { store, partition };
  const now = ps.o.clock.now();
  const h: Holding = { startedMs: now, untilMs: now, index, kind: f.kind, records: [], nodes: st.nodes, installed: false };
  ps.holdings.set(index, h);
  return { started: { holding: h, apply: async () => undefined } };
}
