import { CONTRACT_FORMAT } from '../../../ledger/contract.js';
import type { TargetContract } from '../target.js';

/**
 * etcd 3.4's contract (its documentation, "API guarantees"): one key space replicated by Raft on
 * every member (RF = the cluster size, 3), an acknowledged write committed by a majority, so it
 * claims no loss at all; no async lag (there is no async path), no owner lease (a leader cut off
 * from a majority commits nothing), Raft terms fence a deposed leader, reads linearizable (the
 * default `get`, a quorum read), no duplicates (every write of the adapter is one guarded Txn).
 * Its WAL is fsynced before a commit is acknowledged, so a total outage loses nothing either:
 * `beyond-budget` is not claimed.
 */
export function etcdContract(store = 'etcd', members = 3): TargetContract {
  return {
    format: CONTRACT_FORMAT,
    target: 'etcd',
    stores: [
      {
        name: store,
        replicationFactor: members,
        ackMode: 'sync',
        ackDurableOn: 'majority',
        partitions: 1,
        segments: 1,
        source: `etcd replicates one key space by Raft on all ${members} members; a write is acknowledged once a majority has it in its log (etcd.io, "API guarantees": durability)`,
      },
    ],
    claims: [],
    asyncLagMs: { value: null, source: 'etcd has no asynchronous acknowledgement: nothing is acknowledged before a majority holds it' },
    leaseMs: { value: null, source: 'etcd declares no owner lease: a leader cut off from a majority commits nothing' },
    fencing: { value: true, source: 'Raft terms: a leader of an older term cannot commit (etcd.io, "API guarantees"; the Raft paper, election safety)' },
    linearizableReads: { value: true, source: 'etcd.io "API guarantees": reads are linearizable by default (the adapter uses the default get, not serializable)' },
    duplicates: { value: false, source: "the adapter writes each value once, in one Txn guarded by the key's fence key (harness/targets/etcd/etcd-client.ts)" },
  };
}
