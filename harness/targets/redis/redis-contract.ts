import { CONTRACT_FORMAT } from '../../../ledger/contract.js';
import type { TargetContract } from '../target.js';

/** Redis's own defaults for its two knobs (redis.conf of Redis 7). */
export const REDIS_DEFAULT_MIN_REPLICAS_TO_WRITE = 0;
export const REDIS_DEFAULT_MIN_REPLICAS_MAX_LAG_S = 10;

/** The settings the Redis contract depends on (as the target writes them into redis.conf). */
export interface RedisContractOptions {
  store: string;
  /** Nodes: one master and the rest replicas (3). */
  nodes: number;
  /** min-replicas-to-write. */
  minReplicasToWrite: number;
  /** min-replicas-max-lag, whole seconds. */
  minReplicasMaxLagS: number;
}

/**
 * The owner lease Redis's min-replicas settings give, ms, or null when min-replicas-to-write is 0
 * (Redis's default: a master cut off from its replicas acknowledges for as long as the cut lasts).
 * Redis defines it: each replica reports to its master once a second, a replica whose last
 * report is more than min-replicas-max-lag seconds old does not count, and a master with fewer
 * than min-replicas-to-write counted replicas refuses writes (NOREPLICAS). The master counts lag
 * in whole seconds of its cached clock and recounts once a second, so a master cut off from its
 * replicas stops acknowledging at most max-lag + 3 s after the cut (the last report up to 1 s
 * before it, up to 1 s of whole-second rounding, up to 1 s until the recount).
 */
export function redisLeaseMs(minReplicasToWrite: number, maxLagS: number): number | null {
  return minReplicasToWrite > 0 ? (maxLagS + 3) * 1_000 : null;
}

/**
 * Redis 7 with Sentinel's contract: one key space, RF = the nodes, asynchronous replication (the
 * master replies before its replicas have the write), so it claims `async-ack`: a write the
 * master acknowledged may be lost when Sentinel promotes a replica that lacked it (the failover
 * is the master change at a higher config epoch the loss is tied to). Redis promises no bound on
 * replication delay (no lag bound: the replication-lag check does not apply; the fault that
 * disrupted replication must come between the ack and the takeover). Its knobs,
 * min-replicas-to-write and min-replicas-max-lag, are judged as Redis defines them: the owner
 * lease ({@link redisLeaseMs}). A replaced master is not fenced: it goes on acknowledging until
 * Sentinel reconfigures it or min-replicas stops it, so a write acknowledged by a replaced master
 * within the lease is an allowed async-ack loss too. Reads go to the master, which may be a
 * replaced one: not linearizable. appendfsync everysec and a process kill keep what was
 * acknowledged (the kernel holds the AOF), so `beyond-budget` is not claimed.
 */
export function redisContract(o: RedisContractOptions): TargetContract {
  const lease = redisLeaseMs(o.minReplicasToWrite, o.minReplicasMaxLagS);
  const knobs = `redis.conf min-replicas-to-write ${o.minReplicasToWrite}, min-replicas-max-lag ${o.minReplicasMaxLagS} (set by this target; Redis's defaults ${REDIS_DEFAULT_MIN_REPLICAS_TO_WRITE} and ${REDIS_DEFAULT_MIN_REPLICAS_MAX_LAG_S})`;
  return {
    format: CONTRACT_FORMAT,
    target: 'redis-sentinel',
    stores: [
      {
        name: o.store,
        replicationFactor: o.nodes,
        ackMode: 'async',
        ackDurableOn: 'one-node',
        partitions: 1,
        segments: 1,
        source: `one master and ${o.nodes - 1} replicas of one key space; "Redis uses by default asynchronous replication": the master replies before its replicas received the write (redis.io, Replication)`,
      },
    ],
    claims: [
      {
        class: 'async-ack',
        source: "redis.io, Sentinel (\"consistency under partitions\") and Replication: acknowledged writes can be lost at a failover, when Sentinel promotes a replica that had not received them; tied to Sentinel's failover at a higher config epoch",
      },
    ],
    asyncLagMs: { value: null, source: 'Redis promises no bound on replication delay; its min-replicas-max-lag bounds how old a replica\'s last report may be, judged as the owner lease' },
    leaseMs: {
      value: lease,
      source:
        lease === null
          ? `${knobs}: with min-replicas-to-write 0 a master cut off from its replicas acknowledges for as long as the cut lasts; no lease`
          : `${knobs}: a replica reports once a second, the master counts those within ${o.minReplicasMaxLagS} s in whole seconds and recounts once a second, and refuses writes with fewer than ${o.minReplicasToWrite} (NOREPLICAS): it stops at most ${lease / 1000} s after a cut`,
    },
    fencing: { value: false, source: 'redis.io, Sentinel ("Example 2"): a replaced master accepts writes until Sentinel reconfigures it or min-replicas stops it; Redis has no fencing token' },
    linearizableReads: { value: false, source: 'reads go to the master the client knows, which may be one Sentinel already replaced; asynchronous replication makes no read linearizable' },
    duplicates: { value: false, source: "the adapter sends each write once, as one atomic script that keeps the key's version (harness/targets/redis/redis-script.ts); ioredis's own retries are off" },
  };
}
