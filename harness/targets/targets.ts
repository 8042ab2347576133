/**
 * The targets `make certify TARGET=` knows (DESIGN.md §3 "Targets"; issue 15). `zaris` (the
 * default) is the store built in this repository, run by harness/runtime/ and driven by its own
 * client; the others are {@link Target}s, run by a {@link TargetRuntime} and driven through their
 * client adapters.
 */
import type { Target, TargetName } from './target.js';

/** Every TARGET name, the default first. */
export const TARGET_NAMES: readonly TargetName[] = ['zaris', 'etcd', 'redis-sentinel', 'nats-jetstream', 'postgres-patroni', 'example-kv'];

/** Settings of the targets a run may change (CLI options, Makefile variables). */
export interface TargetSettings {
  /**
   * redis-sentinel: Redis's min-replicas-to-write (REDIS_MIN_REPLICAS; default 1). 0 is Redis's own
   * default: a master cut off from its replicas acknowledges for as long as the cut lasts, also
   * after Sentinel promoted another node (the verifier then finds violations).
   */
  redisMinReplicas?: number;
  /**
   * nats-jetstream: the workload also reads each key during the run (NATS_READS=1; default off),
   * and the verifier judges those reads as linearizable, which JetStream's documentation claims
   * but its at-least-once contract for publishes does not cover (docs/targets.md).
   */
  natsReads?: boolean;
  /**
   * postgres-patroni: PATRONI_SYNC (default `off`, asynchronous replication); `strict` sets
   * Patroni's synchronous_mode and synchronous_mode_strict.
   */
  patroniSync?: string;
}

/** Is `name` a TARGET name? */
export function isTargetName(name: string): name is TargetName {
  return (TARGET_NAMES as readonly string[]).includes(name);
}

/**
 * The {@link Target} of a name, or null for `zaris` (which runs on the Zaris runtimes). A target's
 * module (and its client library: etcd3 with gRPC, ioredis, nats) is loaded only when that target is
 * asked for: loaded at start they cost every Zaris run ~40 MB of RSS (measured: a bare Node 39 MB,
 * etcd3 65 MB, ioredis 62 MB; DESIGN.md §8, harness RSS <= 200 MB).
 * @throws RangeError for a setting the target does not take or a value out of range (the
 *   promise rejects).
 */
export async function createTarget(name: TargetName, s: TargetSettings = {}): Promise<Target | null> {
  if (s.natsReads && name !== 'nats-jetstream') throw new RangeError(`NATS_READS applies to TARGET=nats-jetstream only, not ${name}`);
  if (s.patroniSync !== undefined && name !== 'postgres-patroni') throw new RangeError(`PATRONI_SYNC applies to TARGET=postgres-patroni only, not ${name}`);
  if (s.redisMinReplicas !== undefined && name !== 'redis-sentinel') throw new RangeError(`REDIS_MIN_REPLICAS applies to TARGET=redis-sentinel only, not ${name}`);
  switch (name) {
    case 'zaris':
      return null;
    case 'etcd':
      return new (await import('./etcd/etcd-target.js')).EtcdTarget();
    case 'redis-sentinel':
      if (s.redisMinReplicas !== undefined && !(Number.isInteger(s.redisMinReplicas) && s.redisMinReplicas >= 0 && s.redisMinReplicas <= 2)) {
        throw new RangeError(`REDIS_MIN_REPLICAS must be 0, 1 or 2 (the cluster has two replicas), got ${s.redisMinReplicas}`);
      }
      return new (await import('./redis/redis-target.js')).RedisSentinelTarget({ minReplicasToWrite: s.redisMinReplicas });
    case 'example-kv':
      return new (await import('./example/example-target.js')).ExampleKvTarget();
    case 'postgres-patroni':
      if (s.patroniSync !== undefined && s.patroniSync !== 'off' && s.patroniSync !== 'strict') throw new RangeError(`PATRONI_SYNC must be off or strict, got ${s.patroniSync}`);
      return new (await import('./postgres/patroni-target.js')).PostgresPatroniTarget({ sync: s.patroniSync });
    case 'nats-jetstream':
      return new (await import('./nats/nats-target.js')).NatsJetStreamTarget({ reads: s.natsReads === true });
  }
}
