import { readFileSync } from 'node:fs';

/** One store node: where it listens (DESIGN.md §2 "Topology"). */
export interface NodeConfig {
  /** Node id, e.g. "n1". */
  id: string;
  /** Address the node binds to and its peers dial (e.g. 127.0.0.11, or a container address). */
  host: string;
  /** TCP port for client requests. */
  clientPort: number;
  /** TCP port for node-to-node traffic (replication, election, runtime map). */
  clusterPort: number;
  /** A preferred primary heads one partition of every store (DESIGN.md §2). */
  preferredPrimary: boolean;
  /**
   * HTTP port of the node's metrics endpoint (Prometheus text format, `GET /metrics`,
   * node-metrics.ts); 0 or absent: no endpoint. `--metrics-port` overrides it.
   */
  metricsPort?: number;
  /**
   * A spare (issue 14, membership): outside the member set at start. It runs and hears the
   * leader, but holds no copy, heads no partition (preferredPrimary is false) and never votes: the
   * voters are the non-spare nodes, fixed for the cluster's life. It takes copies once a `join`
   * admits it into the member set (nodes/membership/members.ts). Absent: false.
   */
  spare?: boolean;
}

/** The nodes that vote (elections, runtime-map commits): the non-spare nodes, config order. */
export function voterIds(config: Pick<ClusterConfig, 'nodes'>): string[] {
  return config.nodes.filter((n) => !n.spare).map((n) => n.id);
}

/** One store (keyspace) of the cluster. */
export interface StoreConfig {
  name: string;
  /** Copies of every partition, 1..nodes. */
  replicationFactor: number;
  /** sync: ack after every in-sync replica applied; async: ack first, replicate after. */
  ackMode: 'sync' | 'async';
  /** Fixed number of hash segments; segments group into partitions. */
  segments: number;
  /** getMany cap in distinct keys (seed 004: 500 when unset). */
  batchGetLimit?: number;
}

/** Timers of the failover machinery, all in milliseconds (seed 002 gives the defaults). */
export interface TimingConfig {
  /** Leader heartbeat period. */
  heartbeatMs: number;
  /** Randomised election timeout range (Raft-style). */
  electionTimeoutMinMs: number;
  electionTimeoutMaxMs: number;
  /** Silence after which a peer is suspected (no reply to heartbeats). */
  suspectAfterMs: number;
  /** Suspicion lasting this long confirms a silent owner down (seed 002: 10 s default). */
  escalationTimeoutMs: number;
  /** An in-sync replica that has not applied an op within this long is reported to the leader. */
  replicationTimeoutMs: number;
  /** Unavailable partition with no live in-sync member is re-homed after this long (seed 002). */
  evictionTimeoutMs: number;
  /** The recovery sweep waits this long after a transition before returning to Healthy. */
  recoveryCooldownMs: number;
  /** An active that has not heard from a leader for this long stops serving. */
  leaseMs: number;
  /** A write still unresolved this long after it was applied is answered as indeterminate. */
  writeResolveTimeoutMs: number;
  /**
   * A peer link on which a write has waited this long for the peer's read acknowledgement
   * delivers nothing (a connection cut by a partition sits in TCP retransmission backoff): the
   * shell resets it and dials a new one (issue 11; link-watch.ts). Default 400 ms: after a heal
   * the async replicas must catch up within the 1 s async lag bound (history-format.md v2,
   * replication-lag), and TCP's own retransmission may come 0.8 s after the heal, or 1.6 s.
   */
  linkStallMs: number;
}

/** The whole cluster config file (`zaris-certify node --config FILE`). */
export interface ClusterConfig {
  /** Cluster name; seed 004 keys the retained retry policy by cluster. */
  cluster: string;
  nodes: NodeConfig[];
  stores: StoreConfig[];
  timing: TimingConfig;
  /** Largest frame accepted on either port, bytes. */
  maxFrameBytes: number;
  /**
   * The server property `server.fast.client.multi.key.long.tail.retry.thresholds.ms` (seed 004).
   * "" (default) advertises no policy; an invalid non-empty value stops the node at start.
   */
  multiKeyLongTailRetryThresholdsMs: string;
  /**
   * A deliberate bug, for the harness's self-test only (a certifier that never says FAILED proves
   * nothing; issues 10 and 12). Each brings back one classic failure, at the place the real bug
   * would live:
   * - `lose-on-promotion`: a node that becomes the active owner of a partition by failover or
   *   failback starts from an empty copy, losing acknowledged writes;
   * - `stale-owner-acks`: an owner keeps acknowledging async writes for 5 s after its lease
   *   lapsed (a cut-off or paused owner acknowledges what its successor never sees);
   * - `never-replicate-async`: an async store's active acknowledges and never streams its writes
   *   to the replicas, nor reports them lagging (they stay in sync on paper);
   * - `no-possession-proof`: the leader promotes availability-first (most synced segments, then
   *   partition-map order) straight to Degraded: no comparison of what the candidates hold, no
   *   sync from a more complete live holder (seed 002, step 3);
   * - `fencing-off-by-one`: a replica presents its own watermark as its catch-up position in the
   *   owner's log whenever the owner's entry is at an epoch equal to its own, where it must
   *   require that its copy followed that owner's tenure (the position of a returning old owner,
   *   whose log diverged, is trusted: DESIGN.md §2 "never a replica's own watermark");
   * - `sync-ack-before-replica`: a sync write is acknowledged as soon as the active applied it,
   *   before any replica did (the ack's `copies` still tells the truth: 1);
   * - `skip-liveness-recheck`: the leader believes a NodeLeft at once (a closed connection
   *   confirms the node down: no probe, no suspicion and escalation; seed 002, step 1);
   * - `catchup-skips-last-op`: a catch-up from the op log leaves out the last op of each
   *   segment's suffix, while the replica takes the sender's revision as its own.
   * A node started with one logs it loudly at start.
   */
  selfTestBug?: SelfTestBug;
}

/** The deliberate bugs a node can be started with (self-test only; issue 12 measures how often each is caught). */
export const SELF_TEST_BUGS = [
  'lose-on-promotion',
  'stale-owner-acks',
  'never-replicate-async',
  'no-possession-proof',
  'fencing-off-by-one',
  'sync-ack-before-replica',
  'skip-liveness-recheck',
  'catchup-skips-last-op',
] as const;
export type SelfTestBug = (typeof SELF_TEST_BUGS)[number];

/** Defaults for production-like runs (seed 002: 10 s escalation). */
export const DEFAULT_TIMING: TimingConfig = Object.freeze({
  heartbeatMs: 100,
  electionTimeoutMinMs: 500,
  electionTimeoutMaxMs: 1000,
  suspectAfterMs: 1_000,
  escalationTimeoutMs: 10_000,
  replicationTimeoutMs: 600,
  evictionTimeoutMs: 60_000,
  recoveryCooldownMs: 1_000,
  leaseMs: 1_500,
  writeResolveTimeoutMs: 5_000,
  linkStallMs: 400,
});

/**
 * The lease an owner uses, ms: timing.leaseMs, capped below suspectAfterMs + escalationTimeoutMs
 * by four heartbeats, so that no leader can promote another owner before a cut-off owner's lease
 * lapsed (node-core.ts, `leaseMs`).
 */
export function ownerLeaseUsedMs(t: TimingConfig): number {
  return Math.max(t.heartbeatMs, Math.min(t.leaseMs, t.suspectAfterMs + t.escalationTimeoutMs - 4 * t.heartbeatMs));
}

/**
 * Slack of the declared lease over the lease used, ms: the owner checks its lease when a request
 * arrives, which can be this late after the harness dated the request (a loaded event loop, a
 * queued frame) and after the harness dated a cut (the rule dates a partition from just before
 * its iptables rules were installed; up to ~150 ms seen on a loaded 2-core machine).
 */
export const OWNER_LEASE_SLACK_MS = 500;

/**
 * The longest time an owner cut off from a majority may go on acknowledging, ms (the store's
 * declared lease, recorded by the harness as the run's `leaseMs`; history-format.md v2,
 * async-ack rule 6): the lease used ({@link ownerLeaseUsedMs}) plus one heartbeat (the last
 * reply the leader echoed may precede the cut by one heartbeat) plus {@link OWNER_LEASE_SLACK_MS}.
 */
export function ownerLeaseMs(t: TimingConfig): number {
  return ownerLeaseUsedMs(t) + t.heartbeatMs + OWNER_LEASE_SLACK_MS;
}

/** Default largest frame: 4 MiB. */
export const DEFAULT_MAX_FRAME_BYTES = 4 * 1024 * 1024;

/** A user mistake in a cluster config; the message is one line, fit to print as is. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

function fail(msg: string): never {
  throw new ConfigError(msg);
}

function isPort(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v > 0 && v < 65536;
}

/**
 * Validates a parsed config object and fills defaults (timing, maxFrameBytes, segments).
 * @throws ConfigError with a one-line reason for any invalid field.
 */
export function validateClusterConfig(raw: unknown): ClusterConfig {
  if (typeof raw !== 'object' || raw === null) fail('cluster config: not a JSON object');
  const r = raw as Record<string, unknown>;
  const nodesRaw = r.nodes;
  if (!Array.isArray(nodesRaw) || nodesRaw.length === 0) fail('cluster config: "nodes" must be a non-empty array');
  const ids = new Set<string>();
  const endpoints = new Set<string>();
  const nodes: NodeConfig[] = nodesRaw.map((n: unknown, i: number) => {
    const o = (n ?? {}) as Record<string, unknown>;
    if (typeof o.id !== 'string' || !/^[A-Za-z0-9_-]{1,32}$/.test(o.id)) fail(`cluster config: nodes[${i}].id must be 1-32 characters of [A-Za-z0-9_-]`);
    if (ids.has(o.id)) fail(`cluster config: duplicate node id "${o.id}"`);
    ids.add(o.id);
    if (typeof o.host !== 'string' || o.host.length === 0) fail(`cluster config: node ${o.id}: "host" must be a non-empty string`);
    if (!isPort(o.clientPort)) fail(`cluster config: node ${o.id}: "clientPort" must be a port number`);
    if (!isPort(o.clusterPort)) fail(`cluster config: node ${o.id}: "clusterPort" must be a port number`);
    if (o.spare !== undefined && typeof o.spare !== 'boolean') fail(`cluster config: node ${o.id}: "spare" must be true or false`);
    if (o.spare === true && o.preferredPrimary === true) fail(`cluster config: node ${o.id}: a spare cannot be a preferred primary (it holds no copy until it joins)`);
    if (o.metricsPort !== undefined && o.metricsPort !== 0 && !isPort(o.metricsPort)) fail(`cluster config: node ${o.id}: "metricsPort" must be a port number or 0 (off)`);
    for (const p of [o.clientPort, o.clusterPort, ...(typeof o.metricsPort === 'number' && o.metricsPort > 0 ? [o.metricsPort] : [])]) {
      const ep = `${o.host}:${p}`;
      if (endpoints.has(ep)) fail(`cluster config: node ${o.id}: endpoint ${ep} is used twice`);
      endpoints.add(ep);
    }
    return {
      id: o.id,
      host: o.host,
      clientPort: o.clientPort,
      clusterPort: o.clusterPort,
      preferredPrimary: o.spare === true ? false : o.preferredPrimary === undefined ? true : o.preferredPrimary === true,
      ...(o.spare === true ? { spare: true } : {}),
      ...(typeof o.metricsPort === 'number' && o.metricsPort > 0 ? { metricsPort: o.metricsPort } : {}),
    };
  });
  if (!nodes.some((n) => n.preferredPrimary)) fail('cluster config: at least one node must be a preferred primary');
  const storesRaw = r.stores;
  if (!Array.isArray(storesRaw) || storesRaw.length === 0) fail('cluster config: "stores" must be a non-empty array');
  const names = new Set<string>();
  const stores: StoreConfig[] = storesRaw.map((s: unknown, i: number) => {
    const o = (s ?? {}) as Record<string, unknown>;
    if (typeof o.name !== 'string' || !/^[A-Za-z0-9_-]{1,32}$/.test(o.name)) fail(`cluster config: stores[${i}].name must be 1-32 characters of [A-Za-z0-9_-]`);
    if (names.has(o.name)) fail(`cluster config: duplicate store "${o.name}"`);
    names.add(o.name);
    const rf = o.replicationFactor;
    const voters = nodes.filter((n) => !n.spare).length;
    if (typeof rf !== 'number' || !Number.isInteger(rf) || rf < 1 || rf > voters) {
      fail(`cluster config: store ${o.name}: replicationFactor must be an integer from 1 to ${voters} (the non-spare nodes)`);
    }
    if (o.ackMode !== 'sync' && o.ackMode !== 'async') fail(`cluster config: store ${o.name}: ackMode must be "sync" or "async"`);
    const segments = o.segments === undefined ? 64 : o.segments;
    if (typeof segments !== 'number' || !Number.isInteger(segments) || segments < 1 || segments > 65535) {
      fail(`cluster config: store ${o.name}: segments must be an integer from 1 to 65535`);
    }
    const out: StoreConfig = { name: o.name, replicationFactor: rf, ackMode: o.ackMode, segments };
    if (o.batchGetLimit !== undefined) {
      if (typeof o.batchGetLimit !== 'number' || !Number.isInteger(o.batchGetLimit) || o.batchGetLimit < 1) {
        fail(`cluster config: store ${o.name}: batchGetLimit must be a positive integer`);
      }
      out.batchGetLimit = o.batchGetLimit;
    }
    return out;
  });
  const timing: TimingConfig = { ...DEFAULT_TIMING };
  if (r.timing !== undefined) {
    if (typeof r.timing !== 'object' || r.timing === null) fail('cluster config: "timing" must be an object');
    for (const [k, v] of Object.entries(r.timing as Record<string, unknown>)) {
      if (!(k in DEFAULT_TIMING)) fail(`cluster config: unknown timing field "${k}"`);
      if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) fail(`cluster config: timing.${k} must be a positive number of milliseconds`);
      (timing as unknown as Record<string, number>)[k] = v;
    }
  }
  if (timing.electionTimeoutMaxMs < timing.electionTimeoutMinMs) fail('cluster config: timing.electionTimeoutMaxMs is below electionTimeoutMinMs');
  const maxFrameBytes = r.maxFrameBytes === undefined ? DEFAULT_MAX_FRAME_BYTES : r.maxFrameBytes;
  if (typeof maxFrameBytes !== 'number' || !Number.isInteger(maxFrameBytes) || maxFrameBytes < 1024) {
    fail('cluster config: maxFrameBytes must be an integer of at least 1024');
  }
  const policy = r.multiKeyLongTailRetryThresholdsMs ?? '';
  if (typeof policy !== 'string') fail('cluster config: multiKeyLongTailRetryThresholdsMs must be a string');
  if (r.selfTestBug !== undefined && !(SELF_TEST_BUGS as readonly unknown[]).includes(r.selfTestBug)) {
    fail(`cluster config: selfTestBug must be one of ${SELF_TEST_BUGS.join(', ')}`);
  }
  return {
    ...(r.selfTestBug !== undefined ? { selfTestBug: r.selfTestBug as SelfTestBug } : {}),
    cluster: typeof r.cluster === 'string' && r.cluster.length > 0 ? r.cluster : 'zaris',
    nodes,
    stores,
    timing,
    maxFrameBytes,
    multiKeyLongTailRetryThresholdsMs: policy,
  };
}

/**
 * Reads and validates a cluster config file (JSON).
 * @throws ConfigError (one line) when the file is missing, not JSON, or invalid.
 */
export function loadClusterConfig(path: string): ClusterConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    fail(`cannot read cluster config ${path}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    fail(`cluster config ${path} is not valid JSON: ${(e as Error).message}`);
  }
  return validateClusterConfig(parsed);
}
