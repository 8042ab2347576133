import { sameMember, type Member, type RuntimeEntry } from '../cluster-messages.js';
import type { StoreConfig } from '../cluster-config.js';
import type { MemberSet } from '../membership/members.js';
import { migrationSteps } from '../membership/migration.js';
import { planRebalance, type PartitionPlacement } from '../membership/rebalance.js';

/** What the leader's migration driver reads and does through its node (times in ms). */
export interface MigrationHost {
  readonly stores: readonly StoreConfig[];
  /** Every partition key in map order (`${store}/${partition}`). */
  partitionKeys(): readonly string[];
  committed(pkey: string): RuntimeEntry | undefined;
  /** A proposal of this partition is in flight. */
  inflight(pkey: string): boolean;
  /** Propose a change of the partition's entry (runtime-map-leader.ts `propose`). */
  propose(entry: RuntimeEntry, newTenure: boolean, now: number): void;
  /** The live incarnation of a node by the leader's peer table, or null. */
  liveMember(node: string, now: number): Member | null;
  log(event: string, fields?: Record<string, unknown>): void;
  readonly counters: { migrations: number };
}

/** Partitions moved at once (the others wait): moves copy whole partitions, so a few at a time. */
export const MAX_CONCURRENT_MOVES = 2;

/** The copy holders a plan places copies on: members and joiners, never leavers (members.ts). */
export function placementNodes(set: MemberSet): string[] {
  return set.members.filter((m) => m.state !== 'leaving').map((m) => m.id);
}

/**
 * The leader's side of a migration (issue 14; DESIGN.md §2 "Membership and migration"): once per
 * member-set version (or `rebalance` request) it plans the next partition map over the copy
 * holders (membership/rebalance.ts) and carries it out one runtime-entry change at a time, in the
 * order of membership/migration.ts, judged afresh from the committed entry at every tick (a
 * failover in between changes nothing it relies on):
 * 1. add-copy: the new node is listed in the entry's replicas (a new map version; the in-sync
 *    copies are kept, keepCopies); it catches up from the active as any assigned replica does (a
 *    snapshot, then the op log's suffix) and joins the in-sync set through the active's req-add;
 * 2. await-in-sync: nothing is proposed until every planned replica is in sync;
 * 3. handoff: if the planned preferred owner is not the active, a fenced handoff to it, marked
 *    `migrating` so the old owner answers Migrating (seed 000: backoff x8) while writes are held;
 * 4. drop-copy: the replicas become the planned list (a new map version); copies left out are
 *    emptied on their nodes. Only once every planned copy is in sync and the owner is planned.
 * A partition whose entry reaches the plan counts one migration. At most
 * {@link MAX_CONCURRENT_MOVES} partitions move at once; nothing moves while a partition is
 * Recovering or Unavailable, has no active, or has a failback under way.
 */
export class MigrationDriver {
  private readonly h: MigrationHost;
  /** The plan: target replicas per partition, and the member-set version / rebalance request it was made for. */
  private plan: { key: string; targets: Map<string, string[]> } | null = null;
  /** Partitions a step of the plan touched and that have not reached their target yet. */
  private readonly moving = new Set<string>();
  private rebalanceSeq = 0;

  constructor(host: MigrationHost) {
    this.h = host;
  }

  /** An admin `rebalance`: plan again from the map as it stands now. */
  requestRebalance(): void {
    this.rebalanceSeq++;
  }

  /** No longer leading: the next leader plans afresh (its plan starts from the committed map). */
  reset(): void {
    this.plan = null;
    this.moving.clear();
  }

  /** Partitions still moving under the current plan (status, tests). */
  get movingPartitions(): string[] {
    return [...this.moving];
  }

  /** The planned replicas of a partition, if a plan moves it. */
  target(pkey: string): string[] | undefined {
    return this.plan?.targets.get(pkey);
  }

  /**
   * Whether the plan for this member set (and the last rebalance request) is carried out: every
   * partition reached its planned replicas. False before a plan was made.
   */
  settled(set: MemberSet): boolean {
    return this.plan !== null && this.plan.key === `${set.version}:${this.rebalanceSeq}` && this.plan.targets.size === 0;
  }

  /**
   * One round: plan if the member set (or a rebalance request) changed since the plan, then take
   * the next step of each partition the plan moves. Call after the failover policy's decisions of
   * the round (a partition with a proposal in flight waits).
   */
  tick(set: MemberSet, now: number): void {
    const key = `${set.version}:${this.rebalanceSeq}`;
    if (!this.plan || this.plan.key !== key) {
      if (!this.makePlan(set, key)) return;
    }
    const targets = this.plan!.targets;
    for (const [pkey, target] of targets) {
      const e = this.h.committed(pkey);
      if (!e) continue;
      if (sameList(e.replicas, target) && (e.active === null || e.active.node === target[0] || !this.moving.has(pkey))) {
        if (this.moving.delete(pkey)) {
          this.h.counters.migrations++;
          this.h.log('migration-done', { pkey, replicas: target.join(','), epoch: e.epoch });
        }
        targets.delete(pkey);
        continue;
      }
      if (!this.moving.has(pkey) && this.moving.size >= MAX_CONCURRENT_MOVES) continue;
      if (this.h.inflight(pkey) || !e.active || (e.health !== 'Healthy' && e.health !== 'Degraded')) continue;
      if (e.handoffTo && !e.migrating) continue;
      const next = this.nextEntry(e, target, now);
      if (next === 'wait') {
        this.moving.add(pkey);
        continue;
      }
      if (next === null) continue;
      this.moving.add(pkey);
      this.h.log('migration-step', { pkey, step: next.step, node: next.node, epoch: e.epoch });
      this.h.propose(next.entry, false, now);
    }
  }

  private makePlan(set: MemberSet, key: string): boolean {
    const holders = placementNodes(set);
    if (holders.length === 0) return false;
    const placements: PartitionPlacement[] = [];
    for (const pkey of this.h.partitionKeys()) {
      const e = this.h.committed(pkey);
      // a partition with no committed entry yet (bootstrap) or that is being re-homed: plan later
      if (!e) return false;
      placements.push({ store: e.store, partition: e.partition, replicas: [...e.replicas] });
    }
    const rf: Record<string, number> = {};
    for (const s of this.h.stores) rf[s.name] = s.replicationFactor;
    const plan = planRebalance(placements, holders, rf);
    const targets = new Map<string, string[]>();
    for (const p of plan.placements) {
      const pkey = `${p.store}/${p.partition}`;
      const e = this.h.committed(pkey)!;
      if (!sameList(e.replicas, p.replicas)) targets.set(pkey, p.replicas);
    }
    this.plan = { key, targets };
    this.moving.clear();
    this.h.log('migration-plan', { key, moves: plan.moves.length, ownerChanges: plan.ownerChanges.length, partitions: targets.size });
    return true;
  }

  /**
   * The entry of the partition's next step toward `target` (see the class doc), 'wait' while a
   * planned copy catches up or a handoff runs, null when nothing can be done now (a planned node
   * is not live).
   */
  private nextEntry(e: RuntimeEntry, target: string[], now: number): { step: string; node: string; entry: RuntimeEntry } | 'wait' | null {
    const first = migrationSteps([{ store: e.store, partition: e.partition, replicas: e.replicas }], [{ store: e.store, partition: e.partition, replicas: target }])[0];
    // 1. a planned copy the entry does not list yet
    if (first?.kind === 'add-copy') {
      if (!this.h.liveMember(first.node, now)) return null;
      const health = e.health === 'Healthy' ? 'Degraded' : e.health;
      return { step: 'add-copy', node: first.node, entry: { ...e, replicas: [...e.replicas, first.node], health, mapVersion: e.mapVersion + 1, keepCopies: true, migrating: false } };
    }
    // 2. every planned copy in sync first
    if (target.some((n) => !e.inSync.some((m) => m.node === n))) return 'wait';
    // 3. the planned owner takes over by the fenced handoff (Migrating meanwhile)
    if (e.active!.node !== target[0]) {
      if (e.handoffTo) return 'wait';
      const to = e.inSync.find((m) => m.node === target[0])!;
      if (!sameMember(this.h.liveMember(to.node, now), to)) return null;
      const replicas = [target[0], ...e.replicas.filter((n) => n !== target[0])];
      return { step: 'handoff', node: to.node, entry: { ...e, replicas, handoffTo: to, migrating: true } };
    }
    // 4. drop the copies the plan leaves out (the owner and every planned copy are in sync)
    const inSync = e.inSync.filter((m) => target.includes(m.node));
    const dropped = e.replicas.filter((n) => !target.includes(n));
    const health = target.every((n) => inSync.some((m) => m.node === n)) && e.health === 'Healthy' ? 'Healthy' : e.health;
    return { step: 'drop-copy', node: dropped.join(',') || '-', entry: { ...e, replicas: [...target], inSync, health, handoffTo: null, mapVersion: e.mapVersion + 1, keepCopies: true, migrating: false } };
  }
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
