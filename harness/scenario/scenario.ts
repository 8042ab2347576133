import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import ms from 'ms';
import { parseDocument } from 'yaml';
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { SelfTestBug, StoreConfig } from '../../nodes/cluster-config.js';
import { DEFAULT_TIMING } from '../../nodes/cluster-config.js';
import { UsageError } from '../usage-error.js';
import { ALL_FAULT_KINDS, canonicalJson, isMembershipKind, SCHEDULE_FORMAT, type FaultKind, type FaultTarget, type FaultTrigger, type PlannedFault, type Schedule } from '../nemesis/schedule.js';
import { parseAfter, parsePartitionRef, parseTarget, type ParsedTarget, type RoleContext } from './roles.js';
import { ALLOWED_CLASSES, SCENARIO_SCHEMA, VERDICTS } from './scenario-schema.js';

/**
 * Scenarios (DESIGN.md §3 "Scenarios", issue 13): a fault schedule a person writes, as YAML,
 * checked against {@link SCENARIO_SCHEMA} (ajv) and then against the cluster it names, and
 * compiled into a zaris-schedule/2 that the nemesis executor plays like any other (so a scenario
 * run replays with REPLAY= like any run). Every mistake is ONE line naming the step and the field
 * (`scenario x.yaml: step "cut-a" (#2), duration: ...`), and nothing is started.
 */

/** The stores a scenario may name by name (harness/certify/options.ts DEFAULT_STORES). */
const NAMED_STORES: Record<string, StoreConfig> = {
  sync3: { name: 'sync3', replicationFactor: 3, ackMode: 'sync', segments: 64 },
  async3: { name: 'async3', replicationFactor: 3, ackMode: 'async', segments: 64 },
  rf1: { name: 'rf1', replicationFactor: 1, ackMode: 'sync', segments: 64 },
};

/** A verdict a scenario expects. */
export type ExpectedVerdict = (typeof VERDICTS)[number];
/** An allowed-loss class (history-format.md v2). */
export type AllowedClass = (typeof ALLOWED_CLASSES)[number];

/**
 * What a scenario expects: a verdict, and (when `allow` is given) the only allowed-loss classes
 * that may have findings; without `allow`, any the contract allows.
 */
export interface Expectation {
  verdict: ExpectedVerdict;
  allow?: AllowedClass[];
}

/** A parsed, checked scenario. Times in ms. */
export interface Scenario {
  name: string;
  /** The file it came from ('' when parsed from text). */
  file: string;
  nodes: 3 | 5;
  /**
   * Spare nodes started beside the cluster (issue 14): n<nodes+1>..; outside the member set at
   * start, for join / leave steps. Default 1 when the scenario has membership steps, else 0.
   */
  spares: number;
  stores: StoreConfig[];
  expect: Expectation;
  seed?: number;
  escalationTimeoutMs: number;
  evictionTimeoutMs: number;
  beyondBudget: boolean;
  bug?: SelfTestBug;
  /** The fault phase ends this long after the last step ended. */
  tailMs: number;
  /** The longest the fault phase may last (steps still waiting then are skipped). */
  maxDurationMs: number;
  /** The compiled faults, one per step, in file order. */
  faults: PlannedFault[];
  /** The YAML source (recorded in the ledger). */
  source: string;
}

/** A scenario mistake: one line naming the file, the step and the field; exit 64. */
export class ScenarioError extends UsageError {
  override name = 'ScenarioError';
}

/** Default `tail`: the phase goes on this long after the last step ended (recovery seen, reads checked). */
export const DEFAULT_TAIL_MS = 10_000;
/** Default `wait`: how long a step waits for its `after` event before it is skipped. */
export const DEFAULT_WAIT_MS = 60_000;

let validator: ValidateFunction | null = null;
function validate(doc: unknown): ErrorObject | null {
  if (!validator) {
    // ajv is CommonJS; its 2020-12 class validates the schema's $schema
    const require = createRequire(import.meta.url);
    const Ajv2020 = (require('ajv/dist/2020') as { default: new (o: object) => { compile(s: object): ValidateFunction } }).default;
    validator = new Ajv2020({ allErrors: false, strict: true }).compile(SCENARIO_SCHEMA);
  }
  return validator(doc) ? null : (validator.errors?.[0] ?? null);
}

function durationOf(text: string): number {
  const sign = text.startsWith('-') ? -1 : 1;
  const v = ms(text.replace(/^[+-]/, '') as ms.StringValue);
  return sign * Math.round(v);
}

type Obj = Record<string, unknown>;

/** Where an error is: `step "x" (#2), field` or `field`. */
function whereOf(doc: Obj, pathParts: string[]): string {
  if (pathParts[0] === 'steps' && pathParts.length >= 2 && /^\d+$/.test(pathParts[1])) {
    const i = Number(pathParts[1]);
    const step = Array.isArray(doc.steps) ? (doc.steps[i] as Obj | undefined) : undefined;
    const name = step && typeof step.name === 'string' ? `"${step.name}" ` : '';
    const field = pathParts.slice(2).join('.');
    return `step ${name}(#${i + 1})${field ? `, ${field}` : ''}`;
  }
  return pathParts.join('.') || 'the file';
}

/** One line for an ajv error, naming the step and field. */
function schemaMessage(doc: Obj, e: ErrorObject): string {
  const parts = e.instancePath.split('/').slice(1);
  const value = parts.reduce<unknown>((v, k) => (v && typeof v === 'object' ? (v as Obj)[k] : undefined), doc);
  const shown = JSON.stringify(value);
  const field = parts[parts.length - 1] ?? '';
  if (parts.length === 1 && parts[0] === 'expect' && e.keyword !== 'additionalProperties') {
    return `expect: must be CERTIFIED, FAILED, INCONCLUSIVE, or { verdict, allow: [rf1, async-ack, beyond-budget] }, got ${shown}`;
  }
  switch (e.keyword) {
    case 'additionalProperties':
      return `${whereOf(doc, parts)}: unknown field "${(e.params as { additionalProperty: string }).additionalProperty}"`;
    case 'required':
      return `${whereOf(doc, [...parts, (e.params as { missingProperty: string }).missingProperty])}: missing`;
    case 'pattern': {
      if (['at', 'delay', 'wait', 'duration', 'escalation', 'eviction', 'tail', 'on', 'off'].includes(field)) return `${whereOf(doc, parts)}: must be a duration of zero or more, such as 500ms, 12s or 2m, got ${shown}`;
      if (field === 'jump') return `${whereOf(doc, parts)}: must be a signed duration such as -30s or +30s, got ${shown}`;
      if (field === 'partition') return `${whereOf(doc, parts)}: must be <store>/<partition> such as sync3/0, got ${shown}`;
      return `${whereOf(doc, parts)}: must be a name (a letter, then letters, digits, _ or -), got ${shown}`;
    }
    case 'enum':
      return `${whereOf(doc, parts)}: must be one of ${((e.params as { allowedValues: unknown[] }).allowedValues ?? []).map((v) => JSON.stringify(v)).join(', ')}, got ${shown}`;
    case 'oneOf':
      if (field === 'expect') return `${whereOf(doc, parts)}: must be CERTIFIED, FAILED, INCONCLUSIVE, or { verdict, allow: [rf1, async-ack, beyond-budget] }, got ${shown}`;
      return `${whereOf(doc, parts)}: must be a store name (sync3, async3, rf1) or { name, replicationFactor, ackMode }, got ${shown}`;
    default:
      return `${whereOf(doc, parts)}: ${e.message ?? 'invalid'}${value !== undefined && typeof value !== 'object' ? `, got ${shown}` : ''}`;
  }
}

/**
 * Parses and checks a scenario (YAML text) and compiles its steps.
 * @param file shown in errors (and the default name: the file's base name).
 * @throws ScenarioError (one line: the file, the step and the field) for YAML that does not
 * parse, a shape the schema refuses, an unknown role or event, a step waiting on a step not
 * written before it, a node beyond the cluster, a field that does not fit the fault.
 */
export function parseScenario(text: string, file = ''): Scenario {
  const label = `scenario ${file || '(text)'}`;
  const fail = (msg: string): never => {
    throw new ScenarioError(`${label}: ${msg}`);
  };
  const ydoc = parseDocument(text, { prettyErrors: false, uniqueKeys: true });
  if (ydoc.errors.length > 0) fail(`not valid YAML: ${ydoc.errors[0].message.split('\n')[0]}`);
  let doc: unknown;
  try {
    doc = ydoc.toJS({ maxAliasCount: 100 }) as unknown;
  } catch (e) {
    return fail(`not valid YAML: ${(e as Error).message.split('\n')[0]}`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return fail('must be a YAML mapping (nodes, expect, steps, ...)');
  const err = validate(doc);
  if (err) fail(schemaMessage(doc as Obj, err));
  const d = doc as Obj;
  const nodes = d.nodes as 3 | 5;
  const stepsRaw = d.steps as Obj[];
  const spares = typeof d.spares === 'number' ? d.spares : stepsRaw.some((st) => isMembershipKind(String(st.fault))) ? 1 : 0;
  // the spares are nodes too: steps name them (join n4), and faults may hit them
  const nodeIds = Array.from({ length: nodes + spares }, (_, i) => `n${i + 1}`);
  const stores: StoreConfig[] = ((d.stores as unknown[] | undefined) ?? ['sync3', 'async3', 'rf1']).map((s) => (typeof s === 'string' ? { ...NAMED_STORES[s] } : { ...(s as Omit<StoreConfig, 'segments'>), segments: 64 }));
  if (new Set(stores.map((s) => s.name)).size !== stores.length) fail('stores: a store is named twice');
  for (const s of stores) if (s.replicationFactor > nodes) fail(`stores: ${s.name} has replication factor ${s.replicationFactor}, above the ${nodes} nodes`);
  const expect: Expectation = typeof d.expect === 'string' ? { verdict: d.expect as ExpectedVerdict } : { ...(d.expect as Expectation) };
  const beyondBudget = d['beyond-budget'] === true;
  const steps = d.steps as Obj[];
  const ctx: { bound: Set<string>; steps: Map<string, number> } = { bound: new Set(), steps: new Map() };
  const roleCtx = (): RoleContext => ({ nodes: nodeIds, stores: stores.map((s) => s.name), partitions: nodes, bound: ctx.bound, steps: ctx.steps });
  const faults: PlannedFault[] = [];
  const names = new Set<string>();
  for (let i = 0; i < steps.length; i++) {
    const st = steps[i];
    const at = (field: string): string => whereOf(d, ['steps', String(i), field]);
    const kind = st.fault as FaultKind;
    const name = typeof st.name === 'string' ? st.name : `step${i + 1}`;
    if (names.has(name)) fail(`${at('name')}: the name "${name}" is used by an earlier step`);
    names.add(name);
    const only = (field: string, ok: boolean, what: string): void => {
      if (st[field] !== undefined && !ok) fail(`${at(field)}: only for ${what}`);
    };
    const membership = isMembershipKind(kind);
    const admin = kind === 'handoff' || kind === 'regenerate';
    only('topology', kind === 'partition', 'partition faults');
    only('flap', kind === 'partition', 'partition faults');
    only('direction', kind === 'partition' && st.topology === 'one-way', 'one-way partitions');
    only('peer', kind === 'partition' && st.topology === 'one-way', 'one-way partitions');
    only('clock', kind === 'clock', 'clock faults');
    only('count', kind === 'power', 'power faults');
    only('partition', admin, 'handoff and regenerate');
    only('to', kind === 'handoff', 'handoff');
    only('target', kind !== 'regenerate' && kind !== 'handoff' && kind !== 'rebalance', 'faults on a node (a handoff names its node with "to", a regeneration or rebalance none)');
    only('duration', !admin && !membership, 'faults that last (a handoff, regeneration, join, leave or rebalance is one request)');
    only('delay', st.after !== undefined, 'steps with "after"');
    only('wait', st.after !== undefined, 'steps with "after"');
    const durationMs = admin || membership ? 0 : st.duration === undefined ? fail(`${at('duration')}: missing (how long the fault lasts, e.g. 12s)`) : durationOf(st.duration as string);
    if (!admin && !membership && durationMs < 1) fail(`${at('duration')}: must be above zero, got ${JSON.stringify(st.duration)}`);
    const parseT = (field: string, text: unknown): ParsedTarget => {
      if (typeof text !== 'string') return fail(`${at(field)}: missing (who the fault hits, e.g. "active of sync3/0 as A")`);
      const r = parseTarget(text, roleCtx());
      return typeof r === 'string' ? fail(`${at(field)}: ${r}`) : r;
    };
    const f: PlannedFault = { kind, target: { role: 'random' }, atMs: st.at === undefined ? 0 : durationOf(st.at as string), durationMs, name };
    let main: ParsedTarget | null = null;
    if (kind === 'rebalance') {
      f.target = { role: 'leader' };
    } else if (membership) {
      // join / leave: a node (node n4, outside, member, a bound name, any role)
      main = parseT('target', st.target);
    } else if (admin) {
      if (st.partition === undefined) fail(`${at('partition')}: missing (which partition, e.g. sync3/0)`);
      const p = parsePartitionRef(st.partition as string, roleCtx());
      if (typeof p === 'string') fail(`${at('partition')}: ${p}`);
      const part = p as { store: string; partition: number };
      const rf = stores.find((s) => s.name === part.store)!.replicationFactor;
      if (rf < 2) fail(`${at('partition')}: ${part.store} has one copy: nothing to hand off or keep`);
      f.admin = part;
      if (kind === 'handoff') main = parseT('to', st.to);
      else f.target = { role: 'active', ...part };
    } else if (!(kind === 'partition' && (st.topology === 'halves' || st.topology === 'bridge') && st.target === undefined)) {
      main = parseT('target', st.target);
    }
    if (main) {
      f.target = main.target;
      if (main.except) f.except = main.except;
    }
    if (kind === 'partition') {
      f.topology = (st.topology as PlannedFault['topology']) ?? 'isolate';
      if (f.topology === 'bridge' && st.target !== undefined) fail(`${at('target')}: a bridge splits the nodes at random: no target`);
      if (f.topology === 'one-way') {
        f.direction = (st.direction as 'in' | 'out' | undefined) ?? 'in';
        if (st.peer !== undefined) {
          const p = parseT('peer', st.peer);
          f.peer = { target: p.target, ...(p.bind ? { bind: p.bind } : {}), ...(p.except ? { except: p.except } : {}) };
        }
      }
      if (st.flap !== undefined) {
        const fl = st.flap as { on: string; off: string };
        f.flap = { onMs: durationOf(fl.on), offMs: durationOf(fl.off) };
        if (f.flap.onMs < 100 || f.flap.offMs < 100) fail(`${at('flap')}: on and off must be at least 100ms each`);
      }
    }
    if (kind === 'clock') {
      const c = st.clock as { jump?: string; rate?: number } | undefined;
      if (!c) fail(`${at('clock')}: missing ({ jump: -30s } for a wall-clock step, or { rate: 0.5 } for clocks running slow or fast)`);
      if (c!.jump !== undefined) {
        const j = durationOf(c!.jump);
        if (j === 0 || j % 1000 !== 0 || Math.abs(j) > 86_400_000) fail(`${at('clock.jump')}: must be whole seconds, not zero, within a day, got ${JSON.stringify(c!.jump)}`);
        f.clock = { rate: 1, jumpMs: j };
      } else {
        if (c!.rate === 1) fail(`${at('clock.rate')}: 1 is no clock fault (use 0.25..4, not 1)`);
        f.clock = { rate: c!.rate!, jumpMs: 0 };
      }
    }
    if (kind === 'power') {
      f.count = (st.count as number | undefined) ?? nodes;
      if (f.count > nodes) fail(`${at('count')}: a power failure of ${f.count} nodes in a ${nodes}-node cluster`);
      const keep = Math.floor(nodes / 2) + 1;
      if (!beyondBudget && nodes - f.count < keep) fail(`${at('count')}: a power failure of ${f.count} of ${nodes} nodes leaves no majority up, beyond the fault budget: set "beyond-budget: true" (or count: ${nodes - keep})`);
    }
    if (st.after !== undefined) {
      const r = parseAfter(st.after as string, roleCtx());
      if (typeof r === 'string') fail(`${at('after')}: ${r}`);
      const trig: FaultTrigger = { ...(r as Omit<FaultTrigger, 'delayMs' | 'waitMs'>), delayMs: st.delay === undefined ? 0 : durationOf(st.delay as string), waitMs: st.wait === undefined ? DEFAULT_WAIT_MS : durationOf(st.wait as string), onMiss: 'skip' };
      f.after = trig;
    }
    // names bound by this step are known from the next step on
    if (main?.bind) {
      f.bind = main.bind;
      ctx.bound.add(main.bind);
    }
    if (f.peer?.bind) ctx.bound.add(f.peer.bind);
    ctx.steps.set(name, i);
    faults.push(f);
  }
  const kinds = new Set(faults.map((f) => f.kind));
  if (kinds.has('partition') || kinds.has('client-cut')) {
    // (checked at start too: CAP_NET_ADMIN on the process runtime)
  }
  const escalationTimeoutMs = d.escalation === undefined ? DEFAULT_TIMING.escalationTimeoutMs : durationOf(d.escalation as string);
  const evictionTimeoutMs = d.eviction === undefined ? DEFAULT_TIMING.evictionTimeoutMs : durationOf(d.eviction as string);
  if (escalationTimeoutMs < 1_000) fail(`escalation: must be at least 1s, got ${JSON.stringify(d.escalation)}`);
  if (evictionTimeoutMs <= escalationTimeoutMs) fail(`eviction: must be longer than the escalation timeout (${escalationTimeoutMs} ms), got ${JSON.stringify(d.eviction ?? '60s')}`);
  const tailMs = d.tail === undefined ? DEFAULT_TAIL_MS : durationOf(d.tail as string);
  const estimate = estimateEnd(faults, escalationTimeoutMs);
  const maxDurationMs = d.duration === undefined ? estimate + 90_000 : durationOf(d.duration as string);
  if (maxDurationMs < 1_000) fail(`duration: must be at least 1s, got ${JSON.stringify(d.duration)}`);
  for (let i = 0; i < faults.length; i++) {
    const f = faults[i];
    if (f.atMs + f.durationMs > maxDurationMs) fail(`${whereOf(d, ['steps', String(i), 'at'])}: the step would end at ${f.atMs + f.durationMs} ms, after the scenario's duration (${maxDurationMs} ms)`);
  }
  const base = path.basename(file).replace(/\.ya?ml$/, '');
  return {
    name: typeof d.name === 'string' ? d.name : base || 'scenario',
    file,
    nodes,
    spares,
    stores,
    expect,
    ...(typeof d.seed === 'number' ? { seed: d.seed } : {}),
    escalationTimeoutMs,
    evictionTimeoutMs,
    beyondBudget,
    ...(d.bug !== undefined ? { bug: d.bug as SelfTestBug } : {}),
    tailMs,
    maxDurationMs,
    faults,
    source: text,
  };
}

/**
 * A rough planned end of the steps, ms (the default cap is this plus 90 s; the phase really ends
 * when every step ended plus the tail): a step waiting on another starts at the other's start or
 * end, on any other event 20 s after its `at` (a failover takes the escalation timeout).
 */
export function estimateEnd(faults: readonly PlannedFault[], escalationTimeoutMs: number): number {
  const start: number[] = [];
  const end: number[] = [];
  for (let i = 0; i < faults.length; i++) {
    const f = faults[i];
    let s = f.atMs;
    const t = f.after;
    if (t) {
      if (t.event === 'ended' && t.fault !== undefined) s = Math.max(s, end[t.fault]);
      else if (t.event === 'started' && t.fault !== undefined) s = Math.max(s, start[t.fault]);
      else s = Math.max(s, ...start, f.atMs) + escalationTimeoutMs + 10_000;
      s += t.delayMs;
    }
    start.push(s);
    end.push(s + f.durationMs);
  }
  return Math.max(0, ...end);
}

/**
 * Reads and parses a scenario file.
 * @throws ScenarioError when the file cannot be read or the scenario is wrong (one line).
 */
export function loadScenario(file: string): Scenario {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new ScenarioError(`SCENARIO=${file}: cannot read it (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  return parseScenario(text, file);
}

/**
 * The scenario as a zaris-schedule/2 for the nemesis executor (stored in the ledger and replayed
 * like any schedule). `seed`: the scenario's own, else the run's.
 */
export function compileScenario(sc: Scenario, seed: number): Schedule {
  const kinds = ALL_FAULT_KINDS.filter((k) => sc.faults.some((f) => f.kind === k));
  return {
    format: SCHEDULE_FORMAT,
    seed: sc.seed ?? seed,
    durationMs: sc.maxDurationMs,
    kinds,
    preset: 'random',
    escalationTimeoutMs: sc.escalationTimeoutMs,
    evictionTimeoutMs: sc.evictionTimeoutMs,
    nodeCount: sc.nodes,
    beyondBudget: sc.beyondBudget,
    faults: sc.faults.map((f) => JSON.parse(canonicalJson(f)) as PlannedFault),
    scenario: sc.name,
    tailMs: sc.tailMs,
  };
}

/** What a run records about its scenario (ledger meta `scenario`, JSON). */
export interface ScenarioRecord {
  name: string;
  file: string;
  expect: Expectation;
  /** The step names, by schedule index. */
  steps: string[];
  /** The YAML source. */
  source: string;
}

/** The record of a scenario for the ledger. */
export function scenarioRecord(sc: Scenario): ScenarioRecord {
  return { name: sc.name, file: sc.file, expect: sc.expect, steps: sc.faults.map((f) => f.name ?? ''), source: sc.source };
}

/** One phrase for an expectation: `CERTIFIED`, `CERTIFIED (allow async-ack)`, `CERTIFIED (no allowed losses)`. */
export function describeExpectation(e: Expectation): string {
  if (e.allow === undefined) return e.verdict;
  return e.allow.length === 0 ? `${e.verdict} (no allowed losses)` : `${e.verdict} (allow ${e.allow.join(', ')})`;
}

/** Re-exported for targets in tests. */
export type { FaultTarget };
