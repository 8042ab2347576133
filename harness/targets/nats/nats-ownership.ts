/**
 * The NATS JetStream ownership sampler: the stream's Raft leader is the active owner of the
 * store's one partition. Each round asks every node's monitoring endpoint (`GET /jsz?streams=true&
 * accounts=true`, nats-server 2.9, bounded per node, in parallel) for its own view: the leader it
 * names for the stream and its own copy's last sequence.
 *
 * nats-server 2.9 does not expose the Raft term of a stream's group, so the epoch is the harness's
 * own count of the leader's tenures ({@link LeaderTenures}): it grows by one each time the merged
 * view names a leader other than the last one named. One tenure has exactly one leader by
 * construction, so the verifier's ownership rules (one active per epoch, epochs never going
 * back, acks only from the epoch's active) hold by construction and judge nothing of NATS: the
 * target's scope says so. Only merged rows are sampled (no per-node rows: a node's own view has no
 * term either).
 */
import type { OwnershipSample, OwnershipSampler, OwnershipView, SampleHealth, TargetCluster } from '../target.js';

/** One node's answer: the stream leader it names (null: none) and its own copy of the stream. */
export interface NodeStreamView {
  node: string;
  leader: string | null;
  messages: number;
  firstSeq: number;
  lastSeq: number;
}

/**
 * The tenures of the stream's leader as the harness saw them (shared by the sampler and the client
 * adapter of one cluster). Tenure 0: no leader seen yet.
 */
export class LeaderTenures {
  private tenure = 0;
  private leader: string | null = null;

  /** Notes the leader named now (null: none) and returns the current tenure. */
  observe(leader: string | null): number {
    if (leader !== null && leader !== this.leader) {
      this.tenure++;
      this.leader = leader;
    }
    return this.tenure;
  }

  /** The last leader named and its tenure (leader null before the first). */
  current(): { leader: string | null; tenure: number } {
    return { leader: this.leader, tenure: this.tenure };
  }
}

/**
 * The merged view of one round (pure). The leader is a node that answered, names itself and is
 * named by a majority of the cluster (itself included); none: Unavailable. In sync: the leader and
 * every node that names it and holds at least `floor` (the leader's last sequence a round ago, or
 * its last sequence now when lower: a stream cut short must not keep the others out forever).
 * Healthy when every node is in sync. `replicatedRevision`: the lowest last sequence in sync.
 */
export function mergeViews(store: string, nodes: readonly string[], views: readonly NodeStreamView[], floor: number, tenure: number): OwnershipSample {
  const revisions = Object.fromEntries(views.map((v) => [v.node, v.lastSeq]));
  const majority = Math.floor(nodes.length / 2) + 1;
  const named = new Map<string, number>();
  for (const v of views) if (v.leader !== null) named.set(v.leader, (named.get(v.leader) ?? 0) + 1);
  const leader = views.find((v) => v.leader === v.node && (named.get(v.node) ?? 0) >= majority)?.node ?? null;
  if (leader === null) {
    return { store, partition: 0, node: null, active: null, epoch: tenure, health: 'Unavailable', replicatedRevision: 0, inSync: [], revisions };
  }
  const lead = views.find((v) => v.node === leader)!;
  const bar = Math.min(floor, lead.lastSeq);
  const inSync = nodes.filter((n) => views.some((v) => v.node === n && v.leader === leader && v.lastSeq >= bar));
  const health: SampleHealth = inSync.length === nodes.length ? 'Healthy' : 'Degraded';
  const replicatedRevision = Math.min(...inSync.map((n) => revisions[n]));
  return { store, partition: 0, node: null, active: leader, epoch: tenure, health, replicatedRevision, inSync, revisions };
}

/** Parses one node's `/jsz?streams=true&accounts=true` answer for `stream` (pure). @throws Error (one line) for a body that is not JSZ. */
export function parseJsz(node: string, stream: string, body: unknown): NodeStreamView {
  if (body === null || typeof body !== 'object') throw new Error(`node ${node}: /jsz did not answer JSON`);
  const accounts = (body as { account_details?: unknown }).account_details;
  const empty: NodeStreamView = { node, leader: null, messages: 0, firstSeq: 0, lastSeq: 0 };
  if (!Array.isArray(accounts)) return empty;
  for (const a of accounts as Array<{ stream_detail?: unknown }>) {
    if (!Array.isArray(a?.stream_detail)) continue;
    for (const s of a.stream_detail as Array<{ name?: unknown; cluster?: { leader?: unknown }; state?: { messages?: unknown; first_seq?: unknown; last_seq?: unknown } }>) {
      if (s?.name !== stream) continue;
      const num = (x: unknown): number => (typeof x === 'number' && Number.isFinite(x) ? x : 0);
      const leader = typeof s.cluster?.leader === 'string' && s.cluster.leader !== '' ? s.cluster.leader : null;
      return { node, leader, messages: num(s.state?.messages), firstSeq: num(s.state?.first_seq), lastSeq: num(s.state?.last_seq) };
    }
  }
  return empty;
}

/** Asks one node's monitoring endpoint for its view of `stream`; null when it does not answer within `timeoutMs`. */
export async function nodeStreamView(host: string, port: number, node: string, stream: string, timeoutMs: number): Promise<NodeStreamView | null> {
  try {
    const r = await fetch(`http://${host}:${port}/jsz?streams=true&accounts=true`, { signal: AbortSignal.timeout(timeoutMs) });
    if (!r.ok) return null;
    return parseJsz(node, stream, await r.json());
  } catch {
    return null;
  }
}

/** The sampler of one running cluster (see the module comment). */
export class NatsSampler implements OwnershipSampler {
  private prevLeaderSeq = 0;

  constructor(
    private readonly cluster: TargetCluster,
    private readonly tenures: LeaderTenures,
    private readonly store: string,
    private readonly stream: string,
    /** Bound on each node's answer, ms. */
    private readonly timeoutMs = 500,
  ) {}

  /** Every node's own view (null: it did not answer), in node order. */
  async views(): Promise<Array<NodeStreamView | null>> {
    const port = this.cluster.ports.monitor;
    return Promise.all(this.cluster.nodes.map((n) => nodeStreamView(n.host, port, n.id, this.stream, this.timeoutMs)));
  }

  async sample(): Promise<OwnershipView> {
    const nodes = this.cluster.nodes.map((n) => n.id);
    const views = (await this.views()).filter((v): v is NodeStreamView => v !== null);
    const probe = mergeViews(this.store, nodes, views, this.prevLeaderSeq, 0);
    const tenure = this.tenures.observe(probe.active);
    const merged = { ...probe, epoch: tenure };
    const lead = views.find((v) => v.node === merged.active);
    if (lead) this.prevLeaderSeq = lead.lastSeq;
    return { rows: [merged], leader: merged.active, answered: views.map((v) => v.node) };
  }

  async close(): Promise<void> {}
}
