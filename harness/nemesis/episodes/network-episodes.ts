/**
 * Episodes of network faults (partition, client-cut): isolations short and long, splits, one-way
 * cuts, a flapping link, and a cut between the harness's client and one node.
 */
import { type Episode, type Step, crashDuration, crashKind, draw, has, isolateDuration, ownerTarget, roleTarget } from './episode-kit.js';
import type { EpisodeName } from '../presets.js';

export const networkEpisodes = {
  isolate: (c) =>
    has(c, 'partition') && c.nodeCount >= 2
      ? [{ kind: 'partition', topology: 'isolate', target: roleTarget(c, { active: 45, leader: 25, replica: 10, random: 20 }), durationMs: isolateDuration(c), offsetMs: 0 }]
      : null,
  'isolate-long-active': (c) =>
    has(c, 'partition') && c.nodeCount >= 2 ? [{ kind: 'partition', topology: 'isolate', target: ownerTarget(c), durationMs: isolateDuration(c, 'long'), offsetMs: 0 }] : null,
  'isolate-short-active': (c) =>
    has(c, 'partition') && c.nodeCount >= 2 ? [{ kind: 'partition', topology: 'isolate', target: ownerTarget(c), durationMs: isolateDuration(c, 'short'), offsetMs: 0 }] : null,
  split: (c) =>
    has(c, 'partition') && c.nodeCount >= 3
      ? [{ kind: 'partition', topology: c.rng.chance(0.6) ? 'halves' : 'bridge', target: { role: 'random' }, durationMs: isolateDuration(c, c.rng.chance(0.6) ? 'long' : 'short'), offsetMs: 0 }]
      : null,
  'one-way': (c) => {
    if (!has(c, 'partition') || c.nodeCount < 2) return null;
    const durationMs = draw(c.rng, c.D.oneWay);
    const steps: Step[] = [
      { kind: 'partition', topology: 'one-way', direction: c.rng.chance(0.5) ? 'in' : 'out', target: c.rng.chance(0.65) ? ownerTarget(c) : { role: 'leader' }, durationMs, offsetMs: 0 },
    ];
    // issue 13 pattern 6: the cut node killed half-way through the cut
    const kind = crashKind(c);
    if (kind && c.rng.chance(0.4)) steps.push({ kind, target: { role: 'same', fault: 0 }, durationMs: crashDuration(c, true), offsetMs: Math.floor(durationMs / 2) });
    return steps;
  },
  flap: (c) => {
    if (!has(c, 'partition') || c.nodeCount < 2) return null;
    const halves = c.nodeCount >= 3 && c.rng.chance(0.3);
    return [
      {
        kind: 'partition',
        topology: halves ? 'halves' : 'isolate',
        target: halves ? { role: 'random' } : roleTarget(c, { active: 55, leader: 30, replica: 0, random: 15 }),
        durationMs: draw(c.rng, c.D.flap),
        flap: { onMs: draw(c.rng, c.D.flapOn), offMs: draw(c.rng, c.D.flapOff) },
        offsetMs: 0,
      },
    ];
  },
  'client-cut': (c) => (has(c, 'client-cut') ? [{ kind: 'client-cut', target: roleTarget(c, { active: 60, leader: 10, replica: 0, random: 30 }), durationMs: draw(c.rng, c.D.clientCut), offsetMs: 0 }] : null),
} satisfies Partial<Record<EpisodeName, Episode>>;
