/**
 * The runtime map judged (history-format.md v2): epoch-conflict, epoch-regression, false-healthy
 * and replication-lag, at most one finding per partition and kind.
 */
import type { HistoryOwnership } from './history-format.js';
import type { PartitionFindingKind, RuleFinding } from './history-findings.js';
import { crashAt, inEffectDuring, type HistoryIndex } from './history-index.js';
import { firstIndex, stalledDuring } from './intervals.js';

/** The runtime map judged (v2): at most one finding per partition and kind. */
export function partitionFindings(ix: HistoryIndex): RuleFinding[] {
  const out: RuleFinding[] = [];
  const keys = [...ix.samples.keys()];
  for (const k of keys) {
    const samples = ix.samples.get(k)!;
    const { store, partition } = samples[0];
    const add = (kind: PartitionFindingKind): void => void out.push({ class: 'violation', kind, store, key: null, write: null, partition });
    const replicasAt = (s: HistoryOwnership): string[] => s.replicas ?? ix.replicasOf(store, partition);
    // epoch-conflict: two samples with the same epoch and different non-null actives (our
    // reading: of one life of the partition)
    const activeOf = new Map<string, string>();
    let conflict = false;
    for (const s of samples) {
      if (s.active === null) continue;
      const ek = `${ix.lifeAt(store, partition, s.t)}\u0000${s.epoch}`;
      const seen = activeOf.get(ek);
      if (seen === undefined) activeOf.set(ek, s.active);
      else if (seen !== s.active) conflict = true;
    }
    if (conflict) add('epoch-conflict');
    // epoch-regression: one node's samples whose epoch goes down over time; a crash (kill or
    // stop) of the node between two of its samples starts a new view (a restarted process
    // remembers nothing and may first learn an older entry)
    const lastByNode = new Map<string, { epoch: number; t: number }>();
    let regression = false;
    for (const s of samples) {
      if (s.node === undefined) continue;
      let prev = lastByNode.get(s.node);
      if (prev !== undefined && ix.crashes.some((f) => f.nodes.includes(s.node!) && crashAt(f) > prev!.t && crashAt(f) <= s.t)) prev = undefined;
      if (prev !== undefined && s.epoch < prev.epoch) regression = true;
      lastByNode.set(s.node, { epoch: prev === undefined ? s.epoch : Math.max(prev.epoch, s.epoch), t: s.t });
    }
    if (regression) add('epoch-regression');
    // false-healthy: Healthy while the in-sync set lacks a replica
    if (samples.some((s) => s.health === 'Healthy' && s.inSync !== undefined && replicasAt(s).some((n) => !s.inSync!.includes(n)))) add('false-healthy');
    // replication-lag (async stores)
    if (ix.stores.get(store)?.ackMode === 'async' && ix.rules.replicationLag && samples.some((s) => lagging(ix, samples, s))) add('replication-lag');
  }
  return out;
}

/**
 * replication-lag at sample s (time T): s has revisions; no fault on a replica is in effect
 * within [T - lag, T] and no stall (extension `stalls`) of a replica or the active meets it; every sample of the partition in that window shows s's active and epoch;
 * and a member of s.inSync holds a revision below the active's revision in the latest sample at
 * or before T - lag.
 */
function lagging(ix: HistoryIndex, samples: HistoryOwnership[], s: HistoryOwnership): boolean {
  if (s.revisions === undefined || s.inSync === undefined || s.active === null) return false;
  const T = s.t;
  const from = T - ix.lag;
  // samples are sorted by time: the window [from, T] is samples[lo, hi); the reference is the
  // last sample at or before `from`
  const lo = firstIndex(samples, (x) => x.t >= from);
  const hi = firstIndex(samples, (x) => x.t > T);
  const ref = samples[firstIndex(samples, (x) => x.t > from) - 1] as HistoryOwnership | undefined;
  const target = ref?.revisions?.[s.active];
  if (target === undefined) return false;
  if (!s.inSync.some((m) => s.revisions![m] !== undefined && s.revisions![m] < target)) return false;
  for (let i = lo; i < hi; i++) if (samples[i].active !== s.active || samples[i].epoch !== s.epoch) return false;
  const replicas = s.replicas ?? ix.replicasOf(s.store, s.partition);
  // a node of the partition observed not running in the window (extension `stalls`) excuses it
  if (stalledDuring(ix.h.stalls ?? [], [...replicas, s.active], from, T)) return false;
  return !ix.h.faults.some((f) => f.nodes.some((n) => replicas.includes(n)) && inEffectDuring(f, from, T));
}
