import { voterIds, type ClusterConfig } from './cluster-config.js';
import { KvStatus } from './kv-status.js';
import { assignAll, partitionCount, segmentOf } from './partitioning.js';
import { handleAdmin, type AdminAnswer } from './node-admin.js';
import { adminContext, type AdminHost } from './core/admin-context.js';
import type { CoreEnv } from './core/core-env.js';
import { dispatchClusterMessage, type MessageHandlers } from './core/message-dispatch.js';
import { PeerTable, type PeerView } from './core/peer-table.js';
import { Election, type Role } from './core/election.js';
import { RuntimeMapLeader } from './core/runtime-map-leader.js';
import { buildMetadata, type MetadataDoc } from './core/metadata.js';
import { newLocalPartition, readLeased, type LocalPartition } from './core/partition-state.js';
import { REPLICA_READ_LEASE_MS, Replication } from './core/replication.js';
import { DataPath, VERSION_TENURE_STRIDE } from './core/data-path.js';
import { MembershipRole } from './core/membership-role.js';
import { RuntimeMapFollower } from './core/runtime-map-follower.js';
import { PeerSignals, type ProbeResult } from './core/peer-signals.js';
import { Op, type ClientRequest } from './client-protocol.js';
import {
  sameMember,
  type ClusterMsg,
  type Member,
  type RuntimeEntry,
} from './cluster-messages.js';

export { REPLICA_READ_LEASE_MS, VERSION_TENURE_STRIDE };
export type { MetadataDoc, PartitionMapItem, RuntimeMapItem } from './core/metadata.js';
export type { CoreEnv, LoopDelay } from './core/core-env.js';
export type { ProbeResult } from './core/peer-signals.js';

/**
 * The whole behaviour of one store node as a deterministic state machine: messages, client
 * requests and time in; messages, client responses and probes out (through {@link CoreEnv}).
 *
 * Covers DESIGN.md §2 and seed 002 end to end: Raft-style leader terms with pre-vote; runtime
 * entries proposed by the leader at the partition's next epoch and committed by a majority;
 * detection (NodeLeft re-checked by a probe, silent owners confirmed after the escalation
 * timeout); promotion among in-sync members with the possession proof (Degraded / Recovering);
 * Unavailable and eviction; replication through per-segment op logs with sync / async
 * acknowledgement; catch-up from an (epoch, revision) agreed with the active; the recovery sweep
 * and failback with OwnershipChanging during the handoff; membership (issue 14): the member set
 * committed by the voters, spares, and the leader's migrations with Migrating during a move's
 * handoff. The parts live in nodes/core/; NodeCore wires them and dispatches to them.
 */
export class NodeCore {
  readonly id: string;
  readonly inc: string;
  private readonly config: ClusterConfig;
  private readonly env: CoreEnv;
  /** Failure detection: the peers and what is known of them (core/peer-table.ts). */
  private readonly fd: PeerTable;
  private readonly peers: Map<string, PeerView>;
  /** Every other node of the config: voters and spares (all hear the leader). */
  private readonly peerIds: string[];
  /** The other voters (cluster-config.ts voterIds): only they count toward a majority. */
  private readonly voterPeerIds: string[];
  /** The same, as a set (the leader's and the member set's majority counts). */
  private readonly voterSet: ReadonlySet<string>;
  /** Votes needed: a majority of the voters. */
  private readonly majority: number;
  /** The member set, its consensus, and as leader the migrations (core/membership-role.ts). */
  readonly membership: MembershipRole;
  private readonly parts = new Map<string, LocalPartition>();
  private readonly nPartitions: number;

  /** Terms, votes, the rejoin rule, the quorum and owner leases (core/election.ts). */
  private readonly el: Election;
  /** Replication and catch-up, both sides (core/replication.ts). */
  private readonly rep: Replication;
  /** Client operations: routing, serving, writes and their acknowledgement, reads (core/data-path.ts). */
  private readonly dp: DataPath;
  /** This incarnation has rejoined and been in sync everywhere it could be, once ({@link rejoining}). */
  private caughtUpOnce = false;
  /** The leader's side of the runtime map: proposals, commits, decisions (core/runtime-map-leader.ts). */
  private readonly rm: RuntimeMapLeader;
  /** Every node's side of it: heartbeats answered, proposals accepted, commits learnt (core/runtime-map-follower.ts). */
  private readonly fol: RuntimeMapFollower;

  // runtime map knowledge
  private readonly accepted = new Map<string, RuntimeEntry>();
  private readonly committed = new Map<string, RuntimeEntry>();

  /** NodeLeft signals, probe answers, messages of dead incarnations (core/peer-signals.ts). */
  private readonly signals: PeerSignals;
  /** The parts above, as the cluster messages' dispatch and the admin request read them (core/message-dispatch.ts, core/admin-context.ts). */
  private readonly handlers: MessageHandlers & AdminHost;

  /**
   * Counters for the node's own log, its metrics endpoint (node-metrics.ts) and tests. Since the
   * process started:
   * - `failovers`: failover decisions of this node as leader (an active confirmed down, seed 002);
   * - `promotions`: committed entries, by this node as leader, whose active differs from the
   *   previous committed one (failovers, failbacks, handoffs);
   * - `staleEpochRefusals`: messages refused for naming a stale term or epoch: proposals (an older
   *   term, or an epoch not above the one accepted) and replication batches fenced (not the
   *   accepted active's tenure);
   * - `migratingAnswers`: client requests answered Migrating (the old owner during a planned
   *   move's fenced handoff, core/data-path.ts);
   * - `migrations`: partition moves this node finished as leader (core/migration-driver.ts);
   * - `invalidPolicyValues`: per store, admin set-policy values refused by seed 004's rules.
   */
  readonly counters = {
    writesAcked: 0,
    writesRefused: 0,
    indeterminate: 0,
    promotions: 0,
    syncsServed: 0,
    snapshotsInstalled: 0,
    failovers: 0,
    staleEpochRefusals: { proposal: 0, replication: 0 },
    migratingAnswers: 0,
    migrations: 0,
    invalidPolicyValues: new Map<string, number>(),
  };

  /**
   * @param opts.join a spare (cluster-config.ts) that asks the leader to join the member set by
   *   itself (`zaris-certify node --join`).
   */
  constructor(id: string, inc: string, config: ClusterConfig, env: CoreEnv, opts: { join?: boolean } = {}) {
    this.id = id;
    this.inc = inc;
    this.config = config;
    this.env = env;
    this.peerIds = config.nodes.map((n) => n.id).filter((n) => n !== id);
    const voters = voterIds(config);
    const votes = voters.includes(id);
    this.voterPeerIds = voters.filter((n) => n !== id);
    this.voterSet = new Set(this.voterPeerIds);
    this.majority = Math.floor(voters.length / 2) + 1;
    this.nPartitions = partitionCount(config);
    this.fd = new PeerTable({ node: id, inc }, this.peerIds, this.majority, config.timing, { now: () => env.now(), log: (e, f) => env.log(e, f), term: () => this.el.term }, this.voterPeerIds);
    this.el = new Election(
      { node: id, inc },
      this.voterPeerIds,
      this.majority,
      config.timing,
      {
        now: () => env.now(),
        random: () => env.random(),
        send: (to, msg) => env.send(to, msg),
        log: (e, f) => env.log(e, f),
        maps: () => ({ accepted: [...this.accepted.values()], committed: [...this.committed.values()], members: this.membership.consensus.voteState() }),
        onElected: (t, vs) => {
          this.membership.elected(vs.map((v) => v.members));
          this.rm.elected(t, vs);
        },
        onStepDown: () => {
          this.rm.stepDown();
          this.membership.stepDown();
        },
      },
      this.fd,
      votes,
    );
    // the host's getters read this node's election state when called
    const core = this;
    // what the data path and replication both read: identity, configuration, partitions, maps
    const shared = { id, inc, me: { node: id, inc }, config, env, parts: this.parts, accepted: this.accepted, committed: this.committed, counters: this.counters };
    this.dp = new DataPath({ ...shared, el: this.el, nPartitions: this.nPartitions, readLeased });
    this.rep = new Replication({
      ...shared,
      el: this.el,
      hasPeer: (node) => this.peers.has(node),
      servingState: (lp) => this.dp.servingState(lp),
      activeEntry: (pkey) => this.dp.activeEntry(pkey),
      progressPending: (lp) => this.dp.progressPending(lp),
      answerIndeterminate: (p) => this.dp.answerIndeterminate(p),
      selfTestBugHit: (bug, pkey) => this.dp.selfTestBugHit(bug, pkey),
      onLeaderRequest: (from, msg, now) => this.rm.onLeaderRequest(from, msg, now),
    });
    this.rm = new RuntimeMapLeader({
      ...shared,
      peerIds: this.peerIds,
      voterPeerIds: this.voterSet,
      majority: this.majority,
      members: () => this.membership.consensus.committed,
      placementNodes: () => this.membership.placementNodes(),
      afterDecisions: (now) => this.membership.leaderTick(now),
      el: this.el,
      fd: this.fd,
      learnCommitted: (e) => this.fol.learnCommitted(e),
      refreshRole: (pkey) => this.refreshRole(pkey),
      ownReport: (pkey) => this.fol.ownReport(this.parts.get(pkey)!),
    });
    this.membership = new MembershipRole(
      {
        id,
        config,
        el: this.el,
        peerIds: this.peerIds,
        voterPeerIds: this.voterSet,
        majority: this.majority,
        votes,
        send: (to, msg) => env.send(to, msg),
        log: (e, f) => env.log(e, f),
        partitionKeys: () => [...this.parts.keys()],
        committed: (pkey) => this.committed.get(pkey),
        inflight: (pkey) => this.rm.state?.inflight.has(pkey) ?? true,
        propose: (e, nt, now) => this.rm.propose(e, nt, now),
        liveMember: (node, now) => this.fd.liveMember(node, now),
        counters: this.counters,
      },
      opts.join === true,
    );
    this.fol = new RuntimeMapFollower({ ...shared, el: this.el, members: this.membership.consensus, refreshRole: (pkey) => this.refreshRole(pkey) });
    this.signals = new PeerSignals({
      config,
      env,
      fd: this.fd,
      parts: this.parts,
      committed: this.committed,
      get isLeader() {
        return core.role === 'leader';
      },
      leaderTick: (now) => this.rm.leaderTick(now),
    });
    this.peers = this.fd.peers;
    this.handlers = { id, config, env, nPartitions: this.nPartitions, fd: this.fd, signals: this.signals, el: this.el, accepted: this.accepted, committed: this.committed, fol: this.fol, rm: this.rm, rep: this.rep, membership: this.membership };
    for (const a of assignAll(config)) {
      const lp = newLocalPartition(a, config);
      this.parts.set(lp.pkey, lp);
    }
    this.el.resetElectionDeadline();
  }

  // ───────────────────────────── public surface ─────────────────────────────

  private get term(): number {
    return this.el.term;
  }
  private get role(): Role {
    return this.el.role;
  }
  private get leaderId(): string | null {
    return this.el.leaderId;
  }

  /** Current leader term. */
  get currentTerm(): number {
    return this.term;
  }

  /** Is this node the leader now. */
  get isLeader(): boolean {
    return this.role === 'leader';
  }

  /** The leader this node follows (itself when leader), or null. */
  get knownLeader(): string | null {
    return this.leaderId;
  }

  /** The committed runtime entry of a partition as this node knows it. */
  committedEntry(pkey: string): RuntimeEntry | undefined {
    return this.committed.get(pkey);
  }

  /** Every partition key, `${store}/${partition}`. */
  partitionKeys(): string[] {
    return [...this.parts.keys()];
  }

  /** Is this node serving reads and writes of the partition as its active owner right now. */
  isServingActive(pkey: string): boolean {
    const lp = this.parts.get(pkey);
    return !!lp && !!lp.act && this.dp.servingState(lp) === null;
  }

  /** Last applied revision of this node's copy of a partition. */
  revisionOf(pkey: string): number {
    return this.parts.get(pkey)?.data.revision ?? 0;
  }

  /**
   * This node's copy of one key (tests and the simulation's checker): value (null: a tombstone),
   * version, and the revision of the op that wrote it in this copy's log.
   */
  peek(pkey: string, key: string): { value: Buffer | null; version: number; revision: number } | undefined {
    const lp = this.parts.get(pkey);
    if (!lp) return undefined;
    const r = lp.data.get(segmentOf(key, lp.store.segments), key);
    return r ? { value: r.value, version: r.version, revision: r.revision } : undefined;
  }

  /**
   * This node's record of one key as its copy's log stood at revision `rev` (the simulation's
   * replica-divergence check): null when the key had no record then, undefined when the copy
   * cannot tell (PartitionData.recordAt).
   */
  peekAt(pkey: string, key: string, rev: number): { value: Buffer | null; version: number; revision: number } | null | undefined {
    const lp = this.parts.get(pkey);
    return lp ? lp.data.recordAt(segmentOf(key, lp.store.segments), key, rev) : undefined;
  }

  /**
   * Is this incarnation still rejoining: it has not yet relearnt the committed runtime map from a
   * leader (it neither votes nor accepts proposals, {@link rejoin}), or it has not yet been in
   * sync, under this incarnation, in every partition it is a replica of that has a serving active
   * (Healthy or Degraded) to catch up from. Once both held, false for the rest of the incarnation
   * (a later lag is catching up, shown per partition by inSync, not rejoining).
   */
  get rejoining(): boolean {
    if (this.el.rejoinPending) return true;
    if (this.caughtUpOnce) return false;
    for (const lp of this.parts.values()) {
      const e = this.committed.get(lp.pkey);
      if (!e) return true;
      if (!e.replicas.includes(this.id) || e.inSync.some((m) => sameMember(m, this.me))) continue;
      if (e.active && (e.health === 'Healthy' || e.health === 'Degraded')) return true;
    }
    this.caughtUpOnce = true;
    this.env.log('caught-up', { term: this.term, sinceStartMs: Math.round(this.env.now() - this.el.started) });
    return false;
  }

  /** Periodic work: elections, heartbeats, leader decisions, replication timeouts. Call every ~20-50 ms. */
  tick(): void {
    const now = this.env.now();
    if (!this.caughtUpOnce) void this.rejoining;
    if (this.role === 'leader') this.fd.updateSuspicion(now);
    this.el.askRejoin(now);
    if (this.role !== 'leader' && now >= this.el.electionDeadline) this.el.startPreVote(now);
    if (this.role === 'leader') this.rm.leaderTick(now);
    else this.membership.tick(now);
    for (const lp of this.parts.values()) {
      this.rep.partitionTick(lp, now);
      this.dp.sweepDropped(lp, now);
    }
  }

  /** A cluster message arrived from a peer. */
  onMessage(from: string, msg: ClusterMsg): void {
    dispatchClusterMessage(this.handlers, from, msg);
  }

  /** The connection to a peer closed (a NodeLeft signal): re-check it before believing it (core/peer-signals.ts). */
  onPeerDown(node: string): void {
    this.signals.onPeerDown(node);
  }

  /** The answer to an earlier probe() (core/peer-signals.ts). */
  onProbeResult(node: string, result: ProbeResult): void {
    this.signals.onProbeResult(node, result);
  }

  /** A client request; the answer goes to env.respond(token, …), now or later. */
  onClient(req: ClientRequest, token: unknown): void {
    switch (req.op) {
      case Op.Put:
      case Op.Delete:
        return this.dp.clientWrite(req, token);
      case Op.Get:
        return this.env.respond(token, this.dp.clientGet(req));
      case Op.GetMany:
        return this.env.respond(token, this.dp.clientGetMany(req));
      case Op.Metadata:
        return this.env.respond(token, { op: Op.Metadata, reqId: req.reqId, status: KvStatus.Ok, flags: 0, json: JSON.stringify(this.metadata()) });
      case Op.Ping:
        return this.env.respond(token, { op: Op.Ping, reqId: req.reqId, status: KvStatus.Ok, flags: 0 });
      case Op.Admin: {
        const { status, answer } = this.admin(req.command);
        return this.env.respond(token, { op: Op.Admin, reqId: req.reqId, status, flags: 0, json: JSON.stringify(answer) });
      }
    }
  }

  /**
   * Answers one admin command line (node-admin.ts: handoff, regenerate, set-policy, join, leave,
   * rebalance), as the `Op.Admin` request does; the simulation's nemesis calls it directly.
   */
  admin(command: string): { status: KvStatus; answer: AdminAnswer } {
    const { status, answer, invalidPolicy } = handleAdmin(adminContext(this.handlers, this.env.now()), command);
    if (invalidPolicy) {
      const store = /^set-policy\s+(\S+)/.exec(command.trim())?.[1] ?? '';
      this.counters.invalidPolicyValues.set(store, (this.counters.invalidPolicyValues.get(store) ?? 0) + 1);
    }
    this.env.log('admin', { command: command.slice(0, 200), ok: answer.ok, message: answer.message });
    return { status, answer };
  }

  /** Emit the replication batches accumulated since the last flush. Call once per event-loop turn. */
  flush(): void {
    this.rep.flushStreams(this.env.now());
  }

  /**
   * Replication lag of every partition this node serves as the active, ms: the age of its oldest
   * write not yet applied by every in-sync replica (0 when none waits). Partitions this node is
   * not the active of are absent.
   */
  replicationLagMs(): Array<{ store: string; partition: number; lagMs: number }> {
    const now = this.env.now();
    const out: Array<{ store: string; partition: number; lagMs: number }> = [];
    for (const lp of this.parts.values()) {
      if (!lp.act) continue;
      const oldest = lp.act.opTimes[0];
      out.push({ store: lp.store.name, partition: lp.partition, lagMs: oldest ? Math.max(0, now - oldest[1]) : 0 });
    }
    return out;
  }

  /**
   * The metadata document (schema 5): partition map, runtime map, leader, the advertised
   * multi-key retry policy (seed 004); see core/metadata.ts.
   */
  metadata(): MetadataDoc {
    return buildMetadata({
      config: this.config,
      id: this.id,
      inc: this.inc,
      me: this.me,
      term: this.term,
      leaderId: this.leaderId,
      isLeader: this.role === 'leader',
      nPartitions: this.nPartitions,
      parts: this.parts,
      committed: this.committed,
      replicatedRevision: (lp) => this.dp.replicatedRevision(lp),
      loop: () => (this.env.loopDelay ? this.env.loopDelay() : null),
      suspected: () => (this.role === 'leader' ? [...this.peers].filter(([, p]) => p.suspectedSince !== null).map(([id]) => id).sort() : []),
      rejoining: () => this.rejoining,
      members: this.membership.members,
    });
  }

  // ───────────────────────────── identity and roles ─────────────────────────────

  private get me(): Member {
    return { node: this.id, inc: this.inc };
  }

  /** Re-derive this node's role in the partition from the entries it holds (core/data-path.ts). */
  private refreshRole(pkey: string): void {
    this.dp.refreshRole(pkey);
  }
}
