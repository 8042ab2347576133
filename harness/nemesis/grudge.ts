/**
 * Grudge construction for the nemesis's partition topologies (DESIGN.md §3 "Nemesis"). Pure
 * functions over node ids; the random split comes from a caller-supplied seeded {@link Prng}.
 *
 * A grudge (harness/runtime/runtime.ts) maps a node to the nodes whose traffic it drops, one
 * direction per entry. Every topology here but `one-way` is symmetric: a cut link is dropped both
 * ways (the runtime turns `{ a: ['b'], b: ['a'] }` into two DROP rules). `one-way` drops one
 * direction of one link (issue 13).
 */
import type { Grudge } from '../runtime/runtime.js';
import type { Prng } from './prng.js';

/**
 * The partition topologies the schedule can ask for (DESIGN.md §3 "Nemesis", issue 13).
 * `isolate`: one node (whatever its role: the target says leader, active owner, ...) cut from all
 * others; `halves`: majority | minority; `bridge`: two halves and one node reaching both;
 * `one-way`: one node drops one other node's traffic. (`leader` and `active` are the names of
 * zaris-schedule/1 for an isolation of the leader or of an active owner; they are still built.)
 */
export type Topology = 'isolate' | 'halves' | 'bridge' | 'one-way' | 'leader' | 'active';

/** Every topology, in a fixed order (for validation and for weighted draws). */
export const TOPOLOGIES: readonly Topology[] = ['isolate', 'halves', 'bridge', 'one-way', 'leader', 'active'];

/**
 * A built partition: the grudge to install plus what the ledger records about it.
 * - `components`: the groups of nodes that still reach each other fully (for `bridge`, the two
 *   halves; the bridge node is in neither and is named in `bridge`).
 * - `cutOff`: the nodes recorded as the fault's `nodes` (ledger/schema.ts: "for partition: the
 *   nodes cut off from the rest"): the isolated node; for halves the minority; for a bridge both
 *   halves (each lost the other), i.e. every node but the bridge.
 */
export interface PartitionPlan {
  topology: Topology;
  grudge: Grudge;
  components: string[][];
  cutOff: string[];
  /** halves only: the side holding a strict majority of the nodes. */
  majority?: string[];
  /** halves only: the other side. */
  minority?: string[];
  /** bridge only: the node that reaches both halves. */
  bridge?: string;
}

function checkNodes(nodes: readonly string[], min: number, what: string): void {
  if (new Set(nodes).size !== nodes.length) throw new RangeError(`${what}: duplicate node ids in [${nodes.join(', ')}]`);
  if (nodes.length < min) throw new RangeError(`${what}: needs at least ${min} nodes, got ${nodes.length}`);
}

/** Sorts each entry's list so that equal grudges compare (and serialize) equal. */
function normalize(g: Record<string, string[]>): Grudge {
  const out: Record<string, string[]> = {};
  for (const k of Object.keys(g).sort()) if (g[k].length > 0) out[k] = [...new Set(g[k])].sort();
  return out;
}

/**
 * Jepsen's complete grudge: given disjoint components (groups of nodes), every node drops the
 * traffic of every node outside its own component. Nodes in no component are untouched.
 * Symmetric by construction.
 * @throws RangeError when a node appears in two components.
 */
export function complete(components: readonly (readonly string[])[]): Grudge {
  const seen = new Set<string>();
  for (const c of components) {
    for (const n of c) {
      if (seen.has(n)) throw new RangeError(`complete: node ${n} is in two components`);
      seen.add(n);
    }
  }
  const g: Record<string, string[]> = {};
  for (const c of components) {
    const mine = new Set(c);
    const others = [...seen].filter((n) => !mine.has(n));
    for (const n of c) g[n] = others;
  }
  return normalize(g);
}

/**
 * One node isolated: it drops everyone's traffic and everyone drops its traffic.
 * @throws RangeError when `node` is not one of `nodes`, ids repeat, or there are fewer than 2 nodes.
 */
export function isolate(nodes: readonly string[], node: string): PartitionPlan {
  checkNodes(nodes, 2, 'isolate');
  if (!nodes.includes(node)) throw new RangeError(`isolate: ${node} is not one of [${nodes.join(', ')}]`);
  const rest = nodes.filter((n) => n !== node);
  return { topology: 'isolate', grudge: complete([[node], rest]), components: [[node], rest], cutOff: [node] };
}

/**
 * The leader isolated (the leader's id is resolved from the live cluster by the caller).
 * Same cut as {@link isolate}; recorded with topology `leader`.
 */
export function isolateLeader(nodes: readonly string[], leader: string): PartitionPlan {
  return { ...isolate(nodes, leader), topology: 'leader' };
}

/**
 * A partition's active owner isolated (resolved from the live runtime map by the caller).
 * Same cut as {@link isolate}; recorded with topology `active`.
 */
export function isolateActive(nodes: readonly string[], active: string): PartitionPlan {
  return { ...isolate(nodes, active), topology: 'active' };
}

/** Size of a strict majority of n nodes: floor(n/2) + 1. */
export function majoritySize(n: number): number {
  return Math.floor(n / 2) + 1;
}

/**
 * Majority/minority halves: the nodes shuffled by `rng`, the first floor(n/2)+1 form the
 * majority, the rest the minority; no link crosses the cut. With `inMinority` (scenarios: "the
 * leader in the minority"), that node is on the minority side.
 * @throws RangeError for fewer than 3 nodes (with 2 there is no majority side to keep), or an
 * `inMinority` that is not one of `nodes`.
 */
export function halves(nodes: readonly string[], rng: Prng, inMinority?: string): PartitionPlan {
  checkNodes(nodes, 3, 'halves');
  if (inMinority !== undefined && !nodes.includes(inMinority)) throw new RangeError(`halves: ${inMinority} is not one of [${nodes.join(', ')}]`);
  let shuffled = rng.shuffle(nodes);
  if (inMinority !== undefined) shuffled = [...shuffled.filter((n) => n !== inMinority), inMinority];
  const k = majoritySize(nodes.length);
  const majority = shuffled.slice(0, k).sort();
  const minority = shuffled.slice(k).sort();
  return {
    topology: 'halves',
    grudge: complete([majority, minority]),
    components: [majority, minority],
    cutOff: minority,
    majority,
    minority,
  };
}

/**
 * A bridge (Jepsen's `bridge`): one node, chosen by `rng`, keeps both directions to every node;
 * the others split into two halves (sizes differ by at most one) that cannot reach each other.
 * @throws RangeError for fewer than 3 nodes.
 */
export function bridge(nodes: readonly string[], rng: Prng): PartitionPlan {
  checkNodes(nodes, 3, 'bridge');
  const shuffled = rng.shuffle(nodes);
  const b = shuffled[0];
  const rest = shuffled.slice(1);
  const half = Math.ceil(rest.length / 2);
  const a = rest.slice(0, half).sort();
  const c = rest.slice(half).sort();
  return { topology: 'bridge', grudge: complete([a, c]), components: [a, c], cutOff: [...a, ...c].sort(), bridge: b };
}

/**
 * One direction of one link cut: `to` drops the traffic `from` sends (`{ to: [from] }`). Nobody
 * is cut off from the rest; `cutOff` names both ends of the link (the nodes the fault touches).
 * @throws RangeError when either is not one of `nodes`, they are equal, or ids repeat.
 */
export function oneWay(nodes: readonly string[], from: string, to: string): PartitionPlan {
  checkNodes(nodes, 2, 'one-way');
  for (const n of [from, to]) if (!nodes.includes(n)) throw new RangeError(`one-way: ${n} is not one of [${nodes.join(', ')}]`);
  if (from === to) throw new RangeError(`one-way: a node cannot drop its own traffic (${from})`);
  return { topology: 'one-way', grudge: normalize({ [to]: [from] }), components: [[...nodes].sort()], cutOff: [from, to].sort() };
}

/**
 * The nodes that cannot reach a majority of the voters (themselves included when they vote) over
 * links open in both directions under `grudge` (history-format.md v2 `faults[].isolated`). For an
 * isolated node or a minority half: those nodes; for a bridge or a one-way cut in 3 nodes: none.
 * `voters` (default: every node) are the nodes that elect and commit (issue 14: a spare never
 * votes, so reaching it makes no majority).
 */
export function isolatedNodes(nodes: readonly string[], grudge: Grudge, voters: readonly string[] = nodes): string[] {
  const need = majoritySize(voters.length);
  return nodes.filter((n) => voters.filter((m) => m === n || (canReach(grudge, n, m) && canReach(grudge, m, n))).length < need).sort();
}

/**
 * Builds the partition for a topology. `node` is required for `isolate`, `leader`, `active` and
 * `one-way` (the node to cut off; for one-way, the node whose side drops: see `direction`);
 * `halves` and `bridge` draw their split from `rng`, one-way its other end (unless `other`).
 * `direction` (one-way only): `in` = `node` drops the other's traffic (default), `out` = the other
 * drops `node`'s.
 * @throws RangeError when `node` is missing where needed, or as the builders do.
 */
export function buildPartition(
  topology: Topology,
  nodes: readonly string[],
  opts: { rng: Prng; node?: string; other?: string; direction?: 'in' | 'out' },
): PartitionPlan {
  const need = (): string => {
    if (opts.node === undefined) throw new RangeError(`${topology}: needs the node to isolate`);
    return opts.node;
  };
  switch (topology) {
    case 'one-way': {
      const node = need();
      const other = opts.other ?? opts.rng.pick(nodes.filter((n) => n !== node));
      return opts.direction === 'out' ? oneWay(nodes, node, other) : oneWay(nodes, other, node);
    }
    case 'isolate':
      return isolate(nodes, need());
    case 'leader':
      return isolateLeader(nodes, need());
    case 'active':
      return isolateActive(nodes, need());
    case 'halves':
      return halves(nodes, opts.rng, opts.node);
    case 'bridge':
      return bridge(nodes, opts.rng);
  }
}

/**
 * Can `from` send to `to` directly under `grudge`? True unless `to` drops `from`'s traffic.
 * A node always reaches itself.
 */
export function canReach(grudge: Grudge, from: string, to: string): boolean {
  if (from === to) return true;
  return !(grudge[to] ?? []).includes(from);
}

/** Does every cut direction have its reverse cut too? */
export function isSymmetric(grudge: Grudge): boolean {
  for (const [to, froms] of Object.entries(grudge)) {
    for (const from of froms) if (canReach(grudge, to, from)) return false;
  }
  return true;
}

/**
 * The union of grudges: a link is cut when any of them cuts it. The nemesis installs the union
 * of its active partitions when they overlap (beyond budget); the runtime replaces, not adds.
 */
export function unionGrudges(grudges: readonly Grudge[]): Grudge {
  const g: Record<string, string[]> = {};
  for (const one of grudges) for (const [k, v] of Object.entries(one)) g[k] = [...(g[k] ?? []), ...v];
  return normalize(g);
}
