/**
 * The cluster watch of a target other than Zaris (DESIGN.md §3 "Targets"; issue 15): what
 * harness/cluster-watch.ts does for the Zaris nodes, over a target's {@link OwnershipSampler}.
 *
 * The minimal probe a target answers is one `OwnershipSampler.sample()`: per partition of each
 * store the merged row (the active owner, its epoch, health, the in-sync members and each node's
 * revision) and one row per node that answered (that node's own view), the node the nemesis
 * calls "the leader", and which nodes answered. Everything the nemesis asks is derived from it:
 * - the budget's snapshot (nemesis/budget.ts ClusterSnapshot): leader, answered nodes, and per
 *   partition its replicas (every node: the targets replicate their one key space everywhere),
 *   active, health and in-sync members; no handoffs (no target hands ownership back on its own);
 * - "the active of a partition" and "the leader": the snapshot's;
 * - "caught up" (a restarted node back in sync): it answered and is in the in-sync set of every
 *   partition (cluster-queries.ts nodeCaughtUp);
 * - the wait for a Healthy cluster: every partition Healthy with every replica in sync.
 * Samples go to the ledger every {@link SAMPLE_MS}: the per-node rows first, then the merged
 * rows, so that "the latest sample at or before T" is the merged one (as cluster-watch.ts).
 */
import type { Ledger, SampleRow } from '../../ledger/ledger-writer.js';
import type { RunClock } from '../clock.js';
import { SAMPLE_MS } from '../cluster-watch.js';
import { FailoverMeter } from '../failover-meter.js';
import type { ClusterSnapshot } from '../nemesis/budget.js';
import type { ClusterProbe } from '../nemesis/nemesis-types.js';
import type { OwnershipSample, OwnershipSampler, OwnershipView, TargetContract } from './target.js';

/** One ledger row of an ownership sample. */
export function sampleRowOf(s: OwnershipSample): SampleRow {
  return {
    store: s.store,
    partition: s.partition,
    node: s.node,
    active: s.active,
    epoch: s.epoch,
    health: s.health,
    replicatedRevision: s.replicatedRevision,
    ...(s.inSync ? { inSync: [...s.inSync] } : {}),
    ...(s.revisions ? { revisions: { ...s.revisions } } : {}),
  };
}

/** The ledger rows of one view: per-node rows first, the merged rows (node null) last. */
export function viewRows(v: OwnershipView): SampleRow[] {
  return [...v.rows.filter((r) => r.node !== null), ...v.rows.filter((r) => r.node === null)].map(sampleRowOf);
}

/**
 * The nemesis's snapshot of one view (see the module comment). Partitions come from the contract
 * (every partition of every store), so a partition no merged row names is reported Unavailable
 * with no active and nobody in sync: the budget then refuses what needs it.
 */
export function snapshotOf(v: OwnershipView, contract: TargetContract, nodeIds: readonly string[]): ClusterSnapshot {
  const partitions: ClusterSnapshot['partitions'] = [];
  for (const st of contract.stores) {
    for (let p = 0; p < st.partitions; p++) {
      const m = v.rows.find((r) => r.node === null && r.store === st.name && r.partition === p);
      partitions.push({
        store: st.name,
        partition: p,
        replicationFactor: st.replicationFactor,
        replicas: [...nodeIds],
        active: m?.active ?? null,
        health: m?.health ?? 'Unavailable',
        inSync: m?.inSync ? nodeIds.filter((n) => m.inSync!.includes(n)) : [],
        handoffTo: null,
      });
    }
  }
  return { leader: v.leader, answered: [...v.answered].sort(), partitions };
}

/**
 * Watches a target cluster for the harness: samples into the ledger, answers the nemesis's
 * {@link ClusterProbe}, measures failovers (failover-meter.ts). The sampler is the harness's own:
 * the client under test gets nothing from it.
 */
export class TargetWatch implements ClusterProbe {
  private timer: NodeJS.Timeout | null = null;
  private latest: OwnershipView | null = null;
  private sampling: Promise<OwnershipView> | null = null;
  private recording = false;
  private readonly meter: FailoverMeter;
  /** Sampling rounds recorded in the ledger. */
  samples = 0;
  /** The owner lease the target declares (its contract), ms, or null. */
  readonly leaseMs: number | null;

  constructor(
    private readonly sampler: OwnershipSampler,
    private readonly ledger: Ledger,
    private readonly clock: RunClock,
    private readonly contract: TargetContract,
    private readonly nodeIds: readonly string[],
  ) {
    this.meter = new FailoverMeter(ledger);
    this.leaseMs = contract.leaseMs.value;
  }

  /** The last view sampled (null before the first). */
  get view(): OwnershipView | null {
    return this.latest;
  }

  /** Every failover measured so far, ms. */
  get failoverMs(): number[] {
    return this.meter.failoverMs;
  }

  start(): void {
    this.timer = setInterval(() => void this.sample(), SAMPLE_MS);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** A fresh view; callers arriving while one is being taken share it. Never throws. */
  private fresh(): Promise<OwnershipView> {
    this.sampling ??= this.sampler
      .sample()
      .then((v) => (this.latest = v))
      .finally(() => (this.sampling = null));
    return this.sampling;
  }

  /** Takes one sample now and records it in the ledger (one round at a time). */
  async sample(): Promise<OwnershipView | null> {
    if (this.recording) return this.latest;
    this.recording = true;
    try {
      const v = await this.fresh();
      this.samples++;
      this.ledger.sample(this.clock.now(), viewRows(v));
      return v;
    } catch {
      return this.latest;
    } finally {
      this.recording = false;
    }
  }

  async snapshot(): Promise<ClusterSnapshot> {
    return snapshotOf(await this.fresh(), this.contract, this.nodeIds);
  }

  async partitions(): Promise<Array<{ store: string; partition: number; replicationFactor: number }>> {
    return this.contract.stores.flatMap((s) => Array.from({ length: s.partitions }, (_, p) => ({ store: s.name, partition: p, replicationFactor: s.replicationFactor })));
  }

  /** Partitions not Healthy with every replica in sync, as `store/p <why>` (empty: all fit). */
  async unhealthy(): Promise<string[]> {
    const snap = await this.snapshot();
    const out: string[] = [];
    for (const p of snap.partitions) {
      const name = `${p.store}/${p.partition}`;
      if (p.health !== 'Healthy' || !p.active) out.push(`${name} ${p.health}`);
      else if (p.inSync.length < p.replicas.length) out.push(`${name} ${p.inSync.length}/${p.replicas.length} in sync`);
    }
    return out;
  }

  /** A kill or stop of `node` is about to start: every replicated partition it owns starts a failover measurement. */
  crashStarting(faultId: number, node: string, startMs: number): void {
    const v = this.latest;
    if (!v) return;
    const rf = new Map(this.contract.stores.map((s) => [s.name, s.replicationFactor]));
    const owned = v.rows.filter((r) => r.node === null && r.active === node && (rf.get(r.store) ?? 1) > 1);
    this.meter.crashStarting(faultId, node, startMs, owned);
  }

  /** The workload's ack listener (failover measurements). */
  readonly onAck = (store: string, partition: number, node: string, epoch: number, tMs: number): void => this.meter.onAck(store, partition, node, epoch, tMs);
}
