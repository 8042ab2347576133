/**
 * Questions asked of a cluster snapshot (the nemesis, the targets' cluster watches): which partitions
 * are not healthy, whether a node has caught up, which nodes are catching up.
 */
import type { ClusterSnapshot } from './budget.js';

/** Partitions not Healthy, or not every replica in sync under its running incarnation, or without an active. */
export function unhealthyPartitions(snap: ClusterSnapshot): string[] {
  const out: string[] = [];
  for (const p of snap.partitions) {
    const name = `${p.store}/${p.partition}`;
    if (p.health !== 'Healthy' || !p.active) out.push(`${name} ${p.health}`);
    else if (p.replicas.some((r) => !p.inSync.includes(r))) out.push(`${name} ${p.replicas.filter((r) => p.inSync.includes(r)).length}/${p.replicas.length} in sync`);
  }
  return out;
}

/**
 * Is the node answering and in sync in every partition it replicates, or, with `only`, in that
 * one partition (a node it does not replicate is never caught up there)?
 */
export function nodeCaughtUp(snap: ClusterSnapshot, node: string, only?: { store: string; partition: number }): boolean {
  if (!snap.answered.includes(node)) return false;
  if (only !== undefined) {
    const p = snap.partitions.find((x) => x.store === only.store && x.partition === only.partition);
    return p !== undefined && p.replicas.includes(node) && p.inSync.includes(node);
  }
  return snap.partitions.every((p) => !p.replicas.includes(node) || p.inSync.includes(node));
}

/** Nodes that answer but are not in sync in some replicated partition they replicate (catching up). */
export function catchingUpNodes(snap: ClusterSnapshot): string[] {
  const out = new Set<string>();
  for (const p of snap.partitions) {
    if (p.replicationFactor <= 1) continue;
    for (const r of p.replicas) if (snap.answered.includes(r) && !p.inSync.includes(r)) out.add(r);
  }
  return [...out].sort();
}
