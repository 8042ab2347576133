import { CONTRACT_FORMAT } from '../../../ledger/contract.js';
import type { TargetContract } from '../target.js';

/** What {@link natsContract} is built from (the target's settings). */
export interface NatsContractSpec {
  /** The store's name (default `nats`). */
  store?: string;
  /** The stream's replicas (default 3). */
  replicas?: number;
  /** The workload reads during the run (NATS_READS=1): then reads are judged linearizable. Default false. */
  reads?: boolean;
}

/**
 * NATS JetStream's contract for acknowledged publishes (docs.nats.io, "JetStream": at-least-once;
 * "Developing with JetStream", publishing: an acknowledged message "has been successfully
 * persisted"): one stream replicated by Raft on its R replicas, a publish acknowledged once a
 * majority stored it, so it claims no loss; duplicates allowed (at-least-once; `Nats-Msg-Id`
 * drops repeats inside the duplicate window only). No async lag, no owner lease. `beyond-budget`
 * is not claimed: on the process runtime a power failure kills the servers' processes and keeps
 * the OS page cache, where nats-server 2.9 wrote every acknowledged message, so even every node
 * down at once must lose nothing here (docs/targets.md: what the lazy fsync can lose needs a real
 * power loss). Reads are judged linearizable only when the run makes them (NATS_READS=1).
 */
export function natsContract(spec: NatsContractSpec = {}): TargetContract {
  const store = spec.store ?? 'nats';
  const replicas = spec.replicas ?? 3;
  return {
    format: CONTRACT_FORMAT,
    target: 'nats-jetstream',
    stores: [
      {
        name: store,
        replicationFactor: replicas,
        ackMode: 'sync',
        ackDurableOn: 'majority',
        partitions: 1,
        segments: 1,
        source: `one JetStream stream, file storage, num_replicas ${replicas}: its Raft group acknowledges a publish (PubAck) once a majority stored it (docs.nats.io, "JetStream Clustering")`,
      },
    ],
    claims: [],
    asyncLagMs: { value: null, source: 'JetStream has no asynchronous acknowledgement of a replicated stream: the PubAck follows the majority' },
    leaseMs: { value: null, source: 'nats-server declares no leader lease: a stream leader cut off from a majority commits nothing' },
    fencing: { value: true, source: "Raft terms of the stream's group (not exposed by nats-server 2.9: the harness's count of leader tenures stands in, docs/targets.md)" },
    linearizableReads: spec.reads
      ? { value: true, source: 'NATS_READS=1: the JetStream documentation states that its formal consistency model is linearizable; reads are the last message on the key\'s subject from the stream leader' }
      : { value: false, source: 'reads are not made (NATS_READS=1 makes them): the at-least-once promise judged covers acknowledged publishes, not the freshness of reads' },
    duplicates: { value: true, source: 'JetStream promises at-least-once delivery: a publish may be stored twice (Nats-Msg-Id drops a repeat only inside the duplicate window, 120 s here); duplicates are counted in the final read, never a finding' },
  };
}
