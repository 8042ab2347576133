import type { PartitionPlacement } from './rebalance.js';

/**
 * The order in which a new partition map is carried out (issue 14; seed 002's handoff): per
 * partition, each new copy is added as an assigned replica (it catches up from the active: a
 * snapshot, then the op log's suffix) and waited for until it is in sync; then, if the preferred
 * owner changes, ownership moves by the fenced handoff (clients get OwnershipChanging or Migrating
 * meanwhile, seed 000); only then are the copies the new map leaves out dropped. So a partition
 * never holds fewer in-sync copies than it had or will have, and its owner always holds one.
 * The leader takes the first step of its result that is not yet done, partition by partition
 * (nodes/core/migration-driver.ts).
 */
export type MigrationStep =
  /** `node` becomes an assigned replica of the partition and starts catching up. */
  | { kind: 'add-copy'; store: string; partition: number; node: string }
  /** Wait until `node`'s copy is in sync (the active's req-add committed). */
  | { kind: 'await-in-sync'; store: string; partition: number; node: string }
  /** Move ownership from `from` to `to` by the fenced handoff (`to` in sync). */
  | { kind: 'handoff'; store: string; partition: number; from: string; to: string }
  /** `node`'s copy leaves the partition (its replacement, if any, is in sync). */
  | { kind: 'drop-copy'; store: string; partition: number; node: string };

/**
 * The steps from `before` to `after` (the same partitions, in the same order: e.g. planRebalance's
 * input and output), partition by partition in order. A replica list's duplicates count once;
 * an empty `before` list adds every copy of `after` with no handoff.
 * @throws RangeError when the two lists do not name the same partitions in the same order.
 */
export function migrationSteps(before: readonly PartitionPlacement[], after: readonly PartitionPlacement[]): MigrationStep[] {
  if (before.length !== after.length) throw new RangeError(`migration: ${before.length} partitions before, ${after.length} after`);
  const steps: MigrationStep[] = [];
  for (let i = 0; i < before.length; i++) {
    const b = before[i];
    const a = after[i];
    if (b.store !== a.store || b.partition !== a.partition) throw new RangeError(`migration: partition ${i} is ${b.store}/${b.partition} before and ${a.store}/${a.partition} after`);
    const { store, partition } = a;
    const had = [...new Set(b.replicas)];
    const wants = [...new Set(a.replicas)];
    for (const node of wants.filter((n) => !had.includes(n))) {
      steps.push({ kind: 'add-copy', store, partition, node });
      steps.push({ kind: 'await-in-sync', store, partition, node });
    }
    const from = had[0];
    const to = wants[0];
    if (from !== undefined && to !== undefined && from !== to) steps.push({ kind: 'handoff', store, partition, from, to });
    for (const node of had.filter((n) => !wants.includes(n))) steps.push({ kind: 'drop-copy', store, partition, node });
  }
  return steps;
}
