/**
 * Plain connections from the harness to every redis-server and every Sentinel of a cluster, for
 * the adapter's master confirmation and the sampler (not for the workload's writes). Each query
 * is bounded; a node that does not answer gives null.
 */
import { Redis } from 'ioredis';
import { nodeOfHost, type TargetCluster } from '../target.js';
import { revisionKey } from './redis-script.js';

/** One Sentinel's view of the monitored master (`SENTINEL MASTER <name>`). */
export interface SentinelView {
  /** The node the Sentinel runs beside. */
  sentinel: string;
  /** The master's node (by address), null when the address is no node's. */
  master: string | null;
  host: string;
  port: number;
  /** Sentinel's config epoch of that master. */
  epoch: number;
  /** Sentinel's flags of the master, e.g. ['master'], ['master', 's_down'], ['master', 'failover_in_progress']. */
  flags: string[];
}

/** A redis-server's replication facts (`INFO replication` plus the revision counter it holds). */
export interface ServerView {
  node: string;
  role: 'master' | 'slave';
  /** replicas: the master they replicate from, and whether the link is up. */
  masterHost: string | null;
  linkUp: boolean;
  /** The store's revision counter as this server holds it (0 when absent). */
  revision: number;
}

/** Is this Sentinel view committed (not a failover in progress, where the address and epoch may disagree)? */
export function settled(v: SentinelView): boolean {
  return !v.flags.some((f) => f.includes('failover'));
}

/** Parses the flat field/value array of `SENTINEL MASTER` into a view. @throws Error on a malformed reply. */
export function parseSentinelMaster(sentinel: string, reply: unknown, cluster: TargetCluster): SentinelView {
  if (!Array.isArray(reply) || reply.length % 2 !== 0) throw new Error(`unexpected SENTINEL MASTER reply ${JSON.stringify(reply)}`);
  const f = new Map<string, string>();
  for (let i = 0; i < reply.length; i += 2) f.set(String(reply[i]), String(reply[i + 1]));
  const host = f.get('ip');
  const epoch = Number(f.get('config-epoch'));
  if (!host || !Number.isSafeInteger(epoch)) throw new Error(`SENTINEL MASTER reply without ip or config-epoch: ${JSON.stringify(reply)}`);
  return { sentinel, master: nodeOfHost(cluster, host), host, port: Number(f.get('port')), epoch, flags: (f.get('flags') ?? '').split(',').filter((x) => x !== '') };
}

/** Parses `INFO replication` text. */
export function parseReplicationInfo(text: string): { role: 'master' | 'slave'; masterHost: string | null; linkUp: boolean } {
  const get = (k: string): string | null => {
    const m = new RegExp(`^${k}:(.*)$`, 'm').exec(text);
    return m ? m[1].trim() : null;
  };
  const role = get('role') === 'slave' ? 'slave' : 'master';
  return { role, masterHost: role === 'slave' ? get('master_host') : null, linkUp: get('master_link_status') === 'up' };
}

function connection(host: string, port: number, timeoutMs: number): Redis {
  const r = new Redis({
    host,
    port,
    lazyConnect: true,
    enableOfflineQueue: false,
    enableReadyCheck: false,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    retryStrategy: () => 200,
  });
  r.on('error', () => undefined);
  void r.connect().catch(() => undefined);
  return r;
}

/** Connections to every Sentinel and every redis-server of a cluster. */
export class RedisNodes {
  private readonly sentinels = new Map<string, Redis>();
  private readonly servers = new Map<string, Redis>();

  constructor(
    readonly cluster: TargetCluster,
    readonly masterName: string,
    readonly store: string,
    timeoutMs = 500,
  ) {
    for (const n of cluster.nodes) {
      this.sentinels.set(n.id, connection(n.host, cluster.ports.sentinel, timeoutMs));
      this.servers.set(n.id, connection(n.host, cluster.ports.redis, timeoutMs));
    }
  }

  /** Every Sentinel's view, asked in parallel; those that do not answer are left out. */
  async sentinelViews(): Promise<SentinelView[]> {
    const out = await Promise.all(
      [...this.sentinels].map(async ([node, r]) => {
        try {
          return parseSentinelMaster(node, await r.call('SENTINEL', 'MASTER', this.masterName), this.cluster);
        } catch {
          return null;
        }
      }),
    );
    return out.filter((v): v is SentinelView => v !== null);
  }

  /** Every redis-server's replication facts, asked in parallel; those that do not answer are left out. */
  async serverViews(): Promise<ServerView[]> {
    const out = await Promise.all(
      [...this.servers].map(async ([node, r]) => {
        try {
          const [info, rev] = await Promise.all([r.info('replication'), r.get(revisionKey(this.store))]);
          return { node, ...parseReplicationInfo(info), revision: Number(rev ?? 0) };
        } catch {
          return null;
        }
      }),
    );
    return out.filter((v): v is ServerView => v !== null);
  }

  close(): void {
    for (const r of [...this.sentinels.values(), ...this.servers.values()]) r.disconnect();
  }
}

/**
 * The master and config epoch the Sentinels agree on now: among the settled views, the highest
 * epoch, and the master named at it (null when no Sentinel answered with a settled view).
 */
export function newestMaster(views: readonly SentinelView[]): { master: string | null; host: string; epoch: number } | null {
  const s = views.filter(settled);
  if (s.length === 0) return null;
  const epoch = Math.max(...s.map((v) => v.epoch));
  const at = s.filter((v) => v.epoch === epoch);
  return { master: at[0].master, host: at[0].host, epoch };
}
