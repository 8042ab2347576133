/**
 * The resync-crash episode (issue 12), catch-up from the op log: a replica that keeps its memory (paused, or cut off) past
 * the replication timeout is dropped from the in-sync set and, back, resumes its position in
 * the same owner's log (a restarted replica takes a snapshot instead); the moment it is in sync
 * again the active is killed, and the heir (the member a tie goes to, the one cut here) is the
 * likely successor: what its catch-up left out is then missing from the partition. Sync stores
 * (a lost write there is a violation); the fault stays under the escalation timeout (no
 * failover of its own).
 */
import { type Episode, crashDuration, crashKind } from './episode-kit.js';
import type { FaultTarget } from '../schedule-types.js';

export const resyncCrash: Episode = (c) => {
  const kind = crashKind(c);
  const how = (['pause', 'partition'] as const).filter((k) => c.kinds.has(k) && (k !== 'partition' || c.nodeCount >= 2));
  if (!kind || how.length === 0 || c.syncParts.length === 0) return null;
  const p = c.rng.pick(c.syncParts);
  const k = c.rng.pick(how);
  const d0 = c.rng.int(1_500, Math.max(1_500, Math.min(6_000, c.D.isolateShort.hi)));
  const name = `resync-${c.placed}`;
  const target: FaultTarget = { role: 'heir', store: p.store, partition: p.partition };
  return [
    k === 'pause' ? { kind: 'pause', target, durationMs: d0, bind: name, offsetMs: 0 } : { kind: 'partition', topology: 'isolate', target, durationMs: d0, bind: name, offsetMs: 0 },
    { kind, target: { role: 'active-of', fault: 0 }, durationMs: crashDuration(c, true), after: { event: 'node-caught-up', name, delayMs: c.rng.int(0, 300), waitMs: 20_000 }, offsetMs: 0 },
  ];
};
