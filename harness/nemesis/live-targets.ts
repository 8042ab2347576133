/**
 * Live targets: the node a planned target names when its fault starts (the leader, an active
 * owner, an in-sync replica or heir, a replica catching up, a failback's node, a bound name).
 */
import type { ClusterSnapshot, PartitionSnapshot } from './budget.js';
import { catchingUpNodes } from './cluster-queries.js';
import type { PlayerState, Unresolved } from './player-state.js';
import type { Prng } from './prng.js';
import { describeTarget, leaveCandidates, type FaultTarget } from './schedule.js';

/**
 * The node a target names now, or why there is none. When the role has no answer (no leader
 * known, nobody catching up, no failback), a random node of `candidates` stands in (noted in
 * `detail.fallback`), but in a scenario (strict targets): there the fault waits (like a budget
 * refusal) and is skipped if the role never answers. `except` (scenarios): names whose bound
 * nodes the target must not be.
 */
export function resolveTarget(ps: PlayerState, t: FaultTarget, index: number, rng: Prng, candidates: string[], snap: ClusterSnapshot | null, detail: Record<string, unknown>, except?: readonly string[]): string | Unresolved | null {
  const strict = ps.o.schedule.scenario !== undefined;
  // the nodes it must not be: those its `except` names, and those another episode reserved
  const excluded = new Set([...(except ?? []).map((n) => ps.bindings.get(n)).filter((n): n is string => n !== undefined), ...ps.reservedAgainst(index)]);
  const pool = candidates.filter((n) => !excluded.has(n));
  const random = (why?: string): string | Unresolved | null => {
    if (why && strict) return { why };
    if (why) detail.fallback = `${why}: random node`;
    return pool.length === 0 ? null : rng.pick(pool);
  };
  const one = (n: string | null | undefined, why: string): string | Unresolved | null => {
    if (n === null || n === undefined) return random(why);
    if (excluded.has(n)) return strict ? { why: `${describeTarget(t)} is ${n}, which it must not be (${(except ?? []).filter((x) => ps.bindings.get(x) === n).join(', ')})` } : random(why);
    return n;
  };
  const st = ps.status[index];
  const part = (store: string, partition: number): PartitionSnapshot | undefined => snap?.partitions.find((p) => p.store === store && p.partition === partition);
  switch (t.role) {
    case 'node':
      return one(t.node, `node ${t.node}`);
    case 'random':
      return random();
    case 'leader':
      return one(snap?.leader, 'no leader known');
    case 'active': {
      st.partition = { store: t.store, partition: t.partition };
      return one(part(t.store, t.partition)?.active, `no active owner of ${t.store}/${t.partition} known`);
    }
    case 'preferred': {
      st.partition = { store: t.store, partition: t.partition };
      return one(part(t.store, t.partition)?.replicas[0], `partition ${t.store}/${t.partition} not known`);
    }
    case 'bound':
      return one(ps.bindings.get(t.name), `nothing is bound to ${t.name} (the fault that binds it never started)`);
    case 'replica': {
      st.partition = { store: t.store, partition: t.partition };
      const p = part(t.store, t.partition);
      const rs = (p?.inSync ?? []).filter((n) => n !== p?.active && pool.includes(n));
      return rs.length > 0 ? rng.pick(rs) : random(`no in-sync replica of ${t.store}/${t.partition} but its owner${excluded.size > 0 ? ' and the excluded' : ''}`);
    }
    case 'heir': {
      // the first in-sync member other than the active in partition-map order (schedule.ts). Only
      // the aimed episodes (lag-crash, resync-crash, zombie-crash) name it, and a random node
      // stands in for none of them: without an in-sync heir the fault waits, like a budget
      // refusal, and is skipped if none comes (a stand-in makes the episode miss its aim)
      st.partition = { store: t.store, partition: t.partition };
      const p = part(t.store, t.partition);
      const h = (p?.replicas ?? []).find((n) => n !== p?.active && p?.inSync.includes(n) && pool.includes(n));
      return h ?? { why: `no in-sync replica of ${t.store}/${t.partition} but its owner${excluded.size > 0 ? ' and the excluded' : ''} (an aimed target waits for one)` };
    }
    case 'catching-up': {
      const cs = snap ? catchingUpNodes(snap).filter((n) => pool.includes(n)) : [];
      return cs.length > 0 ? rng.pick(cs) : random('no replica catching up');
    }
    case 'failback': {
      const hs = snap ? [...new Set(snap.partitions.map((p) => p.handoffTo).filter((n): n is string => n !== null && !excluded.has(n)))].sort() : [];
      return hs.length > 0 ? rng.pick(hs) : random('no failback under way');
    }
    case 'same': {
      const n = ps.status[t.fault]?.nodes[0];
      return one(n, `fault ${t.fault} hit no node`);
    }
    case 'active-over': {
      const x = ps.status[t.fault]?.nodes[0];
      const over = (snap?.partitions ?? []).filter((p) => p.replicationFactor > 1 && p.active !== null && !excluded.has(p.active) && (x === undefined || (p.replicas.includes(x) && p.active !== x)));
      if (over.length === 0) return random(`no partition with an owner over ${x ?? `fault ${t.fault}'s node`}`);
      // a partition where that node still catches up, when there is one (the dangerous moment)
      const behind = x === undefined ? [] : over.filter((p) => !p.inSync.includes(x));
      const p = rng.pick(behind.length > 0 ? behind : over);
      if (behind.length > 0) detail.behind = x;
      st.partition = { store: p.store, partition: p.partition };
      return p.active;
    }
    case 'outside': {
      // a running node the member set does not list (a spare, a node that left)
      const ms = snap?.members;
      if (!ms) return { why: 'the cluster reports no member set (metadata members)' };
      const listed = new Set(ms.members.map((m) => m.id));
      const out = pool.filter((n) => !listed.has(n));
      if (out.length === 0) return { why: `no running node outside the member set (${ms.members.map((m) => m.id).join(', ')}): nobody to join` };
      return rng.pick(out);
    }
    case 'member': {
      // a member whose leave keeps at least the voters' count of members (schedule.ts leaveCandidates)
      const ms = snap?.members;
      if (!ms) return { why: 'the cluster reports no member set (metadata members)' };
      const cands = leaveCandidates(ms.members, ps.o.schedule.nodeCount, ps.joined).filter((n) => pool.includes(n));
      if (cands.length === 0) {
        const pending = ms.members.filter((m) => m.state !== 'member');
        return { why: pending.length > 0 ? `a membership change is pending (${pending.map((m) => `${m.id} ${m.state}`).join(', ')})` : `${ms.members.length} members: a leave would leave fewer than ${ps.o.schedule.nodeCount}` };
      }
      // mostly a member that owns partitions now: its leave moves ownership by the fenced
      // handoff, the step where a move can lose acknowledged writes (a spare that joined owns
      // none: draining it only copies; with it preferred, a planted bug that names the new owner
      // active before its copy is in sync went unnoticed in 2 of 4 runs of 150 s), else the node
      // that joined last half of the time, else any candidate
      const owners = cands.filter((n) => snap?.partitions.some((p) => p.active === n));
      if (owners.length > 0 && rng.chance(0.75)) return rng.pick(owners);
      return ps.joined.some((n) => cands[0] === n) && rng.chance(0.5) ? cands[0] : rng.pick(cands);
    }
    case 'active-of': {
      const of = ps.status[t.fault]?.partition;
      if (of === undefined) return random(`fault ${t.fault} was about no partition`);
      st.partition = of;
      return one(part(of.store, of.partition)?.active, `no active owner of ${of.store}/${of.partition} known`);
    }
  }
}
