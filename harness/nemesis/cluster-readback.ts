/**
 * What the player reads back from the live cluster: a snapshot bounded by probeTimeoutMs, the
 * restarted nodes seen caught up or rejoined, and the watch loop that refreshes both while it plays.
 */
import type { ClusterSnapshot } from './budget.js';
import { nodeCaughtUp } from './cluster-queries.js';
import { sleep, type PlayerState } from './player-state.js';

/** Refreshes the snapshot every pollMs while the phase runs: triggers and catch-up records. */
export async function watchLoop(ps: PlayerState, stop: AbortSignal): Promise<void> {
  while (!stop.aborted) {
    const snap = await fetchSnapshot(ps);
    if (snap) noteCatchUp(ps, snap);
    ps.poke();
    await sleep(ps.o.pollMs, stop);
  }
}

/**
 * Records catch-up of restarted nodes seen in sync everywhere; forgets amnesia of nodes seen
 * rejoined: listed in sync somewhere, or (issue 14: a spare, a node that left) answering while
 * the partition map gives it no copy to catch up.
 */
export function noteCatchUp(ps: PlayerState, snap: ClusterSnapshot): void {
  const rejoined = (n: string): boolean => snap.partitions.some((p) => p.inSync.includes(n)) || (snap.answered.includes(n) && !snap.partitions.some((p) => p.replicas.includes(n)));
  for (const n of [...ps.amnesic]) if (ps.o.runtime.isUp(n) && rejoined(n)) ps.amnesic.delete(n);
  for (const [id, { node, index }] of [...ps.pendingCatchUp]) {
    if (!nodeCaughtUp(snap, node)) continue;
    ps.pendingCatchUp.delete(id);
    ps.o.recorder.caughtUp(id, ps.o.clock.now());
    if (![...ps.pendingCatchUp.values()].some((p) => p.index === index)) ps.status[index].caughtUp = true;
  }
}

/** A fresh snapshot, bounded by probeTimeoutMs; null when the probe failed. Kept for triggers (`ps.snap`). */
export async function fetchSnapshot(ps: PlayerState): Promise<ClusterSnapshot | null> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const s = await Promise.race([
      ps.o.probe.snapshot(),
      new Promise<null>((resolve) => {
        timer = setTimeout(() => resolve(null), ps.o.probeTimeoutMs);
      }),
    ]);
    if (s) ps.snap = s;
    return s;
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
}
