/**
 * The lag-crash episode (issue 12; the simulation's lag-crash, nodes/sim/sim-schedule.ts): an owner failing while its
 * replicas hold different prefixes of its log, the state a promotion must choose in. The heir of
 * an async partition drops its active's traffic (a one-way cut: within the budget on 3 nodes,
 * the heir and the third node stay a connected majority), and LAG ms into the cut, while the
 * other replica still follows, the active is killed: writes acknowledged in the lag reach one
 * replica and not the heir, the member a tie goes to. LAG (200-400 ms) stays under the nodes'
 * replication timeout (600 ms), past which the active would ask the leader to drop the heir
 * from the in-sync set and no promotion would have to choose.
 */
import { type Episode, has } from './episode-kit.js';

export const lagCrash: Episode = (c) => {
  if (!has(c, 'partition') || !c.kinds.has('kill') || c.nodeCount < 3 || c.asyncParts.length === 0) return null;
  const p = c.rng.pick(c.asyncParts);
  const lag = c.rng.int(200, 400);
  const tail = c.rng.int(100, 300);
  return [
    { kind: 'partition', topology: 'one-way', direction: 'in', target: { role: 'heir', store: p.store, partition: p.partition }, peer: { target: { role: 'active', store: p.store, partition: p.partition } }, durationMs: lag + tail, offsetMs: 0 },
    { kind: 'kill', target: { role: 'active-of', fault: 0 }, durationMs: c.rng.int(1_000, 3_000), after: { event: 'started', fault: 0, delayMs: lag, waitMs: 5_000 }, offsetMs: 0 },
  ];
};
