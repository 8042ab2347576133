/**
 * Episodes of process faults (kill, stop, pause, power): crashes and pauses of any node or of an
 * active owner, a frozen deposed owner coming back (fencing), a power failure of several nodes.
 */
import { type Episode, type Step, crashDuration, crashKind, draw, has, ownerTarget, pauseDuration, roleTarget } from './episode-kit.js';
import type { EpisodeName } from '../presets.js';

export const processEpisodes = {
  crash: (c) => {
    const kind = crashKind(c);
    if (!kind) return null;
    return [{ kind, target: roleTarget(c, { active: 45, leader: 20, replica: 15, random: 20 }), durationMs: crashDuration(c), offsetMs: 0 }];
  },
  'crash-active': (c) => {
    const kind = crashKind(c);
    if (!kind) return null;
    return [{ kind, target: ownerTarget(c), durationMs: crashDuration(c, c.rng.chance(0.6)), offsetMs: 0 }];
  },
  pause: (c) => (has(c, 'pause') ? [{ kind: 'pause', target: roleTarget(c, { active: 40, leader: 25, replica: 10, random: 25 }), durationMs: pauseDuration(c), offsetMs: 0 }] : null),
  'pause-long-active': (c) => (has(c, 'pause') ? [{ kind: 'pause', target: ownerTarget(c), durationMs: pauseDuration(c, true), offsetMs: 0 }] : null),
  // a deposed owner frozen past the escalation timeout comes back (fencing); sometimes its successor dies
  'pause-zombie': (c) => {
    if (!has(c, 'pause')) return null;
    const d0 = draw(c.rng, { lo: c.D.pauseLong.lo + 500, hi: c.D.pauseLong.hi });
    const steps: Step[] = [{ kind: 'pause', target: ownerTarget(c), durationMs: d0, offsetMs: 0 }];
    const kind = crashKind(c);
    if (kind && c.rng.chance(0.4)) steps.push({ kind, target: { role: 'active-of', fault: 0 }, durationMs: crashDuration(c, true), after: { event: 'ended', fault: 0, delayMs: c.rng.int(0, 500), waitMs: 5_000 }, offsetMs: d0 });
    return steps;
  },
  power: (c) => {
    if (!has(c, 'power') || c.nodeCount < 2) return null;
    // within the budget a majority must stay up: two nodes of five (of three: never, so not planned)
    const most = c.beyondBudget ? c.nodeCount : c.nodeCount - (Math.floor(c.nodeCount / 2) + 1);
    if (most < 2) return null;
    const count = c.beyondBudget && c.rng.chance(0.5) ? c.nodeCount : c.rng.int(2, most);
    return [{ kind: 'power', target: c.rng.chance(0.5) ? { role: 'leader' } : { role: 'random' }, count, durationMs: crashDuration(c, true), offsetMs: 0 }];
  },
} satisfies Partial<Record<EpisodeName, Episode>>;
