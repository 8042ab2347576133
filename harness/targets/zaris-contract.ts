import { CONTRACT_FORMAT, type Contract, type ContractClaim } from '../../ledger/contract.js';

/** A Zaris store as the contract needs it (nodes/cluster-config.ts StoreConfig has these fields). */
export interface ZarisStoreSpec {
  name: string;
  replicationFactor: number;
  ackMode: 'sync' | 'async';
}

/** The run's settings Zaris's contract is made from. */
export interface ZarisContractOptions {
  /** The stores the run starts (DEFAULT_STORES: sync3, async3, rf1; a scenario names its own). */
  stores: readonly ZarisStoreSpec[];
  /** The async lag bound, ms (`ASYNC_LAG=`, default 1,000). */
  asyncLagMs: number;
  /** Whether `ASYNC_LAG=` set it (the source says so). */
  asyncLagFromOption?: boolean;
  /** The owner lease the nodes advertise (metadata `ownerLeaseMs`), ms; null until the cluster answered. */
  leaseMs: number | null;
}

/**
 * The contract of the Zaris store (DESIGN.md §2, §5; the seeds): every store its ack mode as
 * configured; `rf1` beside an RF1 store (memory only: the one copy dies with its node),
 * `async-ack` beside an async store (the active acknowledges first and replicates after),
 * `beyond-budget` (memory only: a partition whose every replica was down at once lost what it
 * held); the lag bound of the run (`ASYNC_LAG=`), the owner lease the nodes declare, epochs as
 * fencing tokens (seed 002), reads served by the active under its read lease (linearizable), no
 * duplicates (a write is applied once, by version: IfMatchVersion / IfAbsent).
 */
export function zarisContract(o: ZarisContractOptions): Contract {
  const claimed: ContractClaim[] = [];
  if (o.stores.some((s) => s.replicationFactor === 1)) {
    claimed.push({ class: 'rf1', source: 'DESIGN.md §2: a node holds its data in memory only; a store of replication factor 1 has one copy, which a kill or stop of its node loses' });
  }
  if (o.stores.some((s) => s.ackMode === 'async')) {
    claimed.push({ class: 'async-ack', source: 'DESIGN.md §2 (seed 002 "where a write is genuinely lost"): an async store acknowledges first and replicates after; a write its owner had not streamed is lost when another node takes over at a higher epoch' });
  }
  claimed.push({ class: 'beyond-budget', source: 'DESIGN.md §2: memory only, a restarted node starts empty; a partition whose every replica was down at once lost what it held (judged only in runs allowed past the fault budget, BEYOND_BUDGET=1)' });
  return {
    format: CONTRACT_FORMAT,
    target: 'zaris',
    stores: o.stores.map((s) => ({
      name: s.name,
      replicationFactor: s.replicationFactor,
      ackMode: s.ackMode,
      ackDurableOn: s.ackMode === 'sync' && s.replicationFactor > 1 ? 'majority' : 'one-node',
      source:
        s.ackMode === 'sync' && s.replicationFactor > 1
          ? `the run's store config (RF ${s.replicationFactor}, sync): the active acknowledges after every in-sync replica applied the write, never on its own copy alone (DESIGN.md §2)`
          : `the run's store config (RF ${s.replicationFactor}, ${s.ackMode}): the acknowledging node alone is known to hold the write`,
    })),
    claims: claimed,
    asyncLagMs: { value: o.asyncLagMs, source: `${o.asyncLagFromOption ? 'ASYNC_LAG=' : 'ASYNC_LAG default'} ${o.asyncLagMs} ms: async replication streams an acknowledged write to the in-sync replicas at once ("replicated a moment later", DESIGN.md §5)` },
    leaseMs: {
      value: o.leaseMs,
      source: o.leaseMs === null ? 'not known: no node answered its metadata with an owner lease' : `the nodes' metadata ownerLeaseMs ${o.leaseMs} ms: an owner cut off from a majority stops acknowledging when its lease lapses (its lease plus heartbeat slack)`,
    },
    fencing: { value: true, source: 'seed 002: epochs are fencing tokens; a replica refuses ops below the highest epoch it accepted, and an owner seen deposed acknowledges nothing it may lose' },
    linearizableReads: { value: true, source: 'DESIGN.md §5: reads are served by the active owner within its read lease; a read older than a write acknowledged before it began is a violation' },
    duplicates: { value: false, source: 'seed 000: a retried write is guarded by IfMatchVersion / IfAbsent; versions per key increase strictly' },
  };
}
