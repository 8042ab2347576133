import type { ReplicatedOp, SegmentSync } from './partition-data.js';
import type { MemberBallot, MemberMsg } from './core/member-consensus.js';
import type { JoinRequest } from './core/membership-role.js';

/**
 * The node-to-node vocabulary of the failover and replication state machines (DESIGN.md §2
 * "Failover", "Leader and ownership decisions", "Replication"; seed 002).
 *
 * Every message that can change who decides carries the sender's leader term; a node that sees
 * a higher term steps down. Replication messages carry the partition epoch and the stream tag
 * of the active's tenure instead.
 */

/** A node incarnation: memory-only nodes come back empty, so membership is per incarnation. */
export interface Member {
  node: string;
  inc: string;
}

/** Health of a partition in the runtime map (seed 002 "the health state machine"). */
export type Health = 'Healthy' | 'Degraded' | 'Recovering' | 'Unavailable';

/**
 * One partition's runtime-map entry, as proposed by the leader and committed by a majority.
 * `epoch` is the fencing token: strictly increasing per partition, one per committed change.
 */
export interface RuntimeEntry {
  /** `${store}/${partition}` */
  pkey: string;
  store: string;
  partition: number;
  epoch: number;
  /** Term of the leader that proposed it. */
  term: number;
  /** The active owner; null when Unavailable. */
  active: Member | null;
  /** Epoch at which the current active's tenure began (changes only when the active changes). */
  activeSince: number;
  health: Health;
  /** Members whose copy holds every acknowledged write (the active included). */
  inSync: Member[];
  /** Failback in progress to this member (seed 002: OwnershipChanging during the handoff). */
  handoffTo: Member | null;
  /** Recovering: the more complete live holder to sync from before serving (possession proof). */
  syncFrom: Member | null;
  /**
   * Recovering from a holder outside the in-sync set (seed 002, possession proof: the more
   * complete holder is any live assigned replica): the deposed owner's tenure tag, whose log the
   * holder's copy is a prefix of. The holder stays a valid source only while it still reports
   * that tag. Absent or null: `syncFrom` (if any) is an in-sync member. Meaningful only with
   * `syncFrom`.
   */
  syncTag?: string | null;
  /** The partition map: assigned nodes, preferred primary first. Changes only on regeneration. */
  replicas: string[];
  /** Partition-map version of this partition (bumped by a planned regeneration). */
  mapVersion: number;
  /**
   * The last map-version bump was an admin regeneration that kept the in-sync members' copies
   * (node-admin.ts); absent or false: an eviction, where every copy starts empty.
   */
  keepCopies?: boolean;
  /**
   * The handoff under way (`handoffTo`) is a step of a planned move (issue 14, membership and
   * rebalance: core/migration-driver.ts), not a failback: the old owner answers Migrating where a
   * failback answers OwnershipChanging (seed 000: the client backs off 8x). Absent: false.
   */
  migrating?: boolean;
  /**
   * The store's multi-key retry policy as last set by the admin request `set-policy` (seed 004's
   * range table text, validated by the leader; "" withdraws the server policy), with its version
   * (1, 2, ...: the leader proposes max+1 over the store's partitions). Every partition of the
   * store carries it; a node advertises, per store, the text of the highest version among its
   * committed entries. Absent: the cluster's configured property applies.
   */
  policy?: { text: string; version: number };
}

/**
 * Whether runtime entry `a` supersedes `b`: a higher epoch, or the same epoch proposed by a later
 * leader's term. Within budget no two different entries ever commit at one epoch (the leader's
 * epoch generator stays above every epoch a majority accepted), so the term only breaks a tie
 * after a majority of the nodes lost its memory at once: a new leader that learnt nothing may
 * reuse an epoch a surviving minority still holds, and the later term's decision must win there,
 * or that minority keeps naming a dead incarnation as the active forever (sim, amnesia schedules).
 */
export function supersedes(a: { epoch: number; term: number }, b: { epoch: number; term: number }): boolean {
  return a.epoch > b.epoch || (a.epoch === b.epoch && a.term > b.term);
}

/** What a node tells the leader about its copy of one partition (the possession proof's input). */
export interface PartitionReport {
  pkey: string;
  /** Last applied revision. */
  rev: number;
  /** Keys held (tombstones excluded). */
  heldKeys: number;
  /** Segments synced with the current tenure (all of them once caught up, else 0). */
  syncedSegments: number;
  /** Stream tag of the tenure the copy follows ("" when none). */
  tag: string;
  /** Highest epoch this node accepted for the partition (-1: none). */
  accepted: number;
}

export type ClusterMsg =
  | { t: 'hello'; inc: string; term: number }
  /** A new incarnation asks a peer where the cluster stands before it takes part (rejoin). */
  | { t: 'rejoin-q'; term: number }
  /** The answer: the peer's term, and whether it holds any runtime entry (the cluster has a history). */
  | { t: 'rejoin-r'; term: number; known: boolean }
  | { t: 'prevote'; term: number }
  | { t: 'prevote-r'; term: number; granted: boolean }
  | { t: 'vote'; term: number }
  /** `members`: the voter's accepted and committed member sets (core/member-consensus.ts); absent from a refusal. */
  | { t: 'vote-r'; term: number; granted: boolean; accepted: RuntimeEntry[]; committed: RuntimeEntry[]; members?: { accepted: MemberBallot; committed: MemberBallot } }
  /**
   * The leader's heartbeat. Lease fields (issue 10: an owner's lease counts from when the leader's
   * message was SENT, measured on the owner's own clock, never from when it arrived):
   * `at`: the leader's clock when sent; `echo`: the `at` of this follower's latest hb-r the leader
   * had received (the follower's clock; -1: none this term), `echoInc` the incarnation whose clock
   * that is (a restarted process's clock starts again near 0: an echo only ever counts for the
   * incarnation that sent it); `leaseLeft`: how long the leader's own quorum lease still ran when
   * sent, ms (<= 0: none).
   */
  | { t: 'hb'; term: number; seq: number; committed: RuntimeEntry[]; at: number; echo: number; echoInc: string; leaseLeft: number; members?: MemberBallot }
  /** The answer: `at` the follower's clock when sent; `echo` the answered hb's `at` (the leader's clock). */
  | { t: 'hb-r'; term: number; seq: number; inc: string; reports: PartitionReport[]; at: number; echo: number }
  | { t: 'propose'; term: number; entry: RuntimeEntry }
  | { t: 'propose-r'; term: number; pkey: string; epoch: number; ok: boolean }
  | { t: 'commit'; term: number; entry: RuntimeEntry }
  /**
   * A replication batch (or keepalive) of the active's tenure `tag`. Read lease of a sync store's
   * in-sync replica (hedged reads, seed 004): `echo` the `at` of the replica's latest rep-ack the
   * active had received (the replica's clock; -1: no grant), `leaseLeft` what remained of the
   * active's own owner lease when sent, ms.
   */
  | { t: 'rep'; pkey: string; epoch: number; tag: string; ops: ReplicatedOp[]; echo: number; leaseLeft: number }
  /** `at`: the clock of replica incarnation `inc` when sent (echoed back as its read lease's start). */
  | { t: 'rep-ack'; pkey: string; tag: string; rev: number; at: number; inc: string }
  | { t: 'rep-nack'; pkey: string; tag: string; reason: string }
  /** `inc`: the requesting incarnation, which the active streams to (its own view of the peer may lag). */
  | { t: 'sync-req'; pkey: string; inc: string; tag: string; haveTag: string; haveRev: number; recovery: boolean }
  /**
   * `recovery` (a holder's answer to a Recovering active): `inc` is the holder's incarnation and
   * `holdTag` the tenure whose log its copy is a prefix of ('' = none); absent on other answers.
   */
  | { t: 'sync-resp'; pkey: string; tag: string; rev: number; segs: SegmentSync[]; recovery: boolean; inc?: string; holdTag?: string }
  | { t: 'req-add'; term: number; pkey: string; epoch: number; member: Member }
  /**
   * `seen`: the leader-clock send time (`hb.at`) of the latest heartbeat of `term` the requesting
   * active had received when it asked (-1: none), so the leader can tell how old the view behind the
   * request is (a request queued in a cut link arrives long after it was made).
   */
  | { t: 'req-drop'; term: number; pkey: string; epoch: number; member: Member; seen: number }
  | { t: 'handoff-ready'; term: number; pkey: string; epoch: number; rev: number }
  | { t: 'recovered'; term: number; pkey: string; epoch: number; rev: number }
  | MemberMsg
  | JoinRequest;

/** The stream tag of an active's tenure: replicas follow exactly one tag at a time. */
export function tenureTag(active: Member, activeSince: number): string {
  return `${active.node}:${active.inc}:${activeSince}`;
}

/** Same node and same incarnation. */
export function sameMember(a: Member | null | undefined, b: Member | null | undefined): boolean {
  return !!a && !!b && a.node === b.node && a.inc === b.inc;
}
