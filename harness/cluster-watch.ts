import type { ClusterView, ZarisClient } from '../nodes/client/zaris-client.js';
import { KvStatus } from '../nodes/kv-status.js';
import type { MetadataDoc } from '../nodes/node-core.js';
import type { Ledger } from '../ledger/ledger-writer.js';
import type { RunClock } from './clock.js';
import { FailoverMeter } from './failover-meter.js';
import type { ClusterSnapshot } from './nemesis/budget.js';
import type { ClusterProbe, FaultRecorder, FaultStartRecord } from './nemesis/nemesis-types.js';
import type { MemberEntry } from './nemesis/schedule.js';

/** Sampling period of the runtime map, ms (DESIGN.md §4: at least every 500 ms). */
export const SAMPLE_MS = 250;

/** One row of `Ledger.sample` (CONTRACT.md: the v2 fields node, inSync, revisions, replicas). */
type SampleRow = Parameters<Ledger['sample']>[1][number];

/**
 * The ledger rows of one runtime-map sample (history-format.md v2 `ownership[]`), from the merged
 * view and the metadata documents it was merged from, all at one time:
 * - per node that answered and per partition, that node's OWN committed entry (`node` set):
 *   active, epoch, health, inSync and, where the node is a replica, `revisions` `{node: revision}`.
 *   A node holding no committed entry for a partition (epoch 0, no active: just restarted) has
 *   no row: there is no entry to judge;
 * - then, per partition, the merged view (`node` absent): active, epoch, health of the
 *   highest-epoch entry any node reported, its replicated revision, its `inSync`, and `revisions`:
 *   each answering replica's own last applied revision of the partition. It comes last, so that
 *   "the latest sample at or before T" (the v2 replication-lag rule) is the merged one, which
 *   names every member's revision.
 * `replicas` is set only where the partition map of the moment differs from `baseReplicas` (the
 * partitions registered at the start; NULL in the ledger means "as registered").
 * A revision is recorded for a node only when the entry does not list that node in sync under an
 * incarnation other than the one it runs now (metadata `inSyncIncs` vs the node's `inc`): a node
 * restarted before the map could change (no majority, or faster than suspicion) runs a new, empty
 * incarnation while the entry still names its old one; the new one's revision (0) is not the
 * listed member's, and read as such it made a replication-lag finding of an async partition in a
 * 10-minute run (runs seed 4101: n3 stopped 0.7 s while n1 was just back from a pause, listed in
 * sync for 3.5 s after its restart with no majority to commit it out).
 */
export function sampleRows(view: ClusterView, docs: readonly MetadataDoc[], baseReplicas?: ReadonlyMap<string, readonly string[]>): SampleRow[] {
  const rows: SampleRow[] = [];
  const own = new Map<string, Map<string, MetadataDoc['runtimeMap'][number]>>();
  for (const d of docs) own.set(d.node, new Map(d.runtimeMap.map((r) => [`${r.store}/${r.partition}`, r])));
  const replicasField = (key: string, replicas: readonly string[]): { replicas?: string[] } => {
    const base = baseReplicas?.get(key);
    return base && sameList(base, replicas) ? {} : { replicas: [...replicas] };
  };
  for (const d of docs) {
    const replicasOf = new Map(d.partitionMap.partitions.map((p) => [`${p.store}/${p.partition}`, p.replicas]));
    for (const r of d.runtimeMap) {
      if (r.epoch === 0 && r.active === null) continue;
      const key = `${r.store}/${r.partition}`;
      const replicas = replicasOf.get(key) ?? [];
      rows.push({
        node: d.node,
        store: r.store,
        partition: r.partition,
        active: r.active,
        epoch: r.epoch,
        health: r.health,
        replicatedRevision: r.replicatedRevision ?? 0,
        inSync: r.inSync,
        ...(replicas.includes(d.node) && !listedUnderOtherInc(r.inSync, r.inSyncIncs, d.node, d.inc) ? { revisions: { [d.node]: r.revision } } : {}),
        ...replicasField(key, replicas),
      });
    }
  }
  for (const [key, e] of view.runtime) {
    const revisions: Record<string, number> = {};
    for (const n of e.replicas) {
      const r = own.get(n)?.get(key);
      if (r && !listedUnderOtherInc(e.inSync, e.inSyncIncs, n, view.incs.get(n))) revisions[n] = r.revision;
    }
    rows.push({ store: e.store, partition: e.partition, active: e.active, epoch: e.epoch, health: e.health, replicatedRevision: e.replicatedRevision ?? 0, inSync: e.inSync, revisions, ...replicasField(key, e.replicas) });
  }
  return rows;
}

/** One row of `Ledger.nodeSample`. */
type NodeSampleRow = Parameters<Ledger['nodeSample']>[1][number];

/**
 * The ledger's node lines of one sample (issue 11, stall findings): every node of the cluster
 * (sorted), whether it answered the metadata request (its document is among `docs`) and the
 * event-loop delay it reported (metadata `loop`: maxMs, p99Ms over its rolling window; null when
 * it did not answer or does not measure).
 */
export function nodeSampleRows(nodes: Iterable<string>, docs: readonly MetadataDoc[]): NodeSampleRow[] {
  const byNode = new Map(docs.map((d) => [d.node, d]));
  return [...new Set(nodes)].sort().map((node) => {
    const d = byNode.get(node);
    const loop = d?.loop ?? null;
    return { node, answered: d !== undefined, loopMaxMs: loop === null ? null : loop.maxMs, loopP99Ms: loop === null ? null : loop.p99Ms };
  });
}

/** `node` is in `inSync` under an incarnation (same index of `incs`) other than `inc`, the one it runs now. */
function listedUnderOtherInc(inSync: readonly string[], incs: readonly string[] | undefined, node: string, inc: string | undefined): boolean {
  const i = inSync.indexOf(node);
  return i >= 0 && incs !== undefined && inc !== undefined && incs[i] !== undefined && incs[i] !== inc;
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/**
 * Watches the cluster for the harness, through a client of its own (never the workload's: the
 * client under test gets no map from the harness): samples the runtime map into the ledger every
 * {@link SAMPLE_MS} ({@link sampleRows}: the merged view and each node's own committed entries;
 * {@link nodeSampleRows}: which nodes answered and their event-loop delay),
 * answers the nemesis's {@link ClusterProbe} questions, and measures failovers: from a kill/stop
 * of a partition's active owner to the first acknowledged write on that partition by another node
 * (ledger events `failover`, detail `{faultId, store, partition, node, ms}`).
 */
export class ClusterWatch implements ClusterProbe {
  private timer: NodeJS.Timeout | null = null;
  private latest: ClusterView | null = null;
  private sampling = false;
  private refreshing: Promise<ClusterView> | null = null;
  private readonly meter: FailoverMeter;
  samples = 0;
  /**
   * The owner lease the store declares (metadata `ownerLeaseMs`, ms: how long an owner cut off
   * from a majority may go on acknowledging); the largest any node declared; null until a node answered.
   */
  leaseMs: number | null = null;

  constructor(
    private readonly client: ZarisClient,
    private readonly ledger: Ledger,
    private readonly clock: RunClock,
    private readonly replicationFactor: (store: string) => number,
    /** The partitions' replicas as registered in the ledger (`store/partition` -> replicas). */
    private readonly baseReplicas?: ReadonlyMap<string, readonly string[]>,
  ) {
    this.meter = new FailoverMeter(ledger);
  }

  /** Every failover measured so far, ms (failover-meter.ts). */
  get failoverMs(): number[] {
    return this.meter.failoverMs;
  }

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
      const { view: v, docs } = await this.client.fetchViewAndDocs();
      this.latest = v;
      this.noteLease(docs);
      this.samples++;
      const t = this.clock.now();
      this.ledger.sample(t, sampleRows(v, docs, this.baseReplicas));
      this.ledger.nodeSample(t, nodeSampleRows([...v.nodes.keys(), ...docs.map((d) => d.node)], docs));
      return v;
    } catch {
      // no node answered: each known node's line says so
      if (this.latest !== null) this.ledger.nodeSample(this.clock.now(), nodeSampleRows(this.latest.nodes.keys(), []));
      return this.latest;
    } finally {
      this.sampling = false;
    }
  }

  private async fresh(): Promise<ClusterView> {
    return (await this.freshDocs()).view;
  }

  private async freshDocs(): Promise<{ view: ClusterView; docs: MetadataDoc[] }> {
    const r = await this.client.fetchViewAndDocs();
    this.latest = r.view;
    this.noteLease(r.docs);
    return r;
  }

  /**
   * The in-sync members of a partition at `epoch` or a later one, as the harness sees them (the
   * sync-ack probes: "the partition's other in-sync members" of the ack's tenure): from the last
   * sampled view when it is that recent, else from a fresh one (callers arriving meanwhile share
   * one fetch). Null when no node reports the partition at that epoch or later.
   */
  async inSyncAt(store: string, partition: number, epoch: number): Promise<readonly string[] | null> {
    const key = `${store}/${partition}`;
    let e = this.latest?.runtime.get(key);
    if (!e || e.epoch < epoch) {
      this.refreshing ??= this.fresh().finally(() => (this.refreshing = null));
      e = (await this.refreshing.catch(() => null))?.runtime.get(key);
    }
    return e && e.epoch >= epoch ? e.inSync : null;
  }

  private noteLease(docs: readonly MetadataDoc[]): void {
    for (const d of docs) if (typeof d.ownerLeaseMs === 'number' && (this.leaseMs === null || d.ownerLeaseMs > this.leaseMs)) this.leaseMs = d.ownerLeaseMs;
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
    const { view: v, docs } = await this.freshDocs();
    const leaderDoc = docs.find((d) => d.isLeader);
    return {
      leader: v.leader,
      ...(leaderDoc && Array.isArray(leaderDoc.suspected) ? { suspected: [...leaderDoc.suspected] } : {}),
      ...membersOf(leaderDoc),
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
   * The nemesis's admin requests (handoff, regenerate: nodes/node-admin.ts), through the harness's
   * own client to the leader. `status` is the KvStatus name of the answer.
   */
  async admin(command: string): Promise<{ ok: boolean; message: string; status: string }> {
    const r = await this.client.admin(command);
    return { ok: r.answer.ok, message: r.answer.message, status: KvStatus[r.status] ?? String(r.status) };
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
    const owned = [...v.runtime.values()].filter((e) => e.active === node && this.replicationFactor(e.store) > 1);
    this.meter.crashStarting(faultId, node, startMs, owned);
  }

  /** The workload's ack listener: closes the measurement of a partition on its first ack elsewhere. */
  readonly onAck = (store: string, partition: number, node: string, epoch: number, tMs: number): void => this.meter.onAck(store, partition, node, epoch, tMs);
}

/**
 * The nemesis's FaultRecorder over the ledger: every start and end committed before it returns
 * (DESIGN.md §4 "each fault recorded before it takes effect"). A partition fault also records
 * `isolated` as the nemesis computed it from its grudge (the nodes cut off from a majority).
 */
export function ledgerFaultRecorder(ledger: Ledger, clock: RunClock, watch: Pick<ClusterWatch, 'crashStarting'>): FaultRecorder {
  return {
    faultStart(f: FaultStartRecord): number {
      const startMs = clock.now();
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
    faultReopen(id: number): void {
      ledger.faultEnd(id, null);
    },
    caughtUp(id: number, ms: number): void {
      ledger.faultCaughtUp(id, ms);
    },
    event(kind: string, detail: string): void {
      ledger.event(clock.now(), kind, detail ? (JSON.parse(detail) as unknown) : undefined);
    },
  };
}

/**
 * The member set a metadata document reports (issue 14, metadata `members`: `{ version, members:
 * [{ id, state: joining | member | leaving }] }`), as the nemesis's snapshot holds it; nothing when
 * the document has none (no leader answered, a store from before membership changes) or it is
 * malformed.
 */
export function membersOf(doc: MetadataDoc | undefined): Pick<ClusterSnapshot, 'members'> {
  const m = (doc as { members?: unknown } | undefined)?.members as { version?: unknown; members?: unknown } | undefined;
  if (!m || typeof m.version !== 'number' || !Array.isArray(m.members)) return {};
  const members: MemberEntry[] = [];
  for (const e of m.members as Array<{ id?: unknown; state?: unknown }>) {
    if (typeof e?.id !== 'string' || (e.state !== 'joining' && e.state !== 'member' && e.state !== 'leaving')) return {};
    members.push({ id: e.id, state: e.state });
  }
  return { members: { version: m.version, members } };
}
