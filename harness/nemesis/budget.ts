/**
 * The fault budget (DESIGN.md §3 "Nemesis", §5 beyond-budget; issue 12): what the store's
 * contract allows at once, so that a correct store loses nothing the verifier counts as a
 * violation, while faults still overlap wherever the contract allows it.
 *
 * The rule, checked by the executor before every fault starts, on the state the fault would
 * leave (every fault still in effect, plus the new one):
 *
 *   B1 (majority) some set C of nodes that are up, not paused and remember the cluster, pairwise
 *      connected in both directions, holds a strict majority of the nodes. A node restarted by a
 *      crash fault remembers nothing (memory only) until it rejoined: it counts again once the
 *      map lists it in sync in some partition under its new incarnation (a node reports to the
 *      leader only after it relearnt the committed runtime map, seed 002 / nodes' rejoin rule).
 *      A majority that lost its memory at once is what no memory-only store survives intact;
 *   B2 (a good copy) for that same C, every partition with replication factor above 1 has an
 *      in-sync member in C: a node the partition's committed entry lists in sync under the
 *      incarnation it runs now (a restarted node is in sync only once it caught up). Every
 *      in-sync member holds every acknowledged write (sync: the ack waited for it; async: the
 *      async-ack window, which the verifier classifies);
 *   B3 (clocks) at most one node's clock is wrong at a time, and no node whose clock runs slow
 *      (rate < 1) is on either side of a cut link: its lease would outlast the declared lease in
 *      real time, which no store can promise (a fast clock only shortens leases and timeouts);
 *   B4 (eviction) no node holding an RF1 partition stays out — paused, or cut off from a majority —
 *      continuously for longer than the eviction timeout less 10 s, counting the faults' planned
 *      ends: past it the store re-homes the partition empty (seed 002), a loss the verifier
 *      allows (rf1) only after a crash. A crash of any length is within budget.
 *
 * What the rule allows that the old one (wait for every partition Healthy and in sync before each
 * fault) did not: a second fault while a restarted replica still catches up (another member is
 * in sync), a fault on the owner while a failback runs, a kill of the new owner right after an
 * isolated one heals, clock faults and client cuts beside anything. What it forbids: losing the
 * majority, and leaving a partition's only up-to-date copies down, frozen or cut off — the
 * losses of RF1 stores (rf1) and of async acknowledgements (async-ack) stay allowed by contract,
 * and a run started with BEYOND_BUDGET=1 checks nothing (its losses land in beyond-budget).
 *
 * A client cut never counts: it hides a node from the harness only. Pure functions, no I/O.
 */
import type { Grudge } from '../runtime/runtime.js';
import { canReach, majoritySize } from './grudge.js';
import type { MemberEntry } from './schedule.js';

/** One partition as the budget and the executor see it (from the merged runtime map). */
export interface PartitionSnapshot {
  store: string;
  partition: number;
  replicationFactor: number;
  /** The partition map's replicas. */
  replicas: string[];
  active: string | null;
  /** Health of the committed entry (Healthy, Degraded, Recovering, Unavailable, ...). */
  health: string;
  /** In-sync members listed under the incarnation each runs now (the active included). */
  inSync: string[];
  /** The node a failback/handoff is handing the partition to, or null. */
  handoffTo: string | null;
}

/** The live cluster as the nemesis sees it (ClusterProbe.snapshot). */
export interface ClusterSnapshot {
  leader: string | null;
  /** Nodes that answered the metadata request. */
  answered: string[];
  partitions: PartitionSnapshot[];
  /** The nodes the leader suspects now (metadata `suspected`; scenarios' `suspected` event); absent when unknown. */
  suspected?: string[];
  /**
   * The member set the leader reports (metadata `members`, issue 14: nodes not listed are outside
   * it); absent when unknown (no leader answered, a store without membership changes).
   */
  members?: { version: number; members: MemberEntry[] };
}

/** What the faults in effect (and the one about to start) do to the nodes. */
export interface FaultState {
  /** Every node id. */
  nodes: readonly string[];
  /**
   * The nodes that vote (issue 14: every node but the spares); a majority is counted over them,
   * while a clique may hold non-voters too (a joined spare holds copies). Default: every node.
   */
  voters?: readonly string[];
  /** Crashed and not restarted. */
  down: ReadonlySet<string>;
  paused: ReadonlySet<string>;
  /** Restarted after a crash and not yet seen rejoined (listed in sync somewhere): no memory of the cluster. */
  amnesic: ReadonlySet<string>;
  /** The union of every partition in effect (a flapping one counts as cut throughout). */
  grudge: Grudge;
  /** Nodes whose clock fault is in effect, and its rate (1 for a wall-clock jump). */
  clocks: ReadonlyMap<string, number>;
}

/** Nodes touched by a grudge: droppers and dropped. */
export function grudgeNodes(g: Grudge): Set<string> {
  const out = new Set<string>();
  for (const [to, froms] of Object.entries(g)) {
    if (froms.length === 0) continue;
    out.add(to);
    for (const f of froms) out.add(f);
  }
  return out;
}

/** Nodes that are up, not paused, and remember the cluster (not amnesic). */
export function liveNodes(s: FaultState): string[] {
  return s.nodes.filter((n) => !s.down.has(n) && !s.paused.has(n) && !s.amnesic.has(n));
}

/**
 * Every set of live nodes ({@link liveNodes}) holding at least a majority of the voters, pairwise
 * connected both ways under the grudge, largest first. Exhaustive over subsets: at most 2^n, n <= 12.
 * @throws RangeError for more than 12 nodes.
 */
export function majorityCliques(s: FaultState): string[][] {
  const live = liveNodes(s);
  if (s.nodes.length > 12) throw new RangeError(`budget: at most 12 nodes, got ${s.nodes.length}`);
  const voters = s.voters ?? s.nodes;
  const need = majoritySize(voters.length);
  const out: string[][] = [];
  for (let mask = 1; mask < 1 << live.length; mask++) {
    const set = live.filter((_, i) => (mask >> i) & 1);
    if (set.filter((n) => voters.includes(n)).length < need) continue;
    let ok = true;
    for (let i = 0; ok && i < set.length; i++) {
      for (let j = i + 1; j < set.length; j++) {
        if (!canReach(s.grudge, set[i], set[j]) || !canReach(s.grudge, set[j], set[i])) {
          ok = false;
          break;
        }
      }
    }
    if (ok) out.push(set);
  }
  return out.sort((a, b) => b.length - a.length || (a.join() < b.join() ? -1 : 1));
}

/**
 * Why the state breaks the budget (one line), or null when it is within: B1, B2, B3 of the
 * module comment. `snap` is the live map the in-sync sets come from; null (the probe did not
 * answer) is refused: the state is unknown.
 */
export function budgetRefusal(s: FaultState, snap: ClusterSnapshot | null): string | null {
  if (snap === null) return 'the cluster state is unknown (no metadata answer)';
  // B3
  if (s.clocks.size > 1) return `more than one clock fault at once (${[...s.clocks.keys()].sort().join(', ')})`;
  const cut = grudgeNodes(s.grudge);
  for (const [n, rate] of s.clocks) {
    if (rate < 1 && cut.has(n)) return `${n}'s clock runs slow (x${rate}) while a link of it is cut: its lease would outlast the declared lease`;
  }
  // B1
  const cliques = majorityCliques(s);
  if (cliques.length === 0) {
    const amnesic = [...s.amnesic].filter((n) => !s.down.has(n)).sort();
    return `no majority of ${majoritySize((s.voters ?? s.nodes).length)}${s.voters && s.voters.length < s.nodes.length ? ' voters' : ''} up, unpaused, connected nodes that remember the cluster (such: ${liveNodes(s).join(', ') || 'none'}${amnesic.length > 0 ? `; restarted, not yet rejoined: ${amnesic.join(', ')}` : ''})`;
  }
  // B2: one connected majority must hold a good copy of every replicated partition
  const replicated = snap.partitions.filter((p) => p.replicationFactor > 1);
  let worst: { clique: string[]; missing: PartitionSnapshot[] } | null = null;
  for (const c of cliques) {
    const missing = replicated.filter((p) => !p.inSync.some((n) => c.includes(n)));
    if (missing.length === 0) return null;
    if (worst === null || missing.length < worst.missing.length) worst = { clique: c, missing };
  }
  const m = worst!.missing;
  const shown = m
    .slice(0, 3)
    .map((p) => `${p.store}/${p.partition} (in sync: ${p.inSync.join(',') || 'none'})`)
    .join(', ');
  return `no in-sync member in the connected majority ${worst!.clique.join(',')} for ${shown}${m.length > 3 ? `, and ${m.length - 3} more` : ''}`;
}

/**
 * B4: the nodes holding an RF1 partition (per `snap`) that the state keeps out continuously for
 * longer than `limitMs`. `out` maps every node out after the change to the interval it stays out:
 * `since` (run clock, ms) and the planned `until`. Null when none does, else a one-line reason.
 */
export function evictionRefusal(snap: ClusterSnapshot | null, out: ReadonlyMap<string, { since: number; until: number }>, limitMs: number): string | null {
  if (snap === null) return 'the cluster state is unknown (no metadata answer)';
  const rf1 = new Set(snap.partitions.filter((p) => p.replicationFactor === 1).flatMap((p) => p.replicas));
  for (const [n, { since, until }] of [...out].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (!rf1.has(n) || until - since <= limitMs) continue;
    return `${n} (an RF1 holder) would stay paused or cut off for ${Math.round((until - since) / 1000)} s, past the eviction timeout less 10 s (${Math.round(limitMs / 1000)} s)`;
  }
  return null;
}

/**
 * The state with a fault's effect added: nodes crashed, paused, a grudge joined to the union, a
 * clock set.
 */
export function withEffect(
  s: FaultState,
  e: { down?: readonly string[]; paused?: readonly string[]; grudge?: Grudge; clock?: { node: string; rate: number } },
): FaultState {
  const grudge: Record<string, string[]> = {};
  for (const g of [s.grudge, e.grudge ?? {}]) for (const [k, v] of Object.entries(g)) grudge[k] = [...new Set([...(grudge[k] ?? []), ...v])];
  const clocks = new Map(s.clocks);
  if (e.clock) clocks.set(e.clock.node, e.clock.rate);
  return {
    nodes: s.nodes,
    ...(s.voters ? { voters: s.voters } : {}),
    down: new Set([...s.down, ...(e.down ?? [])]),
    paused: new Set([...s.paused, ...(e.paused ?? [])]),
    amnesic: s.amnesic,
    grudge,
    clocks,
  };
}
