import type { OwnershipSample, OwnershipSampler, OwnershipView, TargetCluster } from '../target.js';
import { leaderOf, patroniViews, revisionOf, type PatroniView } from './patroni-nodes.js';

/**
 * The ownership facts of one round of GET /patroni answers: the primary is the active owner of
 * the one partition and its PostgreSQL timeline is the epoch (each promotion starts a new one).
 * - merged row (`node` null): the running primary on the highest timeline; `inSync` = it and the
 *   replicas it reports streaming that are on its timeline; `revisions` = each node's WAL position
 *   as a revision (primary: written; replica: replayed); Healthy when every node is in sync.
 * - one row per node that reports itself primary (its own view: itself, its timeline). A timeline
 *   has one primary: the verifier's one-owner-per-epoch check applies.
 */
export function ownershipOf(views: ReadonlyArray<PatroniView | null>, store: string, all: readonly string[]): OwnershipView {
  const answered = views.filter((v): v is PatroniView => v !== null);
  const revisions = Object.fromEntries(answered.filter((v) => v.timeline > 0).map((v) => [v.node, revisionOf(v.timeline, v.lsn)]));
  const l = leaderOf(views);
  let merged: OwnershipSample;
  if (!l) {
    merged = { store, partition: 0, node: null, active: null, epoch: Math.max(0, ...answered.map((v) => v.timeline)), health: 'Unavailable', replicatedRevision: 0, inSync: [], revisions };
  } else {
    const inSync = all.filter((n) => n === l.node || (l.streaming.includes(n) && answered.some((v) => v.node === n && v.role === 'replica' && v.timeline === l.timeline)));
    const revs = inSync.map((n) => revisions[n]).filter((r) => r !== undefined);
    merged = {
      store,
      partition: 0,
      node: null,
      active: l.node,
      epoch: l.timeline,
      health: inSync.length === all.length ? 'Healthy' : 'Degraded',
      replicatedRevision: revs.length > 0 ? Math.min(...revs) : 0,
      inSync,
      revisions,
    };
  }
  const perNode: OwnershipSample[] = answered
    .filter((v) => v.role === 'primary' && v.state === 'running')
    .map((v) => ({ store, partition: 0, node: v.node, active: v.node, epoch: v.timeline, health: 'Healthy', replicatedRevision: 0 }));
  return { rows: [merged, ...perNode], leader: merged.active, answered: answered.map((v) => v.node) };
}

/** Samples a running PostgreSQL + Patroni cluster (see {@link ownershipOf}). */
export class PatroniSampler implements OwnershipSampler {
  constructor(
    private readonly cluster: TargetCluster,
    private readonly store: string,
  ) {}

  async sample(): Promise<OwnershipView> {
    return ownershipOf(await patroniViews(this.cluster, 1_000), this.store, this.cluster.nodes.map((n) => n.id));
  }

  async close(): Promise<void> {}
}
