import type { ClusterView, ZarisClient } from '../nodes/client/zaris-client.js';
import type { Ledger } from '../ledger/ledger-writer.js';
import type { RunClock } from './clock.js';
import type { ClusterProbe, ClusterSnapshot, FaultRecorder, FaultStartRecord } from './nemesis/nemesis.js';

/** Sampling period of the runtime map, ms (DESIGN.md §4: at least every 500 ms). */
export const SAMPLE_MS = 250;

/**
 * Watches the cluster for the harness: samples the merged runtime map into the ledger every
 * {@link SAMPLE_MS} (active, epoch, health, replicated revision per partition), answers the
 * nemesis's {@link ClusterProbe} questions, and measures failovers: from a kill/stop of a
 * partition's active owner to the first acknowledged write on that partition by another node
 * (ledger events `failover`, detail `{faultId, store, partition, node, ms}`).
 */
export class ClusterWatch implements ClusterProbe {
  private timer: NodeJS.Timeout | null = null;
  private latest: ClusterView | null = null;
  private sampling = false;
  /** `store/partition` -> pending failover measurement. */
  private readonly pendingFailovers = new Map<string, { faultId: number; node: string; startMs: number }>();
  readonly failoverMs: number[] = [];
  samples = 0;

  constructor(
    private readonly client: ZarisClient,
    private readonly ledger: Ledger,
    private readonly clock: RunClock,
    private readonly replicationFactor: (store: string) => number,
  ) {}

  /** The last sampled view (null before the first sample). */
  get view(): ClusterView | null {
    return this.latest;
  }

  start(): void {
    this.timer = setInterval(() => void this.sample(), SAMPLE_MS);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Takes one sample now (also used by the probe). */
  async sample(): Promise<ClusterView | null> {
    if (this.sampling) return this.latest;
    this.sampling = true;
    try {
      const v = await this.client.fetchView();
      this.latest = v;
      this.samples++;
      const t = this.clock.now();
      this.ledger.sample(
        t,
        [...v.runtime.values()].map((e) => ({ store: e.store, partition: e.partition, active: e.active, epoch: e.epoch, health: e.health, replicatedRevision: e.replicatedRevision ?? 0 })),
      );
      return v;
    } catch {
      return this.latest;
    } finally {
      this.sampling = false;
    }
  }

  private async fresh(): Promise<ClusterView> {
    const v = await this.client.fetchView();
    this.latest = v;
    return v;
  }

  async leader(): Promise<string | null> {
    return (await this.fresh()).leader;
  }

  async activeOf(store: string, partition: number): Promise<string | null> {
    return (await this.fresh()).runtime.get(`${store}/${partition}`)?.active ?? null;
  }

  async partitions(): Promise<Array<{ store: string; partition: number; replicationFactor: number }>> {
    return [...(await this.fresh()).runtime.values()].map((e) => ({ store: e.store, partition: e.partition, replicationFactor: this.replicationFactor(e.store) }));
  }

  /**
   * The nemesis's view (nemesis/budget.ts): leader, nodes that answered, and per partition its
   * replicas, active, health, handoff, and the in-sync members listed under the incarnation each
   * runs now (a restarted node the map still lists under its old incarnation holds nothing yet).
   */
  async snapshot(): Promise<ClusterSnapshot> {
    const v = await this.fresh();
    return {
      leader: v.leader,
      answered: [...v.incs.keys()].sort(),
      partitions: [...v.runtime.values()].map((e) => ({
        store: e.store,
        partition: e.partition,
        replicationFactor: this.replicationFactor(e.store),
        replicas: [...e.replicas],
        active: e.active,
        health: e.health,
        inSync: e.inSync.filter((n, i) => v.incs.get(n) === e.inSyncIncs[i]),
        handoffTo: e.handoffTo,
      })),
    };
  }

  /**
   * Partitions not Healthy (the wait for a Healthy cluster before the fault phase; the nemesis's
   * budget works on {@link snapshot}): not Healthy, not every
   * replica in sync, or an in-sync member named under an incarnation its node no longer runs (a
   * restarted node that the map still lists under its old, memory-full incarnation holds nothing
   * yet; found by the failover simulation). A node that did not answer counts as unknown: unfit.
   */
  async unhealthy(): Promise<string[]> {
    const v = await this.fresh();
    const out: string[] = [];
    for (const e of v.runtime.values()) {
      const p = `${e.store}/${e.partition}`;
      if (e.health !== 'Healthy' || !e.active) out.push(`${p} ${e.health}`);
      else if (e.inSync.length < e.replicas.length) out.push(`${p} ${e.inSync.length}/${e.replicas.length} in sync`);
      else {
        const stale = e.inSync.filter((n, i) => v.incs.get(n) !== e.inSyncIncs[i]);
        if (stale.length > 0) out.push(`${p} lists ${stale.join(',')} under an incarnation that is not running`);
      }
    }
    return out;
  }

  /** The (restarted) node answers and is in sync, under its current incarnation, in every partition it holds. */
  async caughtUp(node: string): Promise<boolean> {
    const v = await this.fresh();
    const inc = v.incs.get(node);
    if (!inc) return false;
    for (const e of v.runtime.values()) {
      if (!e.replicas.includes(node)) continue;
      const i = e.inSync.indexOf(node);
      if (i < 0 || e.inSyncIncs[i] !== inc) return false;
    }
    return true;
  }

  /** A kill or stop of `node` is about to start: every partition it owns (RF > 1) starts a measurement. */
  crashStarting(faultId: number, node: string, startMs: number): void {
    const v = this.latest;
    if (!v) return;
    for (const e of v.runtime.values()) {
      if (e.active === node && this.replicationFactor(e.store) > 1) this.pendingFailovers.set(`${e.store}/${e.partition}`, { faultId, node, startMs });
    }
  }

  /** The workload's ack listener: closes the measurement of a partition on its first ack elsewhere. */
  readonly onAck = (store: string, partition: number, node: string, _epoch: number, tMs: number): void => {
    if (this.pendingFailovers.size === 0) return;
    const k = `${store}/${partition}`;
    const p = this.pendingFailovers.get(k);
    if (!p || node === p.node || tMs < p.startMs) return;
    this.pendingFailovers.delete(k);
    const ms = Math.round((tMs - p.startMs) * 10) / 10;
    this.failoverMs.push(ms);
    this.ledger.event(tMs, 'failover', { faultId: p.faultId, store, partition, node, from: p.node, ms });
  };
}

/**
 * The nemesis's FaultRecorder over the ledger: every start and end committed before it returns
 * (DESIGN.md §4 "each fault recorded before it takes effect").
 */
export function ledgerFaultRecorder(ledger: Ledger, clock: RunClock, watch: ClusterWatch): FaultRecorder {
  return {
    faultStart(f: FaultStartRecord): number {
      const startMs = clock.now();
      // (isolated: the ledger's column per CONTRACT.md; also in detail until the ledger has it)
      const id = ledger.faultStart({ kind: f.kind, nodes: f.nodes, target: f.target, plannedMs: f.plannedMs, startMs, detail: f.detail ? (JSON.parse(f.detail) as unknown) : undefined, ...(f.isolated ? { isolated: f.isolated } : {}) });
      if ((f.kind === 'kill' || f.kind === 'stop') && f.nodes.length === 1) watch.crashStarting(id, f.nodes[0], startMs);
      return id;
    },
    faultEffective(id: number): void {
      ledger.faultEffective(id, clock.now());
    },
    faultEnd(id: number): void {
      ledger.faultEnd(id, clock.now());
    },
    caughtUp(id: number, ms: number): void {
      ledger.faultCaughtUp(id, ms);
    },
    event(kind: string, detail: string): void {
      ledger.event(clock.now(), kind, detail ? (JSON.parse(detail) as unknown) : undefined);
    },
  };
}
