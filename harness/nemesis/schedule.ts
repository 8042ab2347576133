/**
 * The nemesis's fault schedule (DESIGN.md §3 "Nemesis", §7 `scheduleDigest`): drawn from the run's
 * SEED, stored in the ledger meta `schedule` as JSON, replayable, and summarised by a sha256
 * digest in results.json.
 *
 * The same (seed, durationMs, kinds, escalationTimeoutMs, nodeCount, partitions, beyondBudget)
 * always gives the same schedule. Targets that depend on the live cluster (the leader, a
 * partition's active owner, a random node, a random split) are resolved by the executor when the
 * fault starts (nemesis.ts).
 */
import { createHash } from 'node:crypto';
import { TOPOLOGIES, type Topology } from './grudge.js';
import { createPrng, type Prng } from './prng.js';

/** A fault the nemesis injects: SIGKILL+restart, SIGTERM+restart, pause+resume, partition+heal. */
export type FaultKind = 'kill' | 'stop' | 'pause' | 'partition';

/** Every fault kind, in the order results.json lists them. */
export const FAULT_KINDS: readonly FaultKind[] = ['kill', 'stop', 'pause', 'partition'];

/**
 * Who a fault hits. `node`: a fixed node id; `leader`: the cluster leader when the fault starts;
 * `active`: the active owner of one partition of one store when the fault starts; `random`: a
 * node (or for halves/bridge a split) drawn when the fault starts from the schedule's seed and
 * the fault's index.
 */
export type FaultTarget =
  | { role: 'node'; node: string }
  | { role: 'leader' }
  | { role: 'active'; store: string; partition: number }
  | { role: 'random' };

/**
 * One planned fault. Times are milliseconds, relative to the start of the fault phase:
 * the fault starts at `atMs` (later if the executor has to wait for a Healthy cluster), lasts
 * `durationMs` (down time for kill/stop, frozen time for pause, cut time for a partition), and the
 * cluster is left alone for at least `calmMs` after it ends. `topology` is set for partitions only.
 */
export interface PlannedFault {
  kind: FaultKind;
  topology?: Topology;
  target: FaultTarget;
  atMs: number;
  durationMs: number;
  calmMs: number;
}

/** Format tag of a stored schedule. */
export const SCHEDULE_FORMAT = 'zaris-schedule/1';

/**
 * A whole planned schedule, as stored in the ledger meta `schedule` (canonical JSON) and hashed by
 * {@link scheduleDigest}. `seed` also seeds the executor's live choices (deriveSeed(seed, index)).
 */
export interface Schedule {
  format: typeof SCHEDULE_FORMAT;
  seed: number;
  /** Length of the fault phase, ms; every fault ends by then (atMs + durationMs <= durationMs). */
  durationMs: number;
  /** The selected kinds (FAULTS=...), in {@link FAULT_KINDS} order. */
  kinds: FaultKind[];
  /** The nodes' escalation timeout the pauses were sized against, ms (seed 002: 10 s default). */
  escalationTimeoutMs: number;
  /** Cluster size the schedule was planned for (decides which topologies are possible). */
  nodeCount: number;
  /** When true faults may overlap; otherwise each starts after the previous one's end + calm. */
  beyondBudget: boolean;
  faults: PlannedFault[];
}

/** Bad user input about faults or a schedule; the message is one line, fit to print as is (exit 64). */
export class ScheduleError extends Error {
  override name = 'ScheduleError';
}

/**
 * Parses FAULTS: a comma-separated list of kinds (`kill,stop,pause,partition`; spaces allowed;
 * repeats ignored), `all` for every kind, or `none` for a run without faults.
 * Returns the kinds in {@link FAULT_KINDS} order.
 * @throws ScheduleError for an empty list or an unknown kind (one line naming it and the choices).
 */
export function parseFaultKinds(text: string): FaultKind[] {
  const parts = text
    .split(',')
    .map((p) => p.trim().toLowerCase())
    .filter((p) => p.length > 0);
  if (parts.length === 0) throw new ScheduleError(`FAULTS is empty: give a comma-separated list of ${FAULT_KINDS.join(', ')} (or all, none)`);
  if (parts.length === 1 && parts[0] === 'none') return [];
  if (parts.length === 1 && parts[0] === 'all') return [...FAULT_KINDS];
  const set = new Set<FaultKind>();
  for (const p of parts) {
    if (!(FAULT_KINDS as readonly string[]).includes(p)) {
      throw new ScheduleError(`FAULTS: unknown fault kind "${p}" (choose from ${FAULT_KINDS.join(', ')}, or all, none)`);
    }
    set.add(p as FaultKind);
  }
  return FAULT_KINDS.filter((k) => set.has(k));
}

/** What {@link planSchedule} needs. All times in ms. */
export interface PlanOptions {
  seed: number;
  /** Length of the fault phase, ms (> 0). */
  durationMs: number;
  /** Selected kinds (from {@link parseFaultKinds}); empty gives an empty schedule. */
  kinds: readonly FaultKind[];
  /** The nodes' escalation timeout, ms: some pauses are planned longer than it. */
  escalationTimeoutMs: number;
  /** Number of nodes in the cluster (>= 1; partitions need >= 2, halves and bridge >= 3). */
  nodeCount: number;
  /** The partitions of every store ({store, partition}) that active-owner targets draw from. */
  partitions: ReadonlyArray<{ store: string; partition: number }>;
  /** Allow overlapping faults (DESIGN.md §5 beyond-budget). Default false. */
  beyondBudget?: boolean;
}

/** Inclusive integer range, ms. */
interface Range {
  lo: number;
  hi: number;
}

/** The brief's ranges at full scale (runs of 10 minutes or more), ms. */
const BASE = {
  crash: { lo: 1_000, hi: 6_000 },
  pause: { lo: 1_000, hi: 15_000 },
  partition: { lo: 3_000, hi: 25_000 },
  calm: { lo: 1_000, hi: 5_000 },
} as const;

/** A run this long or longer uses the full ranges; shorter runs shrink each range's width. */
const FULL_SCALE_MS = 600_000;
/** The smallest width factor (a 60 s run). */
const MIN_SCALE = 0.1;
/** Kills planned at least, when kill is selected and the phase is long enough. */
export const MIN_KILLS = 3;
/** Share of pauses planned longer than the escalation timeout. */
const LONG_PAUSE_SHARE = 0.4;

const KIND_WEIGHT: Record<FaultKind, number> = { kill: 4, stop: 1.5, pause: 2, partition: 2.5 };

function scaled(r: Range, s: number): Range {
  return { lo: r.lo, hi: Math.round(r.lo + (r.hi - r.lo) * s) };
}

/**
 * The duration ranges used for a phase of `durationMs` (exported for tests and the report):
 * each range keeps its lower end and its width shrinks linearly below 10 minutes (to 10 %).
 * Pauses: `shortPause` stays under the escalation timeout where it can (never under 1 s);
 * `longPause` always exceeds it by at least 500 ms.
 */
export function faultRanges(durationMs: number, escalationTimeoutMs: number): {
  crash: Range;
  shortPause: Range;
  longPause: Range;
  partition: Range;
  calm: Range;
} {
  const s = Math.min(1, Math.max(MIN_SCALE, durationMs / FULL_SCALE_MS));
  const pause = scaled(BASE.pause, s);
  const shortHi = Math.max(BASE.pause.lo, Math.min(escalationTimeoutMs - 500, pause.hi));
  const longLo = escalationTimeoutMs + 500;
  const longHi = Math.max(longLo + Math.round(4_500 * s), Math.min(pause.hi, BASE.pause.hi));
  return {
    crash: scaled(BASE.crash, s),
    shortPause: { lo: BASE.pause.lo, hi: shortHi },
    longPause: { lo: longLo, hi: longHi },
    partition: scaled(BASE.partition, s),
    calm: scaled(BASE.calm, s),
  };
}

function draw(rng: Prng, r: Range): number {
  return rng.int(r.lo, r.hi);
}

function checkPositiveInt(v: number, what: string): void {
  if (!Number.isSafeInteger(v) || v <= 0) throw new ScheduleError(`${what} must be a positive integer, got ${v}`);
}

/**
 * Plans a seeded schedule. Mix: kill 4 : stop 1.5 : pause 2 : partition 2.5 among the selected
 * kinds; crash faults target the leader (35 %), an active owner (40 %) or a random node; pauses
 * the leader (30 %), an active owner (30 %) or a random node; partitions isolate a random node,
 * split into majority/minority halves, build a bridge, or isolate the leader or an active owner.
 * The schedule opens with {@link MIN_KILLS} rounds of one fault of each selected kind (kill first),
 * then draws by weight; when kill is selected, at least {@link MIN_KILLS} kills are planned whenever
 * the phase can hold them (phases of 15 s and more always can).
 * Within budget each fault starts at or after the previous one's end plus its calm gap; beyond
 * budget a fault may start while the previous one is still active.
 * @throws ScheduleError on a bad option (non-integer seed, durationMs <= 0, partitions with fewer
 * than 2 nodes).
 */
export function planSchedule(opts: PlanOptions): Schedule {
  if (!Number.isSafeInteger(opts.seed)) throw new ScheduleError(`seed must be an integer, got ${opts.seed}`);
  checkPositiveInt(opts.durationMs, 'fault phase duration (ms)');
  checkPositiveInt(opts.escalationTimeoutMs, 'escalation timeout (ms)');
  checkPositiveInt(opts.nodeCount, 'node count');
  const kinds = FAULT_KINDS.filter((k) => opts.kinds.includes(k));
  if (kinds.includes('partition') && opts.nodeCount < 2) throw new ScheduleError('partition faults need at least 2 nodes');
  const beyondBudget = opts.beyondBudget === true;
  const schedule: Schedule = {
    format: SCHEDULE_FORMAT,
    seed: opts.seed,
    durationMs: opts.durationMs,
    kinds,
    escalationTimeoutMs: opts.escalationTimeoutMs,
    nodeCount: opts.nodeCount,
    beyondBudget,
    faults: [],
  };
  if (kinds.length === 0) return schedule;

  const rng = createPrng(opts.seed);
  const R = faultRanges(opts.durationMs, opts.escalationTimeoutMs);
  const parts = [...opts.partitions].sort((a, b) => (a.store === b.store ? a.partition - b.partition : a.store < b.store ? -1 : 1));
  const activeTarget = (): FaultTarget => {
    const p = rng.pick(parts);
    return { role: 'active', store: p.store, partition: p.partition };
  };
  const topologies: Topology[] = TOPOLOGIES.filter((t) => {
    if (t === 'halves' || t === 'bridge') return opts.nodeCount >= 3;
    if (t === 'active') return parts.length > 0;
    return true;
  });
  const topoWeight: Record<Topology, number> = { isolate: 0.2, halves: 0.2, bridge: 0.15, leader: 0.2, active: 0.25 };

  const drawFault = (kind: FaultKind): Omit<PlannedFault, 'atMs' | 'calmMs'> => {
    switch (kind) {
      case 'kill':
      case 'stop': {
        const r = rng.next();
        const target: FaultTarget =
          r < 0.35 ? { role: 'leader' } : r < 0.75 && parts.length > 0 ? activeTarget() : { role: 'random' };
        return { kind, target, durationMs: draw(rng, R.crash) };
      }
      case 'pause': {
        const r = rng.next();
        const target: FaultTarget = r < 0.3 ? { role: 'leader' } : r < 0.6 && parts.length > 0 ? activeTarget() : { role: 'random' };
        const durationMs = rng.chance(LONG_PAUSE_SHARE) ? draw(rng, R.longPause) : draw(rng, R.shortPause);
        return { kind, target, durationMs };
      }
      case 'partition': {
        const topology = rng.weighted(topologies, topologies.map((t) => topoWeight[t]));
        const target: FaultTarget = topology === 'leader' ? { role: 'leader' } : topology === 'active' ? activeTarget() : { role: 'random' };
        return { kind, topology, target, durationMs: draw(rng, R.partition) };
      }
    }
  };

  const weights = kinds.map((k) => KIND_WEIGHT[k]);
  const maxKillSlot = R.crash.hi + R.calm.hi;
  let kills = 0;
  let cursor = draw(rng, R.calm); // let the workload warm up before the first fault
  // The first MIN_KILLS rounds give every selected kind one fault each, kill first: the faults a
  // run is certified against come early, before waits for Healthy can push them past the end
  // (a fresh-clone test saw a 60 s run whose three back-loaded kills never ran).
  const opening: FaultKind[] = [];
  for (let round = 0; round < MIN_KILLS; round++) {
    const rest = kinds.filter((k) => k !== 'kill');
    for (let i = rest.length - 1; i > 0; i--) {
      const j = rng.int(0, i);
      [rest[i], rest[j]] = [rest[j], rest[i]];
    }
    opening.push(...(kinds.includes('kill') ? ['kill' as const] : []), ...rest);
  }
  for (let n = 0; ; n++) {
    let f = drawFault(n < opening.length ? opening[n] : rng.weighted(kinds, weights));
    let calmMs = draw(rng, R.calm);
    const killsNeeded = kinds.includes('kill') ? Math.max(0, MIN_KILLS - kills) : 0;
    if (f.kind !== 'kill' && killsNeeded > 0 && cursor + f.durationMs + calmMs + killsNeeded * maxKillSlot > opts.durationMs) {
      // keep room for the kills failover certification needs
      f = drawFault('kill');
      calmMs = draw(rng, R.calm);
    }
    if (cursor + f.durationMs > opts.durationMs) break;
    const fault: PlannedFault = { ...f, atMs: cursor, calmMs };
    schedule.faults.push(fault);
    if (fault.kind === 'kill') kills++;
    cursor = beyondBudget
      ? cursor + rng.int(R.calm.lo, fault.durationMs + calmMs) // may start before this one ends
      : cursor + fault.durationMs + calmMs;
  }
  return schedule;
}

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

/** A one-word-ish label of a target, as the ledger's faults.target holds it: `leader`, `active:sync3/2`, `node:n1`, `random`. */
export function describeTarget(t: FaultTarget): string {
  switch (t.role) {
    case 'leader':
      return 'leader';
    case 'random':
      return 'random';
    case 'node':
      return `node:${t.node}`;
    case 'active':
      return `active:${t.store}/${t.partition}`;
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

function parseTarget(v: unknown, where: string): FaultTarget {
  if (!isObj(v)) bad(`${where} must be an object`);
  switch (v.role) {
    case 'leader':
    case 'random':
      onlyKeys(v, ['role'], where);
      return { role: v.role };
    case 'node':
      onlyKeys(v, ['role', 'node'], where);
      if (typeof v.node !== 'string' || v.node.length === 0) bad(`${where}.node must be a node id`);
      return { role: 'node', node: v.node };
    case 'active':
      onlyKeys(v, ['role', 'store', 'partition'], where);
      if (typeof v.store !== 'string' || v.store.length === 0) bad(`${where}.store must be a store name`);
      return { role: 'active', store: v.store, partition: int(v, 'partition', where, 0) };
    default:
      return bad(`${where}.role must be node, leader, active or random, got ${JSON.stringify(v.role)}`);
  }
}

/** Which target roles each topology accepts. */
const TOPOLOGY_TARGETS: Record<Topology, readonly FaultTarget['role'][]> = {
  isolate: ['node', 'random'],
  halves: ['random'],
  bridge: ['random'],
  leader: ['leader'],
  active: ['active'],
};

/**
 * Validates a parsed schedule object (see {@link scheduleFromJson} for the rules) and returns a
 * clean copy (no extra fields).
 * @throws ScheduleError with a one-line reason naming the first bad field.
 */
export function validateSchedule(raw: unknown): Schedule {
  if (!isObj(raw)) bad('not a JSON object');
  onlyKeys(raw, ['format', 'seed', 'durationMs', 'kinds', 'escalationTimeoutMs', 'nodeCount', 'beyondBudget', 'faults'], 'top level');
  if (raw.format !== SCHEDULE_FORMAT) bad(`format must be "${SCHEDULE_FORMAT}", got ${JSON.stringify(raw.format)}`);
  if (typeof raw.seed !== 'number' || !Number.isSafeInteger(raw.seed)) bad(`seed must be an integer, got ${JSON.stringify(raw.seed)}`);
  const durationMs = int(raw, 'durationMs', 'schedule', 1);
  const escalationTimeoutMs = int(raw, 'escalationTimeoutMs', 'schedule', 1);
  const nodeCount = int(raw, 'nodeCount', 'schedule', 1);
  if (typeof raw.beyondBudget !== 'boolean') bad('beyondBudget must be true or false');
  if (!Array.isArray(raw.kinds)) bad('kinds must be an array');
  for (const k of raw.kinds) if (!(FAULT_KINDS as readonly unknown[]).includes(k)) bad(`kinds: unknown fault kind ${JSON.stringify(k)}`);
  if (new Set(raw.kinds).size !== raw.kinds.length) bad('kinds: a kind is listed twice');
  const kinds = FAULT_KINDS.filter((k) => (raw.kinds as unknown[]).includes(k));
  if (!Array.isArray(raw.faults)) bad('faults must be an array');
  const faults: PlannedFault[] = raw.faults.map((f: unknown, i: number): PlannedFault => {
    const where = `faults[${i}]`;
    if (!isObj(f)) bad(`${where} must be an object`);
    onlyKeys(f, ['kind', 'topology', 'target', 'atMs', 'durationMs', 'calmMs'], where);
    if (!kinds.includes(f.kind as FaultKind)) bad(`${where}.kind must be one of the schedule's kinds (${kinds.join(', ') || 'none'}), got ${JSON.stringify(f.kind)}`);
    const kind = f.kind as FaultKind;
    const target = parseTarget(f.target, `${where}.target`);
    const atMs = int(f, 'atMs', where, 0);
    const dur = int(f, 'durationMs', where, 1);
    const calmMs = int(f, 'calmMs', where, 0);
    if (atMs + dur > durationMs) bad(`${where} ends at ${atMs + dur} ms, after the fault phase (${durationMs} ms)`);
    const out: PlannedFault = { kind, target, atMs, durationMs: dur, calmMs };
    if (kind === 'partition') {
      if (!(TOPOLOGIES as readonly unknown[]).includes(f.topology)) bad(`${where}.topology must be one of ${TOPOLOGIES.join(', ')}, got ${JSON.stringify(f.topology)}`);
      const topology = f.topology as Topology;
      if (!TOPOLOGY_TARGETS[topology].includes(target.role)) bad(`${where}: topology ${topology} cannot take a ${target.role} target`);
      if (nodeCount < (topology === 'halves' || topology === 'bridge' ? 3 : 2)) bad(`${where}: topology ${topology} is impossible with ${nodeCount} node(s)`);
      out.topology = topology;
    } else if (f.topology !== undefined) {
      bad(`${where}: topology is only for partition faults`);
    }
    return out;
  });
  for (let i = 1; i < faults.length; i++) {
    const prev = faults[i - 1];
    const cur = faults[i];
    if (cur.atMs < prev.atMs) bad(`faults[${i}] starts before faults[${i - 1}] (atMs must not decrease)`);
    if (!raw.beyondBudget && cur.atMs < prev.atMs + prev.durationMs + prev.calmMs) {
      bad(`faults[${i}] overlaps faults[${i - 1}] and its calm gap, which only a beyondBudget schedule allows`);
    }
  }
  return { format: SCHEDULE_FORMAT, seed: raw.seed, durationMs, kinds, escalationTimeoutMs, nodeCount, beyondBudget: raw.beyondBudget, faults };
}

/**
 * Replay: parses and validates a recorded schedule (the ledger meta `schedule`). Checks: the
 * format tag; integer ms fields (atMs >= 0, durationMs >= 1, calmMs >= 0); every fault of a kind
 * the schedule selects, ending within the phase; `topology` present exactly on partitions and
 * matching its target (leader -> leader, active -> active, halves/bridge -> random); faults in
 * start order; within budget, no fault before the previous one's end + calm gap; no unknown field.
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
