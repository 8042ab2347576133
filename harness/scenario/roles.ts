import type { FaultTarget, FaultTrigger } from '../nemesis/schedule.js';

/**
 * The small languages of a scenario step (docs/scenarios.md): who a fault hits
 * (`target`, `peer`, `to`) and what it waits for (`after`). Roles are resolved against the live
 * cluster when the step starts; `as NAME` binds the node found, which later steps reuse by NAME.
 *
 *   target := base [other than NAME {, NAME}] [as NAME]
 *   base   := leader | random | node <id> | active of <store>/<p> | replica of <store>/<p>
 *           | preferred primary of <store>/<p> | catching-up | outside | member | NAME
 *   after  := caught-up <node|NAME> | promoted <store>/<p>
 *           | handoff-started [<store>/<p>] [to <node|NAME>] | suspected <node|NAME>
 *           | step <name> ended | step <name> started
 */

/** What a scenario's roles are checked against. */
export interface RoleContext {
  /** Node ids of the cluster (n1..nN). */
  nodes: readonly string[];
  /** Store names of the scenario. */
  stores: readonly string[];
  /** Partitions per store (one per node). */
  partitions: number;
  /** Names bound by earlier steps. */
  bound: ReadonlySet<string>;
  /** Names of earlier steps -> their index. */
  steps: ReadonlyMap<string, number>;
}

/** A parsed target: the role, and the scenario's name bindings around it. */
export interface ParsedTarget {
  target: FaultTarget;
  bind?: string;
  except?: string[];
}

const NAME = /^[A-Za-z][A-Za-z0-9_-]{0,39}$/;
const NODE_ID = /^n[0-9]+$/;

/** The roles, for error messages. */
export const ROLE_HELP = 'leader, random, node <id>, active of <store>/<p>, replica of <store>/<p>, preferred primary of <store>/<p>, catching-up, outside (a node outside the member set), member (a member that may leave), or a name bound earlier with "as NAME"';
/** The events, for error messages. */
export const EVENT_HELP = 'caught-up <node>, promoted <store>/<p>, handoff-started [<store>/<p>] [to <node>], suspected <node>, step <name> ended, step <name> started';

/**
 * A `<store>/<p>` of the scenario's cluster.
 * @returns the partition, or a one-line reason.
 */
export function parsePartitionRef(text: string, ctx: RoleContext): { store: string; partition: number } | string {
  const m = /^([A-Za-z][A-Za-z0-9_-]*)\/(0|[1-9][0-9]*)$/.exec(text.trim());
  if (!m) return `"${text}" is not <store>/<partition>`;
  if (!ctx.stores.includes(m[1])) return `unknown store "${m[1]}" (stores: ${ctx.stores.join(', ')})`;
  const p = Number(m[2]);
  if (p >= ctx.partitions) return `${m[1]} has partitions 0..${ctx.partitions - 1} in a ${ctx.nodes.length}-node cluster, not ${p}`;
  return { store: m[1], partition: p };
}

/** A node id of the cluster, or a bound name. @returns `{node}` / `{name}`, or a one-line reason. */
export function parseNodeRef(text: string, ctx: RoleContext): { node: string } | { name: string } | string {
  const t = text.trim();
  if (NODE_ID.test(t)) return ctx.nodes.includes(t) ? { node: t } : `node ${t} is not in a ${ctx.nodes.length}-node cluster (${ctx.nodes[0]}..${ctx.nodes[ctx.nodes.length - 1]})`;
  if (!NAME.test(t)) return `"${t}" is neither a node id nor a name`;
  return ctx.bound.has(t) ? { name: t } : `"${t}" is not bound by an earlier step (bind a node with "as ${t}")`;
}

/**
 * Parses a target. @returns the target, or a one-line reason (unknown role, unknown store,
 * partition or node, a name not bound by an earlier step, a bad `as` name).
 */
export function parseTarget(text: string, ctx: RoleContext): ParsedTarget | string {
  let rest = text.trim().replace(/\s+/g, ' ');
  const out: { bind?: string; except?: string[] } = {};
  const as = / as ([^ ]+)$/.exec(rest);
  if (as) {
    if (!NAME.test(as[1]) || NODE_ID.test(as[1])) return `"as ${as[1]}": a name is a letter, then letters, digits, _ or - (and not a node id)`;
    if (ctx.bound.has(as[1])) return `"as ${as[1]}": ${as[1]} is already bound by an earlier step`;
    out.bind = as[1];
    rest = rest.slice(0, as.index);
  }
  const other = / other than (.+)$/.exec(rest);
  if (other) {
    const names = other[1].split(/ *, *| and /).map((s) => s.trim()).filter((s) => s.length > 0);
    for (const n of names) {
      const r = parseNodeRef(n, ctx);
      if (typeof r === 'string') return r;
      if ('node' in r) return `"other than ${n}": name a node bound earlier with "as", not a node id`;
    }
    out.except = names;
    rest = rest.slice(0, other.index);
  }
  const words = rest.split(' ');
  const partOf = (w: string): { store: string; partition: number } | string => parsePartitionRef(w, ctx);
  let target: FaultTarget;
  if (rest === 'leader' || rest === 'random' || rest === 'catching-up' || rest === 'outside' || rest === 'member') target = { role: rest };
  else if (words[0] === 'node' && words.length === 2) {
    const r = parseNodeRef(words[1], ctx);
    if (typeof r === 'string') return r;
    if (!('node' in r)) return `"node ${words[1]}": give a node id (n1..n${ctx.nodes.length})`;
    target = { role: 'node', node: r.node };
  } else if ((words[0] === 'active' || words[0] === 'replica') && words[1] === 'of' && words.length === 3) {
    const p = partOf(words[2]);
    if (typeof p === 'string') return p;
    target = { role: words[0], ...p };
  } else if (words[0] === 'preferred' && words[1] === 'primary' && words[2] === 'of' && words.length === 4) {
    const p = partOf(words[3]);
    if (typeof p === 'string') return p;
    target = { role: 'preferred', ...p };
  } else if (words.length === 1 && NAME.test(words[0]) && !NODE_ID.test(words[0])) {
    if (!ctx.bound.has(words[0])) return `unknown role "${words[0]}": not a role, nor a name bound by an earlier step (roles: ${ROLE_HELP})`;
    target = { role: 'bound', name: words[0] };
  } else {
    return `unknown role "${rest}" (roles: ${ROLE_HELP})`;
  }
  return { target, ...out };
}

/**
 * Parses an `after` event into a trigger (delay, wait and onMiss are the caller's).
 * @returns the trigger, or a one-line reason (unknown event, a step not written before this one,
 * an unknown node, partition or name).
 */
export function parseAfter(text: string, ctx: RoleContext): Omit<FaultTrigger, 'delayMs' | 'waitMs'> | string {
  const words = text.trim().split(/\s+/);
  const [ev] = words;
  const nodeArg = (w: string | undefined): { node: string } | { name: string } | string => (w === undefined ? `"${ev}" needs a node` : parseNodeRef(w, ctx));
  switch (ev) {
    case 'caught-up':
    case 'suspected': {
      if (words.length !== 2) return `usage: ${ev} <node or name>`;
      const r = nodeArg(words[1]);
      if (typeof r === 'string') return r;
      return { event: ev === 'caught-up' ? 'node-caught-up' : 'suspected', ...r };
    }
    case 'promoted': {
      if (words.length !== 2) return 'usage: promoted <store>/<partition>';
      const p = parsePartitionRef(words[1], ctx);
      return typeof p === 'string' ? p : { event: 'promoted', ...p };
    }
    case 'handoff-started': {
      const t: Omit<FaultTrigger, 'delayMs' | 'waitMs'> = { event: 'handoff-started' };
      let i = 1;
      if (words[i] !== undefined && words[i] !== 'to') {
        const p = parsePartitionRef(words[i], ctx);
        if (typeof p === 'string') return p;
        Object.assign(t, p);
        i++;
      }
      if (words[i] === 'to') {
        const r = nodeArg(words[i + 1]);
        if (typeof r === 'string') return r;
        Object.assign(t, r);
        i += 2;
      }
      if (i !== words.length) return 'usage: handoff-started [<store>/<partition>] [to <node or name>]';
      return t;
    }
    case 'step': {
      if (words.length !== 3 || (words[2] !== 'ended' && words[2] !== 'started')) return 'usage: step <name> ended | step <name> started';
      const i = ctx.steps.get(words[1]);
      if (i === undefined) return `no step "${words[1]}" before this one (a step can wait only for one written above it)`;
      return { event: words[2] === 'ended' ? 'ended' : 'started', fault: i };
    }
    default:
      return `unknown event "${text.trim()}" (events: ${EVENT_HELP})`;
  }
}
