/** What the admin request may see and do on one node: the leader's committed map, its proposals, membership. */
import type { ClusterConfig } from '../cluster-config.js';
import type { RuntimeEntry } from '../cluster-messages.js';
import type { AdminContext } from '../node-admin.js';
import type { Election } from './election.js';
import type { MembershipRole } from './membership-role.js';
import type { PeerTable } from './peer-table.js';
import type { RuntimeMapLeader } from './runtime-map-leader.js';

/** The parts of a node core the admin request reads (NodeCore's own, shared by reference). */
export interface AdminHost {
  readonly id: string;
  readonly config: ClusterConfig;
  /** Partitions per store. */
  readonly nPartitions: number;
  readonly el: Election;
  readonly fd: PeerTable;
  readonly rm: RuntimeMapLeader;
  readonly membership: MembershipRole;
  /** The committed runtime entries this node knows, by partition key. */
  readonly committed: ReadonlyMap<string, RuntimeEntry>;
}

/**
 * The admin handler's view of this node at time `now` (node's clock, ms; node-admin.ts
 * handleAdmin): whether it leads and whom it follows, the stores and placement nodes, the
 * committed entries and the proposals in flight (a node that does not lead counts every
 * partition in flight, so it proposes nothing), the live members, and the leader's propose
 * (refused, null, when not leading or when the partition already has a change in flight).
 */
export function adminContext(h: AdminHost, now: number): AdminContext {
  return {
    node: h.id,
    isLeader: h.el.role === 'leader',
    leader: h.el.leaderId,
    stores: new Map(h.config.stores.map((s) => [s.name, s.replicationFactor])),
    nodes: h.membership.placementNodes(),
    membership: {
      join: (node) => h.membership.join(node, now),
      leave: (node) => h.membership.leave(node, now),
      rebalance: () => h.membership.rebalance(),
    },
    partitionsOf: (store) => (h.config.stores.some((s) => s.name === store) ? Array.from({ length: h.nPartitions }, (_, i) => `${store}/${i}`) : []),
    committed: (pkey) => h.committed.get(pkey),
    inflight: (pkey) => h.rm.state?.inflight.has(pkey) ?? true,
    liveMember: (node) => h.fd.liveMember(node, now),
    propose: (entry, newTenure) => {
      const ls = h.rm.state;
      if (!ls || ls.inflight.has(entry.pkey)) return null;
      h.rm.propose(entry, newTenure, now);
      return ls.inflight.get(entry.pkey)?.entry.epoch ?? null;
    },
  };
}
