/**
 * The cluster's member set as the store commits it (issue 14; nodes/core/member-consensus.ts):
 * which nodes hold copies, in which state, at which version. Changes go one node at a time: a
 * change is proposed only once the previous one committed.
 *
 * A node's life: `joining` (it receives copies and catches up), `member` (holds copies, may own),
 * `leaving` (holds copies until the rebalance without it has moved them away), then removed. The
 * set says who holds copies, not who votes: the voters are the config's non-spare nodes, fixed for
 * the cluster's life (cluster-config.ts voterIds), so no change of the set moves a majority.
 *
 * Pure functions; the leader commits their results as new versions.
 */

/** The state of one node in the member set. */
export type MemberState = 'joining' | 'member' | 'leaving';

/** One node of the member set: its id, the addresses others reach it at, its state. */
export interface MemberRecord {
  id: string;
  host: string;
  /** Client port (seed 000's protocol). */
  clientPort: number;
  /** Cluster port (node to node). */
  peerPort: number;
  state: MemberState;
}

/** The member set at one version (versions start at 1 and grow by one per committed change). */
export interface MemberSet {
  version: number;
  members: MemberRecord[];
}

/** A membership change, one node at a time. */
export type MembershipChange =
  | { kind: 'join'; node: Omit<MemberRecord, 'state'> }
  /** A joiner whose copies caught up becomes a voting member. */
  | { kind: 'admit'; id: string }
  /** A member starts draining: the rebalance moves its copies away. */
  | { kind: 'leave'; id: string }
  /** A drained leaver leaves the set. */
  | { kind: 'remove'; id: string };

/** A change refused: one line naming the rule (the admin verb prints it). */
export class MembershipError extends Error {
  override readonly name = 'MembershipError';
}

/** The nodes a rebalance may place copies on: members only (a joiner once admitted, a leaver never). */
export function copyHolders(set: MemberSet): string[] {
  return set.members.filter((m) => m.state === 'member').map((m) => m.id);
}

/**
 * The member set after one change, at version + 1.
 * @param pending true while a change proposed earlier has not committed: then nothing more is
 *   proposed (one change at a time keeps consecutive majorities overlapping).
 * @throws MembershipError for a change while another is pending; a join of a node already in the
 *   set, or whose addresses another member uses; an admit of a node that is not joining; a leave of
 *   a node that is not a member, or that would leave fewer than one member holding copies; a
 *   remove of a node that is not leaving, or of the last node of the set.
 */
export function applyMembershipChange(set: MemberSet, change: MembershipChange, pending = false): MemberSet {
  if (pending) throw new MembershipError('a membership change is still pending: one change at a time (its commit comes first)');
  const find = (id: string): MemberRecord | undefined => set.members.find((m) => m.id === id);
  const next = (members: MemberRecord[]): MemberSet => ({ version: set.version + 1, members });
  switch (change.kind) {
    case 'join': {
      const n = change.node;
      if (find(n.id)) throw new MembershipError(`join: ${n.id} is already in the member set (${find(n.id)!.state})`);
      const clash = set.members.find((m) => m.host === n.host && (m.clientPort === n.clientPort || m.peerPort === n.peerPort || m.clientPort === n.peerPort || m.peerPort === n.clientPort));
      if (clash) throw new MembershipError(`join: ${n.id}'s address ${n.host} ports ${n.clientPort}/${n.peerPort} is ${clash.id}'s`);
      return next([...set.members, { ...n, state: 'joining' }]);
    }
    case 'admit': {
      const m = find(change.id);
      if (!m || m.state !== 'joining') throw new MembershipError(`admit: ${change.id} is not joining (${m ? m.state : 'not in the set'})`);
      return next(set.members.map((x) => (x.id === change.id ? { ...x, state: 'member' as const } : x)));
    }
    case 'leave': {
      const m = find(change.id);
      if (!m || m.state !== 'member') throw new MembershipError(`leave: ${change.id} is not a member (${m ? m.state : 'not in the set'})`);
      if (copyHolders(set).length <= 1) throw new MembershipError(`leave: ${change.id} is the last member holding copies`);
      return next(set.members.map((x) => (x.id === change.id ? { ...x, state: 'leaving' as const } : x)));
    }
    case 'remove': {
      const m = find(change.id);
      if (!m || m.state !== 'leaving') throw new MembershipError(`remove: ${change.id} is not leaving (${m ? m.state : 'not in the set'}): a member leaves first, drained`);
      if (set.members.length <= 1) throw new MembershipError(`remove: ${change.id} is the last node of the set`);
      return next(set.members.filter((x) => x.id !== change.id));
    }
  }
}
