import type { ClusterConfig, StoreConfig } from '../cluster-config.js';
import type { Member, RuntimeEntry } from '../cluster-messages.js';
import type { ClientResponse, Op } from '../client-protocol.js';
import { DEFAULT_SEGMENT_LOG_CAP, PartitionData, type ReplicatedOp } from '../partition-data.js';
import type { PartitionAssignment } from '../partitioning.js';

/**
 * What every part of a node reads of it: its identity, its configuration, its partitions and the
 * runtime map it holds (accepted and committed entries). The parts' host interfaces extend it.
 */
export interface NodeContext {
  readonly id: string;
  readonly inc: string;
  readonly me: Member;
  readonly config: ClusterConfig;
  readonly parts: Map<string, LocalPartition>;
  readonly accepted: ReadonlyMap<string, RuntimeEntry>;
  readonly committed: ReadonlyMap<string, RuntimeEntry>;
}

/** Stores whose in-sync replicas hold a read lease: sync with RF > 1 (an async or RF1 replica never answers a hedged read, seed 004). */
export function readLeased(store: StoreConfig): boolean {
  return store.ackMode === 'sync' && store.replicationFactor > 1;
}

/** Retry period of sync requests and of requests to the leader (ms). */
export const RETRY_MS = 250;
/** A follower that heard nothing from its active for this long asks for a catch-up (ms). */
export const FOLLOW_STALE_MS = 1_000;

/** An active's link to one follower: what it sent, what the follower acknowledged, the read lease granted (seed 004 hedged reads). */
export interface FollowerLink {
  member: Member;
  streaming: boolean;
  acked: number;
  queue: ReplicatedOp[];
  lastSentAt: number;
  /** Keeping pace: the revision we were at when we last looked (-1: not yet), and when. */
  paceRev: number;
  paceAt: number;
  /** The replica's clock in its latest rep-ack (-1: none yet), and our clock when it arrived. */
  ackAt: number;
  ackRecvAt: number;
  /**
   * Until when (our clock) a read lease we granted this replica may still run: no write it has
   * not applied is acknowledged before then (hedged reads, seed 004).
   */
  grantUntil: number;
}

/** A write applied by the active, waiting for the acknowledgements its store's mode requires. */
export interface PendingWrite {
  rev: number;
  token: unknown;
  res: ClientResponse & { op: typeof Op.Put | typeof Op.Delete };
  at: number;
}

/** The state of this node as the active owner of one partition, within one tenure. */
export interface ActiveState {
  tag: string;
  activeSince: number;
  followers: Map<string, FollowerLink>;
  pending: PendingWrite[];
  /** [rev, time] of ops not yet acked by every required member, oldest first. */
  opTimes: Array<[number, number]>;
  /**
   * Followers about to join the in-sync set: writes wait for them from `fromRev` on; `at` is the
   * last req-add, sent at our committed epoch `reqEpoch` (-1: none sent). Once a req-add went out,
   * the leader may commit the addition until a committed entry above `reqEpoch` settles it (the
   * leader takes a req-add only at the current epoch, and proposes no addition again on its own),
   * so writes wait for the follower until then, even if it stops keeping up.
   */
  pendingAdds: Map<string, { member: Member; at: number; fromRev: number; reqEpoch: number }>;
  lastDropReq: Map<string, number>;
  lastLeaderReq: number;
  /** The last op this active applied (a keepalive to a lagging follower carries it). */
  lastOp: ReplicatedOp | null;
  /**
   * Read leases an earlier tenure may have granted: until `inheritUntil` (our clock) writes also
   * wait for these members, as for a grant of our own.
   */
  inherited: Member[];
  inheritUntil: number;
  /**
   * handoff-ready was sent for the current handoff: the leader may commit the new active any
   * moment, and it may acknowledge writes before we hear of it, so we answer no more reads.
   */
  handoffReady: boolean;
}

/** This node's copy of one partition and its role in it (replica, or active with {@link ActiveState}). */
export interface LocalPartition {
  pkey: string;
  store: StoreConfig;
  partition: number;
  segments: number[];
  data: PartitionData;
  /** Tenure tag this copy follows ('' = not synced with any active). */
  followTag: string;
  /**
   * While a catch-up we asked for is outstanding: the tenure in whose log our copy is a prefix
   * (the position we asked from), so a retry asks from the same position instead of for a
   * snapshot ('' = none).
   */
  resumeTag: string;
  /** A connection to the active we follow broke: ask it to resume the stream at the next tick. */
  resyncWanted: boolean;
  lastRepAt: number;
  syncRequestedAt: number;
  mapVersion: number;
  /** When (own clock, ms) a planned change dropped this node's copy, to be emptied later (DataPath.sweepDropped); -Infinity: not dropped. */
  droppedAt: number;
  act: ActiveState | null;
  /** Recovering active: the sync from the more complete holder has been installed. */
  recoveredAtEpoch: number;
  recoveredSentAt: number;
  /** Replica: read lease granted by the active of tenure `tag`, until `until` (own clock). */
  readLease: { tag: string; until: number } | null;
}

/**
 * A new tenure's active state: no followers, nothing pending, `inherited` (members that may hold a
 * read lease an earlier tenure granted) waited for until `inheritUntil` (own clock, ms).
 */
export function newActiveState(tag: string, activeSince: number, inherited: Member[], inheritUntil: number): ActiveState {
  return {
    tag,
    activeSince,
    followers: new Map(),
    pending: [],
    opTimes: [],
    pendingAdds: new Map(),
    lastDropReq: new Map(),
    lastLeaderReq: -Infinity,
    lastOp: null,
    handoffReady: false,
    inherited,
    inheritUntil,
  };
}

/**
 * A node's copy of one partition at its start: empty, following no tenure, no map version yet
 * (the first committed entry sets it), not active. The copy's op log keeps DEFAULT_SEGMENT_LOG_CAP
 * ops per segment; the self-test bug `catchup-skips-last-op` is wired into it here.
 */
export function newLocalPartition(a: PartitionAssignment, config: ClusterConfig): LocalPartition {
  return {
    pkey: `${a.store}/${a.partition}`,
    store: config.stores.find((s) => s.name === a.store)!,
    partition: a.partition,
    segments: a.segments,
    data: new PartitionData(a.segments, DEFAULT_SEGMENT_LOG_CAP, config.selfTestBug === 'catchup-skips-last-op'),
    followTag: '',
    resumeTag: '',
    resyncWanted: false,
    lastRepAt: -Infinity,
    syncRequestedAt: -Infinity,
    mapVersion: 0,
    droppedAt: -Infinity,
    act: null,
    recoveredAtEpoch: -1,
    recoveredSentAt: -Infinity,
    readLease: null,
  };
}
