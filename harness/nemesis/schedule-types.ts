/**
 * The shapes of a fault schedule (DESIGN.md §3 "Nemesis"): the fault kinds, the targets a fault
 * is aimed at, the events a fault may wait for, a planned fault and the schedule itself, and the
 * error every schedule module throws. Types and constant lists only: no logic.
 */
import type { Topology } from './grudge.js';
import type { PresetName } from './presets.js';

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
 *   behind since the wait began, answers and is in sync in every partition it replicates, or in
 *   partition `store`/`partition` when given (the one an episode aims at: in a mix of faults the
 *   node may stay behind elsewhere for longer than the wait);
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
  /** promoted (required), handoff-started and node-caught-up (optional): the partition. */
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
