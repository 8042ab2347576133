/**
 * A store's contract as data (`zaris-contract/1`): which losses the store claims it may cause,
 * and the parameters of the rules that judge it, each with where its value comes from (the
 * store's configuration and documentation, a run option). The verifier applies exactly the rules
 * a contract declares: a loss class not claimed never excuses a loss, a check whose parameter the
 * store does not declare (no async lag bound, reads not linearizable) is not made.
 *
 * The contract lives with the ledger (DESIGN.md §1: the ledger imports nothing above it): a run
 * stores its contract in the ledger (meta `contract`), an exported history carries it in
 * `run.contract`, and both verifiers (ledger/history-rules.ts, harness/verifier/) read it from
 * there. The targets' own declarations (Zaris, etcd, Redis with Sentinel, ...) are built in
 * harness/targets/ from the store's settings.
 *
 * A history or ledger without a contract is judged by {@link letterContract}: the rules of
 * shared/cases/history-format.md v2 to the letter (every allowed-loss class, the run's lag bound
 * and lease, fencing, linearizable reads).
 */

/** The format tag of a contract declaration. */
export const CONTRACT_FORMAT = 'zaris-contract/1';

/**
 * The loss classes a store may claim (DESIGN.md §5): `rf1` (a store of replication factor 1
 * loses what its one node held when it crashes), `async-ack` (an async store loses what its owner
 * acknowledged but had not replicated when another node took over), `beyond-budget` (a store
 * loses what every replica held when all of them were down at once; judged only in runs allowed
 * past the fault budget).
 */
export const ALLOWED_LOSS_CLASSES = ['rf1', 'async-ack', 'beyond-budget'] as const;
/** One of {@link ALLOWED_LOSS_CLASSES}. */
export type AllowedLossClass = (typeof ALLOWED_LOSS_CLASSES)[number];

/** A declared value and where it comes from (a config key and its value, a documentation page, a run option). */
export interface Declared<T> {
  value: T;
  /** One sentence naming the origin of the value, for the report ("redis.conf min-replicas-max-lag 1 ..."). */
  source: string;
}

/** A loss class the store claims, with what it is tied to. */
export interface ContractClaim {
  class: AllowedLossClass;
  /** Why the store may lose such writes, and the documentation that says so. */
  source: string;
}

/**
 * A store (a key space) of the target, as the contract describes it. `ackDurableOn` is what an
 * acknowledgement means: `majority` = the write is held by at least two copies when it is
 * acknowledged (a majority of three; the under-replicated-ack check then applies to acks that
 * report their copies), `one-node` = only the acknowledging node is known to hold it.
 */
export interface ContractStore {
  name: string;
  replicationFactor: number;
  ackMode: 'sync' | 'async';
  ackDurableOn: 'majority' | 'one-node';
  /** Where the replication factor, mode and durability come from. */
  source: string;
}

/**
 * The contract declaration (`zaris-contract/1`). Every field is required; units are ms.
 * - `claims`: the allowed-loss classes; a lost write that no claimed class excuses is a violation.
 * - `asyncLagMs`: how long an async store may leave an acknowledged write unreplicated while
 *   nothing disrupts replication. A number: the async-ack rule needs a fault within that long
 *   after the ack (history-format.md v2 async-ack condition 4), and the replication-lag check
 *   applies. null (the store promises no bound): the async-ack rule needs a fault between the ack
 *   and the takeover, and replication-lag is not judged.
 * - `leaseMs`: the longest an owner cut off from a majority may go on acknowledging (async-ack
 *   condition 6); null: the store declares none and the condition is not judged.
 * - `fencing`: true when an owner seen deposed (a higher epoch with another owner sampled before
 *   the write was invoked) acknowledges nothing it may lose (epochs or terms as fencing tokens);
 *   false when a replaced owner goes on acknowledging until it learns of its replacement (its
 *   losses then count as async-ack when the other conditions hold).
 * - `linearizableReads`: true when a read returns every write acknowledged before it began (the
 *   stale-read check applies); false: stale reads are not judged (phantom and unexpected reads
 *   always are).
 * - `duplicates`: true when a write may take effect more than once (at-least-once delivery).
 *   Recorded and reported; no rule of the per-key verifier reads it (a key holds one final value).
 */
export interface Contract {
  format: typeof CONTRACT_FORMAT;
  /** The store that declares it (the TARGET name, e.g. `zaris`, `etcd`, `redis-sentinel`). */
  target: string;
  stores: ContractStore[];
  claims: ContractClaim[];
  asyncLagMs: Declared<number | null>;
  leaseMs: Declared<number | null>;
  fencing: Declared<boolean>;
  linearizableReads: Declared<boolean>;
  duplicates: Declared<boolean>;
}

/** A contract that is not valid; the message is one line naming the bad field. */
export class ContractError extends Error {
  override name = 'ContractError';
}

type Obj = Record<string, unknown>;

function bad(msg: string): never {
  throw new ContractError(msg);
}

function obj(v: unknown, where: string): Obj {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) bad(`${where} must be an object`);
  return v as Obj;
}

function text(v: unknown, where: string): string {
  if (typeof v !== 'string' || v.trim() === '') bad(`${where} must be a non-empty string`);
  return v;
}

function declared<T>(v: unknown, where: string, value: (x: unknown, w: string) => T): Declared<T> {
  const o = obj(v, where);
  return { value: value(o.value, `${where}.value`), source: text(o.source, `${where}.source`) };
}

function bool(v: unknown, where: string): boolean {
  if (typeof v !== 'boolean') bad(`${where} must be true or false`);
  return v;
}

function msOrNull(v: unknown, where: string): number | null {
  if (v === null) return null;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) bad(`${where} must be a number of milliseconds >= 0, or null`);
  return v;
}

/**
 * Validates a parsed JSON value as a contract and returns it typed, with only the known fields
 * copied (unknown fields are ignored), then {@link checkContract}.
 * @param where the name of the value in messages (e.g. `run.contract`).
 * @throws ContractError whose one-line message names the bad field, e.g.
 *   `contract.leaseMs.value must be a number of milliseconds >= 0, or null`.
 */
export function parseContract(raw: unknown, where = 'contract'): Contract {
  const o = obj(raw, where);
  if (o.format !== CONTRACT_FORMAT) bad(`${where}.format must be "${CONTRACT_FORMAT}"`);
  if (!Array.isArray(o.stores)) bad(`${where}.stores must be an array`);
  if (!Array.isArray(o.claims)) bad(`${where}.claims must be an array`);
  const c: Contract = {
    format: CONTRACT_FORMAT,
    target: text(o.target, `${where}.target`),
    stores: o.stores.map((s, i): ContractStore => {
      const w = `${where}.stores[${i}]`;
      const so = obj(s, w);
      const rf = so.replicationFactor;
      if (typeof rf !== 'number' || !Number.isSafeInteger(rf) || rf < 1) bad(`${w}.replicationFactor must be an integer >= 1`);
      if (so.ackMode !== 'sync' && so.ackMode !== 'async') bad(`${w}.ackMode must be sync or async`);
      if (so.ackDurableOn !== 'majority' && so.ackDurableOn !== 'one-node') bad(`${w}.ackDurableOn must be majority or one-node`);
      return { name: text(so.name, `${w}.name`), replicationFactor: rf, ackMode: so.ackMode, ackDurableOn: so.ackDurableOn, source: text(so.source, `${w}.source`) };
    }),
    claims: o.claims.map((x, i): ContractClaim => {
      const w = `${where}.claims[${i}]`;
      const co = obj(x, w);
      if (!(ALLOWED_LOSS_CLASSES as readonly unknown[]).includes(co.class)) bad(`${w}.class must be ${ALLOWED_LOSS_CLASSES.join(', ')}`);
      return { class: co.class as AllowedLossClass, source: text(co.source, `${w}.source`) };
    }),
    asyncLagMs: declared(o.asyncLagMs, `${where}.asyncLagMs`, msOrNull),
    leaseMs: declared(o.leaseMs, `${where}.leaseMs`, msOrNull),
    fencing: declared(o.fencing, `${where}.fencing`, bool),
    linearizableReads: declared(o.linearizableReads, `${where}.linearizableReads`, bool),
    duplicates: declared(o.duplicates, `${where}.duplicates`, bool),
  };
  checkContract(c, where);
  return c;
}

/**
 * Checks what field types cannot: store names unique and `[a-z0-9-]+`; an async or RF1 store
 * acknowledges on one node (`ackDurableOn: one-node`); a class claimed at most once; `rf1`
 * claimed only beside an RF1 store and `async-ack` only beside an async one (a claim no store
 * can use is a mistake in the declaration); the lag bound and lease >= 0 ms when given.
 * @throws ContractError (one line) naming the first problem.
 */
export function checkContract(c: Contract, where = 'contract'): void {
  if (c.stores.length === 0) bad(`${where}.stores must list at least one store`);
  const names = new Set<string>();
  c.stores.forEach((s, i) => {
    if (!/^[a-z0-9-]+$/.test(s.name)) bad(`${where}.stores[${i}].name "${s.name}" must be [a-z0-9-]+`);
    if (names.has(s.name)) bad(`${where}.stores[${i}].name "${s.name}" appears twice`);
    names.add(s.name);
    if ((s.ackMode === 'async' || s.replicationFactor === 1) && s.ackDurableOn !== 'one-node') {
      bad(`${where}.stores[${i}] (${s.name}) acknowledges on one node (${s.ackMode === 'async' ? 'async' : 'replication factor 1'}): ackDurableOn must be one-node`);
    }
  });
  const seen = new Set<string>();
  c.claims.forEach((k, i) => {
    if (seen.has(k.class)) bad(`${where}.claims[${i}] claims ${k.class} twice`);
    seen.add(k.class);
    if (k.class === 'rf1' && !c.stores.some((s) => s.replicationFactor === 1)) bad(`${where}.claims[${i}] claims rf1, but no store has replication factor 1`);
    if (k.class === 'async-ack' && !c.stores.some((s) => s.ackMode === 'async')) bad(`${where}.claims[${i}] claims async-ack, but no store is async`);
  });
  for (const [k, v] of [['asyncLagMs', c.asyncLagMs.value], ['leaseMs', c.leaseMs.value]] as const) {
    if (v !== null && !(Number.isFinite(v) && v >= 0)) bad(`${where}.${k}.value must be a number of milliseconds >= 0, or null`);
  }
}

/** Whether the contract claims a loss class. */
export function claims(c: Contract, cls: AllowedLossClass): boolean {
  return c.claims.some((k) => k.class === cls);
}

/** The source the letter gives every parameter of {@link letterContract}. */
export const LETTER_SOURCE = 'history-format.md v2, the rules to the letter (the history declares no contract)';

/** The run record a letter contract is made from (history-format.md v2 `run`). */
export interface LetterRun {
  asyncLagMaxMs: number;
  leaseMs?: number | null;
}

/**
 * The rules of history-format.md v2 to the letter, as a contract: every allowed-loss class its
 * stores can use (rf1 beside an RF1 store, async-ack beside an async one, beyond-budget), the
 * run's lag bound and lease, fencing (the "not deposed" clause), linearizable reads, no
 * duplicates; a sync store of RF > 1 acknowledges on a majority. A v2 history or ledger without
 * a contract is judged by it, so the shared cases are judged exactly by the letter.
 */
export function letterContract(run: LetterRun, stores: ReadonlyArray<{ name: string; replicationFactor: number; ackMode: 'sync' | 'async' }>): Contract {
  const claimed: ContractClaim[] = [];
  if (stores.some((s) => s.replicationFactor === 1)) claimed.push({ class: 'rf1', source: LETTER_SOURCE });
  if (stores.some((s) => s.ackMode === 'async')) claimed.push({ class: 'async-ack', source: LETTER_SOURCE });
  claimed.push({ class: 'beyond-budget', source: LETTER_SOURCE });
  return {
    format: CONTRACT_FORMAT,
    target: 'history-format.md',
    stores: stores.map((s) => ({ name: s.name, replicationFactor: s.replicationFactor, ackMode: s.ackMode, ackDurableOn: s.ackMode === 'sync' && s.replicationFactor > 1 ? 'majority' : 'one-node', source: LETTER_SOURCE })),
    claims: claimed,
    asyncLagMs: { value: run.asyncLagMaxMs, source: LETTER_SOURCE },
    leaseMs: { value: run.leaseMs ?? null, source: LETTER_SOURCE },
    fencing: { value: true, source: LETTER_SOURCE },
    linearizableReads: { value: true, source: LETTER_SOURCE },
    duplicates: { value: false, source: LETTER_SOURCE },
  };
}

/**
 * The gates the verifiers apply, read off a contract (both verifiers use this one function, so
 * they judge by the same rules):
 * - `rf1`, `asyncAck`, `beyondBudget`: the class is claimed (beyond-budget is applied only in runs
 *   allowed past the budget as well);
 * - `asyncLagMs`, `leaseMs`, `fencing`, `staleReads`: the async-ack parameters and the stale-read
 *   check, as {@link Contract} defines them;
 * - `replicationLag`: the check applies (a lag bound is declared);
 * - `majorityAck(store)`: the under-replicated-ack check applies to the store (RF > 1 and the
 *   contract says its acks are durable on a majority; a store the contract does not list: sync
 *   and RF > 1, as the letter).
 */
export interface ContractRules {
  rf1: boolean;
  asyncAck: boolean;
  beyondBudget: boolean;
  asyncLagMs: number | null;
  leaseMs: number | null;
  fencing: boolean;
  staleReads: boolean;
  replicationLag: boolean;
  majorityAck(store: { name: string; replicationFactor: number; ackMode: string }): boolean;
}

/** The {@link ContractRules} of a contract. */
export function contractRules(c: Contract): ContractRules {
  const durable = new Map(c.stores.map((s) => [s.name, s.ackDurableOn]));
  return {
    rf1: claims(c, 'rf1'),
    asyncAck: claims(c, 'async-ack'),
    beyondBudget: claims(c, 'beyond-budget'),
    asyncLagMs: c.asyncLagMs.value,
    leaseMs: c.leaseMs.value,
    fencing: c.fencing.value,
    staleReads: c.linearizableReads.value,
    replicationLag: c.asyncLagMs.value !== null,
    majorityAck: (s) => s.replicationFactor > 1 && (durable.get(s.name) ?? (s.ackMode === 'sync' ? 'majority' : 'one-node')) === 'majority',
  };
}
