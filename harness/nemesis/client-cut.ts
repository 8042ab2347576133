/**
 * Client cuts: the harness's own traffic to one node dropped while the nodes still see each other
 * (recorded as `client-cut`); the runtime is always given every node cut now.
 */
import type { FaultHandler, StartAttempt, StartRequest } from './fault-handler.js';
import { resolveTarget } from './live-targets.js';
import type { Holding, PlayerState } from './player-state.js';

/** client-cut: one node no longer reached by the harness's client, restored at the end. */
export const clientCutFault: FaultHandler = { start: startClientCut, end: endClientCut };

/** Resolves a node the client is not cut from yet, records the row; the change cuts every cut node. */
function startClientCut(ps: PlayerState, req: StartRequest): StartAttempt {
  const { index, f, rng, nodes, snap, detail, plannedMs, target, st } = req;
  const rt = ps.o.runtime;
  const cutNow = new Set([...ps.holdings.values()].map((x) => x.cut).filter((x): x is string => x !== undefined));
  const node = resolveTarget(ps, f.target, index, rng, nodes.filter((n) => !cutNow.has(n)), snap, detail, f.except);
  if (typeof node !== 'string') return { skip: node?.why ?? 'no node to cut the client from' };
  if (!nodes.includes(node)) return { skip: `target ${node} is not a node of the cluster`, final: true };
  if (cutNow.has(node)) return { skip: `the client is already cut from ${node}` };
  detail.node = node;
  st.nodes = [node];
  const h: Holding = { startedMs: ps.o.clock.now(), untilMs: ps.o.clock.now() + f.durationMs, index, kind: 'client-cut', records: [], nodes: [node], installed: false, cut: node };
  ps.holdings.set(index, h);
  const id = ps.record(h, { kind: 'client-cut', nodes: [node], target, plannedMs, detail: JSON.stringify(detail) });
  const apply = async (): Promise<void> => {
    await ps.net(() => rt.cutClient(ps.cutNodes()));
    ps.o.recorder.faultEffective?.(id);
  };
  return { started: { holding: h, apply } };
}

/** Records the end, then gives the runtime the nodes still cut (this one no longer). */
function endClientCut(ps: PlayerState, h: Holding): Promise<void> {
  const rt = ps.o.runtime;
  const open = ps.endOpen(h);
  h.cut = undefined;
  return ps.net(() => rt.cutClient(ps.cutNodes())).catch((e: unknown) => ps.goOnAll(h, open, e));
}
