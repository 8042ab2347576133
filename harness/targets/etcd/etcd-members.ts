/**
 * What the etcd adapter and sampler share about a running cluster: one etcd3 client per member
 * (no retries, no circuit breaker: every attempt is the harness's own and is recorded), member ids
 * to node ids, and which node led which Raft term.
 */
import http from 'node:http';
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

/**
 * What one member's Raft node says of itself, as etcd publishes it at `GET /debug/vars` on its
 * client URL (expvar `raft.status`: the raft library's Status, taken in one step on the raft
 * goroutine): its id, current term, the leader it follows, its commit and applied indexes. Ids
 * are hex there.
 */
export interface RaftStatus {
  id: string;
  term: number;
  lead: string;
  commit: number;
  applied: number;
}

/**
 * Parses the `raft.status` object of a `/debug/vars` document.
 * @throws Error (one line) when the document has none, or a field is missing.
 */
export function parseRaftStatus(doc: unknown): RaftStatus {
  const r = (doc as Record<string, unknown> | null)?.['raft.status'] as Record<string, unknown> | undefined;
  if (!r || typeof r !== 'object') throw new Error('no raft.status in /debug/vars');
  const num = (k: string): number => {
    const v = Number(r[k]);
    if (!Number.isSafeInteger(v) || v < 0) throw new Error(`raft.status.${k} is not a count: ${JSON.stringify(r[k])}`);
    return v;
  };
  if (typeof r.id !== 'string' || typeof r.lead !== 'string') throw new Error('raft.status without id or lead');
  return { id: r.id, lead: r.lead, term: num('term'), commit: num('commit'), applied: num('applied') };
}

/** A member id as etcd3 gives it (decimal) from the hex of `raft.status` ('0' stays '0'). */
export function decimalMemberId(hex: string): string {
  return BigInt(`0x${hex}`).toString(10);
}

/** `GET http://host:port/debug/vars` within timeoutMs, parsed as JSON. @throws Error on any failure. */
function debugVars(host: string, port: number, timeoutMs: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host, port, path: '/debug/vars', timeout: timeoutMs, agent: false }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        reject(new Error(`/debug/vars: HTTP ${res.statusCode}`));
        return;
      }
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        try {
          resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        } catch (e) {
          reject(e as Error);
        }
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('/debug/vars: timed out')));
    req.on('error', reject);
  });
}

/**
 * One member's state, numbers parsed: the leader and term from its Raft status (consistent: one
 * step of the raft goroutine), and its store revision from the maintenance Status call. The
 * Status call's own `raftTerm` is NOT used: etcd fills it with the term of the last APPLIED
 * entry, which lags the current term after an election, so that Status can pair the new leader
 * with the old term (a 30 s run recorded term 5 with two leaders that way).
 */
export interface MemberStatus {
  node: string;
  /** This member's id (decimal string, as etcd3 gives 64-bit ids). */
  memberId: string;
  /** The leader's member id (decimal), '0' when the member knows none. */
  leaderId: string;
  /** The leader's node id as this member names it, null when it knows no leader (or the id is unknown). */
  leader: string | null;
  /** The member's current Raft term. */
  term: number;
  /** Its commit index. */
  raftIndex: number;
  /** Its applied index. */
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
   * The state of one member within `timeoutMs` (its Raft status and its Status call, asked in
   * parallel), or null when it does not answer both. A member that names a leader teaches the
   * term book who leads its term.
   */
  async status(node: string, timeoutMs: number): Promise<MemberStatus | null> {
    if (this.closed) return null;
    try {
      const n = this.cluster.nodes.find((x) => x.id === node)!;
      const [r, vars] = await Promise.all([this.client(node).maintenance.status({ deadline: Date.now() + timeoutMs }), debugVars(n.host, this.cluster.ports.client, timeoutMs)]);
      const raft = parseRaftStatus(vars);
      const s: MemberStatus = {
        node,
        memberId: decimalMemberId(raft.id),
        leaderId: decimalMemberId(raft.lead),
        leader: null,
        term: raft.term,
        raftIndex: raft.commit,
        appliedIndex: raft.applied,
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
