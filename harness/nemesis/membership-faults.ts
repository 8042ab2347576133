/**
 * Membership changes (issue 14: join, leave, rebalance): admin requests sent to the leader through
 * the probe and recorded as ledger events `admin` with the member set they were asked against,
 * never as faults (a move must lose nothing), and not undone at their end (a leave is followed by
 * a planned join).
 */
import type { FaultHandler, StartAttempt, StartRequest } from './fault-handler.js';
import { resolveTarget } from './live-targets.js';
import { oneLine, type Holding, type PlayerState } from './player-state.js';

/** join: `join <node>`, a running node outside the member set (target `outside` or a named node). */
export const joinFault: FaultHandler = { start: startMembership, end: () => undefined };
/** leave: `leave <node>`, a member whose leaving keeps the voters' count (target `member` or a named node). */
export const leaveFault: FaultHandler = { start: startMembership, end: () => undefined };
/** rebalance: `rebalance`, no node. */
export const rebalanceFault: FaultHandler = { start: startMembership, end: () => undefined };

/**
 * A membership change: `join <node>` (target `outside` or a named node), `leave <node>` (target
 * `member` or a named node), `rebalance`; sent through the probe's admin request and recorded as
 * a ledger event `admin` with the member set it was asked against (not a fault: a move must lose
 * nothing). A refusal (a change pending, the last member holding copies) is retried like a budget
 * refusal, up to gateWaitMs, then the change is skipped with the store's reason; a probe without
 * admin requests is a final skip. A join's node is noted in `ps.joined`.
 */
async function startMembership(ps: PlayerState, req: StartRequest): Promise<StartAttempt> {
  const { index, f, rng, nodes, snap, detail, st } = req;
  if (!ps.o.probe.admin) return { skip: 'this cluster probe cannot send admin requests', final: true };
  let command: string;
  let node: string | null = null;
  if (f.kind === 'rebalance') {
    command = 'rebalance';
  } else {
    // a node outside the member set can join while it runs: down or frozen it cannot take copies
    const usable = (n: string): boolean => ps.o.runtime.isUp(n) && !ps.held.has(n);
    const to = resolveTarget(ps, f.target, index, rng, nodes.filter(usable), snap, detail, f.except);
    if (typeof to !== 'string') return { skip: to?.why ?? `no node to ${f.kind}` };
    if (!nodes.includes(to)) return { skip: `target ${to} is not a node of the cluster`, final: true };
    node = to;
    command = `${f.kind} ${to}`;
  }
  const before = snap?.members;
  let r: { ok: boolean; message: string; status: string };
  try {
    r = await ps.o.probe.admin!(command);
  } catch (e) {
    return { skip: `${command}: ${oneLine(e)}` };
  }
  if (!r.ok) return { skip: `${command}: ${r.status}: ${r.message}` };
  ps.event('admin', { ...detail, kind: f.kind, command, ...(node !== null ? { node } : {}), ...(before ? { membersBefore: before } : {}), status: r.status, message: r.message });
  st.nodes = node !== null ? [node] : [];
  if (f.kind === 'join' && node !== null) ps.joined.push(node);
  const now = ps.o.clock.now();
  const h: Holding = { startedMs: now, untilMs: now, index, kind: f.kind, records: [], nodes: st.nodes, installed: false };
  ps.holdings.set(index, h);
  return { started: { holding: h, apply: async () => undefined } };
}
