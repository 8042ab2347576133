import type Database from 'better-sqlite3';
import { intersectIntervals, unionIntervals, type Interval } from './crash-timeline.js';
import { crashInstant, pkey, type FaultFact, type RunFacts } from './run-facts.js';

/**
 * When each node was down for a partition, and (runs allowed past the fault budget) when the
 * partition lost every copy at once: the SQL verifier's side of ledger/history-index.ts
 * `downV2` / `lossStarts` / `lifeAt`.
 *
 * - "down" (history-format.md v2, with our reading of its end): from a kill/stop's crash instant
 *   c until the first sample of the partition after the fault's end that lists the node in
 *   `in_sync` and, when that sample carries `revisions`, records a revision for it (a member
 *   listed without one is the committed entry naming the node's dead incarnation: the harness
 *   records no revision for it, harness/cluster-watch.ts); without in-sync sets in
 *   the partition's samples: until caughtUp, else end; no end: forever.
 * - total loss (our reading, only when run_config.beyondBudget): an instant at which every node
 *   that was ever a replica of the partition (partitions.replicas and every sample's replicas)
 *   is down for it. The memory-only store then bootstraps again at epoch 1 with versions from the
 *   start; the partition's "life" at instant x is the number of total losses that began before
 *   x, and version-regression, epoch-conflict and ack-not-from-active compare within one life.
 * Reads the samples through samples_by_partition (one indexed query per crash and node); memory
 * is the faults and one interval list per partition and node.
 */
export class DownTimeline {
  private readonly crashFaults: FaultFact[];
  private readonly st: Record<string, Database.Statement>;
  private readonly downCache = new Map<string, Interval[]>();
  private readonly lossCache = new Map<string, number[]>();
  private readonly inSyncCache = new Map<string, boolean>();

  constructor(
    db: Database.Database,
    private readonly facts: RunFacts,
  ) {
    this.crashFaults = facts.faults.filter((f) => f.kind === 'kill' || f.kind === 'stop');
    this.st = {
      backInSync: db
        .prepare(
          `SELECT MIN(t_ms) FROM samples WHERE store = @store AND partition = @partition AND t_ms > @end AND in_sync IS NOT NULL
             AND EXISTS (SELECT 1 FROM json_each(samples.in_sync) WHERE value = @node)
             AND (revisions IS NULL OR EXISTS (SELECT 1 FROM json_each(samples.revisions) WHERE key = @node))`,
        )
        .pluck(),
      withInSync: db.prepare('SELECT 1 FROM samples WHERE store = ? AND partition = ? AND in_sync IS NOT NULL LIMIT 1').pluck(),
      replicaSets: db.prepare('SELECT DISTINCT replicas FROM samples WHERE store = ? AND partition = ? AND replicas IS NOT NULL').pluck(),
      partitions: db.prepare('SELECT DISTINCT store, partition FROM samples'),
    };
  }

  /** Whether a sample of the partition carries an in-sync set. */
  private withInSync(store: string, partition: number): boolean {
    const k = pkey(store, partition);
    let v = this.inSyncCache.get(k);
    if (v === undefined) this.inSyncCache.set(k, (v = this.st.withInSync.get(store, partition) !== undefined));
    return v;
  }

  /** The intervals [from, to) (ms) during which `node` was down for the partition: sorted, disjoint, touching ones merged. */
  down(store: string, partition: number, node: string): Interval[] {
    const k = `${pkey(store, partition)}\u0000${node}`;
    const cached = this.downCache.get(k);
    if (cached !== undefined) return cached;
    const withInSync = this.withInSync(store, partition);
    const list = this.crashFaults
      .filter((f) => f.nodes.includes(node))
      .map((f): Interval => {
        const c = crashInstant(f);
        if (!withInSync) return { from: c, to: f.caughtUp ?? f.end ?? Infinity };
        if (f.end === null) return { from: c, to: Infinity };
        const back = this.st.backInSync.get({ store, partition, end: f.end, node }) as number | null;
        return { from: c, to: back ?? Infinity };
      });
    const out = unionIntervals(list);
    this.downCache.set(k, out);
    return out;
  }

  /**
   * The instants (ms) at which a total loss of the partition began, ascending (the starts of the
   * maximal intervals during which every node that was ever its replica was down); [] unless the
   * rules are v2 and the run was allowed past the fault budget.
   * @throws Error when a sample's replicas column is not a JSON array of node ids.
   */
  lossStarts(store: string, partition: number): number[] {
    const k = pkey(store, partition);
    const cached = this.lossCache.get(k);
    if (cached !== undefined) return cached;
    let out: number[] = [];
    if (this.facts.v2 && this.facts.beyondBudget) {
      const ever = new Set(this.facts.replicas.get(k) ?? []);
      for (const text of this.st.replicaSets.all(store, partition) as string[]) {
        const list = JSON.parse(text) as unknown;
        if (!Array.isArray(list) || !list.every((n) => typeof n === 'string')) throw new Error(`ledger: samples(${store}, ${partition}).replicas is not a JSON array of node ids`);
        for (const n of list as string[]) ever.add(n);
      }
      let acc: Interval[] | null = null;
      for (const n of ever) {
        const down = this.down(store, partition, n);
        acc = acc === null ? down : intersectIntervals(acc, down);
        if (acc.length === 0) break;
      }
      out = (acc ?? []).map((i) => i.from);
    }
    this.lossCache.set(k, out);
    return out;
  }

  /** [store, partition, loss starts] of every partition (of the map or the samples) that had a total loss. */
  losses(): Array<[string, number, number[]]> {
    if (!this.facts.v2 || !this.facts.beyondBudget) return [];
    const parts = new Map<string, [string, number]>();
    for (const k of this.facts.replicas.keys()) {
      const [store, partition] = k.split('\u0000');
      parts.set(k, [store, Number(partition)]);
    }
    for (const p of this.st.partitions.all() as { store: string; partition: number }[]) parts.set(pkey(p.store, p.partition), [p.store, p.partition]);
    const out: Array<[string, number, number[]]> = [];
    for (const [store, partition] of parts.values()) {
      const starts = this.lossStarts(store, partition);
      if (starts.length > 0) out.push([store, partition, starts]);
    }
    return out;
  }
}

/** The life of a partition at instant x (ms): how many of its total losses (`starts`, ascending) began before x. */
export function lifeAt(starts: readonly number[] | null | undefined, x: number): number {
  if (starts === null || starts === undefined) return 0;
  let lo = 0;
  let hi = starts.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (starts[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
