import type Database from 'better-sqlite3';

/**
 * Per-partition runtime-map history for the report (DESIGN.md §6 "per-partition epoch
 * history"), from the ledger's `samples` table (store, partition, t_ms, active, epoch, health,
 * replicated_revision; one row per partition at least every 500 ms; only the merged view, node
 * NULL: per-node rows are judged by the verifier, not charted). Only the changes are kept:
 * a transition is a sample whose active owner, epoch or health differs from the partition's
 * previous sample (seed 002: epochs fence owners; health Healthy / Degraded / Recovering /
 * Unavailable).
 */

/** One runtime-map sample of a partition (times: ms since the run started, harness clock). */
export interface RuntimeSample {
  tMs: number;
  active: string | null;
  epoch: number;
  health: string;
  replicatedRevision: number;
}

/** What changed at a transition; the partition's first sample is `first`. */
export type TransitionChange = 'first' | 'active' | 'epoch' | 'health';

/** A sample that changed the partition's runtime state, with what changed. */
export interface Transition extends RuntimeSample {
  changed: TransitionChange[];
}

/**
 * Turns one partition's samples, fed in time order, into transitions. O(1) memory.
 */
export class TransitionTracker {
  private prev: RuntimeSample | null = null;

  /** Feeds the next sample; returns the transition it makes, or null when nothing changed. */
  push(s: RuntimeSample): Transition | null {
    const p = this.prev;
    this.prev = s;
    if (p === null) return { ...s, changed: ['first'] };
    const changed: TransitionChange[] = [];
    if (p.active !== s.active) changed.push('active');
    if (p.epoch !== s.epoch) changed.push('epoch');
    if (p.health !== s.health) changed.push('health');
    return changed.length === 0 ? null : { ...s, changed };
  }
}

/** One partition's history as the report shows it: counts and the first and last transitions. */
export interface PartitionHistory {
  store: string;
  partition: number;
  samples: number;
  /** All transitions, the first sample included. */
  transitions: number;
  /** Distinct active owners seen, sorted (samples without an active owner add none). */
  owners: string[];
  firstEpoch: number | null;
  lastEpoch: number | null;
  /** Samples per health state. */
  healthSamples: Record<string, number>;
  /** The first `keep` transitions. */
  head: Transition[];
  /** The last `keep` transitions that are not in `head`, in time order. */
  tail: Transition[];
}

/** Transitions kept per partition at each end of the run (the rest are counted). */
export const TRANSITIONS_KEPT = 100;

interface SampleRowDb {
  t_ms: number;
  active: string | null;
  epoch: number;
  health: string;
  replicated_revision: number;
}

function toSample(r: SampleRowDb): RuntimeSample {
  return { tMs: r.t_ms, active: r.active, epoch: r.epoch, health: r.health, replicatedRevision: r.replicated_revision };
}

/**
 * The partitions that have samples, in the ledger's store order (the `stores` table's row
 * order; stores it does not list come after, by name), then by partition number.
 */
export function sampledPartitions(db: Database.Database): { store: string; partition: number }[] {
  const order = new Map((db.prepare('SELECT name FROM stores ORDER BY rowid').pluck().all() as string[]).map((n, i) => [n, i]));
  const list = db.prepare('SELECT DISTINCT store, partition FROM samples WHERE node IS NULL').all() as { store: string; partition: number }[];
  const rank = (s: string): number => order.get(s) ?? Number.MAX_SAFE_INTEGER;
  return list.sort((a, b) => rank(a.store) - rank(b.store) || (a.store < b.store ? -1 : a.store > b.store ? 1 : 0) || a.partition - b.partition);
}

/** A sample row as the scan reads it (better-sqlite3 raw mode): t_ms, active, epoch, health, replicated_revision. */
type RawSample = [number, string | null, number, string, number];

/**
 * Scans every partition's samples once, in time order (through the samples_by_partition
 * index), and builds its {@link PartitionHistory}. Memory: O(partitions x keep), whatever the
 * run's length. `onSample(index, tMs, epoch)` sees every sample of the partition at position
 * `index` of the result (for the epoch chart built in the same pass). Rows are read as arrays
 * and a sample object is made only for a transition (a 4-hour run has ~500,000 samples).
 */
export function scanEpochHistory(
  db: Database.Database,
  opts: { keep?: number; onSample?: (index: number, tMs: number, epoch: number) => void } = {},
): PartitionHistory[] {
  const keep = opts.keep ?? TRANSITIONS_KEPT;
  const onSample = opts.onSample;
  const rows = db
    .prepare('SELECT t_ms, active, epoch, health, replicated_revision FROM samples WHERE store = ? AND partition = ? AND node IS NULL ORDER BY t_ms, rowid')
    .raw(true);
  return sampledPartitions(db).map(({ store, partition }, index) => {
    const tracker = new TransitionTracker();
    const h: PartitionHistory = { store, partition, samples: 0, transitions: 0, owners: [], firstEpoch: null, lastEpoch: null, healthSamples: {}, head: [], tail: [] };
    const owners = new Set<string>();
    const health = new Map<string, number>();
    let prev: RawSample | null = null;
    for (const r of rows.iterate(store, partition) as IterableIterator<RawSample>) {
      const [tMs, active, epoch, hs] = r;
      onSample?.(index, tMs, epoch);
      h.samples++;
      health.set(hs, (health.get(hs) ?? 0) + 1);
      if (prev !== null && prev[1] === active && prev[2] === epoch && prev[3] === hs) continue;
      prev = r;
      if (active !== null) owners.add(active);
      if (h.firstEpoch === null) h.firstEpoch = epoch;
      const t = tracker.push({ tMs, active, epoch, health: hs, replicatedRevision: r[4] })!;
      h.transitions++;
      if (h.head.length < keep) h.head.push(t);
      else {
        h.tail.push(t);
        if (h.tail.length > keep) h.tail.shift();
      }
    }
    h.lastEpoch = prev === null ? null : prev[2];
    h.owners = [...owners].sort();
    h.healthSamples = Object.fromEntries([...health.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    return h;
  });
}

/**
 * One partition's transitions in [fromMs, toMs] (for a drill-down around an ack): the state
 * in force at fromMs (the last sample before it, as `first`) followed by the changes, at most
 * `limit` in all.
 */
export function transitionsBetween(db: Database.Database, store: string, partition: number, fromMs: number, toMs: number, limit = 50): Transition[] {
  const before = db
    .prepare('SELECT t_ms, active, epoch, health, replicated_revision FROM samples WHERE store = ? AND partition = ? AND node IS NULL AND t_ms < ? ORDER BY t_ms DESC, rowid DESC LIMIT 1')
    .get(store, partition, fromMs) as SampleRowDb | undefined;
  const tracker = new TransitionTracker();
  const out: Transition[] = [];
  if (before !== undefined) out.push(tracker.push(toSample(before))!);
  const rows = db.prepare(
    'SELECT t_ms, active, epoch, health, replicated_revision FROM samples WHERE store = ? AND partition = ? AND node IS NULL AND t_ms >= ? AND t_ms <= ? ORDER BY t_ms, rowid',
  );
  for (const r of rows.iterate(store, partition, fromMs, toMs) as IterableIterator<SampleRowDb>) {
    if (out.length >= limit) break;
    const t = tracker.push(toSample(r));
    if (t !== null) out.push(t);
  }
  return out;
}
