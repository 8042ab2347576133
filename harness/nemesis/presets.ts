/**
 * The named fault mixes (`FAULTS=preset:<name>`, issue 12) as data: for each class of store bug,
 * the kinds selected and the episodes drawn, by weight, and the default mix (`random`).
 */
import { FAULT_KINDS, type FaultKind } from './schedule-types.js';

/**
 * Named fault mixes (`FAULTS=preset:<name>`, issue 12): for each class of store bug, the faults
 * most likely to expose it. `random` is the default mix (every episode kind by weight).
 */
export type PresetName = 'random' | 'promotion' | 'fencing' | 'sync-ack' | 'liveness' | 'catch-up' | 'lease' | 'async';

/** The episodes a schedule is drawn from (see {@link planSchedule}). */
export type EpisodeName =
  | 'crash'
  | 'crash-active'
  | 'pause'
  | 'pause-long-active'
  | 'isolate'
  | 'isolate-long-active'
  | 'isolate-short-active'
  | 'split'
  | 'one-way'
  | 'flap'
  | 'catch-up-crash'
  | 'hit-catching-up'
  | 'caught-up-crash'
  | 'failback'
  | 'isolate-heal-crash'
  | 'pause-zombie'
  | 'clock'
  | 'client-cut'
  | 'power'
  | 'lag-crash'
  | 'resync-crash'
  | 'zombie-crash';

/** A fault mix: episode weights, the kinds it uses, and the stores its owner targets prefer. */
export interface Preset {
  name: PresetName;
  /** One line for `--help` and the README. */
  description: string;
  /** The BUG= switches (issue 12) it is aimed at. */
  bugs: readonly string[];
  kinds: readonly FaultKind[];
  episodes: Readonly<Partial<Record<EpisodeName, number>>>;
  /** Active/replica targets are drawn from these stores' partitions (all RF>1 stores when absent). */
  stores?: readonly string[];
  /** Episodes played first, before the common opening, while the cluster is still calm after the boot. */
  lead?: readonly EpisodeName[];
  /** Episodes played once each at the end of the opening (the default mix: one aimed at each bug class). */
  aimed?: readonly EpisodeName[];
}

/**
 * The default mix's weights (`make certify` with no FAULTS=, `make power MIX=default`): every
 * episode kind, with the four the presets aim at each bug class (lag-crash, resync-crash,
 * zombie-crash, and the short silences of owners: isolate-short-active, flap) weighted up so that a
 * 3-minute run meets each of them more than once, while every other kind still appears.
 */
const ALL_EPISODES: Readonly<Partial<Record<EpisodeName, number>>> = {
  crash: 2,
  'crash-active': 1.5,
  pause: 1.5,
  'pause-long-active': 0.8,
  isolate: 1.5,
  'isolate-long-active': 1.2,
  'isolate-short-active': 1.5,
  split: 1,
  'one-way': 1.2,
  flap: 1.5,
  'catch-up-crash': 1.2,
  'hit-catching-up': 1,
  'caught-up-crash': 1.2,
  failback: 1,
  'isolate-heal-crash': 1,
  'pause-zombie': 1,
  clock: 1,
  'client-cut': 0.8,
  power: 0.6,
  'lag-crash': 3,
  'resync-crash': 2.5,
  'zombie-crash': 2.5,
};

/**
 * The default mix's lead, played first while the cluster is still calm after the boot: a
 * lag-crash (an async owner killed while its heir lags), the state a promotion between unequal
 * copies needs. Played later, after the opening's faults, its replicas are often still catching
 * up or out of the in-sync set, so no promotion has to choose: a 3-minute run of the default mix
 * with `no-possession-proof` and only the aimed lag-crash ended INCONCLUSIVE (the bug never acted),
 * while the promotion preset, which leads with it, caught the bug in 10 of 10 runs.
 */
const DEFAULT_LEAD: readonly EpisodeName[] = ['lag-crash'];

/**
 * The default mix's aimed episodes, played once each at the end of the opening: one
 * for each state a class of store bug acts in (a promotion between unequal copies, a catch-up
 * from the op log, a deposed async owner coming back after acknowledging past its lease, a brief
 * silence of an owner that must not promote: a short isolation and a flapping cut, last).
 * Without the last two, `skip-liveness-recheck` met a brief silence of an async owner only
 * by the draw of the random episodes: caught in 3 of 4 three-minute runs of the default mix.
 */
const DEFAULT_AIMED: readonly EpisodeName[] = ['lag-crash', 'resync-crash', 'zombie-crash', 'isolate-short-active', 'flap'];

/** The presets, by name. */
export const PRESETS: Readonly<Record<PresetName, Preset>> = {
  random: { name: 'random', description: 'every kind of episode by weight, opening with one episode aimed at each bug class (the default)', bugs: [], kinds: FAULT_KINDS, episodes: ALL_EPISODES, lead: DEFAULT_LEAD, aimed: DEFAULT_AIMED },
  promotion: {
    name: 'promotion',
    description: 'failovers of active owners: kills, long pauses and isolations, a second fault while or right after a replica catches up, during a failback',
    bugs: ['lose-on-promotion', 'no-possession-proof'],
    kinds: ['kill', 'stop', 'pause', 'partition'],
    episodes: { 'lag-crash': 8, 'crash-active': 3, 'catch-up-crash': 3, 'hit-catching-up': 1, 'caught-up-crash': 2, failback: 2, 'isolate-long-active': 2, 'pause-long-active': 2, 'isolate-heal-crash': 2, 'pause-zombie': 1 },
    lead: ['lag-crash', 'lag-crash'],
  },
  fencing: {
    name: 'fencing',
    description: 'deposed owners that come back: active owners paused or isolated past the escalation timeout, one-way cuts, flapping',
    bugs: ['fencing-off-by-one'],
    kinds: ['kill', 'pause', 'partition'],
    episodes: { 'zombie-crash': 5, 'pause-zombie': 2, 'isolate-long-active': 3, 'one-way': 2, 'isolate-heal-crash': 1, flap: 1, failback: 1 },
    stores: ['async3'],
    lead: ['zombie-crash', 'zombie-crash'],
  },
  'sync-ack': {
    name: 'sync-ack',
    description: 'sync-store active owners crashed right after acknowledging, and while their replicas catch up',
    bugs: ['sync-ack-before-replica'],
    kinds: ['kill', 'stop', 'power'],
    episodes: { 'crash-active': 5, 'catch-up-crash': 2, 'caught-up-crash': 1, power: 1 },
    stores: ['sync3'],
  },
  liveness: {
    name: 'liveness',
    description: 'brief silences that must not promote: flapping cuts, short isolations and pauses of active owners, one-way cuts',
    bugs: ['skip-liveness-recheck'],
    kinds: ['kill', 'pause', 'partition', 'client-cut'],
    episodes: { flap: 4, 'one-way': 2, 'isolate-short-active': 2, pause: 2, 'client-cut': 1, crash: 1 },
  },
  'catch-up': {
    name: 'catch-up',
    description: 'a restarted replica promoted right after it caught up: kill it, kill the active the moment it is in sync, fail back to it',
    bugs: ['catchup-skips-last-op'],
    kinds: ['kill', 'pause', 'partition'],
    episodes: { 'resync-crash': 6, 'caught-up-crash': 3, 'catch-up-crash': 1, 'hit-catching-up': 1, failback: 1, 'isolate-heal-crash': 1 },
    lead: ['resync-crash'],
  },
  lease: {
    name: 'lease',
    description: 'async-store active owners cut off from the majority past their lease and the escalation timeout',
    bugs: ['stale-owner-acks'],
    kinds: ['kill', 'pause', 'partition'],
    episodes: { 'isolate-long-active': 5, 'one-way': 2, 'pause-zombie': 1, flap: 1 },
    stores: ['async3'],
  },
  async: {
    name: 'async',
    description: 'async-store active owners crashed or isolated: a write never streamed is lost at the takeover',
    bugs: ['never-replicate-async'],
    kinds: ['kill', 'pause', 'partition'],
    episodes: { 'crash-active': 4, 'lag-crash': 2, 'isolate-long-active': 2, 'pause-zombie': 1 },
    stores: ['async3'],
  },
};

/** Every preset name, in a fixed order. */
export const PRESET_NAMES: readonly PresetName[] = ['random', 'promotion', 'fencing', 'sync-ack', 'liveness', 'catch-up', 'lease', 'async'];

/** The preset aimed at each store bug of issue 12 (BUG= switches; `lose-on-promotion` is the first self-test). */
export const PRESET_FOR_BUG: Readonly<Record<string, PresetName>> = Object.fromEntries(
  PRESET_NAMES.flatMap((p) => PRESETS[p].bugs.map((b) => [b, p] as const)),
);
