/**
 * The status vocabulary every store response carries (DESIGN.md §2 "Protocol", seed 000).
 *
 * Numeric values are the wire encoding (one byte in a response frame); never renumber.
 */
export enum KvStatus {
  /** The operation took effect (writes) or found the key (reads). */
  Ok = 0,
  /** The key is absent. An answer, never retried (seed 000). */
  NotFound = 1,
  /** An ifMatchVersion / ifAbsent precondition failed. An answer, never retried (seed 000). */
  Conflict = 2,
  /** This node does not own the key's segment: the caller's partition map is stale. */
  Moved = 3,
  /** Ownership of the segment is being handed off (a failback); refresh and retry. */
  OwnershipChanging = 4,
  /** The node holds the partition as a replica, not as its active owner; writes are refused. */
  ReplicaWriteRejected = 5,
  /** The segment is mid-migration; writes are briefly held (8x backoff in the client). */
  Migrating = 6,
  /** The partition has no serving owner at this instant (down, Recovering, or not yet caught up). */
  Unavailable = 7,
  /** The request is malformed (bad frame, bad key, oversized value, unknown operation). */
  InvalidInput = 8,
}

/** Every status name, in wire order. */
export const KV_STATUS_NAMES: readonly string[] = Object.freeze(
  Object.keys(KvStatus).filter((k) => Number.isNaN(Number(k))),
);

/**
 * Parses a status name ("Moved") into its enum value.
 * @throws Error when the name is not a KvStatus.
 */
export function parseKvStatus(name: string): KvStatus {
  const v = (KvStatus as unknown as Record<string, number | undefined>)[name];
  if (typeof v !== 'number') throw new Error(`unknown KvStatus "${name}"`);
  return v as KvStatus;
}

/** The status's name, e.g. "ReplicaWriteRejected"; "Status(n)" for an unknown wire value. */
export function kvStatusName(s: KvStatus | number): string {
  return KvStatus[s] ?? `Status(${s})`;
}
