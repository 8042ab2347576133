import { performance } from 'node:perf_hooks';
import { Op, type ClientResponse, type WriteInfo } from '../client-protocol.js';
import { KvStatus } from '../kv-status.js';
import type { MetadataDoc, RuntimeMapItem } from '../node-core.js';
import type { AdminAnswer } from '../node-admin.js';
import { partitionOfSegment, segmentOf } from '../partitioning.js';
import { getManyWithLongTailRetry, type LongTailRetryResult } from '../multikey/long-tail-retry.js';
import { MultiKeyRetryPolicyState } from '../multikey/policy-refresh.js';
import { NO_LOCAL_SETTINGS, resolveBatchGetRetryDelay, type LocalMultiKeyRetrySettings } from '../multikey/retry-policy-precedence.js';
import { NodeConnection, type OutgoingRequest } from './node-connection.js';
import { defaultRetryDeps, runWithRetry, type RetryDeps, type RetryOutcome } from './retry-loop.js';
import { retryOptionsFromEnv, type RetryOptions } from './retry-policy.js';
import { refreshWaitBudgetFromEnv, SharedMapRefresher } from './shared-map-refresh.js';
import { TransportError } from './transport-error.js';

/** Where to reach one node's client port. */
export interface Endpoint {
  host: string;
  port: number;
}

/** Options of {@link ZarisClient}. */
export interface ZarisClientOptions {
  /** Client endpoints to discover the cluster from (any subset of the nodes). */
  seeds: Endpoint[];
  /** Retry bounds (default: seed 000's defaults and environment, retryOptionsFromEnv()). */
  retry?: RetryOptions;
  /** Per-attempt response timeout, ms (default 2,000). */
  attemptTimeoutMs?: number;
  /** Timeout of one metadata request during a map refresh, ms (default 500). */
  metadataTimeoutMs?: number;
  /** Wait budget of a caller riding a shared refresh, ms (default ZARIS_CLIENT_MAP_REFRESH_WAIT_MS or 15,000). */
  refreshWaitBudgetMs?: number;
  /** Local multi-key retry settings (seed 004 precedence). */
  multiKey?: LocalMultiKeyRetrySettings;
  /** Injectable clock/sleep (tests); the map refresh is always the client's own. */
  deps?: Omit<RetryDeps, 'refreshMap'>;
  /** Warnings (invalid multi-key policy). */
  warn?: (message: string) => void;
  /**
   * Periodic metadata refresh, ms (seed 004: "the default 60-second interval"; default 60,000;
   * 0 = none, refresh only on errors as seed 000 says). Started by connect(); each one goes
   * through the shared, debounced map refresh, so it coalesces with error-driven ones. A failed
   * periodic refresh keeps the published policy (seed 004) and is otherwise ignored.
   */
  metadataRefreshIntervalMs?: number;
}

/** Seed 004's default metadata refresh interval, ms (not a propagation SLA). */
export const DEFAULT_METADATA_REFRESH_INTERVAL_MS = 60_000;

/** One attempt's result as the retry loop sees it. */
export interface WriteResult {
  status: KvStatus;
  node: string;
  epoch: number;
  info: WriteInfo;
}

/** One attempt of a read. */
export interface ReadResult {
  status: KvStatus;
  node: string;
  epoch: number;
  version: number;
  value: Buffer | null;
}

/** The merged view of the cluster the client routes with. */
export interface ClusterView {
  cluster: string;
  leader: string | null;
  nodes: Map<string, Endpoint>;
  /** Per store; `policy` is the store's advertised multi-key retry policy text (seed 004; the admin set-policy's, else the cluster's). */
  stores: Map<string, { segments: number; partitions: number; replicationFactor: number; ackMode: 'sync' | 'async'; batchGetLimit: number; policy: string }>;
  /** Per partition (`store/partition`): the runtime entry with the highest epoch any node reported. */
  runtime: Map<string, RuntimeMapItem & { replicas: string[] }>;
  /** Metadata schema of the responses. */
  schema: number;
  /** The advertised multi-key policy text (seed 004), from the leader's (or any) response. */
  policy: string;
  /** Current incarnation of each node that answered (a restarted node has a new one). */
  incs: Map<string, string>;
  /** When this view was built (performance.now()). */
  at: number;
}

/**
 * The options a {@link ZarisClient} actually runs with, after its defaults and environment were
 * applied (seed 000: retry bounds from ZARIS_REQUEST_TIMEOUT / ZARIS_DISABLE_RETRIES, refresh wait
 * budget from ZARIS_CLIENT_MAP_REFRESH_WAIT_MS). Times in ms.
 */
export interface ResolvedClientOptions {
  readonly retry: RetryOptions;
  readonly attemptTimeoutMs: number;
  readonly metadataTimeoutMs: number;
  readonly refreshWaitBudgetMs: number;
}

/**
 * The store's client (DESIGN.md §2 "Client", seed 000): routes each key to its partition's active
 * owner from the merged partition and runtime maps, and runs every operation through the retry
 * brain (typed statuses, attempts AND deadline, backoff, one shared debounced map refresh).
 * Each operation returns the whole {@link RetryOutcome}: the result, the attempt trace, and the
 * ledger outcome it implies (ok / fail / info).
 */
export class ZarisClient {
  private readonly conns = new Map<string, NodeConnection>();
  private view: ClusterView | null = null;
  private readonly refresher: SharedMapRefresher;
  private readonly retry: RetryOptions;
  private readonly deps: RetryDeps;
  private readonly attemptTimeoutMs: number;
  private readonly refreshWaitBudgetMs: number;
  private readonly policies = new Map<string, MultiKeyRetryPolicyState>();
  private closed = false;
  private periodic: NodeJS.Timeout | null = null;
  /** Count of map refreshes that fetched (for figures). */
  fetches = 0;
  /** Count of periodic refreshes started (seed 004's interval). */
  periodicRefreshes = 0;

  constructor(private readonly opts: ZarisClientOptions) {
    this.retry = opts.retry ?? retryOptionsFromEnv();
    this.attemptTimeoutMs = opts.attemptTimeoutMs ?? 2_000;
    this.refreshWaitBudgetMs = opts.refreshWaitBudgetMs ?? refreshWaitBudgetFromEnv();
    this.refresher = new SharedMapRefresher(() => this.fetchView(), { waitBudgetMs: this.refreshWaitBudgetMs });
    const base = defaultRetryDeps(() => this.refresher.refresh());
    this.deps = opts.deps ? { ...opts.deps, refreshMap: base.refreshMap } : base;
  }

  /** The options this client runs with (defaults and environment applied). */
  get options(): ResolvedClientOptions {
    return { retry: this.retry, attemptTimeoutMs: this.attemptTimeoutMs, metadataTimeoutMs: this.opts.metadataTimeoutMs ?? 500, refreshWaitBudgetMs: this.refreshWaitBudgetMs };
  }

  /**
   * Discovers the cluster, then starts the periodic metadata refresh (seed 004; see
   * {@link ZarisClientOptions.metadataRefreshIntervalMs}).
   * @throws TransportError when no seed answers (no periodic refresh is started then).
   */
  async connect(): Promise<this> {
    await this.fetchView();
    const every = this.opts.metadataRefreshIntervalMs ?? DEFAULT_METADATA_REFRESH_INTERVAL_MS;
    if (every > 0 && !this.periodic && !this.closed) {
      this.periodic = setInterval(() => {
        this.periodicRefreshes++;
        this.refresher.refresh().catch(() => undefined);
      }, every);
      this.periodic.unref();
    }
    return this;
  }

  /** The current merged view (after connect()). */
  get clusterView(): ClusterView {
    if (!this.view) throw new Error('client not connected');
    return this.view;
  }

  /** Refresh counters of the shared map refresher. */
  refreshCounters(): ReturnType<SharedMapRefresher['counters']> {
    return this.refresher.counters();
  }

  /** Puts a value (optionally ifMatchVersion or ifAbsent). Never rejects for store/transport failures. */
  put(store: string, key: string, value: Buffer, pre: { ifMatchVersion?: number; ifAbsent?: boolean } = {}): Promise<RetryOutcome<WriteResult>> {
    const req: OutgoingRequest = { op: Op.Put, store, key, value, ...(pre.ifMatchVersion !== undefined ? { ifMatchVersion: pre.ifMatchVersion } : {}), ...(pre.ifAbsent ? { ifAbsent: true } : {}) };
    return runWithRetry(() => this.writeAttempt(store, key, req), this.retry, this.deps);
  }

  /** Deletes a key (optionally ifMatchVersion). */
  delete(store: string, key: string, pre: { ifMatchVersion?: number } = {}): Promise<RetryOutcome<WriteResult>> {
    const req: OutgoingRequest = { op: Op.Delete, store, key, ...(pre.ifMatchVersion !== undefined ? { ifMatchVersion: pre.ifMatchVersion } : {}) };
    return runWithRetry(() => this.writeAttempt(store, key, req), this.retry, this.deps);
  }

  /** Reads a key from its active owner. */
  get(store: string, key: string): Promise<RetryOutcome<ReadResult>> {
    return runWithRetry(
      async () => {
        const { node, conn } = this.route(store, key);
        const res = await conn.request({ op: Op.Get, store, key }, this.attemptTimeoutMs);
        if (res.op !== Op.Get) throw new TransportError('Transport', { message: `unexpected response op ${res.op}` });
        return { status: res.status, node: res.node || node, epoch: res.epoch, version: res.version, value: res.value };
      },
      this.retry,
      this.deps,
    );
  }

  /**
   * A local (probe) read: asks `node` itself for its own copy of the key, one attempt, no routing
   * and no retry (never used by the ordinary calls). The node answers Ok (value, version) or
   * NotFound (version) when, by its own committed entry, it is an in-sync member of the
   * partition under its current incarnation and not catching up; else a non-Ok status
   * (Unavailable, Moved). Issue 10: the workload reads a sync ack's other in-sync copies with it.
   * @throws TransportError when the node is unknown, unreachable, or silent past the attempt timeout.
   */
  async getLocal(node: string, store: string, key: string): Promise<ReadResult> {
    const res = await this.conn(node).request({ op: Op.Get, store, key, local: true }, this.attemptTimeoutMs);
    if (res.op !== Op.Get) throw new TransportError('Transport', { message: `unexpected response op ${res.op}` });
    return { status: res.status, node: res.node || node, epoch: res.epoch, version: res.version, value: res.value };
  }

  /**
   * An admin request (nodes/node-admin.ts), e.g. `handoff sync3/0 to n2`: sent to the leader of a
   * fresh view; a node that answers `Moved` names the leader it knows, which is asked next (at
   * most 3 nodes in all). Never retried otherwise: a refusal (Unavailable, InvalidInput) is the
   * answer.
   * @returns the status and the node's JSON answer.
   * @throws TransportError when no node could be asked or none answered within the attempt timeout.
   */
  async admin(command: string): Promise<{ status: KvStatus; answer: AdminAnswer }> {
    const view = await this.fetchView();
    let target = view.leader ?? [...view.nodes.keys()][0];
    const asked = new Set<string>();
    for (;;) {
      asked.add(target);
      const res = await this.conn(target).request({ op: Op.Admin, command }, this.attemptTimeoutMs);
      if (res.op !== Op.Admin) throw new TransportError('Transport', { message: `unexpected response op ${res.op}` });
      const answer = JSON.parse(res.json) as AdminAnswer;
      if (res.status !== KvStatus.Moved || !answer.leader || asked.has(answer.leader) || asked.size >= 3) return { status: res.status, answer };
      target = answer.leader;
    }
  }

  /**
   * Batch read with the seed 004 long-tail retry: keys grouped by active owner; a group still
   * pending after the effective delay (captured once from the distinct-key count) is retried
   * once on another in-sync replica.
   * @throws KeyCapExceededError above the store's batchGetLimit (500 by default), before fan-out.
   */
  async getMany(store: string, keys: string[]): Promise<LongTailRetryResult<ReadResult>> {
    const view = this.clusterView;
    const st = view.stores.get(store);
    const policy = this.policyState(store).serverPolicy();
    return getManyWithLongTailRetry<ReadResult>(
      keys,
      { batchGetLimit: st?.batchGetLimit, delayMsFor: (n) => resolveBatchGetRetryDelay(this.opts.multiKey ?? NO_LOCAL_SETTINGS, policy, n).delayMs },
      {
        routeKey: (key) => {
          const e = this.entryFor(store, key);
          const primary = e?.active ?? e?.replicas[0] ?? '';
          const alternate = e ? (e.inSync.find((n) => n !== primary) ?? null) : null;
          return { primary, alternate };
        },
        fetch: async (target, ks) => {
          const conn = this.conn(target);
          const res = await conn.request({ op: Op.GetMany, store, keys: [...ks], allowReplica: true }, this.attemptTimeoutMs);
          if (res.op !== Op.GetMany) throw new TransportError('Transport', { message: `unexpected response op ${res.op}` });
          const out = new Map<string, ReadResult>();
          res.items.forEach((it, i) => {
            if (it.status === KvStatus.Ok || it.status === KvStatus.NotFound) out.set(ks[i], { status: it.status, node: res.node, epoch: 0, version: it.version, value: it.value });
          });
          return out;
        },
      },
    );
  }

  /**
   * Reads many keys from their active owners only (the end phase's final reads: never from a
   * replica, which may lag in an async store). Keys are grouped by active owner and sent as batch
   * reads of at most the store's batchGetLimit; a key the batch could not answer (Moved,
   * Unavailable, a transport failure) is read again on its own through the retry brain.
   * @returns per key: the read result, or undefined when it could not be read.
   */
  async readMany(store: string, keys: readonly string[]): Promise<Map<string, ReadResult | undefined>> {
    const out = new Map<string, ReadResult | undefined>();
    const st = this.clusterView.stores.get(store);
    if (!st) throw new Error(`unknown store "${store}"`);
    const groups = new Map<string, string[]>();
    const single: string[] = [];
    for (const k of keys) {
      const active = this.entryFor(store, k)?.active;
      if (!active) single.push(k);
      else {
        const g = groups.get(active) ?? [];
        g.push(k);
        groups.set(active, g);
      }
    }
    const limit = Math.max(1, Math.min(st.batchGetLimit, 500));
    await Promise.all(
      [...groups].map(async ([node, ks]) => {
        for (let i = 0; i < ks.length; i += limit) {
          const chunk = ks.slice(i, i + limit);
          try {
            const res = await this.conn(node).request({ op: Op.GetMany, store, keys: chunk, allowReplica: false }, this.attemptTimeoutMs);
            if (res.op !== Op.GetMany || res.status !== KvStatus.Ok || res.items.length !== chunk.length) throw new Error('batch read not answered');
            res.items.forEach((it, j) => {
              if (it.status === KvStatus.Ok || it.status === KvStatus.NotFound) out.set(chunk[j], { status: it.status, node: res.node, epoch: 0, version: it.version, value: it.value });
              else single.push(chunk[j]);
            });
          } catch {
            single.push(...chunk);
          }
        }
      }),
    );
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(32, single.length) }, async () => {
        while (next < single.length) {
          const k = single[next++];
          const o = await this.get(store, k);
          out.set(k, o.result && (o.result.status === KvStatus.Ok || o.result.status === KvStatus.NotFound) ? o.result : undefined);
        }
      }),
    );
    return out;
  }

  /** The seed 004 policy state of a store (published server policy, invalid counter). */
  policyState(store: string): MultiKeyRetryPolicyState {
    let s = this.policies.get(store);
    if (!s) {
      s = new MultiKeyRetryPolicyState({ store, logger: { warn: this.opts.warn ?? ((m) => process.stderr.write(`${m}\n`)) }, now: () => performance.now() });
      this.policies.set(store, s);
    }
    return s;
  }

  /**
   * Asks every known node for its metadata (bounded wait) and merges them: per partition, the
   * runtime entry with the highest epoch; replicatedRevision from the node that reports itself the
   * active at that epoch. Used by the map refresh and by the harness's runtime-map sampler.
   * @throws TransportError (NodeUnavailable) when no node answered.
   */
  async fetchView(): Promise<ClusterView> {
    return (await this.fetchViewAndDocs()).view;
  }

  /**
   * As {@link fetchView}, also returning the metadata documents the view was merged from (one
   * per node that answered, each with that node's OWN committed runtime entries and revisions):
   * the harness's cluster watch records them per node.
   * @throws TransportError (NodeUnavailable) when no node answered.
   */
  async fetchViewAndDocs(): Promise<{ view: ClusterView; docs: MetadataDoc[] }> {
    this.fetches++;
    const endpoints = new Map<string, Endpoint>();
    if (this.view) for (const [id, ep] of this.view.nodes) endpoints.set(id, ep);
    else this.opts.seeds.forEach((s, i) => endpoints.set(`seed${i}`, s));
    const timeout = this.opts.metadataTimeoutMs ?? 500;
    const docs: MetadataDoc[] = [];
    await Promise.all(
      [...endpoints].map(async ([id, ep]) => {
        try {
          const res: ClientResponse = await this.connFor(id, ep).request({ op: Op.Metadata }, timeout);
          if (res.op === Op.Metadata && res.status === KvStatus.Ok) docs.push(JSON.parse(res.json) as MetadataDoc);
        } catch {
          // a node that does not answer simply does not contribute
        }
      }),
    );
    if (docs.length === 0) {
      for (const s of this.policies.values()) s.onRefresh({ kind: 'failure', cluster: this.view?.cluster ?? '', reason: 'no node answered' });
      throw new TransportError('NodeUnavailable', { message: `no node answered a metadata request (${[...endpoints.values()].map((e) => `${e.host}:${e.port}`).join(', ')})` });
    }
    const view = mergeMetadata(docs);
    if (!this.view) {
      // seeds were placeholders: re-key the connections by node id
      for (const [k, c] of this.conns) if (k.startsWith('seed')) c.close();
      for (const k of [...this.conns.keys()]) if (k.startsWith('seed')) this.conns.delete(k);
    }
    this.view = view;
    for (const st of view.stores.keys()) {
      const ps = this.policyState(st);
      ps.onClusterDiscovered(view.cluster);
      ps.onRefresh({ kind: 'success', cluster: view.cluster, schemaVersion: view.schema, policy: view.stores.get(st)?.policy ?? view.policy });
    }
    return { view, docs };
  }

  /** Closes every connection. */
  close(): void {
    this.closed = true;
    if (this.periodic) clearInterval(this.periodic);
    this.periodic = null;
    for (const c of this.conns.values()) c.close();
    this.conns.clear();
  }

  private entryFor(store: string, key: string): (RuntimeMapItem & { replicas: string[] }) | undefined {
    const view = this.clusterView;
    const st = view.stores.get(store);
    if (!st) return undefined;
    const seg = segmentOf(key, st.segments);
    return view.runtime.get(`${store}/${partitionOfSegment(seg, st.partitions)}`);
  }

  private route(store: string, key: string): { node: string; conn: NodeConnection } {
    const view = this.clusterView;
    if (!view.stores.has(store)) throw new Error(`unknown store "${store}"`);
    const e = this.entryFor(store, key);
    if (!e || !e.active) throw new TransportError('PartitionUnavailable', { message: `no active owner for ${store}/${key}`, mayHaveBeenSent: false });
    return { node: e.active, conn: this.conn(e.active) };
  }

  private async writeAttempt(store: string, key: string, req: OutgoingRequest): Promise<WriteResult> {
    const { node, conn } = this.route(store, key);
    const res = await conn.request(req, this.attemptTimeoutMs);
    if (res.op !== Op.Put && res.op !== Op.Delete) throw new TransportError('Transport', { message: `unexpected response op ${res.op}`, mayHaveBeenSent: true });
    return { status: res.status, node: res.info.node || node, epoch: res.info.epoch, info: res.info };
  }

  private conn(node: string): NodeConnection {
    const ep = this.clusterView.nodes.get(node);
    if (!ep) throw new TransportError('NodeUnavailable', { message: `unknown node ${node}`, mayHaveBeenSent: false });
    return this.connFor(node, ep);
  }

  private connFor(id: string, ep: Endpoint): NodeConnection {
    let c = this.conns.get(id);
    if (!c) {
      if (this.closed) throw new TransportError('NodeUnavailable', { message: 'client closed', mayHaveBeenSent: false });
      c = new NodeConnection({ host: ep.host, port: ep.port });
      this.conns.set(id, c);
    }
    return c;
  }
}

/**
 * Merges metadata documents from several nodes into one view: per partition the entry with the
 * highest epoch (a node that missed a commit reports an older one); replicatedRevision only from
 * the node that is the active at that epoch.
 */
export function mergeMetadata(docs: MetadataDoc[]): ClusterView {
  const leaderDoc = docs.find((d) => d.isLeader) ?? docs.reduce((a, b) => (b.term > a.term ? b : a));
  const nodes = new Map<string, Endpoint>();
  for (const n of leaderDoc.nodes) nodes.set(n.id, { host: n.host, port: n.clientPort });
  const stores: ClusterView['stores'] = new Map();
  for (const s of leaderDoc.stores) {
    const policy = s.multiKeyLongTailRetryThresholdsMs ?? leaderDoc.multiKeyLongTailRetryThresholdsMs ?? '';
    stores.set(s.name, { segments: s.segments, partitions: s.partitions, replicationFactor: s.replicationFactor, ackMode: s.ackMode, batchGetLimit: s.batchGetLimit, policy });
  }
  const runtime = new Map<string, RuntimeMapItem & { replicas: string[] }>();
  const incs = new Map<string, string>();
  for (const d of docs) {
    incs.set(d.node, d.inc);
    const replicasOf = new Map(d.partitionMap.partitions.map((p) => [`${p.store}/${p.partition}`, p.replicas]));
    for (const r of d.runtimeMap) {
      const k = `${r.store}/${r.partition}`;
      const cur = runtime.get(k);
      const mine = r.active === d.node && r.replicatedRevision !== null;
      if (!cur || r.epoch > cur.epoch) {
        runtime.set(k, { ...r, replicatedRevision: mine ? r.replicatedRevision : null, replicas: replicasOf.get(k) ?? [] });
      } else if (r.epoch === cur.epoch && mine && cur.replicatedRevision === null) {
        cur.replicatedRevision = r.replicatedRevision;
      }
    }
  }
  return {
    cluster: leaderDoc.cluster,
    leader: leaderDoc.isLeader ? leaderDoc.node : leaderDoc.leader,
    nodes,
    stores,
    runtime,
    schema: leaderDoc.schema,
    policy: leaderDoc.multiKeyLongTailRetryThresholdsMs ?? '',
    incs,
    at: performance.now(),
  };
}
