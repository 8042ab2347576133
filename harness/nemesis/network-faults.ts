/**
 * Network faults: partitions (an isolated node, halves, a bridge, a one-way cut, any of them
 * flapping) installed as the union of every grudge in effect, and removed at their end.
 */
import { buildPartition, isolatedNodes, unionGrudges, type PartitionPlan } from './grudge.js';
import type { FaultHandler, StartAttempt, StartRequest } from './fault-handler.js';
import { resolveTarget } from './live-targets.js';
import { sleep, type Holding, type PlayerState } from './player-state.js';
import { describeTarget, type PlannedFault } from './schedule.js';

/**
 * partition: one ledger row with `nodes` = the nodes cut off (one-way: both ends of the cut link)
 * and `isolated` = the nodes that cannot reach a majority; a flapping one, one row per on-phase.
 */
export const partitionFault: FaultHandler = {
  start: startPartition,
  hold: (ps, h, f, stop) => (f.flap ? flap(ps, h, f, stop) : sleep(f.durationMs, stop)),
  end: (ps, h) => endRecords(ps, h),
};

/** Plans the cut (a random split, or around the resolved node and its peer), asks the budget, records the row. */
function startPartition(ps: PlayerState, req: StartRequest): StartAttempt {
  const { index, f, rng, nodes, snap, detail, plannedMs, target, st, check } = req;
  const topology = f.topology ?? 'isolate';
  let plan: PartitionPlan;
  if ((topology === 'halves' && f.target.role === 'random') || topology === 'bridge') {
    if (nodes.length < 3) return { skip: `${topology} needs at least 3 nodes`, final: true };
    plan = buildPartition(topology, nodes, { rng });
  } else {
    if (nodes.length < (topology === 'halves' ? 3 : 2)) return { skip: `a ${topology} partition needs at least ${topology === 'halves' ? 3 : 2} nodes`, final: true };
    const node = resolveTarget(ps, f.target, index, rng, nodes, snap, detail, f.except);
    if (typeof node !== 'string') return { skip: node?.why ?? 'no node to cut off' };
    if (!nodes.includes(node)) return { skip: `target ${node} is not a node of the cluster`, final: true };
    let other: string | undefined;
    if (f.peer) {
      const d: Record<string, unknown> = {};
      const p = resolveTarget(ps, f.peer.target, index, rng, nodes.filter((n) => n !== node), snap, d, f.peer.except);
      if (typeof p !== 'string') return { skip: `the other end: ${p?.why ?? 'no node'}` };
      if (p === node) return { skip: `the other end resolved to ${node} itself` };
      if (!nodes.includes(p)) return { skip: `target ${p} is not a node of the cluster`, final: true };
      other = p;
      detail.peer = p;
    }
    plan = buildPartition(topology, nodes, { rng, node, direction: f.direction, ...(other !== undefined ? { other } : {}) });
    detail.node = node;
    st.nodes = [node];
    if (f.peer?.bind !== undefined && other !== undefined) ps.bindings.set(f.peer.bind, other);
  }
  const refusal = check({ grudge: plan.grudge });
  if (refusal) return { skip: refusal };
  const isolated = isolatedNodes(nodes, plan.grudge, ps.o.voters);
  Object.assign(detail, { topology, components: plan.components, bridge: plan.bridge, grudge: plan.grudge, isolated, ...(f.flap ? { flap: { ...f.flap, cycle: 0 } } : {}) });
  if (st.nodes.length === 0) st.nodes = plan.cutOff;
  const h: Holding = { startedMs: ps.o.clock.now(), untilMs: ps.o.clock.now() + f.durationMs, index, kind: 'partition', records: [], nodes: plan.cutOff, grudge: plan.grudge, installed: false };
  ps.holdings.set(index, h);
  const id = ps.record(h, { kind: 'partition', nodes: plan.cutOff, target, plannedMs, isolated, detail: JSON.stringify(detail) });
  return { started: { holding: h, apply: () => install(ps, h, id) } };
}

/** Installs a partition's cut, recorded as row `id` just before. */
async function install(ps: PlayerState, h: Holding, id: number): Promise<void> {
  h.installed = true;
  await installGrudges(ps);
  ps.o.recorder.faultEffective?.(id);
}

/** The union of every installed grudge, as the runtime's one grudge (client cuts untouched). */
function installGrudges(ps: PlayerState): Promise<void> {
  return ps.net(() => ps.o.runtime.partition(unionGrudges([...ps.holdings.values()].filter((x) => x.installed && x.grudge).map((x) => x.grudge!))));
}

/** A flapping partition: on for onMs, off for offMs, over and over until its duration ends; one ledger row per on-phase. */
async function flap(ps: PlayerState, h: Holding, f: PlannedFault, stop: AbortSignal): Promise<void> {
  const end = ps.o.clock.now() + f.durationMs;
  const first = h.records[0];
  const detail = { index: h.index, topology: f.topology, grudge: h.grudge, isolated: isolatedNodes(ps.o.runtime.nodeIds(), h.grudge!, ps.o.voters), nodes: h.nodes };
  for (let cycle = 0; ; cycle++) {
    if (cycle > 0) {
      const id = ps.record(h, {
        kind: 'partition',
        nodes: h.nodes,
        target: describeTarget(f.target),
        plannedMs: ps.phaseStart + f.atMs,
        isolated: detail.isolated,
        detail: JSON.stringify({ ...detail, flap: { ...f.flap, cycle, of: first.id } }),
      });
      await install(ps, h, id);
    }
    await sleep(Math.min(f.flap!.onMs, end - ps.o.clock.now()), stop);
    await endRecords(ps, h);
    if (stop.aborted || ps.o.clock.now() + f.flap!.offMs >= end) return;
    await sleep(f.flap!.offMs, stop);
    if (stop.aborted || ps.o.clock.now() >= end) return;
  }
}

/** Ends a partition's rows in effect and removes its cut (it stays reserved in the budget until its end). */
async function endRecords(ps: PlayerState, h: Holding): Promise<void> {
  const open = ps.endOpen(h);
  if (open.length === 0) return;
  h.installed = false;
  // the cut still there: its rows go on (stuck-faults.ts)
  await installGrudges(ps).catch((e: unknown) => ps.goOnAll(h, open, e));
}
