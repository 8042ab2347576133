/**
 * The leader's rebalance plan (issue 14, DESIGN.md §2 "Topology"): from the partition map of the
 * moment and the members that may hold copies, the next partition map and the moves that lead to
 * it. A pure function: the leader commits its result as a new map version (a majority), and the
 * migrations then carry out each move (snapshot, log suffix, fenced handoff).
 *
 * What a plan guarantees (property-tested in rebalance.test.ts):
 * - every partition of a store with replication factor rf has min(rf, members) distinct replicas,
 *   all members (a leaving or removed node holds none);
 * - per store, the replica counts of the members differ by at most one, and so do their preferred
 *   owner counts (replicas[0]);
 * - a copy stays where it is unless its node left or holds more than its share: a plan moves no
 *   more copies than the departed nodes held plus each member's excess over an even share, and a
 *   plan of a balanced map over the same members moves nothing;
 * - deterministic: members in the given order break every tie.
 */

/** One partition's placement: its replicas, the preferred active owner first. */
export interface PartitionPlacement {
  store: string;
  /** Partition index within the store, 0-based. */
  partition: number;
  /** Node ids; replicas[0] is the preferred owner (the failback target). */
  replicas: string[];
}

/** One copy that moves: `to` receives the partition's segments; `from` (null: a new copy) drops them. */
export interface ReplicaMove {
  store: string;
  partition: number;
  from: string | null;
  to: string;
}

/** A change of preferred owner within the same replica set (a handoff, no segment moves). */
export interface OwnerChange {
  store: string;
  partition: number;
  from: string;
  to: string;
}

/** A plan: the next placements (same order as the input), the copy moves and the owner changes. */
export interface RebalancePlan {
  placements: PartitionPlacement[];
  moves: ReplicaMove[];
  /** Where replicas[0] changes to a node that already held or now holds a copy. */
  ownerChanges: OwnerChange[];
}

/**
 * Plans the rebalance of every store's partitions over `members`.
 * @param placements the current map, any order; partitions of a store need not be contiguous.
 * @param members the nodes that may hold copies (joined and not leaving), in a stable order
 *   (it breaks ties); at least one.
 * @param replicationFactor each store's replication factor (>= 1); a store missing here keeps the
 *   number of replicas it has now.
 * @throws RangeError for no members, a duplicate member, or a replication factor that is not a
 *   positive integer.
 */
export function planRebalance(placements: readonly PartitionPlacement[], members: readonly string[], replicationFactor: Readonly<Record<string, number>> = {}): RebalancePlan {
  if (members.length === 0) throw new RangeError('rebalance: no members to place copies on');
  if (new Set(members).size !== members.length) throw new RangeError(`rebalance: duplicate member in [${members.join(', ')}]`);
  for (const [store, rf] of Object.entries(replicationFactor)) {
    if (!Number.isInteger(rf) || rf < 1) throw new RangeError(`rebalance: store ${store}: replication factor must be a positive integer, got ${rf}`);
  }
  const next = placements.map((p) => ({ store: p.store, partition: p.partition, replicas: [...p.replicas] }));
  const byStore = new Map<string, PartitionPlacement[]>();
  for (const p of next) {
    const list = byStore.get(p.store) ?? [];
    list.push(p);
    byStore.set(p.store, list);
  }
  for (const [store, parts] of byStore) {
    const widest = Math.max(...parts.map((p) => new Set(p.replicas).size));
    const rf = Math.min(replicationFactor[store] ?? widest, members.length);
    placeCopies(parts, members, rf);
    placeOwners(parts, members);
  }
  const moves: ReplicaMove[] = [];
  const ownerChanges: OwnerChange[] = [];
  for (let i = 0; i < placements.length; i++) {
    const before = placements[i];
    const after = next[i];
    const gone = before.replicas.filter((n, k) => before.replicas.indexOf(n) === k && !after.replicas.includes(n));
    const added = after.replicas.filter((n) => !before.replicas.includes(n));
    for (let k = 0; k < added.length; k++) moves.push({ store: after.store, partition: after.partition, from: gone[k] ?? null, to: added[k] });
    const oldOwner = before.replicas[0];
    if (oldOwner !== undefined && after.replicas[0] !== oldOwner) ownerChanges.push({ store: after.store, partition: after.partition, from: oldOwner, to: after.replicas[0] });
  }
  return { placements: next, moves, ownerChanges };
}

/** Even shares of `total` slots over the members: the ceil shares go to those holding most now. */
function shares(total: number, members: readonly string[], held: ReadonlyMap<string, number>): Map<string, number> {
  const floor = Math.floor(total / members.length);
  let extra = total - floor * members.length;
  const order = members.map((m, i) => ({ m, i, h: held.get(m) ?? 0 })).sort((a, b) => b.h - a.h || a.i - b.i);
  const cap = new Map<string, number>();
  for (const { m } of order) cap.set(m, floor + (extra-- > 0 ? 1 : 0));
  return cap;
}

function countOf<T>(items: readonly T[], key: (t: T) => readonly string[]): Map<string, number> {
  const c = new Map<string, number>();
  for (const it of items) for (const n of key(it)) c.set(n, (c.get(n) ?? 0) + 1);
  return c;
}

/**
 * Every partition gets `rf` distinct member copies, each member its share; copies stay put where
 * they can. Missing copies are filled first (from the members furthest under their share); then
 * each member over its share gives copies straight to one under it (a partition holding the one
 * and not the other), or, where every such partition already holds the taker, through a third
 * member h (p: m -> h, q: h -> taker), which leaves h's count as it was.
 * @throws Error when no move exists (a planner bug).
 */
function placeCopies(parts: PartitionPlacement[], members: readonly string[], rf: number): void {
  const member = new Set(members);
  // copies on departed nodes (and duplicates, and copies beyond rf) go; the owner is kept first
  for (const p of parts) p.replicas = p.replicas.filter((n, k) => member.has(n) && p.replicas.indexOf(n) === k).slice(0, rf);
  const count = countOf(parts, (p) => p.replicas);
  const cap = shares(parts.length * rf, members, count);
  const held = (m: string): number => count.get(m) ?? 0;
  const under = (): string[] => members.filter((m) => held(m) < cap.get(m)!).sort((a, b) => held(a) - cap.get(a)! - (held(b) - cap.get(b)!) || members.indexOf(a) - members.indexOf(b));
  const fail = (what: string): never => {
    throw new Error(`rebalance: ${what} (rf ${rf}, ${members.length} members): a bug of the planner`);
  };
  /** In p, `to` takes `from`'s place (a copy moves). */
  const replace = (p: PartitionPlacement, from: string, to: string): void => {
    p.replicas[p.replicas.indexOf(from)] = to;
    count.set(from, held(from) - 1);
    count.set(to, held(to) + 1);
  };
  for (const p of parts) {
    while (p.replicas.length < rf) {
      const m = under().find((n) => !p.replicas.includes(n));
      if (m !== undefined) {
        p.replicas.push(m);
        count.set(m, held(m) + 1);
        continue;
      }
      // every member under its share already holds p: one of them takes another partition q's copy
      // of a member h that p lacks, and h's copy comes to p
      const taker = under()[0] ?? fail(`no member under its share for ${p.store}/${p.partition}`);
      const q = parts.find((r) => r !== p && !r.replicas.includes(taker) && r.replicas.some((h, k) => k > 0 && !p.replicas.includes(h))) ?? fail(`no placement for ${p.store}/${p.partition}`);
      const h = q.replicas.find((n, k) => k > 0 && !p.replicas.includes(n))!;
      replace(q, h, taker);
      p.replicas.push(h);
      count.set(h, held(h) + 1);
    }
  }
  for (const m of members) {
    while (held(m) > cap.get(m)!) {
      const takers = under();
      // a non-owner copy before an owner's, later partitions first
      const mine = parts.filter((p) => p.replicas.includes(m)).sort((a, b) => Number(a.replicas[0] === m) - Number(b.replicas[0] === m) || parts.indexOf(b) - parts.indexOf(a));
      let moved = false;
      for (const p of mine) {
        const u = takers.find((n) => !p.replicas.includes(n));
        if (u === undefined) continue;
        replace(p, m, u);
        moved = true;
        break;
      }
      if (moved) continue;
      const u = takers[0] ?? fail(`${m} holds more than its share and nobody takes it`);
      outer: for (const p of mine) {
        for (const q of parts) {
          if (q === p || q.replicas.includes(u)) continue;
          const h = q.replicas.find((n) => n !== m && !p.replicas.includes(n));
          if (h === undefined) continue;
          replace(p, m, h);
          replace(q, h, u);
          moved = true;
          break outer;
        }
      }
      if (!moved) fail(`no move takes a copy from ${m} to ${u}`);
    }
  }
}

/**
 * Preferred owners spread evenly: each partition's owner is one of its replicas and every member
 * owns floor(P/M) or ceil(P/M) of the store's P partitions. Ownership moves along augmenting paths
 * (a member over the ceil hands a partition to one of its replicas, who may hand one of its own on,
 * until a member under the ceil takes one; then the same from the other end for a member under the
 * floor), so an owner stays where it is unless its member owns more than its share.
 * @throws Error when no path exists (the copies admit no balanced ownership; a planner bug).
 */
function placeOwners(parts: PartitionPlacement[], members: readonly string[]): void {
  const owners = countOf(parts, (p) => p.replicas.slice(0, 1));
  const load = (m: string): number => owners.get(m) ?? 0;
  const floor = Math.floor(parts.length / members.length);
  const ceil = Math.ceil(parts.length / members.length);
  /** p's owner becomes n (a replica of p). */
  const handTo = (p: PartitionPlacement, n: string): void => {
    const o = p.replicas[0];
    p.replicas.splice(p.replicas.indexOf(n), 1);
    p.replicas.unshift(n);
    owners.set(o, load(o) - 1);
    owners.set(n, load(n) + 1);
  };
  /**
   * Breadth-first from `start` over "member -> partition -> member" steps (`next` lists a member's
   * steps), to the first member `done` accepts; returns the steps of the path, or null.
   */
  const path = (start: string, next: (m: string) => Array<{ part: PartitionPlacement; to: string }>, done: (m: string) => boolean): Array<{ part: PartitionPlacement; to: string }> | null => {
    const via = new Map<string, { from: string; part: PartitionPlacement }>([[start, { from: start, part: parts[0] }]]);
    const queue = [start];
    while (queue.length > 0) {
      const m = queue.shift()!;
      for (const step of next(m)) {
        if (via.has(step.to)) continue;
        via.set(step.to, { from: m, part: step.part });
        if (done(step.to)) {
          const steps: Array<{ part: PartitionPlacement; to: string }> = [];
          for (let n = step.to; n !== start; n = via.get(n)!.from) steps.push({ part: via.get(n)!.part, to: n });
          return steps;
        }
        queue.push(step.to);
      }
    }
    return null;
  };
  // hand-off steps: from m to a replica of a partition m owns
  const handOn = (m: string): Array<{ part: PartitionPlacement; to: string }> => parts.filter((p) => p.replicas[0] === m).flatMap((p) => p.replicas.slice(1).map((to) => ({ part: p, to })));
  // take-over steps: m takes a partition it holds from its owner
  const takeFrom = (m: string): Array<{ part: PartitionPlacement; to: string }> => parts.filter((p) => p.replicas[0] !== m && p.replicas.includes(m)).map((p) => ({ part: p, to: p.replicas[0] }));
  for (const o of members) {
    while (load(o) > ceil) {
      const steps = path(o, handOn, (n) => load(n) < ceil);
      if (!steps) throw new Error(`rebalance: ${o} owns ${load(o)} partitions (ceil ${ceil}) and no path hands one on: a bug of the planner`);
      // apply from the far end: each hand-off keeps the intermediate members' counts
      for (const { part, to } of steps) handTo(part, to);
    }
  }
  for (const u of members) {
    while (load(u) < floor) {
      const steps = path(u, takeFrom, (n) => load(n) > floor);
      if (!steps) throw new Error(`rebalance: ${u} owns ${load(u)} partitions (floor ${floor}) and no path brings one: a bug of the planner`);
      // steps run from the far owner back to u: each step's partition goes to the member before it
      for (let i = 0; i < steps.length; i++) handTo(steps[i].part, i + 1 < steps.length ? steps[i + 1].to : u);
    }
  }
}
