import { KvStatus } from './kv-status.js';
import { sameMember, type Health, type Member, type RuntimeEntry } from './cluster-messages.js';
import { parseRetryRangeTable } from './multikey/retry-range-table.js';

/**
 * The store's admin request (DESIGN.md §2 "Operator surface"; issue 13: an ownership change on
 * demand). A client sends one line of text in an `Op.Admin` request; the LEADER answers it, any
 * other node refuses with `Moved` and names the leader it knows, so the caller asks again there.
 *
 * Commands:
 * - `handoff <store>/<partition> to <node>`: the leader starts a handoff of the partition's
 *   ownership to `<node>`, exactly as a failback does (seed 002: the active drains, answers
 *   OwnershipChanging, and the leader commits the new active only once `<node>` holds everything;
 *   if it cannot, the handoff is cancelled and the current active keeps ownership). `<node>` must
 *   be a live in-sync member other than the active.
 * - `regenerate <store>/<partition>`: a planned regeneration of the partition's map (seed 002): a
 *   new map version, the replicas re-derived from the live nodes (the assigned ones first, in
 *   order, then others), a new tenure of the same active owner; in-sync members that stay keep
 *   their copies (`keepCopies`), every other replica starts empty and catches up.
 * - `set-policy <store> <json-string>`: sets the store's multi-key retry policy (seed 004's range
 *   table, e.g. `set-policy sync3 "1-12:8,13-:50"`; `""` withdraws the server policy) on a running
 *   cluster. The value is validated by seed 004's rules (an invalid one is refused with
 *   InvalidInput and one line from the table parser; the node counts it); the leader proposes, for
 *   every partition of the store, the committed entry with `policy` = {text, version max+1} (no
 *   new tenure: ownership is untouched). All partitions or none: when any of them has a change
 *   in flight or no committed entry, nothing is proposed (Unavailable). Clients see the new policy
 *   on their next metadata refresh (seed 004: no propagation SLA).
 *
 * - `join <node>`, `leave <node>`, `rebalance` (issue 14, membership; core/membership-role.ts):
 *   `join` proposes the node (one the cluster config names: a spare, or a node that left) into
 *   the member set as joining; the leader then plans the partition map over the members and moves
 *   copies onto it (core/migration-driver.ts: add the copy, wait until in sync, a fenced handoff
 *   answered Migrating, drop the copy left out) and admits it once the plan is carried out.
 *   `leave` starts draining a member (its copies move away; it is removed once no partition lists
 *   it); refused when fewer members than a store's replication factor would hold copies.
 *   `rebalance` plans the map again over the current members. One membership change at a time.
 *
 * Answers: `Ok` when the change was proposed (`epoch` names the proposal's epoch; the change takes
 * effect once a majority accepted it: watch the runtime map); `Moved` on a node that is not the
 * leader; `InvalidInput` for a command that does not parse or names an unknown store, partition
 * or node; `Unavailable` when the partition cannot take the change now (no active, Recovering, the
 * node not in sync, a handoff under way, another change of the partition in flight) — the caller
 * may ask again later.
 */

/** A parsed admin command. */
export type AdminCommand =
  | { cmd: 'handoff'; store: string; partition: number; to: string }
  | { cmd: 'regenerate'; store: string; partition: number }
  | { cmd: 'set-policy'; store: string; policy: string }
  | { cmd: 'join'; node: string }
  | { cmd: 'leave'; node: string }
  | { cmd: 'rebalance' };

/** The JSON answer of an admin request (`Op.Admin` response body). */
export interface AdminAnswer {
  /** The change was proposed. */
  ok: boolean;
  /** The node that answered. */
  node: string;
  /** The leader that node knows (null: none known). */
  leader: string | null;
  /** One line: what was done, or why not. */
  message: string;
  /** The proposed entry's epoch (ok only). */
  epoch?: number;
}

/** What the admin handler needs from the node (NodeCore implements it; no other coupling). */
export interface AdminContext {
  readonly node: string;
  readonly isLeader: boolean;
  readonly leader: string | null;
  /** Store name -> replication factor, for every store of the cluster. */
  readonly stores: ReadonlyMap<string, number>;
  /** The nodes that may hold copies (members and joiners of the member set), in set order. */
  readonly nodes: readonly string[];
  /**
   * Membership (core/membership-role.ts), on the leader: each returns the proposed member set
   * (its version) or a one-line refusal; rebalance only asks for a new plan.
   */
  readonly membership?: {
    join(node: string): { version: number } | string;
    leave(node: string): { version: number } | string;
    rebalance(): void;
  };
  /** Every partition key (`store/partition`) of a store, in partition order. */
  partitionsOf(store: string): string[];
  /** The committed entry of `store/partition`, or undefined (unknown partition or none yet). */
  committed(pkey: string): RuntimeEntry | undefined;
  /** Is a proposal for the partition in flight (one change at a time). */
  inflight(pkey: string): boolean;
  /** The member live now (its current incarnation, answering, not confirmed down), or null. */
  liveMember(node: string): Member | null;
  /** Proposes a change of the partition at its next epoch (new tenure: the active's tenure starts again); returns that epoch, or null when not proposed. */
  propose(entry: RuntimeEntry, newTenure: boolean): number | null;
}

/** The first word of every known command (for error messages). */
export const ADMIN_COMMANDS = ['handoff', 'regenerate', 'set-policy', 'join', 'leave', 'rebalance'] as const;

/** The admin command line of a set-policy request (the value as a JSON string literal). */
export function setPolicyCommand(store: string, policy: string): string {
  return `set-policy ${store} ${JSON.stringify(policy)}`;
}

/**
 * Parses one admin command line (words separated by spaces; case-sensitive names).
 * @returns the command, or a one-line reason why it does not parse.
 */
export function parseAdminCommand(text: string): AdminCommand | string {
  const words = text.trim().split(/\s+/);
  const part = (s: string | undefined): { store: string; partition: number } | null => {
    const m = /^([A-Za-z0-9_.-]+)\/(0|[1-9]\d{0,5})$/.exec(s ?? '');
    return m ? { store: m[1], partition: Number(m[2]) } : null;
  };
  switch (words[0]) {
    case 'handoff': {
      const p = part(words[1]);
      if (!p || words[2] !== 'to' || words.length !== 4 || !/^[A-Za-z0-9_.-]+$/.test(words[3])) return 'usage: handoff <store>/<partition> to <node>';
      return { cmd: 'handoff', ...p, to: words[3] };
    }
    case 'regenerate': {
      const p = part(words[1]);
      if (!p || words.length !== 2) return 'usage: regenerate <store>/<partition>';
      return { cmd: 'regenerate', ...p };
    }
    case 'set-policy': {
      const m = /^set-policy\s+([A-Za-z0-9_.-]+)\s+("(?:[^"\\]|\\.)*")$/.exec(text.trim());
      const usage = 'usage: set-policy <store> "<lower-upper:ms,...,lower-:ms>" (a JSON string; "" withdraws the policy)';
      if (!m) return usage;
      let policy: unknown;
      try {
        policy = JSON.parse(m[2]);
      } catch {
        return usage;
      }
      return typeof policy === 'string' ? { cmd: 'set-policy', store: m[1], policy } : usage;
    }
    case 'join':
    case 'leave':
      if (words.length !== 2 || !/^[A-Za-z0-9_-]{1,32}$/.test(words[1])) return `usage: ${words[0]} <node>`;
      return words[0] === 'join' ? { cmd: 'join', node: words[1] } : { cmd: 'leave', node: words[1] };
    case 'rebalance':
      if (words.length !== 1) return 'usage: rebalance';
      return { cmd: 'rebalance' };
    default:
      return `unknown admin command "${words[0] ?? ''}" (known: ${ADMIN_COMMANDS.join(', ')})`;
  }
}

/**
 * The new entry of a planned regeneration of `e` (see the module doc), or a one-line refusal.
 * Replicas: the live nodes among `e.replicas`, in order, then other live nodes in config order, up
 * to `rf`; the active stays (it must be live); in-sync members outside the new replicas leave the
 * in-sync set; Healthy only when every new replica is in sync, else Degraded.
 */
export function planRegeneration(e: RuntimeEntry, rf: number, nodes: readonly string[], live: (node: string) => Member | null): RuntimeEntry | string {
  if (!e.active) return `${e.pkey} has no active owner`;
  if (e.health !== 'Healthy' && e.health !== 'Degraded') return `${e.pkey} is ${e.health}`;
  if (e.handoffTo) return `${e.pkey} has a handoff under way`;
  if (!sameMember(live(e.active.node), e.active)) return `${e.pkey}'s active ${e.active.node} is not live`;
  const order = [...e.replicas, ...nodes.filter((n) => !e.replicas.includes(n))];
  const replicas = order.filter((n) => live(n) !== null).slice(0, rf);
  if (!replicas.includes(e.active.node)) replicas[replicas.length - 1] = e.active.node;
  const inSync = e.inSync.filter((m) => replicas.includes(m.node));
  const health: Health = replicas.every((n) => inSync.some((m) => m.node === n)) && e.health === 'Healthy' ? 'Healthy' : 'Degraded';
  return { ...e, replicas, inSync, health, handoffTo: null, syncFrom: null, mapVersion: e.mapVersion + 1, keepCopies: true };
}

/** The status and JSON answer of one admin request; `invalidPolicy` when a set-policy value broke seed 004's rules. */
export interface AdminResult {
  status: KvStatus;
  answer: AdminAnswer;
  invalidPolicy?: boolean;
}

/** set-policy on the leader (see the module doc): validate, then propose every partition of the store or none. */
function setPolicy(ctx: AdminContext, store: string, text: string, answer: (status: KvStatus, ok: boolean, message: string, epoch?: number) => AdminResult): AdminResult {
  const parsed = parseRetryRangeTable(text);
  if (parsed.kind === 'invalid') return { ...answer(KvStatus.InvalidInput, false, parsed.error.message), invalidPolicy: true };
  const entries: RuntimeEntry[] = [];
  for (const pkey of ctx.partitionsOf(store)) {
    const e = ctx.committed(pkey);
    if (!e) return answer(KvStatus.Unavailable, false, `${pkey} has no committed entry yet`);
    if (ctx.inflight(pkey)) return answer(KvStatus.Unavailable, false, `another change of ${pkey} is in flight`);
    entries.push(e);
  }
  if (entries.length === 0) return answer(KvStatus.InvalidInput, false, `store "${store}" has no partitions`);
  const version = Math.max(...entries.map((e) => e.policy?.version ?? 0)) + 1;
  let last = 0;
  for (const e of entries) {
    const epoch = ctx.propose({ ...e, policy: { text, version } }, false);
    if (epoch === null) return answer(KvStatus.Unavailable, false, `${e.pkey}: not proposed (policy version ${version} proposed for the partitions before it)`);
    last = epoch;
  }
  return answer(KvStatus.Ok, true, `policy version ${version} of ${store} proposed for ${entries.length} partitions: ${text === '' ? 'withdrawn ("")' : text}`, last);
}

/**
 * The multi-key retry policy a node advertises for `store` (seed 004): the text of the highest
 * policy version among the store's committed entries `entries`, else the cluster's configured
 * property `configured`.
 */
export function advertisedPolicy(entries: Iterable<RuntimeEntry | undefined>, configured: string): { text: string; version: number } {
  let best: { text: string; version: number } = { text: configured, version: 0 };
  for (const e of entries) if (e?.policy && e.policy.version > best.version) best = e.policy;
  return best;
}

/**
 * Answers one admin request on this node (see the module doc for the commands and statuses).
 * Pure but for `ctx.propose`.
 */
export function handleAdmin(ctx: AdminContext, text: string): AdminResult {
  const answer = (status: KvStatus, ok: boolean, message: string, epoch?: number): AdminResult => ({
    status,
    answer: { ok, node: ctx.node, leader: ctx.leader, message, ...(epoch !== undefined ? { epoch } : {}) },
  });
  const cmd = parseAdminCommand(text);
  if (typeof cmd === 'string') return answer(KvStatus.InvalidInput, false, cmd);
  if (!ctx.isLeader) return answer(KvStatus.Moved, false, ctx.leader ? `not the leader: ask ${ctx.leader}` : 'not the leader, and no leader known');
  if (cmd.cmd === 'join' || cmd.cmd === 'leave' || cmd.cmd === 'rebalance') {
    const ms = ctx.membership;
    if (!ms) return answer(KvStatus.Unavailable, false, 'this node has no membership');
    if (cmd.cmd === 'rebalance') {
      ms.rebalance();
      return answer(KvStatus.Ok, true, 'rebalance planned over the current members');
    }
    const r = cmd.cmd === 'join' ? ms.join(cmd.node) : ms.leave(cmd.node);
    if (typeof r === 'string') return answer(/unknown node/.test(r) ? KvStatus.InvalidInput : KvStatus.Unavailable, false, r);
    return answer(KvStatus.Ok, true, `${cmd.cmd} of ${cmd.node} proposed: member set version ${r.version}`);
  }
  const rf = ctx.stores.get(cmd.store);
  if (rf === undefined) return answer(KvStatus.InvalidInput, false, `unknown store "${cmd.store}"`);
  if (cmd.cmd === 'set-policy') return setPolicy(ctx, cmd.store, cmd.policy, answer);
  const pkey = `${cmd.store}/${cmd.partition}`;
  const e = ctx.committed(pkey);
  if (!e) return answer(KvStatus.InvalidInput, false, `unknown partition ${pkey}`);
  if (ctx.inflight(pkey)) return answer(KvStatus.Unavailable, false, `another change of ${pkey} is in flight`);
  if (cmd.cmd === 'handoff') {
    if (!ctx.nodes.includes(cmd.to)) return answer(KvStatus.InvalidInput, false, `unknown node "${cmd.to}"`);
    if (!e.active || (e.health !== 'Healthy' && e.health !== 'Degraded')) return answer(KvStatus.Unavailable, false, `${pkey} is ${e.health}${e.active ? '' : ' (no active owner)'}`);
    if (e.active.node === cmd.to) return answer(KvStatus.Unavailable, false, `${cmd.to} is already the active owner of ${pkey}`);
    if (e.handoffTo) return answer(KvStatus.Unavailable, false, `${pkey} already hands off to ${e.handoffTo.node}`);
    const m = e.inSync.find((x) => x.node === cmd.to);
    if (!m) return answer(KvStatus.Unavailable, false, `${cmd.to} is not in sync in ${pkey}`);
    if (!sameMember(ctx.liveMember(cmd.to), m)) return answer(KvStatus.Unavailable, false, `${cmd.to} is not live`);
    const epoch = ctx.propose({ ...e, handoffTo: m }, false);
    return epoch === null ? answer(KvStatus.Unavailable, false, `${pkey}: not proposed`) : answer(KvStatus.Ok, true, `handoff of ${pkey} from ${e.active.node} to ${cmd.to} proposed`, epoch);
  }
  const next = planRegeneration(e, rf, ctx.nodes, (n) => ctx.liveMember(n));
  if (typeof next === 'string') return answer(KvStatus.Unavailable, false, next);
  const epoch = ctx.propose(next, true);
  return epoch === null ? answer(KvStatus.Unavailable, false, `${pkey}: not proposed`) : answer(KvStatus.Ok, true, `regeneration of ${pkey} proposed: map version ${next.mapVersion}, replicas ${next.replicas.join(',')}`, epoch);
}
