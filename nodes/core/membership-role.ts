import type { ClusterConfig } from '../cluster-config.js';
import type { Member, RuntimeEntry } from '../cluster-messages.js';
import type { MemberSet } from '../membership/members.js';
import { MemberConsensus, initialMemberSet, type MemberBallot, type MemberMsg } from './member-consensus.js';
import { MigrationDriver, placementNodes } from './migration-driver.js';
import { RETRY_MS } from './partition-state.js';
import type { Election } from './election.js';

/** A spare started with `--join` asks the leader to join it (every RETRY_MS until the set has it). */
export type JoinRequest = { t: 'req-join'; term: number };

/** What a node's membership needs of it (NodeCore implements it; times in ms). */
export interface MembershipHost {
  readonly id: string;
  readonly config: ClusterConfig;
  /** The node's election (core/election.ts): its term, role and the leader it follows. */
  readonly el: Pick<Election, 'term' | 'role' | 'leaderId'>;
  /** Every peer (voters and spares). */
  readonly peerIds: readonly string[];
  readonly voterPeerIds: ReadonlySet<string>;
  /** A majority of the voters. */
  readonly majority: number;
  /** This node votes (not a spare). */
  readonly votes: boolean;
  send(to: string, msg: MemberMsg | JoinRequest): void;
  log(event: string, fields?: Record<string, unknown>): void;
  partitionKeys(): readonly string[];
  committed(pkey: string): RuntimeEntry | undefined;
  inflight(pkey: string): boolean;
  propose(entry: RuntimeEntry, newTenure: boolean, now: number): void;
  liveMember(node: string, now: number): Member | null;
  readonly counters: { migrations: number };
}

/**
 * A node's part in membership (issue 14): the member set's consensus (member-consensus.ts), and
 * as leader the migration driver (migration-driver.ts) and the settling of changes: a joiner is
 * admitted once the plan that gave it copies is carried out, a leaver is removed once no partition
 * lists it. The admin verbs `join`, `leave`, `rebalance` and a `--join` spare's request come here.
 * Only nodes the cluster config names can join (the peer network is the config's): a spare, or a
 * node that left.
 */
export class MembershipRole {
  readonly consensus: MemberConsensus;
  readonly migration: MigrationDriver;
  private readonly h: MembershipHost;
  /** Started with `--join`: ask the leader until the committed set has this node (then never again). */
  private wantsJoin: boolean;
  private lastJoinAsk = -Infinity;

  constructor(host: MembershipHost, wantsJoin: boolean) {
    this.h = host;
    this.wantsJoin = wantsJoin;
    this.consensus = new MemberConsensus(
      {
        id: host.id,
        get peerIds() {
          return host.peerIds;
        },
        voterPeerIds: host.voterPeerIds,
        majority: host.majority,
        selfVotes: host.votes,
        send: (to, msg) => host.send(to, msg),
        log: (e, f) => host.log(e, f),
      },
      initialMemberSet(host.config),
    );
    this.migration = new MigrationDriver({
      stores: host.config.stores,
      partitionKeys: () => host.partitionKeys(),
      committed: (pkey) => host.committed(pkey),
      inflight: (pkey) => host.inflight(pkey),
      propose: (e, nt, now) => host.propose(e, nt, now),
      liveMember: (node, now) => host.liveMember(node, now),
      log: (e, f) => host.log(e, f),
      counters: host.counters,
    });
  }

  /** The committed member set. */
  get members(): MemberSet {
    return this.consensus.committed;
  }

  /** The nodes a regeneration may place copies on: members and joiners (members.ts; never leavers or outsiders). */
  placementNodes(): string[] {
    return placementNodes(this.members);
  }

  /** Leader, after the round's failover decisions (with a fresh majority): re-propose, migrate, settle. */
  leaderTick(now: number): void {
    this.consensus.tick(this.h.el.term, now);
    this.migration.tick(this.members, now);
    const set = this.members;
    if (this.consensus.pending || !this.migration.settled(set)) return;
    const joiner = set.members.find((m) => m.state === 'joining');
    if (joiner) {
      this.propose({ kind: 'admit', id: joiner.id }, now);
      return;
    }
    const keys = this.h.partitionKeys();
    const leaver = set.members.find((m) => m.state === 'leaving' && !keys.some((k) => this.h.committed(k)?.replicas.includes(m.id)));
    if (leaver) this.propose({ kind: 'remove', id: leaver.id }, now);
  }

  /** Follower side, each tick: a `--join` spare asks the leader it knows until the set has it. */
  tick(now: number): void {
    // asked until listed once: a node that was in the set and left (an operator's leave) stays out
    if (this.wantsJoin && this.consensus.everListed.has(this.h.id)) this.wantsJoin = false;
    if (!this.wantsJoin || (this.h.el.role === 'leader') || !this.h.el.leaderId || now - this.lastJoinAsk < RETRY_MS * 4) return;
    this.lastJoinAsk = now;
    this.h.send(this.h.el.leaderId, { t: 'req-join', term: this.h.el.term });
  }

  /** Leader: a `--join` node asks to join. */
  onJoinRequest(from: string, term: number, now: number): void {
    if (!(this.h.el.role === 'leader') || term !== this.h.el.term || this.members.members.some((m) => m.id === from)) return;
    const r = this.join(from, now);
    this.h.log('join-request', { node: from, result: typeof r === 'string' ? r : `version ${r.version}` });
  }

  /**
   * Admin `join <node>` on the leader: the node (named by the cluster config) enters the member set
   * as `joining`; the leader then moves copies onto it and admits it.
   * @returns the proposed set, or a one-line refusal.
   */
  join(node: string, now: number): MemberBallot | string {
    const n = this.h.config.nodes.find((x) => x.id === node);
    if (!n) return `join: unknown node "${node}" (the cluster config names ${this.h.config.nodes.map((x) => x.id).join(', ')})`;
    return this.propose({ kind: 'join', node: { id: n.id, host: n.host, clientPort: n.clientPort, peerPort: n.clusterPort } }, now);
  }

  /**
   * Admin `leave <node>`: the member starts draining (copies moved away, then removed). Refused
   * when fewer members than a store's replication factor would be left to hold copies (the store
   * would run below its configured copies for good).
   */
  leave(node: string, now: number): MemberBallot | string {
    const holders = this.members.members.filter((m) => m.state !== 'leaving' && m.id !== node).length;
    const rf = Math.max(...this.h.config.stores.map((s) => s.replicationFactor));
    if (this.members.members.some((m) => m.id === node && m.state !== 'leaving') && holders < rf) return `leave: ${node} would leave ${holders} members holding copies, fewer than the replication factor ${rf}`;
    return this.propose({ kind: 'leave', id: node }, now);
  }

  /** Admin `rebalance`: plan the map again over the current members. */
  rebalance(): void {
    this.migration.requestRebalance();
  }

  /** Elected: the member sets of the voters merged (member-consensus.ts). */
  elected(states: ReadonlyArray<{ accepted: MemberBallot; committed: MemberBallot } | undefined>): void {
    this.consensus.elected(states);
    this.migration.reset();
  }

  stepDown(): void {
    this.consensus.stepDown();
    this.migration.reset();
  }

  private propose(change: Parameters<MemberConsensus['proposeChange']>[0], now: number): MemberBallot | string {
    if (!(this.h.el.role === 'leader')) return 'not the leader';
    return this.consensus.proposeChange(change, this.h.el.term, now);
  }
}
