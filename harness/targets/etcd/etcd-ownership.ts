import type { OwnershipSample, OwnershipSampler, OwnershipView } from '../target.js';
import type { EtcdMembers, MemberStatus } from './etcd-members.js';

/**
 * The etcd ownership sampler (issue 15): the Raft leader is the active owner of the store's one
 * partition and its term is the epoch. Each round asks every member's Status (etcd 3.4
 * Maintenance API, bounded per member, in parallel) and gives
 * - one row per member that answered (`node` = the member): the leader it names and its term (Raft:
 *   one leader per term, a member's term never goes back; the verifier checks both), with its own
 *   store revision in `revisions` (replicatedRevision 0: one member cannot say what all hold);
 * - the merged row (`node` null): the leader of the highest term any member names; `inSync` = the
 *   members that follow that leader in that term and have applied at least the leader's last log
 *   index of the previous round (caught up to where the leader was a round ago); `revisions` = each
 *   answering member's store revision; `replicatedRevision` = the lowest revision in `inSync`;
 *   Healthy when every member is in sync, Degraded when some is not, Unavailable without a leader.
 */
export class EtcdSampler implements OwnershipSampler {
  private prevLeaderIndex = 0;

  constructor(
    private readonly members: EtcdMembers,
    private readonly store: string,
    /** Bound on each member's Status call, ms. */
    private readonly timeoutMs = 500,
  ) {}

  async sample(): Promise<OwnershipView> {
    const nodes = this.members.cluster.nodes.map((n) => n.id);
    const statuses = (await Promise.all(nodes.map((n) => this.members.status(n, this.timeoutMs)))).filter((s): s is MemberStatus => s !== null);
    const merged = this.merge(nodes, statuses);
    const perNode: OwnershipSample[] = statuses.map((s) => ({
      store: this.store,
      partition: 0,
      node: s.node,
      active: s.leader,
      epoch: s.term,
      health: s.leader ? 'Healthy' : 'Unavailable',
      // the member's own store revision; what all members hold is the merged row's watermark
      replicatedRevision: 0,
      revisions: { [s.node]: s.revision },
    }));
    return { rows: [merged, ...perNode], leader: merged.active, answered: statuses.map((s) => s.node) };
  }

  private merge(nodes: string[], statuses: MemberStatus[]): OwnershipSample {
    const revisions = Object.fromEntries(statuses.map((s) => [s.node, s.revision]));
    const maxTerm = statuses.reduce((m, s) => Math.max(m, s.term), 0);
    const led = statuses.filter((s) => s.leader !== null);
    if (led.length === 0) {
      return { store: this.store, partition: 0, node: null, active: null, epoch: maxTerm, health: 'Unavailable', replicatedRevision: 0, inSync: [], revisions };
    }
    const term = Math.max(...led.map((s) => s.term));
    const leader = led.find((s) => s.term === term)!.leader!;
    const floor = this.prevLeaderIndex;
    const inSync = statuses.filter((s) => s.term === term && s.leader === leader && s.appliedIndex >= floor).map((s) => s.node);
    const leaderStatus = statuses.find((s) => s.node === leader);
    if (leaderStatus) this.prevLeaderIndex = leaderStatus.raftIndex;
    const inSyncRevs = inSync.map((n) => revisions[n]);
    return {
      store: this.store,
      partition: 0,
      node: null,
      active: leader,
      epoch: term,
      health: inSync.length === nodes.length ? 'Healthy' : 'Degraded',
      replicatedRevision: inSyncRevs.length > 0 ? Math.min(...inSyncRevs) : 0,
      inSync: nodes.filter((n) => inSync.includes(n)),
      revisions,
    };
  }

  async close(): Promise<void> {
    this.members.close();
  }
}
