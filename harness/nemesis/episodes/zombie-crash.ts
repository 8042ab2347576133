/**
 * The zombie-crash episode (issue 12), fencing: a preferred primary (the owner) cut off past the escalation timeout is deposed, and comes
 * back holding the tail it wrote (an async owner acknowledges until its lease lapses) at an
 * epoch it accepted from the committed map; the moment it is back in sync its successor is
 * killed, and the promotion chooses between it and the third copy (a failback to it, when it
 * is the preferred primary, makes it the owner too). Aimed at async stores by the fencing preset.
 */
import { type Episode, type Step, crashDuration, crashKind, draw, has } from './episode-kit.js';
import type { FaultTarget } from '../schedule-types.js';

export const zombieCrash: Episode = (c) => {
  const kind = crashKind(c);
  if (!has(c, 'partition') || !kind || c.nodeCount < 3) return null;
  const name = `zombie-${c.placed}`;
  // the preferred primary (first in partition-map order, the owner whenever no fault moved it):
  // back in sync it wins a tie between equally synced candidates, and a failback returns to it
  // (an async one: a sync owner cut off acknowledges nothing alone, so it has no tail of acks)
  const p = c.asyncParts.length > 0 ? c.rng.pick(c.asyncParts) : null;
  const target: FaultTarget = p ? { role: 'preferred', store: p.store, partition: p.partition } : { role: 'leader' };
  const d0 = draw(c.rng, c.D.isolateLong);
  const d1 = crashDuration(c, true);
  const steps: Step[] = [
    { kind: 'partition', topology: 'isolate', target, durationMs: d0, bind: name, offsetMs: 0 },
    // the successor's crash waits for the zombie to be back in sync in the partition aimed at (in
    // every partition, when none is: the leader's): in the default mix other faults keep it behind
    // elsewhere for longer than the wait, and the crash then comes too late to meet its return
    { kind, target: { role: 'active-of', fault: 0 }, durationMs: d1, after: { event: 'node-caught-up', name, delayMs: c.rng.int(0, 300), waitMs: 30_000, ...(p ? { store: p.store, partition: p.partition } : {}) }, offsetMs: d0 },
  ];
  // then, the successor just restarted (still catching up, so the heir is the third copy), the
  // third copy is crashed too: both rebuild from the new owner, and whatever the owner's copy
  // lacks is gone from every copy. A later failover to a copy that kept the successor's writes
  // would otherwise put them back (runs/20261201T024758Z-13: the bug acted, a failover 4 s later
  // to the third copy undid it, INCONCLUSIVE). One node down at a time: within the budget. It
  // waits as long as the successor's crash may (its catch-up wait, the crash), and is dropped
  // when that crash never came. The steps' offsets give the episode its whole nominal length, so
  // the next episode does not cut the zombie off again while its successor's crash waits
  // (runs/20261201T032818Z-14: the second lead isolated the same node 1.2 s after the heal).
  if (p) steps.push({ kind, target: { role: 'heir', store: p.store, partition: p.partition }, durationMs: crashDuration(c, true), after: { event: 'ended', fault: 1, delayMs: c.rng.int(0, 150), waitMs: 30_000 + d1 + 5_000, onMiss: 'skip' }, offsetMs: d0 + d1 });
  return steps;
};
