import { describe, expect, it } from 'vitest';
import { PartitionData, type ReplicatedOp } from './partition-data.js';

function op(rev: number, seg: number, key: string, value: string | null): ReplicatedOp {
  return { rev, seg, key, value: value === null ? null : Buffer.from(value), version: rev };
}

/** Applies ops 1..n spread over segments 0 and 1 (odd revisions to 0, even to 1). */
function filled(n: number, catchupSkipsLastOp = false, logCap?: number): PartitionData {
  const d = new PartitionData([0, 1], logCap, catchupSkipsLastOp);
  for (let r = 1; r <= n; r++) d.apply(op(r, r % 2 === 1 ? 0 : 1, `k${r}`, `v${r}`));
  return d;
}

describe('PartitionData catch-up from the op log', () => {
  it('sends every op above the position, per segment, and a replica that installs them holds the same records', () => {
    const active = filled(10);
    const segs = active.syncSince(4);
    expect(segs.map((s) => [s.seg, s.ops!.map((o) => o.rev)])).toEqual([
      [0, [5, 7, 9]],
      [1, [6, 8, 10]],
    ]);
    const replica = filled(4);
    replica.installSync(segs, active.revision);
    expect(replica.revision).toBe(10);
    for (let r = 1; r <= 10; r++) expect(replica.get(r % 2 === 1 ? 0 : 1, `k${r}`)?.value?.toString()).toBe(`v${r}`);
    expect(replica.heldKeys).toBe(10);
  });

  it('sends snapshots where the log no longer reaches back (and for a position of -1)', () => {
    const active = filled(10, false, 2);
    const segs = active.syncSince(4);
    expect(segs.every((s) => s.snapshot !== undefined && s.ops === undefined)).toBe(true);
    expect(active.syncSince(-1).map((s) => s.snapshot!.length)).toEqual([5, 5]);
  });

  it('self-test bug catchup-skips-last-op: the newest op of each segment suffix is left out, while the revision is taken over', () => {
    const active = filled(10, true);
    const segs = active.syncSince(4);
    expect(segs.map((s) => [s.seg, s.ops!.map((o) => o.rev)])).toEqual([
      [0, [5, 7]],
      [1, [6, 8]],
    ]);
    const replica = filled(4);
    replica.installSync(segs, active.revision);
    // the replica claims revision 10 but lacks ops 9 and 10
    expect(replica.revision).toBe(10);
    expect(replica.get(0, 'k9')).toBeUndefined();
    expect(replica.get(1, 'k10')).toBeUndefined();
    // a suffix of one op is left out entirely; snapshots are not affected
    expect(filled(10, true).syncSince(9)).toEqual([]);
    expect(filled(10, true).syncSince(-1).map((s) => s.snapshot!.length)).toEqual([5, 5]);
  });
});
