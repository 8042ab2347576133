import type { ClusterConfig, StoreConfig } from './cluster-config.js';

/** One partition of one store in the partition map (DESIGN.md §2 "Topology"). */
export interface PartitionAssignment {
  store: string;
  /** Partition index within the store, 0-based. */
  partition: number;
  /** Assigned nodes, preferred primary first, then its replicas (ring order). */
  replicas: string[];
  /** The segments of the store grouped into this partition. */
  segments: number[];
}

/**
 * 32-bit FNV-1a over the key's UTF-8 bytes: the stable key hash all nodes and clients share.
 * Returns an unsigned 32-bit integer.
 */
export function hashKey(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    if (c >= 0x80) return hashBytes(Buffer.from(key, 'utf8'));
    h = Math.imul(h ^ c, 0x01000193);
  }
  return h >>> 0;
}

function hashBytes(bytes: Uint8Array): number {
  let h = 0x811c9dc5;
  for (const b of bytes) h = Math.imul(h ^ b, 0x01000193);
  return h >>> 0;
}

/** The segment of a key in a store with `segments` segments: hashKey(key) mod segments. */
export function segmentOf(key: string, segments: number): number {
  return hashKey(key) % segments;
}

/** Number of partitions per store: one per preferred primary (DESIGN.md §2). */
export function partitionCount(config: Pick<ClusterConfig, 'nodes'>): number {
  return config.nodes.filter((n) => n.preferredPrimary && !n.spare).length;
}

/** The partition of a segment: segment mod partition count. */
export function partitionOfSegment(segment: number, partitions: number): number {
  return segment % partitions;
}

/**
 * The initial partition map of one store: partition i is headed by the i-th preferred primary
 * (config order) and replicated on the next replicationFactor-1 nodes of the node list (a ring);
 * spares (cluster-config.ts) are not on the ring.
 */
export function assignPartitions(config: Pick<ClusterConfig, 'nodes'>, store: StoreConfig): PartitionAssignment[] {
  const primaries = config.nodes.filter((n) => n.preferredPrimary && !n.spare);
  // spares hold no copy until they join (cluster-config.ts)
  const ring = config.nodes.filter((n) => !n.spare).map((n) => n.id);
  const out: PartitionAssignment[] = [];
  for (let p = 0; p < primaries.length; p++) {
    const start = ring.indexOf(primaries[p].id);
    const replicas: string[] = [];
    for (let k = 0; k < store.replicationFactor; k++) replicas.push(ring[(start + k) % ring.length]);
    const segments: number[] = [];
    for (let s = p; s < store.segments; s += primaries.length) segments.push(s);
    out.push({ store: store.name, partition: p, replicas, segments });
  }
  return out;
}

/** The initial partition map of every store of the cluster, store by store. */
export function assignAll(config: Pick<ClusterConfig, 'nodes' | 'stores'>): PartitionAssignment[] {
  return config.stores.flatMap((s) => assignPartitions(config, s));
}
