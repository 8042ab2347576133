import type Database from 'better-sqlite3';
import type { PartitionFindingKind } from '../../ledger/history-findings.js';
import { observedNodeStalls, stalledDuring } from '../../ledger/node-stalls.js';
import { crashInstant, pkey, type RunFacts } from './run-facts.js';
import { lifeAt } from './total-loss.js';

/** A partition finding with its evidence (findings.detail). */
export interface PartitionFinding {
  store: string;
  partition: number;
  kind: PartitionFindingKind;
  detail: Record<string, unknown>;
}

/** One (epoch, active) of a partition: when samples first and last showed it. */
export interface EpochOwner {
  epoch: number;
  active: string;
  firstMs: number;
  lastMs: number;
}

/** What the sample pass learned, for the per-key and per-loss rules. */
export interface SampleFacts {
  /** Partition findings (v2), at most one per partition and kind, in partition order. */
  findings: PartitionFinding[];
  /**
   * `store\0partition` -> life -> epoch -> the non-null actives its samples showed (the life: how
   * many total losses of the partition began before the sample, total-loss.ts; always 0 within
   * the fault budget).
   */
  actives: Map<string, Map<number, Map<number, Set<string>>>>;
  /** `store\0partition` -> its (epoch, active) pairs with the first and last time seen. */
  owners: Map<string, EpochOwner[]>;
  /** Partitions with at least one sample carrying an in-sync set. */
  withInSync: Set<string>;
}

type Raw = [t: number, active: string | null, epoch: number, health: string, node: string | null, inSync: string | null, revisions: string | null, replicas: string | null];

interface Parsed {
  t: number;
  active: string | null;
  epoch: number;
  inSync: string[] | null;
  revisions: Record<string, number> | null;
  replicas: string[] | null;
}

function parseJson<T>(text: string | null, where: string): T | null {
  if (text === null) return null;
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new Error(`ledger: ${where} is not JSON`);
  }
}

/** Sorted disjoint [from, to] intervals during which a fault on one of a set of nodes was in effect. */
function faultIntervals(facts: RunFacts, nodes: readonly string[]): Array<[number, number]> {
  const list = facts.faults
    .filter((f) => f.nodes.some((n) => nodes.includes(n)))
    .map((f): [number, number] => [f.start, f.end ?? Infinity])
    .sort((a, b) => a[0] - b[0]);
  const out: Array<[number, number]> = [];
  for (const i of list) {
    const last = out[out.length - 1];
    if (last !== undefined && i[0] <= last[1]) last[1] = Math.max(last[1], i[1]);
    else out.push([i[0], i[1]]);
  }
  return out;
}

/** Whether one of the sorted disjoint closed intervals meets [from, to]. */
function meets(intervals: Array<[number, number]>, from: number, to: number): boolean {
  let lo = 0;
  let hi = intervals.length;
  // the first interval whose end is >= from
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (intervals[mid][1] >= from) hi = mid;
    else lo = mid + 1;
  }
  return lo < intervals.length && intervals[lo][0] <= to;
}

/**
 * One streaming pass over the runtime-map samples, partition by partition in time order
 * (samples_by_partition), judging the runtime map by the v2 rules (history-format.md v2, "The
 * runtime map itself"): epoch-conflict (two non-null actives at one epoch of one life of the
 * partition: our total-amnesia reading, `losses`), epoch-regression (a
 * node's own samples whose epoch goes down), false-healthy (Healthy while the in-sync set lacks a
 * replica of the sample's partition map), replication-lag (async stores: a sample s at T with
 * revisions, no fault on a replica in effect within [T - lag, T] and no replica observed not
 * running in it (ledger/node-stalls.ts: silent, or its event loop blocked), every sample of that window at
 * s's active and epoch, and an in-sync member below the active's revision in the latest sample at
 * or before T - lag). Memory: per partition, the samples of one lag window and its epochs.
 * `losses`: `store\0partition` -> the starts of its total losses (runs past the fault budget).
 * Also collects the actives per life and epoch (ack-not-from-active), the (epoch, active) pairs with when
 * they were first seen (deposed owners) and which partitions' samples carry in-sync sets.
 * @throws Error when a JSON column of a sample is not JSON.
 */
export function scanSamples(db: Database.Database, facts: RunFacts, losses: ReadonlyMap<string, readonly number[]> = new Map()): SampleFacts {
  const out: SampleFacts = { findings: [], actives: new Map(), owners: new Map(), withInSync: new Set() };
  const storeOrder = [...facts.stores.keys()];
  const parts = (db.prepare('SELECT DISTINCT store, partition FROM samples').all() as { store: string; partition: number }[]).sort(
    (a, b) => rank(storeOrder, a.store) - rank(storeOrder, b.store) || (a.store < b.store ? -1 : a.store > b.store ? 1 : 0) || a.partition - b.partition,
  );
  const rows = db
    .prepare('SELECT t_ms, active, epoch, health, node, in_sync, revisions, replicas FROM samples WHERE store = ? AND partition = ? ORDER BY t_ms, rowid')
    .raw(true);
  const lag = facts.gates.asyncLagMs ?? 0;
  const stalls = observedNodeStalls(db);
  const intervalCache = new Map<string, Array<[number, number]>>();
  const faultsOn = (nodes: readonly string[]): Array<[number, number]> => {
    const k = nodes.join('\u0000');
    let v = intervalCache.get(k);
    if (v === undefined) intervalCache.set(k, (v = faultIntervals(facts, nodes)));
    return v;
  };
  const crashes = facts.faults.filter((f) => f.kind === 'kill' || f.kind === 'stop');
  /** A kill or stop of `node` took effect in (a, b]. */
  const crashedBetween = (node: string, a: number, b: number): boolean => crashes.some((f) => f.nodes.includes(node) && crashInstant(f) > a && crashInstant(f) <= b);
  for (const { store, partition } of parts) {
    const pk = pkey(store, partition);
    const base = facts.replicas.get(pk) ?? [];
    // replication-lag: async stores, only when the contract declares a lag bound
    const async = facts.stores.get(store)?.ackMode === 'async' && facts.gates.replicationLag;
    const found = new Map<PartitionFindingKind, Record<string, unknown>>();
    const actives = new Map<number, Map<number, Set<string>>>();
    const starts = losses.get(pk);
    const owners = new Map<string, EpochOwner>();
    const nodeEpoch = new Map<string, { epoch: number; t: number }>();
    // replication lag: the samples of the window (T - lag, T] and the last sample before it
    let window: Parsed[] = [];
    let before: Parsed | null = null;
    let pending: Parsed[] = [];
    const judgeLag = (group: Parsed[]): void => {
      if (found.has('replication-lag') || group.length === 0) return;
      const T = group[0].t;
      const from = T - lag;
      // samples at or before T - lag leave the window; the last of them is the reference
      let keep = 0;
      while (keep < window.length && window[keep].t < from) keep++;
      if (keep > 0) {
        before = window[keep - 1];
        window = window.slice(keep);
      }
      window.push(...group);
      let ref: Parsed | null = before;
      for (const x of window) if (x.t <= from) ref = x;
      for (const s of group) {
        if (s.revisions === null || s.inSync === null || s.active === null) continue;
        const target = ref?.revisions?.[s.active];
        if (target === undefined) continue;
        const behind = s.inSync.find((m) => s.revisions![m] !== undefined && s.revisions![m] < target);
        if (behind === undefined) continue;
        if (window.some((x) => x.t >= from && (x.active !== s.active || x.epoch !== s.epoch))) continue;
        if (meets(faultsOn(s.replicas ?? base), from, T)) continue;
        // a node of the partition observed not running (silent, or its loop blocked) in the window
        if (stalledDuring(stalls, [...(s.replicas ?? base), s.active], from, T)) continue;
        found.set('replication-lag', { tMs: T, active: s.active, epoch: s.epoch, member: behind, revision: s.revisions[behind], activeRevision: target, referenceMs: ref!.t, lagMs: lag });
        return;
      }
    };
    for (const r of rows.iterate(store, partition) as IterableIterator<Raw>) {
      const [t, active, epoch, health, node, inSyncText, revisionsText, replicasText] = r;
      if (active !== null) {
        const life = lifeAt(starts, t);
        let byEpoch = actives.get(life);
        if (byEpoch === undefined) actives.set(life, (byEpoch = new Map()));
        let set = byEpoch.get(epoch);
        if (set === undefined) byEpoch.set(epoch, (set = new Set()));
        if (!set.has(active)) {
          set.add(active);
          if (set.size > 1 && !found.has('epoch-conflict')) found.set('epoch-conflict', { epoch, actives: [...set], tMs: t, ...(starts !== undefined ? { life } : {}) });
        }
        const ok = `${epoch}\u0000${active}`;
        const seen = owners.get(ok);
        if (seen === undefined) owners.set(ok, { epoch, active, firstMs: t, lastMs: t });
        else seen.lastMs = t;
      }
      if (node !== null) {
        // a crash of the node between two of its samples starts a new view (history-map-rules.ts)
        let prev = nodeEpoch.get(node);
        if (prev !== undefined && crashedBetween(node, prev.t, t)) prev = undefined;
        if (prev !== undefined && epoch < prev.epoch && !found.has('epoch-regression')) found.set('epoch-regression', { node, fromEpoch: prev.epoch, toEpoch: epoch, tMs: t });
        nodeEpoch.set(node, { epoch: prev === undefined || epoch > prev.epoch ? epoch : prev.epoch, t });
      }
      if (inSyncText !== null) out.withInSync.add(pk);
      const where = `samples(${store}, ${partition}, ${t})`;
      const inSync = inSyncText === null ? null : parseJson<string[]>(inSyncText, `${where}.in_sync`);
      const replicas = replicasText === null ? null : parseJson<string[]>(replicasText, `${where}.replicas`);
      if (health === 'Healthy' && inSync !== null && !found.has('false-healthy')) {
        const missing = (replicas ?? base).filter((n) => !inSync.includes(n));
        if (missing.length > 0) found.set('false-healthy', { tMs: t, node, inSync, missing });
      }
      if (async) {
        const s: Parsed = { t, active, epoch, inSync, revisions: revisionsText === null ? null : parseJson<Record<string, number>>(revisionsText, `${where}.revisions`), replicas };
        if (pending.length > 0 && pending[0].t !== t) {
          judgeLag(pending);
          pending = [];
        }
        pending.push(s);
      }
    }
    if (async) judgeLag(pending);
    out.actives.set(pk, actives);
    out.owners.set(pk, [...owners.values()]);
    for (const kind of ['epoch-conflict', 'epoch-regression', 'false-healthy', 'replication-lag'] as const) {
      const detail = found.get(kind);
      if (detail !== undefined) out.findings.push({ store, partition, kind, detail });
    }
  }
  return out;
}

function rank(order: string[], s: string): number {
  const i = order.indexOf(s);
  return i < 0 ? Number.MAX_SAFE_INTEGER : i;
}
