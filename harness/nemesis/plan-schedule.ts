/**
 * The schedule generator (issue 12): pure and seeded. The same (seed, durationMs, kinds, preset,
 * escalationTimeoutMs, evictionTimeoutMs, nodeCount, partitions, beyondBudget) always gives the
 * same schedule: an opening, then episodes drawn by the preset's weights (episodes/), placed one
 * after the other or overlapping, then the membership track (plan-membership.ts).
 */
import { type PlanContext, type Step, draw, openingTarget, ownerTarget, roleTarget } from './episodes/episode-kit.js';
import { EPISODES } from './episodes/index.js';
import { planMembership } from './plan-membership.js';
import { faultDurations } from './fault-durations.js';
import { type EpisodeName, PRESETS, PRESET_NAMES, type PresetName } from './presets.js';
import { createPrng } from './prng.js';
import { type FaultKind, type FaultTarget, type PlannedFault, SCHEDULE_FORMAT, SELECTABLE_KINDS, type Schedule, ScheduleError } from './schedule-types.js';

/** What {@link planSchedule} needs. All times in ms. */
export interface PlanOptions {
  seed: number;
  /** Length of the fault phase, ms (> 0). */
  durationMs: number;
  /** Selected kinds (from {@link parseFaults}); empty gives an empty schedule. */
  kinds: readonly FaultKind[];
  /** The mix (default `random`). */
  preset?: PresetName;
  /** The nodes' escalation timeout, ms. */
  escalationTimeoutMs: number;
  /** The nodes' eviction timeout, ms (default 60,000, seed 002). */
  evictionTimeoutMs?: number;
  /** Number of nodes in the cluster (>= 1; partitions need >= 2, halves and bridge >= 3). */
  nodeCount: number;
  /**
   * The partitions of every store. `replicationFactor` (default 3) keeps RF1 partitions out of
   * active/replica targets (their failover loses data by contract, rf1).
   */
  partitions: ReadonlyArray<{ store: string; partition: number; replicationFactor?: number; ackMode?: 'sync' | 'async' }>;
  /** No fault budget (DESIGN.md §5 beyond-budget). Default false. */
  beyondBudget?: boolean;
}

/** The nominal length of an episode: its last planned end, ms. */
function episodeLength(steps: Step[]): number {
  return Math.max(...steps.map((s) => s.offsetMs + s.durationMs));
}

/** Pushes an episode's steps as faults at `start`; steps that end after `endMs` (or refer to one that did not fit) are dropped. */
function place(schedule: Schedule, steps: Step[], start: number, endMs: number): number {
  const base = schedule.faults.length;
  const kept = new Map<number, number>();
  for (let i = 0; i < steps.length; i++) {
    const { offsetMs, ...rest } = steps[i];
    const atMs = start + offsetMs;
    if (atMs + rest.durationMs > endMs) continue;
    const refs = [rest.after?.fault, 'fault' in rest.target ? rest.target.fault : undefined].filter((r): r is number => r !== undefined);
    if (refs.some((r) => !kept.has(r))) continue;
    const f: PlannedFault = { ...rest, atMs };
    if (f.after?.fault !== undefined) f.after = { ...f.after, fault: kept.get(f.after.fault)! };
    if ('fault' in f.target) f.target = { ...f.target, fault: kept.get(f.target.fault)! } as FaultTarget;
    kept.set(i, base + kept.size);
    schedule.faults.push(f);
  }
  return kept.size;
}

function checkPositiveInt(v: number, what: string): void {
  if (!Number.isSafeInteger(v) || v <= 0) throw new ScheduleError(`${what} must be a positive integer, got ${v}`);
}

/**
 * Plans a seeded schedule of episodes (issue 12): the opening gives, among the selected kinds,
 * three short kills of active owners (so that at least {@link MIN_KILLS} kills are planned
 * whenever the phase can hold them), an isolation and a pause of an active owner longer than the
 * escalation timeout, a clock fault, a client cut and a power failure; then episodes drawn by the
 * preset's weights; when the phase can hold it twice over, one fault longer than the eviction
 * timeout ends 40 s before the phase. Each episode starts after the previous one's nominal end plus a calm
 * gap (1-4 s), or, 30 % of the time (55 % beyond budget), while it still runs. Steps that would
 * end after the phase are dropped.
 * @throws ScheduleError on a bad option (non-integer seed, durationMs <= 0, partitions with fewer
 * than 2 nodes, an unknown preset).
 */
export function planSchedule(opts: PlanOptions): Schedule {
  if (!Number.isSafeInteger(opts.seed)) throw new ScheduleError(`seed must be an integer, got ${opts.seed}`);
  checkPositiveInt(opts.durationMs, 'fault phase duration (ms)');
  checkPositiveInt(opts.escalationTimeoutMs, 'escalation timeout (ms)');
  const evictionTimeoutMs = opts.evictionTimeoutMs ?? 60_000;
  checkPositiveInt(evictionTimeoutMs, 'eviction timeout (ms)');
  checkPositiveInt(opts.nodeCount, 'node count');
  const presetName = opts.preset ?? 'random';
  if (!(PRESET_NAMES as readonly string[]).includes(presetName)) throw new ScheduleError(`unknown preset "${presetName}"`);
  const preset = PRESETS[presetName];
  const kinds = SELECTABLE_KINDS.filter((k) => opts.kinds.includes(k));
  if (kinds.includes('partition') && opts.nodeCount < 2) throw new ScheduleError('partition faults need at least 2 nodes');
  const beyondBudget = opts.beyondBudget === true;
  const schedule: Schedule = {
    format: SCHEDULE_FORMAT,
    seed: opts.seed,
    durationMs: opts.durationMs,
    kinds,
    preset: presetName,
    escalationTimeoutMs: opts.escalationTimeoutMs,
    evictionTimeoutMs,
    nodeCount: opts.nodeCount,
    beyondBudget,
    faults: [],
  };
  if (kinds.length === 0) return schedule;

  const rng = createPrng(opts.seed);
  const sorted = [...opts.partitions].sort((a, b) => (a.store === b.store ? a.partition - b.partition : a.store < b.store ? -1 : 1));
  const replicated = sorted.filter((p) => (p.replicationFactor ?? 3) > 1).map((p) => ({ store: p.store, partition: p.partition }));
  const focused = preset.stores ? replicated.filter((p) => preset.stores!.includes(p.store)) : replicated;
  const c: PlanContext = {
    rng,
    D: faultDurations(opts.escalationTimeoutMs, evictionTimeoutMs),
    parts: focused.length > 0 ? focused : replicated,
    asyncParts: (() => {
      const a = sorted.filter((p) => (p.replicationFactor ?? 3) > 1 && p.ackMode === 'async').map((p) => ({ store: p.store, partition: p.partition }));
      return a.length > 0 ? a : focused.length > 0 ? focused : replicated;
    })(),
    syncParts: (() => {
      const a = sorted.filter((p) => (p.replicationFactor ?? 3) > 1 && p.ackMode === 'sync').map((p) => ({ store: p.store, partition: p.partition }));
      return a.length > 0 ? a : focused.length > 0 ? focused : replicated;
    })(),
    placed: 0,
    nodeCount: opts.nodeCount,
    kinds: new Set(kinds),
    beyondBudget,
    // eviction-long durations only come from the one fault planned at the end
    evictOk: false,
  };
  // one fault longer than the eviction timeout when the phase holds it twice over and a minute
  // more, ending 40 s before the phase does (the rest of the phase sees the cluster after it). On 3
  // nodes the budget lets little else run beside it, so a 3-minute run is left to its episodes. Within budget,
  // when a store has RF1 partitions, it is a crash: a node cut off or frozen that long has its RF1
  // partitions re-homed empty (seed 002 eviction), a loss history-format.md v2 counts as rf1 only
  // after a crash. (With 3 nodes the budget lets little else run beside it.)
  const evictMs = evictionTimeoutMs + 10_000;
  const hasRf1 = opts.partitions.some((p) => (p.replicationFactor ?? 3) === 1);
  const evictKinds = (['kill', 'stop', 'pause', 'partition'] as const).filter((k) => c.kinds.has(k) && (beyondBudget || !hasRf1 || k === 'kill' || k === 'stop'));
  // (it also leaves the first 20 s to the opening)
  const evictFits = evictKinds.length > 0 && opts.durationMs >= 2 * evictMs + 60_000;
  const evictLen = evictFits ? draw(rng, { lo: evictionTimeoutMs + 1_000, hi: evictionTimeoutMs + 5_000 }) : 0;
  const evictAt = opts.durationMs - 40_000 - evictLen;

  const names = (Object.keys(preset.episodes) as EpisodeName[]).filter((n) => (preset.episodes[n] ?? 0) > 0);
  const weights = names.map((n) => preset.episodes[n]!);
  // the opening: three short kills of active owners first (a run is certified against them, and
  // at least MIN_KILLS fit in 15 s; without a preset's store focus, the first of a sync store's
  // owner and the second of an async one's), then an isolation and a pause of an owner past the
  // escalation timeout, then one of each rarer kind that is selected (a clock fault and a client
  // cut run beside what follows; a power failure where the budget can allow one), then the mix's
  // aimed episodes
  const opening: Array<EpisodeName | 'stop-active'> = [...(preset.lead ?? []), 'crash-active', 'crash-active', 'crash-active', 'isolate-long-active', 'pause-long-active', 'stop-active', 'clock', 'client-cut', 'power', ...(preset.aimed ?? [])];
  let openingKills = 0;
  const beside = new Set<EpisodeName>(['clock', 'client-cut']);
  let episode = 0;
  /**
   * Lays episodes from `from` until `to` (ms of the phase). With `deferOpening`, an opening
   * episode that does not fit stops this segment and is the first of the next one (the segment
   * before the eviction-long fault can be short: a 140 s run's opening isolation filled it and its
   * long pause was dropped, so the run had no pause past the escalation timeout).
   */
  const fill = (from: number, to: number, deferOpening = false): void => {
    let cursor = from;
    let misses = 0;
    for (; cursor < to && misses < 20; episode++) {
      let steps: Step[] | null;
      const inOpening = episode < opening.length;
      if (inOpening) {
        const name = opening[episode];
        if (name === 'stop-active') {
          // a stop early too, when both crash kinds are selected (the kills above are all kills)
          if (!c.kinds.has('stop') || !c.kinds.has('kill')) continue;
          steps = [{ kind: 'stop', target: ownerTarget(c), durationMs: draw(rng, { lo: 1_000, hi: 2_500 }), offsetMs: 0 }];
        } else {
          steps = EPISODES[name](c);
          if (!steps) continue;
          if (name === 'crash-active') {
            const k = openingKills++;
            const target = preset.stores ? steps[0].target : openingTarget(c, steps[0].target, k === 0 ? 'sync' : k === 1 ? 'async' : null);
            steps[0] = { ...steps[0], target, ...(c.kinds.has('kill') ? { kind: 'kill' as const } : {}), durationMs: draw(rng, { lo: 1_000, hi: 2_500 }) };
          } else if (name === 'isolate-long-active' && !preset.stores) steps[0] = { ...steps[0], target: openingTarget(c, steps[0].target, 'async') };
        }
      } else {
        const name = rng.weighted(names, weights);
        steps = EPISODES[name](c);
        if (!steps) {
          misses++;
          continue;
        }
      }
      const placed = place(schedule, steps, cursor, to);
      c.placed++;
      if (placed === 0 && inOpening && deferOpening) break;
      if (placed === 0) {
        misses++;
        cursor += draw(rng, c.D.calm);
        continue;
      }
      misses = 0;
      const len = episodeLength(steps);
      if (inOpening && beside.has(opening[episode] as EpisodeName)) {
        cursor += rng.int(1_000, 3_000);
        continue;
      }
      const overlap = !inOpening && rng.chance(beyondBudget ? 0.55 : 0.45);
      cursor = overlap ? cursor + rng.int(Math.min(1_000, len), Math.max(1_000, len)) : cursor + len + draw(rng, inOpening ? { lo: 500, hi: 1_500 } : c.D.calm);
    }
  };
  const warmup = draw(rng, { lo: 1_000, hi: 2_000 }); // let the workload warm up before the first fault
  if (!evictFits) fill(warmup, opts.durationMs);
  else {
    fill(warmup, evictAt, true);
    const kind = rng.pick(evictKinds);
    const target = roleTarget(c, { active: 40, leader: 20, replica: 20, random: 20 });
    const step: Step = kind === 'partition' ? { kind, topology: 'isolate', target, durationMs: evictLen, offsetMs: 0 } : { kind, target, durationMs: evictLen, offsetMs: 0 };
    place(schedule, [step], evictAt, opts.durationMs);
    fill(evictAt + evictLen + draw(rng, c.D.calm), opts.durationMs);
  }
  // membership changes on their own seeded track: a schedule without them is unchanged by them
  schedule.faults.push(...planMembership(opts.seed, opts.durationMs, kinds, schedule.faults.length));
  return inStartOrder(schedule);
}

/**
 * Overlapping episodes interleave: sorts the faults by atMs (stable) and rewrites every index
 * reference (targets `same`/`active-over`/`active-of`, triggers) to the new positions. A
 * reference still points to an earlier fault: a step is planned no earlier than the step it
 * refers to, and was pushed after it.
 */
function inStartOrder(s: Schedule): Schedule {
  const order = s.faults.map((f, i) => ({ f, i })).sort((a, b) => a.f.atMs - b.f.atMs || a.i - b.i);
  const at = new Map(order.map((o, k) => [o.i, k]));
  s.faults = order.map(({ f }) => {
    const g: PlannedFault = { ...f };
    if ('fault' in g.target) g.target = { ...g.target, fault: at.get(g.target.fault)! } as FaultTarget;
    if (g.after?.fault !== undefined) g.after = { ...g.after, fault: at.get(g.after.fault)! };
    return g;
  });
  return s;
}
