import type { RuntimeKind } from '../../runtime/runtime.js';
import { missingExecutable, packageVersion, processRuntimeMissing, versionFromBinary, type BinaryRunner } from '../installed.js';
import type { ClientOptions, ErrorOutcome, LaunchContext, NodeLaunch, OwnershipSampler, Target, TargetClient, TargetCluster, TargetContract } from '../target.js';
import { checkTargetContract } from '../target.js';
import { redisContract } from './redis-contract.js';
import { RedisClient } from './redis-client.js';
import { RedisNodes } from './redis-nodes.js';
import { classifyRedisError } from './redis-outcome.js';
import { RedisSampler } from './redis-ownership.js';

/** The Debian packages' binaries (redis-server and redis-sentinel 7.0.15 on bookworm). */
export const REDIS_SERVER_BINARY = '/usr/bin/redis-server';
export const REDIS_SENTINEL_BINARY = '/usr/bin/redis-sentinel';

/** Sentinel's failover-timeout the target uses by default, ms (see RedisSentinelTargetOptions.failoverTimeoutMs). */
export const DEFAULT_FAILOVER_TIMEOUT_MS = 3_000;

/** Options of {@link RedisSentinelTarget}; every field has a default. */
export interface RedisSentinelTargetOptions {
  serverBinary?: string;
  sentinelBinary?: string;
  /** The name Sentinel monitors the master under (default `zaris`). */
  masterName?: string;
  /** Name of the one store (default `redis`). */
  store?: string;
  /** Sentinel's down-after-milliseconds (default 6,000: above the lease, see {@link RedisSentinelTarget}). */
  downAfterMs?: number;
  /**
   * Sentinel's failover-timeout, ms (default {@link DEFAULT_FAILOVER_TIMEOUT_MS}). A Sentinel whose
   * failover attempt failed tries again only after twice this long, and the two Sentinels beside
   * the replicas see a cut-off master go down at the same moment, so their first vote often
   * splits (each votes for itself): the failover then comes 2 x failover-timeout later. A 60 s run
   * with 10 s saw the retry land just after the partition healed: Sentinel completed the failover
   * of a master that was back and in sync, and the writes it acknowledged in between were lost
   * with no fault in effect (a violation by the rules).
   */
  failoverTimeoutMs?: number;
  /**
   * Redis's min-replicas-to-write (default 1): a master with fewer good replicas refuses writes
   * (NOREPLICAS). 0 is Redis's own default: an isolated master then acknowledges for as long as
   * the partition lasts, and the target declares no lease.
   */
  minReplicasToWrite?: number;
  /** Redis's min-replicas-max-lag, whole seconds (default 1). */
  minReplicasMaxLagS?: number;
}

/**
 * Redis 7 with Sentinel as a target (issue 15): one master and two replicas (n1 starts as the
 * master), a Sentinel beside each redis-server on the same address with its own port (quorum 2).
 * Replication is asynchronous: the master acknowledges, then streams to its replicas.
 *
 * Contract (redis-contract.ts): one store (RF 3, async) claiming `async-ack`: an acknowledged
 * write may be lost when Sentinel promotes a replica that had not received it, at a higher config
 * epoch (the master change the loss is tied to). No async lag bound (Redis promises none). With
 * min-replicas-to-write 1 and min-replicas-max-lag L, a master cut off from its replicas stops
 * acknowledging within L + 3 s: the owner lease the contract declares, and Sentinel's down-after
 * (6 s by default) is above it, so after ONE partition the old master has stopped before a
 * replica is promoted. Not after a flapping one: Sentinel's down timer counts from its last
 * answered PING, and a PING dropped by one cut is often still unanswered in the short heal that
 * follows (TCP's retransmission backoff outlasts it), so the timer runs on across the flaps, while
 * the master's min-replicas lag is refreshed by the replicas' acks in each heal: Sentinel can
 * promote a replica while the old master still acknowledges. Redis does not fence a replaced
 * master (the contract declares `fencing: false`), so such writes are judged as Redis defines its
 * promise: allowed async-ack losses while the lease holds, violations once the master was cut off
 * longer than the lease. A write lost with no master change after it is a violation.
 *
 * Each redis-server keeps an append-only file (appendfsync everysec) in its node's data folder: a
 * killed process loses nothing it acknowledged (the kernel keeps what was written), so a master
 * restarted before Sentinel's down-after comes back with its data, as the Redis documentation asks
 * for Sentinel setups (a master restarted empty would wipe its replicas). Sentinels and servers
 * rewrite their own config files (written at the node's first start only) and keep them across
 * restarts.
 */
export class RedisSentinelTarget implements Target {
  readonly name = 'redis-sentinel' as const;
  readonly nodeIds = ['n1', 'n2', 'n3'] as const;
  readonly ports = { redis: 6379, sentinel: 26379 } as const;
  readonly contract: TargetContract;
  readonly clientLibrary = `ioredis ${packageVersion('ioredis')}`;
  readonly store: string;
  readonly masterName: string;
  readonly options: Readonly<Record<string, unknown>>;
  private readonly serverBinary: string;
  private readonly sentinelBinary: string;

  constructor(private readonly opts: RedisSentinelTargetOptions = {}) {
    this.serverBinary = opts.serverBinary ?? REDIS_SERVER_BINARY;
    this.sentinelBinary = opts.sentinelBinary ?? REDIS_SENTINEL_BINARY;
    this.store = opts.store ?? 'redis';
    this.masterName = opts.masterName ?? 'zaris';
    const minReplicas = opts.minReplicasToWrite ?? 1;
    const lagS = opts.minReplicasMaxLagS ?? 1;
    this.contract = redisContract({ store: this.store, nodes: this.nodeIds.length, minReplicasToWrite: minReplicas, minReplicasMaxLagS: lagS });
    checkTargetContract(this.contract);
    this.options = { minReplicasToWrite: minReplicas, minReplicasMaxLagS: lagS, downAfterMs: opts.downAfterMs ?? 6_000, failoverTimeoutMs: opts.failoverTimeoutMs ?? DEFAULT_FAILOVER_TIMEOUT_MS, sentinelQuorum: 2 };
  }

  async unavailableReason(runtime: RuntimeKind): Promise<string | null> {
    // on docker the node image carries the Debian packages (harness/docker/base-image.ts); whether
    // the image can be had here is the runtime selection's question
    if (runtime === 'docker') return null;
    return (
      missingExecutable(this.serverBinary, 'redis-server', 'apt-get install redis-server') ??
      missingExecutable(this.sentinelBinary, 'redis-sentinel', 'apt-get install redis-sentinel') ??
      processRuntimeMissing()
    );
  }

  async version(run?: BinaryRunner): Promise<string> {
    const server = await versionFromBinary(this.serverBinary, ['--version'], /v=(\S+)/, run);
    const sentinel = await versionFromBinary(this.sentinelBinary, ['--version'], /v=(\S+)/, run);
    return server === sentinel ? `redis ${server} (sentinel)` : `redis ${server} (sentinel ${sentinel})`;
  }

  partitionOf(store: string): number {
    if (store !== this.store) throw new RangeError(`redis-sentinel target has no store ${store}`);
    return 0;
  }

  /** The redis.conf of a node (first start only; Redis rewrites it when Sentinel reconfigures the node). */
  serverConfig(nodeId: string, ctx: LaunchContext): string {
    const host = hostOf(ctx, nodeId);
    const master = hostOf(ctx, this.nodeIds[0]);
    return [
      `bind ${host}`,
      `port ${this.ports.redis}`,
      'protected-mode no',
      'daemonize no',
      `dir ${ctx.dataDir}`,
      'logfile ""',
      'save ""',
      'appendonly yes',
      'appendfsync everysec',
      // outgoing connections (replication) from the node's own address; replicas announced by it
      `bind-source-addr ${host}`,
      `replica-announce-ip ${host}`,
      `min-replicas-to-write ${this.opts.minReplicasToWrite ?? 1}`,
      `min-replicas-max-lag ${this.opts.minReplicasMaxLagS ?? 1}`,
      'repl-diskless-sync yes',
      'repl-diskless-sync-delay 0',
      'repl-timeout 5',
      ...(nodeId === this.nodeIds[0] ? [] : [`replicaof ${master} ${this.ports.redis}`]),
      '',
    ].join('\n');
  }

  /** The sentinel.conf of a node (first start only; Sentinel rewrites it with what it learns). */
  sentinelConfig(nodeId: string, ctx: LaunchContext): string {
    const host = hostOf(ctx, nodeId);
    const master = hostOf(ctx, this.nodeIds[0]);
    return [
      `bind ${host}`,
      `port ${this.ports.sentinel}`,
      'protected-mode no',
      'daemonize no',
      `dir ${ctx.dataDir}`,
      'logfile ""',
      `sentinel announce-ip ${host}`,
      `sentinel monitor ${this.masterName} ${master} ${this.ports.redis} 2`,
      `sentinel down-after-milliseconds ${this.masterName} ${this.opts.downAfterMs ?? 6_000}`,
      `sentinel failover-timeout ${this.masterName} ${this.opts.failoverTimeoutMs ?? DEFAULT_FAILOVER_TIMEOUT_MS}`,
      `sentinel parallel-syncs ${this.masterName} 1`,
      '',
    ].join('\n');
  }

  launch(nodeId: string, ctx: LaunchContext): NodeLaunch {
    hostOf(ctx, nodeId);
    return {
      files: [
        { path: 'redis.conf', content: this.serverConfig(nodeId, ctx) },
        { path: 'sentinel.conf', content: this.sentinelConfig(nodeId, ctx) },
      ],
      processes: [
        { name: 'redis', command: this.serverBinary, args: [`${ctx.dataDir}/redis.conf`], readyPort: 'redis' },
        { name: 'sentinel', command: this.sentinelBinary, args: [`${ctx.dataDir}/sentinel.conf`], readyPort: 'sentinel' },
      ],
    };
  }

  client(cluster: TargetCluster, opts: ClientOptions): TargetClient {
    return new RedisClient(cluster, this.masterName, this.store, opts);
  }

  sampler(cluster: TargetCluster): OwnershipSampler {
    return new RedisSampler(new RedisNodes(cluster, this.masterName, this.store));
  }

  classifyError(error: unknown): ErrorOutcome {
    return classifyRedisError(error);
  }
}

function hostOf(ctx: LaunchContext, nodeId: string): string {
  const h = ctx.cluster.nodes.find((n) => n.id === nodeId)?.host;
  if (!h) throw new Error(`unknown node ${nodeId}`);
  return h;
}
