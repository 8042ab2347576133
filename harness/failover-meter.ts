import type { Ledger } from '../ledger/ledger-writer.js';

/** A partition by store and number. */
export interface PartitionRef {
  store: string;
  partition: number;
}

/**
 * Measures failovers (DESIGN.md §8 "kill -9 of an active owner to first acked write on its
 * partitions"): a kill or stop of a partition's active owner starts a measurement of that
 * partition; the first acknowledged write on it by another node ends it, as a ledger event
 * `failover` with detail `{faultId, store, partition, node, from, ms}` (ms on the run clock,
 * one decimal). The cluster watches of every target share it.
 */
export class FailoverMeter {
  /** `store/partition` -> pending measurement. */
  private readonly pending = new Map<string, { faultId: number; node: string; startMs: number }>();
  /** Every measured failover, ms, in the order they ended. */
  readonly failoverMs: number[] = [];

  constructor(private readonly ledger: Ledger) {}

  /** A crash (fault `faultId`) of `node` starts at `startMs`; `owned`: the replicated partitions it is the active owner of. */
  crashStarting(faultId: number, node: string, startMs: number, owned: readonly PartitionRef[]): void {
    for (const p of owned) this.pending.set(`${p.store}/${p.partition}`, { faultId, node, startMs });
  }

  /** The workload's ack listener: closes the measurement of a partition on its first ack elsewhere. */
  readonly onAck = (store: string, partition: number, node: string, _epoch: number, tMs: number): void => {
    if (this.pending.size === 0) return;
    const k = `${store}/${partition}`;
    const p = this.pending.get(k);
    if (!p || node === p.node || tMs < p.startMs) return;
    this.pending.delete(k);
    const ms = Math.round((tMs - p.startMs) * 10) / 10;
    this.failoverMs.push(ms);
    this.ledger.event(tMs, 'failover', { faultId: p.faultId, store, partition, node, from: p.node, ms });
  };
}
