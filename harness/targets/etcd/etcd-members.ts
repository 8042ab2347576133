/**
 * What the etcd adapter and sampler share about a running cluster: one etcd3 client per member
 * (no retries, no circuit breaker: every attempt is the harness's own and is recorded), member ids
 * to node ids, and which node led which Raft term.
 */
import { Etcd3 } from 'etcd3';
import { noop } from 'cockatiel';
import type { TargetCluster } from '../target.js';

/** An etcd3 client bound to one member, with etcd3's retry and circuit-breaker policies turned off. */
export function memberClient(host: string, port: number): Etcd3 {
  return new Etcd3({
    hosts: `http://${host}:${port}`,
    faultHandling: { host: () => noop, global: noop },
    // a call that cannot get a connection fails at once ("No connection established"), never waits
    grpcOptions: { 'grpc.initial_reconnect_backoff_ms': 100, 'grpc.max_reconnect_backoff_ms': 1_000 },
  });
}

/** One member's answer to the maintenance Status call (etcd 3.4), numbers parsed. */
export interface MemberStatus {
  node: string;
  /** This member's id (decimal string, as etcd3 gives 64-bit ids). */
  memberId: string;
  /** The leader's member id, '0' when the member knows none. */
  leaderId: string;
  /** The leader's node id as this member names it, null when it knows no leader (or the id is unknown). */
  leader: string | null;
  term: number;
  raftIndex: number;
  appliedIndex: number;
  /** The member's store revision: the last revision it applied. */
  revision: number;
}

/**
 * Which node led which Raft term, learned from Status answers (Raft: at most one leader per term).
 * Bounded: keeps the newest {@link TermLeaders.CAPACITY} terms.
 */
export class TermLeaders {
  static readonly CAPACITY = 4096;
  private readonly byTerm = new Map<number, string>();
  private newest = 0;

  /** Records that `node` leads `term`. */
  record(term: number, node: string): void {
    if (!this.byTerm.has(term)) {
      this.byTerm.set(term, node);
      if (this.byTerm.size > TermLeaders.CAPACITY) {
        const oldest = Math.min(...this.byTerm.keys());
        this.byTerm.delete(oldest);
      }
    }
    if (term > this.newest) this.newest = term;
  }

  get(term: number): string | undefined {
    return this.byTerm.get(term);
  }

  /** The leader of the newest term seen, or undefined. */
  latest(): string | undefined {
    return this.byTerm.get(this.newest);
  }
}

/**
 * The member clients of a cluster with the member-id map and the term book. `close()` closes every
 * client. Member ids come from the MemberList call of any member that answers (names = node ids).
 */
export class EtcdMembers {
  readonly clients = new Map<string, Etcd3>();
  private idToNode: Map<string, string> | null = null;
  private closed = false;

  /** `terms`: the term book, shared between an adapter and a sampler of one cluster. */
  constructor(
    readonly cluster: TargetCluster,
    readonly terms: TermLeaders = new TermLeaders(),
  ) {
    const port = cluster.ports.client;
    if (port === undefined) throw new Error('etcd cluster without a "client" port');
    for (const n of cluster.nodes) this.clients.set(n.id, memberClient(n.host, port));
  }

  client(node: string): Etcd3 {
    const c = this.clients.get(node);
    if (!c) throw new Error(`unknown node ${node}`);
    return c;
  }

  /** The node of a member id, or null when no member answered the member list yet. */
  async nodeOf(memberId: string, timeoutMs = 1_000): Promise<string | null> {
    if (!this.idToNode || !this.idToNode.has(memberId)) await this.loadIds(timeoutMs);
    return this.idToNode?.get(memberId) ?? null;
  }

  private async loadIds(timeoutMs: number): Promise<void> {
    for (const c of this.clients.values()) {
      try {
        const r = await c.cluster.memberList({}, { deadline: Date.now() + timeoutMs });
        const m = new Map<string, string>();
        for (const x of r.members) if (x.name) m.set(String(x.ID), x.name);
        if (m.size > 0) {
          this.idToNode = m;
          return;
        }
      } catch {
        // try the next member (this one is down, paused or has no leader)
      }
    }
  }

  /**
   * The Status of one member within `timeoutMs`, or null when it does not answer. A member that
   * names a leader teaches the term book who led its term.
   */
  async status(node: string, timeoutMs: number): Promise<MemberStatus | null> {
    if (this.closed) return null;
    try {
      const r = await this.client(node).maintenance.status({ deadline: Date.now() + timeoutMs });
      const s: MemberStatus = {
        node,
        memberId: String(r.header.member_id),
        leaderId: String(r.leader),
        leader: null,
        term: Number(r.raftTerm),
        raftIndex: Number(r.raftIndex),
        appliedIndex: Number((r as { raftAppliedIndex?: string }).raftAppliedIndex ?? r.raftIndex),
        revision: Number(r.header.revision),
      };
      if (s.leaderId !== '0') {
        s.leader = await this.nodeOf(s.leaderId, timeoutMs);
        if (s.leader) this.terms.record(s.term, s.leader);
      }
      return s;
    } catch {
      return null;
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const c of this.clients.values()) c.close();
  }
}
