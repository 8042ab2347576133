import { CONTRACT_FORMAT } from '../../../ledger/contract.js';
import type { TargetContract } from '../target.js';

/** Patroni's own default of maximum_lag_on_failover, bytes (Patroni's documentation, "Dynamic Configuration Settings"). */
export const PATRONI_DEFAULT_MAXIMUM_LAG_ON_FAILOVER = 1_048_576;

/** The settings the contract depends on (as the target writes them into Patroni's bootstrap configuration). */
export interface PatroniContractOptions {
  store: string;
  /** Database nodes: one primary, the rest replicas (3). */
  nodes: number;
  /** `off`: asynchronous streaming replication (PostgreSQL's and Patroni's default); `strict`: synchronous_mode and synchronous_mode_strict. */
  sync: 'off' | 'strict';
  /** Patroni's ttl, s: how long the leader key lives without a renewal. */
  ttlS: number;
  /** Patroni's loop_wait, s. */
  loopWaitS: number;
  /** Patroni's maximum_lag_on_failover, bytes. */
  maximumLagOnFailover: number;
}

/**
 * PostgreSQL 15 with Patroni 3's contract. One table, one key space, RF = the nodes.
 *
 * - `sync: 'off'` (the defaults): the primary acknowledges a commit once it is in its own WAL and
 *   streams it to the replicas afterwards, so an acknowledged commit may be lost when Patroni
 *   promotes a replica that had not received it: `async-ack`, tied to the promotion (a new
 *   timeline, the epoch the acks name). Patroni bounds it in bytes, not time: a replica lagging
 *   more than maximum_lag_on_failover behind the last position the leader published is not
 *   promoted (1 MiB, Patroni's default, kept by this target). The verifier has no byte rule, so
 *   the bound is recorded with the claim and no time lag bound is declared.
 * - `sync: 'strict'`: a commit waits for the synchronous standby Patroni names, and with
 *   synchronous_mode_strict the primary does not acknowledge at all without one; Patroni promotes
 *   only the synchronous standby. No loss class is claimed.
 * - Lease: a primary that cannot renew its leader key demotes itself; the key lives ttl seconds,
 *   Patroni checks every loop_wait seconds, so a cut-off primary stops acknowledging at most
 *   ttl + loop_wait seconds after its last renewal. Patroni does not fence a replaced primary
 *   beyond that (no watchdog here): `fencing: false`.
 */
export function patroniContract(o: PatroniContractOptions): TargetContract {
  const strict = o.sync === 'strict';
  const knobs = `Patroni ttl ${o.ttlS} s, loop_wait ${o.loopWaitS} s (set by this target; Patroni's defaults 30 s and 10 s)`;
  const lag = `maximum_lag_on_failover ${o.maximumLagOnFailover} bytes (Patroni's default ${PATRONI_DEFAULT_MAXIMUM_LAG_ON_FAILOVER}, kept by this target)`;
  return {
    format: CONTRACT_FORMAT,
    target: 'postgres-patroni',
    stores: [
      {
        name: o.store,
        replicationFactor: o.nodes,
        ackMode: strict ? 'sync' : 'async',
        ackDurableOn: strict ? 'majority' : 'one-node',
        partitions: 1,
        segments: 1,
        source: strict
          ? `one primary and ${o.nodes - 1} streaming replicas; Patroni synchronous_mode: true and synchronous_mode_strict: true: a commit returns once the synchronous standby has flushed it (PostgreSQL synchronous_commit on), and without a standby the primary does not acknowledge (Patroni documentation, "Replication modes")`
          : `one primary and ${o.nodes - 1} streaming replicas; asynchronous replication, PostgreSQL's default: a commit returns once it is in the primary's WAL (PostgreSQL documentation, "High Availability, Load Balancing, and Replication")`,
      },
    ],
    claims: strict
      ? []
      : [
          {
            class: 'async-ack',
            source: `Patroni documentation, "Replication modes": with asynchronous replication acknowledged transactions can be lost at a failover, when a replica that had not received them is promoted (a new timeline); bounded by ${lag}: a replica further behind is not promoted`,
          },
        ],
    asyncLagMs: {
      value: null,
      source: strict ? 'synchronous replication: no acknowledged commit is left unreplicated' : `PostgreSQL promises no time bound on replication delay; Patroni bounds it in bytes only, ${lag}`,
    },
    leaseMs: {
      value: (o.ttlS + o.loopWaitS) * 1_000,
      source: `${knobs}: a primary that cannot renew its leader key within ttl demotes itself at its next loop, so it stops acknowledging at most ${o.ttlS + o.loopWaitS} s after its last renewal`,
    },
    fencing: { value: false, source: 'Patroni documentation, "Watchdog support": without a watchdog nothing stops a primary Patroni no longer runs; none is configured here' },
    linearizableReads: { value: false, source: 'reads go to the primary Patroni named when the adapter last asked, which may have been replaced meanwhile' },
    duplicates: { value: false, source: 'the adapter sends each write once as one autocommit upsert (harness/targets/postgres/pg-client.ts); no retries' },
  };
}
