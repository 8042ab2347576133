/**
 * Episodes aimed at a replica catching up (issues 12, 13): a second fault while a restarted
 * replica catches up, the moment it is back in sync, during a failback, or when an isolation heals.
 */
import { type Episode, type Step, crashDuration, crashKind, draw, followUp, has, ownerTarget } from './episode-kit.js';
import { CLOCK_JUMP_S, CLOCK_RATES } from '../fault-durations.js';
import type { EpisodeName } from '../presets.js';
import type { FaultTarget, FaultTrigger } from '../schedule-types.js';

export const catchUpEpisodes = {
  // a second fault on an active owner while a restarted replica catches up (issue 12, 13 pattern 2)
  'catch-up-crash': (c) => {
    const kind = crashKind(c);
    if (!kind) return null;
    const d0 = crashDuration(c, true);
    const second = followUp(c, { role: 'active-over', fault: 0 }, { event: 'catching-up', fault: 0, delayMs: c.rng.int(0, 200), waitMs: 20_000 }, d0);
    const steps: Step[] = [{ kind, target: c.rng.chance(0.5) ? ownerTarget(c, 'replica') : { role: 'random' }, durationMs: d0, offsetMs: 0 }];
    if (second) steps.push(second);
    return steps;
  },
  // any kind of fault on a replica while it catches up (issue 12: every kind aimed at replicas catching up)
  'hit-catching-up': (c) => {
    const kind = crashKind(c);
    if (!kind) return null;
    const d0 = crashDuration(c, true);
    const kinds = (['kill', 'stop', 'pause', 'partition', 'clock', 'client-cut'] as const).filter((k) => c.kinds.has(k) && (k !== 'partition' || c.nodeCount >= 2));
    const k = c.rng.pick(kinds);
    const after: FaultTrigger = { event: 'catching-up', fault: 0, delayMs: c.rng.int(0, 300), waitMs: 20_000 };
    const target: FaultTarget = { role: 'catching-up' };
    let second: Step;
    if (k === 'kill' || k === 'stop') second = { kind: k, target, durationMs: crashDuration(c, true), after, offsetMs: d0 };
    else if (k === 'pause') second = { kind: k, target, durationMs: c.rng.chance(0.5) ? draw(c.rng, c.D.pauseShort) : draw(c.rng, c.D.pauseLong), after, offsetMs: d0 };
    else if (k === 'partition') {
      const oneWay = c.rng.chance(0.3);
      second = { kind: k, topology: oneWay ? 'one-way' : 'isolate', ...(oneWay ? { direction: c.rng.chance(0.5) ? ('in' as const) : ('out' as const) } : {}), target, durationMs: draw(c.rng, c.D.isolateShort), after, offsetMs: d0 };
    }
    else if (k === 'clock') second = { kind: k, target, durationMs: draw(c.rng, c.D.clock), clock: { rate: c.rng.pick(CLOCK_RATES), jumpMs: draw(c.rng, CLOCK_JUMP_S) * 1000 * (c.rng.chance(0.5) ? -1 : 1) }, after, offsetMs: d0 };
    else second = { kind: k, target, durationMs: draw(c.rng, c.D.clientCut), after, offsetMs: d0 };
    return [{ kind, target: c.rng.chance(0.5) ? ownerTarget(c, 'replica') : { role: 'random' }, durationMs: d0, offsetMs: 0 }, second];
  },
  // the active owner killed the moment a restarted replica is back in sync, then the new owner too
  'caught-up-crash': (c) => {
    const kind = crashKind(c);
    if (!kind) return null;
    const d0 = crashDuration(c, true);
    const d1 = crashDuration(c, true);
    const steps: Step[] = [
      { kind, target: c.rng.chance(0.5) ? ownerTarget(c, 'replica') : { role: 'random' }, durationMs: d0, offsetMs: 0 },
      { kind: crashKind(c)!, target: { role: 'active-over', fault: 0 }, durationMs: d1, after: { event: 'caught-up', fault: 0, delayMs: c.rng.int(0, 300), waitMs: 30_000 }, offsetMs: d0 + 1_500 },
    ];
    if (c.rng.chance(0.5)) {
      steps.push({ kind: crashKind(c)!, target: { role: 'active-of', fault: 1 }, durationMs: crashDuration(c, true), after: { event: 'catching-up', fault: 1, delayMs: c.rng.int(0, 200), waitMs: 20_000 }, offsetMs: d0 + 1_500 + d1 });
    }
    return steps;
  },
  // issue 13 pattern 12, and a partition during a failback
  failback: (c) => {
    const kind = crashKind(c);
    if (!kind) return null;
    const d0 = crashDuration(c, true);
    const second = followUp(c, { role: 'same', fault: 0 }, { event: 'failback', fault: 0, delayMs: c.rng.int(0, 150), waitMs: 30_000 }, d0 + 2_000);
    const steps: Step[] = [{ kind, target: ownerTarget(c), durationMs: d0, offsetMs: 0 }];
    if (second) steps.push(second);
    return steps;
  },
  // issue 13 pattern 3: heal an isolated owner, and at once crash the one promoted meanwhile
  'isolate-heal-crash': (c) => {
    const kind = crashKind(c);
    if (!has(c, 'partition') || !kind || c.nodeCount < 2) return null;
    const d0 = draw(c.rng, { lo: c.D.isolateLong.lo + 1_000, hi: c.D.isolateLong.lo + 7_000 });
    return [
      { kind: 'partition', topology: 'isolate', target: ownerTarget(c), durationMs: d0, offsetMs: 0 },
      { kind, target: { role: 'active-of', fault: 0 }, durationMs: crashDuration(c, true), after: { event: 'ended', fault: 0, delayMs: c.rng.int(0, 300), waitMs: 5_000 }, offsetMs: d0 },
    ];
  },
} satisfies Partial<Record<EpisodeName, Episode>>;
