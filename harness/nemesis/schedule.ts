/**
 * The nemesis's fault schedule (DESIGN.md §3 "Nemesis", §7 `scheduleDigest`, issues 12 and 13):
 * drawn from the run's SEED, stored in the ledger meta `schedule` as JSON, replayable, and
 * summarised by a sha256 digest in results.json.
 *
 * The same (seed, durationMs, kinds, preset, escalationTimeoutMs, evictionTimeoutMs, nodeCount,
 * partitions, beyondBudget) always gives the same schedule. Targets that depend on the live
 * cluster (the leader, a partition's active owner or in-sync replica, a replica catching up, the
 * node a failback hands to, a random node or split) are resolved by the executor when the fault
 * starts (nemesis.ts), and a fault may wait for an event (a restarted node catching up or caught
 * up, a failback starting, an earlier fault ending) before it starts.
 *
 * What reaches the dangerous states in short runs (issue 12): fault durations do not shrink with
 * the run's length, so every run has partitions and pauses longer than the escalation timeout
 * (and, where the phase can hold one, longer than the eviction timeout); and faults come in
 * episodes that overlap on purpose (a second fault while a restarted replica catches up, right
 * after it caught up, when a failback starts, when a long isolation heals). Whether an
 * overlapping fault may start is decided live by the fault budget (budget.ts), not here.
 */
import { createHash } from 'node:crypto';
import { TOPOLOGIES, type Topology } from './grudge.js';
import { createPrng, deriveSeed, type Prng } from './prng.js';

/**
 * A fault the nemesis injects: SIGKILL+restart, SIGTERM+restart, pause+resume, partition+heal,
 * power failure (several nodes SIGKILLed within 100 ms, restarted together), a clock fault on one
 * node (libfaketime: a wall-clock jump, or both clocks at another rate), a cut between the
 * harness's client and one node (the nodes still see each other).
 */
export type FaultKind = 'kill' | 'stop' | 'pause' | 'partition' | 'power' | 'clock' | 'client-cut' | AdminKind;

/**
 * An ownership change on demand (issue 13), asked of the leader through the store's admin request
 * (nodes/node-admin.ts): `handoff` of a partition to a named node, `regenerate` of a partition's
 * map. Scenarios only (FAULTS does not draw them). Recorded as ledger events (`admin`), not as
 * faults: a handoff or regeneration must lose nothing, and the verifier's async-ack rule 5 would
 * excuse an async loss at a takeover from an owner a fault touched.
 */
export type AdminKind = 'handoff' | 'regenerate' | MembershipKind;

/**
 * A membership change (issue 14), asked of the leader through the same admin request:
 * `join <node>` (a spare, or a node that left, becomes `joining`, takes copies, then is admitted
 * as `member`), `leave <node>` (a member is drained: its copies move away, then it is removed from
 * the member set; it keeps running, and voting if it is a voter), `rebalance` (the partition map
 * re-planned over the current members). FAULTS=...,membership draws them into the random schedule
 * (see {@link planMembership}); scenarios name them. Recorded as ledger events `admin`, never as
 * faults: a move must lose nothing, so the verifier excuses nothing because of one.
 */
export type MembershipKind = 'join' | 'leave' | 'rebalance';

/** Every fault kind FAULTS can select, in the order FAULTS and results.json list them. */
export const FAULT_KINDS: readonly FaultKind[] = ['kill', 'stop', 'pause', 'partition', 'power', 'clock', 'client-cut'];

/** The membership kinds: FAULTS's group word `membership` selects all three. */
export const MEMBERSHIP_KINDS: readonly MembershipKind[] = ['join', 'leave', 'rebalance'];

/** Every kind FAULTS can select: {@link FAULT_KINDS}, then {@link MEMBERSHIP_KINDS}. */
export const SELECTABLE_KINDS: readonly FaultKind[] = [...FAULT_KINDS, ...MEMBERSHIP_KINDS];

/** The admin kinds (handoff and regenerate: scenarios only; the membership kinds: FAULTS and scenarios). */
export const ADMIN_KINDS: readonly AdminKind[] = ['handoff', 'regenerate', ...MEMBERSHIP_KINDS];

/** Is this kind a membership change (join, leave, rebalance)? */
export function isMembershipKind(k: string): k is MembershipKind {
  return (MEMBERSHIP_KINDS as readonly string[]).includes(k);
}

/** Every kind a schedule may hold: {@link FAULT_KINDS} then {@link ADMIN_KINDS}. */
export const ALL_FAULT_KINDS: readonly FaultKind[] = [...FAULT_KINDS, ...ADMIN_KINDS];

/**
 * The kinds the ledger records (table `faults`, kind). A power failure is recorded as one `kill`
 * per node (detail `power`: the schedule index), so that the verifier's crash rules see each
 * node's crash instant exactly.
 */
export type RecordedKind = Exclude<FaultKind, 'power' | AdminKind>;

/** The kinds that lose a node's memory (crash faults). */
export const CRASH_KINDS: readonly FaultKind[] = ['kill', 'stop', 'power'];

/**
 * Who a fault hits, resolved when it starts. `node`: a fixed node; `leader`: the leader;
 * `random`: a node (or for halves/bridge a split) drawn from the schedule's seed and the fault's
 * index; `active` / `replica`: the active owner / an in-sync replica other than the active of one
 * partition; `catching-up`: a node that is up but not in sync in some partition it replicates
 * (restarted, catching up); `failback`: the node a failback (handoff) is handing a partition to;
 * `same`: the node an earlier fault (by index) hit; `active-over`: the active owner of a partition
 * that the node of an earlier fault replicates without owning it (the partition is remembered);
 * `active-of`: the current active owner of the partition an earlier fault's target was about.
 */
export type FaultTarget =
  | { role: 'node'; node: string }
  | { role: 'leader' }
  | { role: 'random' }
  | { role: 'active'; store: string; partition: number }
  | { role: 'replica'; store: string; partition: number }
  /**
   * The heir of a partition: its first in-sync member other than the active, in partition-map
   * order (the member a tie between equally synced candidates goes to; issue 12 lag-crash).
   */
  | { role: 'heir'; store: string; partition: number }
  | { role: 'catching-up' }
  | { role: 'failback' }
  | { role: 'same'; fault: number }
  | { role: 'active-over'; fault: number }
  | { role: 'active-of'; fault: number }
  /** Scenarios: the partition's preferred primary (the first of its replicas in the partition map of the moment). */
  | { role: 'preferred'; store: string; partition: number }
  /** Scenarios: the node an earlier fault bound to `name` (its `bind`). */
  | { role: 'bound'; name: string }
  /**
   * Membership (issue 14): a running node outside the member set (a spare, or a node that left),
   * from the leader's metadata `members`; a `join` goes to it.
   */
  | { role: 'outside' }
  /**
   * Membership: a member a `leave` may drain: one whose leaving keeps at least the cluster's
   * voter count of members (the node that joined last first, else a voter; see
   * {@link leaveCandidates}).
   */
  | { role: 'member' };

/** Every target role, in a fixed order (validation messages). */
export const TARGET_ROLES: readonly FaultTarget['role'][] = ['node', 'leader', 'random', 'active', 'replica', 'heir', 'catching-up', 'failback', 'same', 'active-over', 'active-of', 'preferred', 'bound', 'outside', 'member'];

/**
 * Events a fault can wait for before it starts (after its `atMs`):
 * - `catching-up`: the node of crash fault `fault` was restarted (it catches up from then on);
 * - `caught-up`: the node of crash fault `fault` is back in sync everywhere;
 * - `failback`: a failback (handoff) is under way; with `fault`, one handing to that fault's node;
 * - `ended`: fault `fault` ended (restart / resume / heal done).
 */
export type TriggerEvent = 'catching-up' | 'caught-up' | 'failback' | 'ended' | ScenarioEvent;

/**
 * Events of scenarios (issue 13), seen in the runtime-map samples and the leader's metadata:
 * - `started`: fault `fault` started (its change took effect);
 * - `node-caught-up`: the node (`node`, or the node bound to `name`), having been down, frozen or
 *   behind since the wait began, answers and is in sync in every partition it replicates;
 * - `promoted`: partition `store`/`partition` has an active other than the one it had when the
 *   wait began (a failover, a handoff);
 * - `handoff-started`: a handoff (failback or admin) is under way, of `store`/`partition` when
 *   given, to `node`/`name` when given; or one committed since the previous snapshot (the active
 *   moved to that node while the old active stayed in sync: a handoff to a caught-up node lasts
 *   tens of ms, mostly between two polls), so the step starts within one poll of it;
 * - `suspected`: the leader suspects the node (`node` or `name`): silent past suspectAfterMs.
 */
export type ScenarioEvent = 'started' | 'node-caught-up' | 'promoted' | 'handoff-started' | 'suspected';

/** Every trigger event, in a fixed order. */
export const TRIGGER_EVENTS: readonly TriggerEvent[] = ['catching-up', 'caught-up', 'failback', 'ended', 'started', 'node-caught-up', 'promoted', 'handoff-started', 'suspected'];

/**
 * When a fault waits for an event: it starts `delayMs` after the event, or when `waitMs` passed
 * without it (then it starts anyway, noted in its detail as `trigger: "missed"`). ms.
 */
export interface FaultTrigger {
  event: TriggerEvent;
  /** Index of the earlier fault the event is about (required for catching-up, caught-up, ended, started; optional for failback). */
  fault?: number;
  delayMs: number;
  waitMs: number;
  /** node-caught-up, suspected, handoff-started: the node, by id. */
  node?: string;
  /** node-caught-up, suspected, handoff-started: the node, by the name an earlier fault bound. */
  name?: string;
  /** promoted (required), handoff-started (optional): the partition. */
  store?: string;
  partition?: number;
  /** When the event does not come within waitMs: start anyway (default; noted `trigger: "missed"`) or skip the fault (scenarios). */
  onMiss?: 'start' | 'skip';
}

/**
 * One planned fault. Times are milliseconds, relative to the start of the fault phase: the
 * fault starts at `atMs` or later (its trigger, the fault budget), and lasts `durationMs` (down
 * time for crashes, frozen time for a pause, cut time for a partition or client cut, the time a
 * clock stays wrong).
 * - `topology` (partitions): isolate, halves, bridge, one-way (and v1's leader, active);
 *   `direction` (one-way): `in` = the target drops the other node's traffic, `out` = the other
 *   node drops the target's; `flap`: the cut goes on for `onMs` and off for `offMs`, over and over,
 *   for the whole duration, without waiting for anything (each on-phase is recorded as one
 *   partition fault).
 * - `clock` (clock faults): the rate a `monotonic`-mode node's clocks run at, or the whole seconds
 *   a `wall`-mode node's wall clock jumps by (runtime/faketime.ts: the node's mode decides).
 * - `count` (power): how many nodes lose power (the target first, then random others).
 */
export interface PlannedFault {
  kind: FaultKind;
  target: FaultTarget;
  atMs: number;
  durationMs: number;
  topology?: Topology;
  direction?: 'in' | 'out';
  flap?: { onMs: number; offMs: number };
  clock?: { rate: number; jumpMs: number };
  count?: number;
  after?: FaultTrigger;
  /** Scenarios: the step's name (ledger detail `step`, events, reports). */
  name?: string;
  /** Scenarios: bind the node the target resolved to under this name (later targets `bound`). */
  bind?: string;
  /** Scenarios: the target must not resolve to a node bound to one of these names (it waits, like a budget refusal). */
  except?: string[];
  /**
   * Scenarios, one-way partitions: the other end of the cut link (default: a random other node);
   * with its own bind/except.
   */
  peer?: { target: FaultTarget; bind?: string; except?: string[] };
  /** handoff / regenerate: the partition. For a handoff the target is the node it is handed to (join / leave: the node joining or leaving; rebalance: none, `leader`). */
  admin?: { store: string; partition: number };
}

/** Format tag of a stored schedule (version 2; version 1 is still read, for replays). */
export const SCHEDULE_FORMAT = 'zaris-schedule/2';
/** Format tag of the first version (sequential faults; no triggers, presets or new kinds). */
export const SCHEDULE_FORMAT_V1 = 'zaris-schedule/1';

/**
 * A whole planned schedule, as stored in the ledger meta `schedule` (canonical JSON) and hashed by
 * {@link scheduleDigest}. `seed` also seeds the executor's live choices (deriveSeed(seed, index)).
 */
export interface Schedule {
  format: typeof SCHEDULE_FORMAT;
  seed: number;
  /** Length of the fault phase, ms; every fault is planned to end by then. */
  durationMs: number;
  /** The selected kinds, in {@link FAULT_KINDS} order. */
  kinds: FaultKind[];
  /** The fault mix ({@link PRESETS}); `random` unless FAULTS named a preset. */
  preset: PresetName;
  /** The nodes' escalation timeout the durations were sized against, ms (seed 002: 10 s default). */
  escalationTimeoutMs: number;
  /** The nodes' eviction timeout the durations were sized against, ms (seed 002: 60 s default). */
  evictionTimeoutMs: number;
  /** Cluster size the schedule was planned for. */
  nodeCount: number;
  /** When true the executor applies no fault budget (budget.ts) and power may take every node. */
  beyondBudget: boolean;
  faults: PlannedFault[];
  /**
   * Scenarios: the scenario's name. Targets resolve strictly (no random stand-in when a role has
   * no answer: the fault waits, then is skipped) and a missed trigger skips its fault.
   */
  scenario?: string;
  /** Scenarios: the fault phase ends this long after every fault ended (or at durationMs, whichever first), ms. */
  tailMs?: number;
}

/** Bad user input about faults or a schedule; the message is one line, fit to print as is (exit 64). */
export class ScheduleError extends Error {
  override name = 'ScheduleError';
}

// ------------------------------------------------------------------ presets

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
 * The default mix's aimed episodes, played once each at the end of the opening: one
 * for each state a class of store bug acts in (a promotion between unequal copies, a catch-up
 * from the op log, a deposed async owner coming back after acknowledging past its lease).
 */
const DEFAULT_AIMED: readonly EpisodeName[] = ['lag-crash', 'resync-crash', 'zombie-crash'];

/** The presets, by name. */
export const PRESETS: Readonly<Record<PresetName, Preset>> = {
  random: { name: 'random', description: 'every kind of episode by weight, opening with one episode aimed at each bug class (the default)', bugs: [], kinds: FAULT_KINDS, episodes: ALL_EPISODES, aimed: DEFAULT_AIMED },
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

/** What FAULTS selects: the kinds, and the mix they are drawn by. */
export interface FaultSelection {
  kinds: FaultKind[];
  preset: PresetName;
}

/**
 * Parses FAULTS: a comma-separated list of kinds (`kill,stop,pause,partition,power,clock,
 * client-cut`, and `membership` for join, leave and rebalance, or those three by name; spaces
 * allowed; repeats ignored) drawn by the default mix, `all` for every kind but the membership
 * changes (they need a spare node: name `membership` to add them), `none` for a run without
 * faults, or `preset:<name>` for a named mix with its own kinds.
 * @throws ScheduleError for an empty list, an unknown kind or an unknown preset (one line naming it and the choices).
 */
export function parseFaults(text: string): FaultSelection {
  const t = text.trim().toLowerCase();
  if (t.startsWith('preset:')) {
    const name = t.slice('preset:'.length).trim();
    if (!(PRESET_NAMES as readonly string[]).includes(name)) throw new ScheduleError(`FAULTS: unknown preset "${name}" (choose from ${PRESET_NAMES.join(', ')})`);
    const p = PRESETS[name as PresetName];
    return { kinds: [...p.kinds], preset: p.name };
  }
  return { kinds: parseFaultKinds(text), preset: 'random' };
}

const KIND_CHOICES = `${FAULT_KINDS.join(', ')}, membership (${MEMBERSHIP_KINDS.join(', ')})`;

/**
 * Parses a FAULTS list of kinds (no preset): see {@link parseFaults}. Returns the kinds in
 * {@link SELECTABLE_KINDS} order.
 * @throws ScheduleError for an empty list or an unknown kind.
 */
export function parseFaultKinds(text: string): FaultKind[] {
  const parts = text
    .split(',')
    .map((p) => p.trim().toLowerCase())
    .filter((p) => p.length > 0);
  if (parts.length === 0) throw new ScheduleError(`FAULTS is empty: give a comma-separated list of ${KIND_CHOICES} (or all, none, preset:<name>)`);
  if (parts.length === 1 && parts[0] === 'none') return [];
  if (parts.length === 1 && parts[0] === 'all') return [...FAULT_KINDS];
  const set = new Set<FaultKind>();
  for (const p of parts) {
    if (p === 'membership') {
      for (const k of MEMBERSHIP_KINDS) set.add(k);
      continue;
    }
    if (!(SELECTABLE_KINDS as readonly string[]).includes(p)) {
      throw new ScheduleError(`FAULTS: unknown fault kind "${p}" (choose from ${KIND_CHOICES}, or all, none, preset:<name>)`);
    }
    set.add(p as FaultKind);
  }
  return SELECTABLE_KINDS.filter((k) => set.has(k));
}

// ------------------------------------------------------------------ durations

/** Inclusive integer range, ms. */
export interface Range {
  lo: number;
  hi: number;
}

/**
 * The fault durations, ms, for an escalation timeout E and an eviction timeout V. They do NOT
 * depend on the run's length (issue 12: in runs under 10 minutes the old scaled ranges never
 * outlasted E). `*Long` ranges outlast E, `*Evict` ranges outlast V; `*Short` stay under E where
 * they can.
 */
export function faultDurations(E: number, V: number): {
  crash: Range;
  crashLong: Range;
  crashEvict: Range;
  pauseShort: Range;
  pauseLong: Range;
  pauseEvict: Range;
  isolateShort: Range;
  isolateLong: Range;
  isolateEvict: Range;
  oneWay: Range;
  flap: Range;
  flapOn: Range;
  flapOff: Range;
  clock: Range;
  clientCut: Range;
  calm: Range;
} {
  return {
    crash: { lo: 1_000, hi: 6_000 },
    crashLong: { lo: E + 500, hi: E + 5_000 },
    crashEvict: { lo: V + 1_000, hi: V + 5_000 },
    pauseShort: { lo: 1_000, hi: Math.max(1_000, E - 500) },
    pauseLong: { lo: E + 500, hi: E + 8_000 },
    pauseEvict: { lo: V + 1_000, hi: V + 5_000 },
    isolateShort: { lo: 2_000, hi: Math.max(2_000, E - 1_000) },
    isolateLong: { lo: E + 1_000, hi: E + 10_000 },
    isolateEvict: { lo: V + 1_000, hi: V + 5_000 },
    oneWay: { lo: 3_000, hi: E + 8_000 },
    flap: { lo: 8_000, hi: 30_000 },
    flapOn: { lo: 300, hi: 2_500 },
    flapOff: { lo: 300, hi: 1_500 },
    clock: { lo: 8_000, hi: 30_000 },
    clientCut: { lo: 2_000, hi: 12_000 },
    calm: { lo: 500, hi: 3_000 },
  };
}

/** The rates a clock fault draws from (half speed and twice as fast most often). */
export const CLOCK_RATES: readonly number[] = [0.5, 0.5, 2, 2, 0.75, 1.5];
/** Whole-second wall-clock jumps are drawn from ±[5, 60] s. */
export const CLOCK_JUMP_S: Range = { lo: 5, hi: 60 };

/** Kills planned at least (in the opening), when kill is selected and the phase can hold them (15 s). */
export const MIN_KILLS = 3;

// ------------------------------------------------------------------ planning

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

/** A step of an episode: a fault without its absolute time, refs by step index within the episode. */
interface Step extends Omit<PlannedFault, 'atMs'> {
  /** Planned start relative to the episode's start, ms (triggered steps: an estimate). */
  offsetMs: number;
}

interface PlanContext {
  rng: Prng;
  D: ReturnType<typeof faultDurations>;
  /** RF>1 partitions the owner targets draw from (the preset's stores when it has some). */
  parts: Array<{ store: string; partition: number }>;
  /** RF>1 partitions of async stores (lag-crash aims there); `parts` when no store is known async. */
  asyncParts: Array<{ store: string; partition: number }>;
  /** RF>1 partitions of sync stores (resync-crash aims there: a loss there is a violation); `parts` when none is known sync. */
  syncParts: Array<{ store: string; partition: number }>;
  /** Episodes placed so far (unique names for bindings). */
  placed: number;
  nodeCount: number;
  kinds: ReadonlySet<FaultKind>;
  beyondBudget: boolean;
  /** The phase can hold an eviction-long fault. */
  evictOk: boolean;
}

const has = (c: PlanContext, ...k: FaultKind[]): boolean => k.some((x) => c.kinds.has(x));

/** kill or stop (kill 75 %), among the selected; null when neither is. */
function crashKind(c: PlanContext): 'kill' | 'stop' | null {
  const k = c.kinds.has('kill');
  const s = c.kinds.has('stop');
  if (k && s) return c.rng.chance(0.75) ? 'kill' : 'stop';
  return k ? 'kill' : s ? 'stop' : null;
}

function draw(rng: Prng, r: Range): number {
  return rng.int(r.lo, Math.max(r.lo, r.hi));
}

function ownerTarget(c: PlanContext, role: 'active' | 'replica' = 'active'): FaultTarget {
  if (c.parts.length === 0) return role === 'active' ? { role: 'leader' } : { role: 'random' };
  const p = c.rng.pick(c.parts);
  return { role, store: p.store, partition: p.partition };
}

/**
 * An opening fault's owner target moved to a store of one ack mode (the same partition number as
 * `drawn` where that store has it; `drawn` when `mode` is null, `drawn` is no owner target, or no
 * store of that mode is known). Without a preset's store focus the opening's first kill hits a
 * sync store's owner and its second kill and its long isolation an async store's, so that every
 * run crashes an owner of each ack mode early and cuts an async owner off past its lease. Draws
 * nothing from the PRNG.
 */
function openingTarget(c: PlanContext, drawn: FaultTarget, mode: 'sync' | 'async' | null): FaultTarget {
  const from = mode === 'sync' ? c.syncParts : mode === 'async' ? c.asyncParts : null;
  if (!from || from.length === 0 || drawn.role !== 'active') return drawn;
  const p = from.find((x) => x.partition === drawn.partition) ?? from[0];
  return { role: 'active', store: p.store, partition: p.partition };
}

/** A target by weights over roles: active owner, leader, in-sync replica, random node. */
function roleTarget(c: PlanContext, w: { active: number; leader: number; replica: number; random: number }): FaultTarget {
  const role = c.rng.weighted(['active', 'leader', 'replica', 'random'] as const, [w.active, w.leader, w.replica, w.random]);
  if (role === 'active' || role === 'replica') return ownerTarget(c, role);
  return { role };
}

function pauseDuration(c: PlanContext, long?: boolean): number {
  if (long) return draw(c.rng, c.D.pauseLong);
  const r = c.rng.next();
  if (r < 0.4) return draw(c.rng, c.D.pauseShort);
  if (r < 0.9 || !c.evictOk) return draw(c.rng, c.D.pauseLong);
  return draw(c.rng, c.D.pauseEvict);
}

function isolateDuration(c: PlanContext, profile?: 'long' | 'short'): number {
  if (profile === 'long') return draw(c.rng, c.D.isolateLong);
  if (profile === 'short') return draw(c.rng, c.D.isolateShort);
  const r = c.rng.next();
  if (r < 0.35) return draw(c.rng, c.D.isolateShort);
  if (r < 0.9 || !c.evictOk) return draw(c.rng, c.D.isolateLong);
  return draw(c.rng, c.D.isolateEvict);
}

function crashDuration(c: PlanContext, short?: boolean): number {
  if (short) return draw(c.rng, { lo: 1_000, hi: 4_000 });
  const r = c.rng.next();
  if (r < 0.7) return draw(c.rng, c.D.crash);
  if (r < 0.93 || !c.evictOk) return draw(c.rng, c.D.crashLong);
  return draw(c.rng, c.D.crashEvict);
}

/** A "second fault" on the node an earlier step's event points at: kill, pause or isolation, among the selected. */
function followUp(c: PlanContext, target: FaultTarget, after: FaultTrigger, offsetMs: number): Step | null {
  const options: Array<'crash' | 'pause' | 'partition'> = [];
  const weights: number[] = [];
  if (has(c, 'kill', 'stop')) (options.push('crash'), weights.push(6));
  if (has(c, 'pause')) (options.push('pause'), weights.push(2));
  if (has(c, 'partition') && c.nodeCount >= 2) (options.push('partition'), weights.push(2));
  if (options.length === 0) return null;
  const pick = c.rng.weighted(options, weights);
  if (pick === 'crash') return { kind: crashKind(c)!, target, durationMs: crashDuration(c, true), after, offsetMs };
  if (pick === 'pause') return { kind: 'pause', target, durationMs: c.rng.chance(0.5) ? draw(c.rng, c.D.pauseShort) : draw(c.rng, c.D.pauseLong), after, offsetMs };
  return { kind: 'partition', topology: 'isolate', target, durationMs: c.rng.chance(0.4) ? draw(c.rng, c.D.isolateShort) : draw(c.rng, c.D.isolateLong), after, offsetMs };
}

/**
 * The episodes: each returns its steps (refs are step indexes within the episode), or null when
 * the selected kinds or the cluster size cannot make it. Step 0 starts at the episode's start.
 */
const EPISODES: Record<EpisodeName, (c: PlanContext) => Step[] | null> = {
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
  // a deposed owner frozen past the escalation timeout comes back (fencing); sometimes its successor dies
  'pause-zombie': (c) => {
    if (!has(c, 'pause')) return null;
    const d0 = draw(c.rng, { lo: c.D.pauseLong.lo + 500, hi: c.D.pauseLong.hi });
    const steps: Step[] = [{ kind: 'pause', target: ownerTarget(c), durationMs: d0, offsetMs: 0 }];
    const kind = crashKind(c);
    if (kind && c.rng.chance(0.4)) steps.push({ kind, target: { role: 'active-of', fault: 0 }, durationMs: crashDuration(c, true), after: { event: 'ended', fault: 0, delayMs: c.rng.int(0, 500), waitMs: 5_000 }, offsetMs: d0 });
    return steps;
  },
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
  'client-cut': (c) => (has(c, 'client-cut') ? [{ kind: 'client-cut', target: roleTarget(c, { active: 60, leader: 10, replica: 0, random: 30 }), durationMs: draw(c.rng, c.D.clientCut), offsetMs: 0 }] : null),
  // issue 12 (the simulation's lag-crash, nodes/sim/sim-schedule.ts): an owner failing while its
  // replicas hold different prefixes of its log, the state a promotion must choose in. The heir of
  // an async partition drops its active's traffic (a one-way cut: within the budget on 3 nodes,
  // the heir and the third node stay a connected majority), and LAG ms into the cut, while the
  // other replica still follows, the active is killed: writes acknowledged in the lag reach one
  // replica and not the heir, the member a tie goes to. LAG (200-400 ms) stays under the nodes'
  // replication timeout (600 ms), past which the active would ask the leader to drop the heir
  // from the in-sync set and no promotion would have to choose.
  'lag-crash': (c) => {
    if (!has(c, 'partition') || !c.kinds.has('kill') || c.nodeCount < 3 || c.asyncParts.length === 0) return null;
    const p = c.rng.pick(c.asyncParts);
    const lag = c.rng.int(200, 400);
    const tail = c.rng.int(100, 300);
    return [
      { kind: 'partition', topology: 'one-way', direction: 'in', target: { role: 'heir', store: p.store, partition: p.partition }, peer: { target: { role: 'active', store: p.store, partition: p.partition } }, durationMs: lag + tail, offsetMs: 0 },
      { kind: 'kill', target: { role: 'active-of', fault: 0 }, durationMs: c.rng.int(1_000, 3_000), after: { event: 'started', fault: 0, delayMs: lag, waitMs: 5_000 }, offsetMs: 0 },
    ];
  },
  // issue 12, catch-up from the op log: a replica that keeps its memory (paused, or cut off) past
  // the replication timeout is dropped from the in-sync set and, back, resumes its position in
  // the same owner's log (a restarted replica takes a snapshot instead); the moment it is in sync
  // again the active is killed, and the heir (the member a tie goes to, the one cut here) is the
  // likely successor: what its catch-up left out is then missing from the partition. Sync stores
  // (a lost write there is a violation); the fault stays under the escalation timeout (no
  // failover of its own).
  'resync-crash': (c) => {
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
  },
  // issue 12, fencing: a preferred primary (the owner) cut off past the escalation timeout is deposed, and comes
  // back holding the tail it wrote (an async owner acknowledges until its lease lapses) at an
  // epoch it accepted from the committed map; the moment it is back in sync its successor is
  // killed, and the promotion chooses between it and the third copy (a failback to it, when it
  // is the preferred primary, makes it the owner too). Aimed at async stores by the fencing preset.
  'zombie-crash': (c) => {
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
      { kind, target: { role: 'active-of', fault: 0 }, durationMs: d1, after: { event: 'node-caught-up', name, delayMs: c.rng.int(0, 300), waitMs: 30_000 }, offsetMs: d0 },
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
  },
  power: (c) => {
    if (!has(c, 'power') || c.nodeCount < 2) return null;
    // within the budget a majority must stay up: two nodes of five (of three: never, so not planned)
    const most = c.beyondBudget ? c.nodeCount : c.nodeCount - (Math.floor(c.nodeCount / 2) + 1);
    if (most < 2) return null;
    const count = c.beyondBudget && c.rng.chance(0.5) ? c.nodeCount : c.rng.int(2, most);
    return [{ kind: 'power', target: c.rng.chance(0.5) ? { role: 'leader' } : { role: 'random' }, count, durationMs: crashDuration(c, true), offsetMs: 0 }];
  },
};

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

/** Membership changes: the first comes this long into the phase, ms. */
export const MEMBERSHIP_FIRST_MS: Range = { lo: 20_000, hi: 40_000 };
/** Membership changes: the gap between two, ms (one every 60-90 s: a 10-minute run has several joins and leaves). */
export const MEMBERSHIP_GAP_MS: Range = { lo: 60_000, hi: 90_000 };
/** Membership changes: none is planned later than this before the phase ends (the move runs in the faults that follow), ms. */
export const MEMBERSHIP_TAIL_MS = 15_000;

/**
 * The membership changes of a random schedule (issue 14), on a track of their own (a PRNG derived
 * from the seed, so the other faults of a seed do not change when membership is selected): the
 * first at 20-40 s, then one every 60-90 s, none later than {@link MEMBERSHIP_TAIL_MS} before the
 * phase ends. Among the selected membership kinds they cycle join, leave, join, leave, rebalance:
 * a join brings a node outside the member set in (target `outside`: the spare, or the node that
 * left last), the leave that follows drains a member (target `member`: the executor keeps at
 * least the voters' count of members, {@link leaveCandidates}), and the next join brings it back;
 * so the member count never goes below where it started. Admin requests last 0 ms.
 *
 * A move under a fault (where field losses happened: moves that dropped the writes made during the
 * move): half of the joins and leaves, when a crash kind is selected, are followed 1-4 s after the
 * request by a short crash (1-3 s down) of the node a move is most fragile at: after a join, the
 * active owner of a partition the joining node replicates without owning it yet (`active-over`:
 * the old owner mid-move); after a leave, the leaving node itself, mid-drain (`same`).
 * @param base index of the first returned fault in the schedule (the crashes refer to their request by index)
 * @returns the planned changes (and crashes), in start order (empty when no membership kind is selected).
 */
export function planMembership(seed: number, durationMs: number, kinds: readonly FaultKind[], base = 0): PlannedFault[] {
  const cycle = (['join', 'leave', 'join', 'leave', 'rebalance'] as const).filter((k) => kinds.includes(k));
  if (cycle.length === 0) return [];
  const crash = kinds.includes('kill') ? 'kill' : kinds.includes('stop') ? 'stop' : null;
  const rng = createPrng(deriveSeed(seed, 0x6d656d62)); // "memb"
  const out: PlannedFault[] = [];
  let at = draw(rng, MEMBERSHIP_FIRST_MS);
  for (let i = 0; at <= durationMs - MEMBERSHIP_TAIL_MS; i++) {
    const kind = cycle[i % cycle.length];
    const target: FaultTarget = kind === 'join' ? { role: 'outside' } : kind === 'leave' ? { role: 'member' } : { role: 'leader' };
    const index = base + out.length;
    out.push({ kind, target, atMs: at, durationMs: 0 });
    const delayMs = rng.int(1_000, 4_000);
    const downMs = rng.int(1_000, 3_000);
    if (crash && kind !== 'rebalance' && rng.chance(0.5) && at + delayMs + downMs <= durationMs) {
      out.push({
        kind: crash,
        target: kind === 'join' ? { role: 'active-over', fault: index } : { role: 'same', fault: index },
        atMs: at,
        durationMs: downMs,
        // the request may be refused for 30 s (gateWaitMs) before it goes through; never without it
        after: { event: 'started', fault: index, delayMs, waitMs: 35_000, onMiss: 'skip' },
      });
    }
    at += draw(rng, MEMBERSHIP_GAP_MS);
  }
  return out;
}

/** One entry of the member set (the leader's metadata `members`, issue 14). */
export interface MemberEntry {
  id: string;
  state: 'joining' | 'member' | 'leaving';
}

/**
 * The members a `leave` may drain now, best first: only when no change is pending (every entry
 * `member`) and the member set keeps at least `minMembers` (>= 1; the harness passes the voters'
 * count) after it; the nodes that joined (latest first, from `joined`, the harness's record of its
 * own joins) come before the others, which keep config order.
 * @returns [] when no leave is possible now.
 */
export function leaveCandidates(members: readonly MemberEntry[], minMembers: number, joined: readonly string[]): string[] {
  const min = Math.max(1, minMembers);
  if (members.some((m) => m.state !== 'member')) return [];
  if (members.length - 1 < min) return [];
  const ids = members.map((m) => m.id);
  const late = [...joined].reverse().filter((n, i, a) => ids.includes(n) && a.indexOf(n) === i);
  return [...late, ...ids.filter((n) => !late.includes(n))];
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

// ------------------------------------------------------------------ JSON, digest

/**
 * JSON with object keys sorted at every level and no whitespace; `undefined` members dropped.
 * Equal values give byte-equal text whatever their key order.
 * @throws TypeError for values JSON cannot hold (functions, bigint, non-finite numbers).
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError(`canonicalJson: non-finite number ${value}`);
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  if (typeof value === 'object') {
    const o = value as Record<string, unknown>;
    const keys = Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(',')}}`;
  }
  throw new TypeError(`canonicalJson: cannot encode a ${typeof value}`);
}

/** The schedule as stored in the ledger meta `schedule`: its canonical JSON. */
export function scheduleToJson(schedule: Schedule): string {
  return canonicalJson(schedule);
}

/** sha256 (lower-case hex, 64 characters) of the schedule's canonical JSON (results.json `scheduleDigest`). */
export function scheduleDigest(schedule: Schedule): string {
  return createHash('sha256').update(scheduleToJson(schedule)).digest('hex');
}

/**
 * A short label of a target, as the ledger's faults.target holds it: `leader`, `active:sync3/2`,
 * `replica:async3/0`, `node:n1`, `random`, `catching-up`, `failback`, `same:#3`,
 * `active-over:#3`, `active-of:#3`.
 */
export function describeTarget(t: FaultTarget): string {
  switch (t.role) {
    case 'leader':
    case 'random':
    case 'catching-up':
    case 'failback':
    case 'outside':
    case 'member':
      return t.role;
    case 'node':
      return `node:${t.node}`;
    case 'active':
    case 'replica':
    case 'heir':
      return `${t.role}:${t.store}/${t.partition}`;
    case 'same':
    case 'active-over':
    case 'active-of':
      return `${t.role}:#${t.fault}`;
    case 'preferred':
      return `preferred:${t.store}/${t.partition}`;
    case 'bound':
      return `bound:${t.name}`;
  }
}

// ---------------------------------------------------------------- validation (replay)

type Obj = Record<string, unknown>;

function bad(msg: string): never {
  throw new ScheduleError(`schedule: ${msg}`);
}

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function onlyKeys(o: Obj, allowed: readonly string[], where: string): void {
  for (const k of Object.keys(o)) if (!allowed.includes(k)) bad(`${where}: unknown field "${k}"`);
}

function int(o: Obj, k: string, where: string, min: number): number {
  const v = o[k];
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min) bad(`${where}.${k} must be an integer >= ${min}, got ${JSON.stringify(v)}`);
  return v;
}

function parseTarget(v: unknown, where: string, index: number, bound: ReadonlySet<string>): FaultTarget {
  if (!isObj(v)) bad(`${where} must be an object`);
  const earlier = (): number => {
    const f = int(v, 'fault', where, 0);
    if (f >= index) bad(`${where}.fault must name an earlier fault (< ${index}), got ${f}`);
    return f;
  };
  switch (v.role) {
    case 'leader':
    case 'random':
    case 'catching-up':
    case 'failback':
    case 'outside':
    case 'member':
      onlyKeys(v, ['role'], where);
      return { role: v.role };
    case 'node':
      onlyKeys(v, ['role', 'node'], where);
      if (typeof v.node !== 'string' || v.node.length === 0) bad(`${where}.node must be a node id`);
      return { role: 'node', node: v.node };
    case 'active':
    case 'replica':
    case 'heir':
      onlyKeys(v, ['role', 'store', 'partition'], where);
      if (typeof v.store !== 'string' || v.store.length === 0) bad(`${where}.store must be a store name`);
      return { role: v.role, store: v.store, partition: int(v, 'partition', where, 0) };
    case 'same':
    case 'active-over':
    case 'active-of':
      onlyKeys(v, ['role', 'fault'], where);
      return { role: v.role, fault: earlier() };
    case 'preferred':
      onlyKeys(v, ['role', 'store', 'partition'], where);
      if (typeof v.store !== 'string' || v.store.length === 0) bad(`${where}.store must be a store name`);
      return { role: 'preferred', store: v.store, partition: int(v, 'partition', where, 0) };
    case 'bound':
      onlyKeys(v, ['role', 'name'], where);
      if (typeof v.name !== 'string' || !bound.has(v.name)) bad(`${where}.name must be a name an earlier fault binds, got ${JSON.stringify(v.name)}`);
      return { role: 'bound', name: v.name };
    default:
      return bad(`${where}.role must be one of ${TARGET_ROLES.join(', ')}, got ${JSON.stringify(v.role)}`);
  }
}

/** Which target roles each topology accepts. */
const TOPOLOGY_TARGETS: Record<Topology, readonly FaultTarget['role'][]> = {
  isolate: TARGET_ROLES,
  'one-way': TARGET_ROLES,
  // a halves target (scenarios) is a node of the minority side
  halves: TARGET_ROLES,
  bridge: ['random'],
  leader: ['leader'],
  active: ['active'],
};

function num(o: Obj, k: string, where: string): number {
  const v = o[k];
  if (typeof v !== 'number' || !Number.isFinite(v)) bad(`${where}.${k} must be a number, got ${JSON.stringify(v)}`);
  return v;
}

/** A name (bind, except, bound targets): letters, digits, '_' and '-', starting with a letter. */
const NAME_RE = /^[A-Za-z][A-Za-z0-9_-]{0,39}$/;

function names(v: unknown, where: string, bound: ReadonlySet<string>): string[] {
  if (!Array.isArray(v) || v.length === 0 || v.some((x) => typeof x !== 'string' || !bound.has(x))) bad(`${where} must be a list of names earlier faults bind, got ${JSON.stringify(v)}`);
  return [...(v as string[])];
}

function parseFault(f: unknown, i: number, kinds: readonly FaultKind[], durationMs: number, nodeCount: number, prev: PlannedFault[], bound: Set<string>): PlannedFault {
  const where = `faults[${i}]`;
  if (!isObj(f)) bad(`${where} must be an object`);
  onlyKeys(f, ['kind', 'topology', 'direction', 'flap', 'clock', 'count', 'target', 'atMs', 'durationMs', 'after', 'name', 'bind', 'except', 'peer', 'admin'], where);
  if (!kinds.includes(f.kind as FaultKind)) bad(`${where}.kind must be one of the schedule's kinds (${kinds.join(', ') || 'none'}), got ${JSON.stringify(f.kind)}`);
  const kind = f.kind as FaultKind;
  const admin = (ADMIN_KINDS as readonly FaultKind[]).includes(kind);
  const target = parseTarget(f.target, `${where}.target`, i, bound);
  const atMs = int(f, 'atMs', where, 0);
  const dur = int(f, 'durationMs', where, admin ? 0 : 1);
  if (atMs + dur > durationMs) bad(`${where} ends at ${atMs + dur} ms, after the fault phase (${durationMs} ms)`);
  const out: PlannedFault = { kind, target, atMs, durationMs: dur };
  if (f.name !== undefined) {
    if (typeof f.name !== 'string' || f.name.length === 0 || f.name.length > 80) bad(`${where}.name must be a short text`);
    out.name = f.name;
  }
  if (f.except !== undefined) out.except = names(f.except, `${where}.except`, bound);
  if (f.admin !== undefined || (admin && !isMembershipKind(kind))) {
    if (!admin || isMembershipKind(kind)) bad(`${where}: admin is only for handoff and regenerate faults`);
    if (!isObj(f.admin)) bad(`${where}.admin must be an object { store, partition }`);
    onlyKeys(f.admin, ['store', 'partition'], `${where}.admin`);
    if (typeof f.admin.store !== 'string' || f.admin.store.length === 0) bad(`${where}.admin.store must be a store name`);
    out.admin = { store: f.admin.store, partition: int(f.admin, 'partition', `${where}.admin`, 0) };
  }
  if (f.peer !== undefined) {
    if (kind !== 'partition' || f.topology !== 'one-way') bad(`${where}: peer is only for one-way partitions`);
    if (!isObj(f.peer)) bad(`${where}.peer must be an object { target, bind?, except? }`);
    onlyKeys(f.peer, ['target', 'bind', 'except'], `${where}.peer`);
    const peer: NonNullable<PlannedFault['peer']> = { target: parseTarget(f.peer.target, `${where}.peer.target`, i, bound) };
    if (f.peer.except !== undefined) peer.except = names(f.peer.except, `${where}.peer.except`, bound);
    if (f.peer.bind !== undefined) {
      if (typeof f.peer.bind !== 'string' || !NAME_RE.test(f.peer.bind)) bad(`${where}.peer.bind must be a name (a letter, then letters, digits, _ or -)`);
      peer.bind = f.peer.bind;
    }
    out.peer = peer;
  }
  // a fault's own bind is known to later faults only (and to its peer's target, resolved after it)
  if (f.bind !== undefined) {
    if (typeof f.bind !== 'string' || !NAME_RE.test(f.bind)) bad(`${where}.bind must be a name (a letter, then letters, digits, _ or -)`);
    out.bind = f.bind;
  }
  const only = (field: string, k: FaultKind): void => {
    if (f[field] !== undefined && kind !== k) bad(`${where}: ${field} is only for ${k} faults`);
  };
  only('topology', 'partition');
  only('flap', 'partition');
  only('clock', 'clock');
  only('count', 'power');
  if (kind === 'partition') {
    if (!(TOPOLOGIES as readonly unknown[]).includes(f.topology)) bad(`${where}.topology must be one of ${TOPOLOGIES.join(', ')}, got ${JSON.stringify(f.topology)}`);
    const topology = f.topology as Topology;
    if (!TOPOLOGY_TARGETS[topology].includes(target.role)) bad(`${where}: topology ${topology} cannot take a ${target.role} target`);
    if (nodeCount < (topology === 'halves' || topology === 'bridge' ? 3 : 2)) bad(`${where}: topology ${topology} is impossible with ${nodeCount} node(s)`);
    out.topology = topology;
    if (f.direction !== undefined) {
      if (topology !== 'one-way') bad(`${where}: direction is only for one-way partitions`);
      if (f.direction !== 'in' && f.direction !== 'out') bad(`${where}.direction must be "in" or "out", got ${JSON.stringify(f.direction)}`);
      out.direction = f.direction;
    }
    if (f.flap !== undefined) {
      if (!isObj(f.flap)) bad(`${where}.flap must be an object`);
      onlyKeys(f.flap, ['onMs', 'offMs'], `${where}.flap`);
      out.flap = { onMs: int(f.flap, 'onMs', `${where}.flap`, 100), offMs: int(f.flap, 'offMs', `${where}.flap`, 100) };
    }
  } else if (f.direction !== undefined) {
    bad(`${where}: direction is only for one-way partitions`);
  }
  if (kind === 'clock') {
    if (!isObj(f.clock)) bad(`${where}.clock must be an object { rate, jumpMs }`);
    onlyKeys(f.clock, ['rate', 'jumpMs'], `${where}.clock`);
    const rate = num(f.clock, 'rate', `${where}.clock`);
    if (!(rate >= 0.25 && rate <= 4)) bad(`${where}.clock.rate must be within 0.25..4, got ${rate}`);
    const jumpMs = num(f.clock, 'jumpMs', `${where}.clock`);
    if (!Number.isSafeInteger(jumpMs) || jumpMs % 1000 !== 0 || Math.abs(jumpMs) > 86_400_000) bad(`${where}.clock.jumpMs must be whole seconds within a day, got ${jumpMs}`);
    out.clock = { rate, jumpMs };
  }
  if (kind === 'power') {
    const count = int(f, 'count', where, 2);
    if (count > nodeCount) bad(`${where}.count must be at most the node count (${nodeCount}), got ${count}`);
    out.count = count;
  }
  if (f.after !== undefined) {
    const w = `${where}.after`;
    if (!isObj(f.after)) bad(`${w} must be an object`);
    onlyKeys(f.after, ['event', 'fault', 'delayMs', 'waitMs', 'node', 'name', 'store', 'partition', 'onMiss'], w);
    if (!(TRIGGER_EVENTS as readonly unknown[]).includes(f.after.event)) bad(`${w}.event must be one of ${TRIGGER_EVENTS.join(', ')}, got ${JSON.stringify(f.after.event)}`);
    const event = f.after.event as TriggerEvent;
    const t: FaultTrigger = { event, delayMs: int(f.after, 'delayMs', w, 0), waitMs: int(f.after, 'waitMs', w, 0) };
    const byFault = event === 'catching-up' || event === 'caught-up' || event === 'ended' || event === 'started' || event === 'failback';
    if (f.after.fault !== undefined) {
      if (!byFault) bad(`${w}.fault is not for ${event}`);
      const r = int(f.after, 'fault', w, 0);
      if (r >= i) bad(`${w}.fault must name an earlier fault (< ${i}), got ${r}`);
      if ((event === 'catching-up' || event === 'caught-up') && !CRASH_KINDS.includes(prev[r].kind)) bad(`${w}: ${event} needs a crash fault (kill, stop, power), faults[${r}] is a ${prev[r].kind}`);
      t.fault = r;
    } else if (byFault && event !== 'failback') {
      bad(`${w}.fault is required for ${event}`);
    }
    const byNode = event === 'node-caught-up' || event === 'suspected' || event === 'handoff-started';
    if (f.after.node !== undefined || f.after.name !== undefined) {
      if (!byNode) bad(`${w}: node and name are only for node-caught-up, suspected and handoff-started`);
      if (f.after.node !== undefined && f.after.name !== undefined) bad(`${w}: give node or name, not both`);
      if (f.after.node !== undefined) {
        if (typeof f.after.node !== 'string' || f.after.node.length === 0) bad(`${w}.node must be a node id`);
        t.node = f.after.node;
      } else {
        if (typeof f.after.name !== 'string' || !bound.has(f.after.name)) bad(`${w}.name must be a name an earlier fault binds, got ${JSON.stringify(f.after.name)}`);
        t.name = f.after.name;
      }
    } else if (event === 'node-caught-up' || event === 'suspected') {
      bad(`${w}: ${event} needs node or name`);
    }
    if (f.after.store !== undefined || f.after.partition !== undefined) {
      if (event !== 'promoted' && event !== 'handoff-started') bad(`${w}: store and partition are only for promoted and handoff-started`);
      if (typeof f.after.store !== 'string' || f.after.store.length === 0) bad(`${w}.store must be a store name`);
      t.store = f.after.store;
      t.partition = int(f.after, 'partition', w, 0);
    } else if (event === 'promoted') {
      bad(`${w}: promoted needs store and partition`);
    }
    if (f.after.onMiss !== undefined) {
      if (f.after.onMiss !== 'start' && f.after.onMiss !== 'skip') bad(`${w}.onMiss must be "start" or "skip", got ${JSON.stringify(f.after.onMiss)}`);
      t.onMiss = f.after.onMiss;
    }
    out.after = t;
  }
  if (out.bind !== undefined) bound.add(out.bind);
  if (out.peer?.bind !== undefined) bound.add(out.peer.bind);
  return out;
}

/** A v1 fault (zaris-schedule/1) in v2 terms: same kind, target and times; leader/active topologies kept. */
function fromV1(raw: Obj): Obj {
  const faults = Array.isArray(raw.faults) ? raw.faults.map((f: unknown) => (isObj(f) ? Object.fromEntries(Object.entries(f).filter(([k]) => k !== 'calmMs')) : f)) : raw.faults;
  const v1Faults = Array.isArray(raw.faults) ? (raw.faults as unknown[]) : [];
  // v1's within-budget rule: no fault before the previous one's end + calm gap
  if (raw.beyondBudget === false) {
    for (let i = 1; i < v1Faults.length; i++) {
      const p = v1Faults[i - 1] as Obj;
      const c = v1Faults[i] as Obj;
      if (isObj(p) && isObj(c) && typeof c.atMs === 'number' && typeof p.atMs === 'number' && typeof p.durationMs === 'number' && typeof p.calmMs === 'number' && c.atMs < p.atMs + p.durationMs + p.calmMs) {
        bad(`faults[${i}] overlaps faults[${i - 1}] and its calm gap, which only a beyondBudget schedule allows`);
      }
    }
  }
  for (let i = 0; i < v1Faults.length; i++) {
    const f = v1Faults[i];
    if (isObj(f) && f.calmMs !== undefined && (typeof f.calmMs !== 'number' || !Number.isSafeInteger(f.calmMs) || f.calmMs < 0)) bad(`faults[${i}].calmMs must be an integer >= 0, got ${JSON.stringify(f.calmMs)}`);
  }
  return { ...raw, format: SCHEDULE_FORMAT, preset: 'random', evictionTimeoutMs: 60_000, faults };
}

/**
 * Validates a parsed schedule object (see {@link scheduleFromJson} for the rules) and returns a
 * clean copy (no extra fields). A `zaris-schedule/1` object is converted (same faults; preset
 * `random`, eviction timeout 60 s).
 * @throws ScheduleError with a one-line reason naming the first bad field.
 */
export function validateSchedule(input: unknown): Schedule {
  if (!isObj(input)) bad('not a JSON object');
  let raw: Obj = input;
  if (raw.format === SCHEDULE_FORMAT_V1) {
    onlyKeys(raw, ['format', 'seed', 'durationMs', 'kinds', 'escalationTimeoutMs', 'nodeCount', 'beyondBudget', 'faults'], 'top level');
    if (Array.isArray(raw.kinds)) for (const k of raw.kinds) if (!['kill', 'stop', 'pause', 'partition'].includes(k as string)) bad(`kinds: unknown fault kind ${JSON.stringify(k)}`);
    raw = fromV1(raw);
  }
  onlyKeys(raw, ['format', 'seed', 'durationMs', 'kinds', 'preset', 'escalationTimeoutMs', 'evictionTimeoutMs', 'nodeCount', 'beyondBudget', 'faults', 'scenario', 'tailMs'], 'top level');
  if (raw.format !== SCHEDULE_FORMAT) bad(`format must be "${SCHEDULE_FORMAT}" (or "${SCHEDULE_FORMAT_V1}"), got ${JSON.stringify(raw.format)}`);
  if (typeof raw.seed !== 'number' || !Number.isSafeInteger(raw.seed)) bad(`seed must be an integer, got ${JSON.stringify(raw.seed)}`);
  const durationMs = int(raw, 'durationMs', 'schedule', 1);
  const escalationTimeoutMs = int(raw, 'escalationTimeoutMs', 'schedule', 1);
  const evictionTimeoutMs = int(raw, 'evictionTimeoutMs', 'schedule', 1);
  const nodeCount = int(raw, 'nodeCount', 'schedule', 1);
  if (typeof raw.beyondBudget !== 'boolean') bad('beyondBudget must be true or false');
  if (!(PRESET_NAMES as readonly unknown[]).includes(raw.preset)) bad(`preset must be one of ${PRESET_NAMES.join(', ')}, got ${JSON.stringify(raw.preset)}`);
  if (!Array.isArray(raw.kinds)) bad('kinds must be an array');
  for (const k of raw.kinds) if (!(ALL_FAULT_KINDS as readonly unknown[]).includes(k)) bad(`kinds: unknown fault kind ${JSON.stringify(k)}`);
  if (new Set(raw.kinds).size !== raw.kinds.length) bad('kinds: a kind is listed twice');
  const kinds = ALL_FAULT_KINDS.filter((k) => (raw.kinds as unknown[]).includes(k));
  if (!Array.isArray(raw.faults)) bad('faults must be an array');
  if (raw.scenario !== undefined && (typeof raw.scenario !== 'string' || raw.scenario.length === 0)) bad('scenario must be a name');
  const tailMs = raw.tailMs === undefined ? undefined : int(raw, 'tailMs', 'schedule', 0);
  const faults: PlannedFault[] = [];
  const bound = new Set<string>();
  for (let i = 0; i < raw.faults.length; i++) faults.push(parseFault(raw.faults[i], i, kinds, durationMs, nodeCount, faults, bound));
  // a scenario keeps its steps in the order written (each waits for its own time and trigger)
  if (raw.scenario === undefined) {
    for (let i = 1; i < faults.length; i++) {
      if (faults[i].atMs < faults[i - 1].atMs) bad(`faults[${i}] starts before faults[${i - 1}] (atMs must not decrease)`);
    }
  }
  return {
    format: SCHEDULE_FORMAT,
    seed: raw.seed,
    durationMs,
    kinds,
    preset: raw.preset as PresetName,
    escalationTimeoutMs,
    evictionTimeoutMs,
    nodeCount,
    beyondBudget: raw.beyondBudget,
    faults,
    ...(raw.scenario !== undefined ? { scenario: raw.scenario as string } : {}),
    ...(tailMs !== undefined ? { tailMs } : {}),
  };
}

/**
 * Replay: parses and validates a recorded schedule (the ledger meta `schedule`, format 1 or 2).
 * Checks: the format tag; integer ms fields (atMs >= 0, durationMs >= 1); every fault of a kind
 * the schedule selects, ending within the phase; `topology` (and `direction`, `flap`) exactly on
 * partitions and matching its target (halves/bridge -> random; v1's leader -> leader, active ->
 * active); `clock` exactly on clock faults (rate 0.25..4, whole-second jump); `count` exactly on
 * power faults (2..nodeCount); references (`same`, `active-over`, `active-of`, `after.fault`) to
 * earlier faults only, `catching-up`/`caught-up` to crash faults; faults in start order; a v1
 * schedule within budget without overlaps; no unknown field.
 * @throws ScheduleError with a one-line reason.
 */
export function scheduleFromJson(text: string): Schedule {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    bad(`not valid JSON (${(e as Error).message.replace(/\s*\n\s*/g, ' ')})`);
  }
  return validateSchedule(raw);
}
