import { ownerLeaseMs, type ClusterConfig } from '../cluster-config.js';
import { sameMember, type Health, type Member, type RuntimeEntry } from '../cluster-messages.js';
import type { LoopDelay } from './core-env.js';
import { advertisedPolicy } from '../node-admin.js';
import { assignAll } from '../partitioning.js';
import type { LocalPartition } from './partition-state.js';
import type { MemberSet } from '../membership/members.js';

/** One partition of the metadata document's runtime map. */
export interface RuntimeMapItem {
  store: string;
  partition: number;
  active: string | null;
  activeInc: string | null;
  epoch: number;
  health: Health;
  inSync: string[];
  /** The incarnation of each in-sync member (same order as inSync): a restarted node is in sync only under its new one. */
  inSyncIncs: string[];
  handoffTo: string | null;
  /** Set by the serving active only: highest revision applied by every in-sync replica. */
  replicatedRevision: number | null;
  /** This node's own last applied revision of the partition. */
  revision: number;
}

/** One partition of the metadata document's partition map. */
export interface PartitionMapItem {
  store: string;
  partition: number;
  replicas: string[];
  mapVersion: number;
}

/**
 * The metadata response (schema 5; seed 004 adds multiKeyLongTailRetryThresholdsMs). Each
 * runtime map item is THIS node's own committed entry (what per-node samples record) plus its own
 * last applied revision of the partition.
 */
export interface MetadataDoc {
  schema: number;
  cluster: string;
  node: string;
  inc: string;
  term: number;
  leader: string | null;
  isLeader: boolean;
  nodes: Array<{ id: string; host: string; clientPort: number }>;
  /**
   * Per store; `multiKeyLongTailRetryThresholdsMs` is the store's advertised multi-key retry
   * policy (seed 004: the admin set-policy's latest committed version, else the cluster's
   * property), `policyVersion` its version (0: the configured property). Both optional: older
   * nodes lack them, and a reader falls back to the document's cluster-wide property.
   */
  stores: Array<{ name: string; replicationFactor: number; ackMode: 'sync' | 'async'; segments: number; partitions: number; batchGetLimit: number; multiKeyLongTailRetryThresholdsMs?: string; policyVersion?: number }>;
  partitionMap: { version: number; partitions: PartitionMapItem[] };
  runtimeMap: RuntimeMapItem[];
  multiKeyLongTailRetryThresholdsMs: string;
  /**
   * The longest time an owner cut off from a majority may go on acknowledging, ms (its lease plus
   * heartbeat slack; cluster-config.ts ownerLeaseMs). The harness records it as the run's leaseMs.
   */
  ownerLeaseMs: number;
  /** The node's own event-loop delay (null where not measured, e.g. in the simulation). */
  loop: LoopDelay | null;
  /**
   * The leader only: the peers it suspects now (silent past suspectAfterMs, seed 002's first step
   * before the escalation timeout confirms them down); [] on every other node. Optional: older
   * nodes lack it.
   */
  suspected?: string[];
  /**
   * This incarnation is still rejoining after its start: it has not yet relearnt the committed
   * runtime map (it takes no part in votes or proposals), or not yet been in sync once in every
   * partition it is a replica of that has a serving active ({@link NodeCore.rejoining}).
   */
  rejoining: boolean;
  /**
   * The committed member set this node knows (issue 14; core/member-consensus.ts): who holds
   * copies, in which state; config nodes not listed are outside (spares, or nodes that left).
   * Absent from older nodes.
   */
  members?: { version: number; members: Array<{ id: string; state: 'joining' | 'member' | 'leaving' }> };
}

/** What the metadata document is built from: the node's identity, election view, partitions and runtime map. */
export interface MetadataSource {
  config: ClusterConfig;
  id: string;
  inc: string;
  me: Member;
  term: number;
  leaderId: string | null;
  isLeader: boolean;
  /** Partitions per store. */
  nPartitions: number;
  parts: ReadonlyMap<string, LocalPartition>;
  committed: ReadonlyMap<string, RuntimeEntry>;
  /** Where this node is the serving active: the highest revision every in-sync replica applied. */
  replicatedRevision(lp: LocalPartition): number;
  loop(): LoopDelay | null;
  /** Leader: the peers it suspects now, sorted; else empty. */
  suspected(): string[];
  /** Still rejoining (asked last: the first false answer logs the node caught up). */
  rejoining(): boolean;
  /** The committed member set. */
  members: MemberSet;
}

/**
 * The metadata document (schema 5) a node answers `Op.Metadata` with: partition map, runtime map,
 * leader, the advertised multi-key retry policy (seed 004). `replicatedRevision` is filled where
 * this node is the serving active.
 */
export function buildMetadata(src: MetadataSource): MetadataDoc {
  const runtime: RuntimeMapItem[] = [];
  const pmap: PartitionMapItem[] = [];
  let version = 0;
  for (const lp of src.parts.values()) {
    const e = src.committed.get(lp.pkey);
    const replicas = e ? e.replicas : assignAll(src.config).find((a) => `${a.store}/${a.partition}` === lp.pkey)!.replicas;
    const mv = e ? e.mapVersion : 1;
    version += mv;
    pmap.push({ store: lp.store.name, partition: lp.partition, replicas, mapVersion: mv });
    runtime.push({
      store: lp.store.name,
      partition: lp.partition,
      active: e?.active?.node ?? null,
      activeInc: e?.active?.inc ?? null,
      epoch: e?.epoch ?? 0,
      health: e?.health ?? 'Unavailable',
      inSync: e ? e.inSync.map((m) => m.node) : [],
      inSyncIncs: e ? e.inSync.map((m) => m.inc) : [],
      handoffTo: e?.handoffTo?.node ?? null,
      replicatedRevision: lp.act && e && sameMember(e.active, src.me) ? src.replicatedRevision(lp) : null,
      revision: lp.data.revision,
    });
  }
  return {
    schema: 5,
    cluster: src.config.cluster,
    node: src.id,
    inc: src.inc,
    term: src.term,
    leader: src.leaderId,
    isLeader: src.isLeader,
    nodes: src.config.nodes.map((n) => ({ id: n.id, host: n.host, clientPort: n.clientPort })),
    stores: src.config.stores.map((s) => {
      const p = advertisedPolicy(Array.from({ length: src.nPartitions }, (_, i) => src.committed.get(`${s.name}/${i}`)), src.config.multiKeyLongTailRetryThresholdsMs);
      return { name: s.name, replicationFactor: s.replicationFactor, ackMode: s.ackMode, segments: s.segments, partitions: src.nPartitions, batchGetLimit: s.batchGetLimit ?? 500, multiKeyLongTailRetryThresholdsMs: p.text, policyVersion: p.version };
    }),
    partitionMap: { version, partitions: pmap },
    runtimeMap: runtime,
    multiKeyLongTailRetryThresholdsMs: src.config.multiKeyLongTailRetryThresholdsMs,
    ownerLeaseMs: ownerLeaseMs(src.config.timing),
    loop: src.loop(),
    suspected: src.suspected(),
    rejoining: src.rejoining(),
    members: { version: src.members.version, members: src.members.members.map((m) => ({ id: m.id, state: m.state })) },
  };
}
