/**
 * The clock episode: a wall-clock jump, or both clocks of one node at another rate (libfaketime).
 */
import { type Episode, type Step, crashDuration, crashKind, draw, has, ownerTarget, roleTarget } from './episode-kit.js';
import { CLOCK_JUMP_S, CLOCK_RATES } from '../fault-durations.js';
import type { EpisodeName } from '../presets.js';

export const clockEpisodes = {
  clock: (c) => {
    if (!has(c, 'clock')) return null;
    const durationMs = draw(c.rng, c.D.clock);
    const jumpS = draw(c.rng, CLOCK_JUMP_S) * (c.rng.chance(0.5) ? -1 : 1);
    const steps: Step[] = [
      { kind: 'clock', target: roleTarget(c, { active: 45, leader: 40, replica: 0, random: 15 }), durationMs, clock: { rate: c.rng.pick(CLOCK_RATES), jumpMs: jumpS * 1000 }, offsetMs: 0 },
    ];
    const kind = crashKind(c);
    if (kind && c.rng.chance(0.4)) steps.push({ kind, target: ownerTarget(c), durationMs: crashDuration(c, true), offsetMs: Math.floor(durationMs / 3) });
    return steps;
  },
} satisfies Partial<Record<EpisodeName, Episode>>;
