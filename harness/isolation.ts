/**
 * Which nodes a partition cuts off from a majority (history-format.md v2, `faults[].isolated`:
 * "the nodes that cannot reach a majority of the nodes while it lasts"). The verifier's lease rule
 * (async-ack 6) uses it: an owner cut off from a majority longer than the store's declared lease
 * acknowledges nothing it may lose.
 */
import type { Grudge } from './runtime/runtime.js';
import { canReach, majoritySize } from './nemesis/grudge.js';

/**
 * The nodes of `nodes` that cannot reach a majority of `nodes` under `grudge`. A node reaches a
 * peer when traffic passes both ways between them (a lease renewal, like every cluster exchange,
 * is a request and its answer), counting itself; nodes relay nothing for each other, so only
 * direct links count. A node is isolated when it reaches fewer than floor(n/2)+1 nodes.
 * Grudge entries naming nodes outside `nodes` are ignored.
 * @param grudge node -> the nodes whose traffic it drops (harness/runtime/runtime.ts).
 * @param nodes every node of the cluster (not only those the grudge names).
 * @returns the isolated nodes, in the order of `nodes`.
 * @throws RangeError when `nodes` is empty or repeats an id.
 */
export function isolatedNodes(grudge: Grudge, nodes: readonly string[]): string[] {
  if (nodes.length === 0) throw new RangeError('isolatedNodes: no nodes');
  if (new Set(nodes).size !== nodes.length) throw new RangeError(`isolatedNodes: duplicate node ids in [${nodes.join(', ')}]`);
  const need = majoritySize(nodes.length);
  return nodes.filter((n) => nodes.filter((m) => canReach(grudge, n, m) && canReach(grudge, m, n)).length < need);
}
