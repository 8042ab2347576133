/**
 * A stored or hand-written schedule read back (replay, scenarios): every field checked, v1 upgraded
 * to v2, a clear ScheduleError on the first thing wrong.
 */
import { TOPOLOGIES, type Topology } from './grudge.js';
import { PRESET_NAMES, type PresetName } from './presets.js';
import { ADMIN_KINDS, ALL_FAULT_KINDS, CRASH_KINDS, type FaultKind, type FaultTarget, type FaultTrigger, type PlannedFault, SCHEDULE_FORMAT, SCHEDULE_FORMAT_V1, type Schedule, ScheduleError, TARGET_ROLES, TRIGGER_EVENTS, type TriggerEvent, isMembershipKind } from './schedule-types.js';

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
      if (event !== 'promoted' && event !== 'handoff-started' && event !== 'node-caught-up') bad(`${w}: store and partition are only for promoted, handoff-started and node-caught-up`);
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
