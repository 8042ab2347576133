/**
 * Judging a key: the facts of its writes gathered in one pass (the `zaris_key` step, shared by the
 * `writes` table's SQL and the packed key_log form) and the key's own finding from them.
 */
import type Database from 'better-sqlite3';
import type { KeyFindingKind } from '../../ledger/history-findings.js';
import { lifeAt } from './total-loss.js';

/** Outcome codes of a write row as `zaris_key` receives them (plus {@link DELETE_BIT} for a delete). */
export const OK = 0;
export const FAIL = 1;
/** info, or still in flight (outcome NULL): the store may or may not have applied it. */
export const INDETERMINATE = 2;
export const DELETE_BIT = 4;

const REGRESSION_UDF = 'zaris_first_regression';
/** The per-key aggregate over a key's writes ({@link registerScanFunctions}). */
export const KEY_UDF = 'zaris_key';

/**
 * What `zaris_key` learns of one key's writes in a single pass (handed to JS by index into the
 * scanner's sink, not serialized).
 */
export interface KeyFacts {
  /** Writes of the key (rows). */
  n: number;
  nOk: number;
  nFail: number;
  /** The last `ok` seq; null none. */
  lastOk: number | null;
  /** The latest delete whose outcome is ok or indeterminate; null none. */
  lastDel: number | null;
  /** The first `ok` non-delete write whose version is not above the one before (of the same life of the partition); null none. */
  reg: number | null;
  /** The first `ok` write whose ack names fewer than 2 copies; null none. */
  under: number | null;
  /** The acks' distinct (epoch, node, life) with the first seq that carried each. */
  pairs: Array<[epoch: number, node: string, firstSeq: number, life: number]>;
  /** The starts of the total losses of the key's partition (runs past the budget); null none. */
  losses: readonly number[] | null;
  /** The life of the partition at the previous ok non-delete write's ack. */
  prevLife: number;
  firstSeq: number;
  prevSeq: number;
  prevVersion: number;
  /** Seqs not `ok` (fail or indeterminate) -> their outcome code. */
  notOk: Map<number, number> | null;
  /** Every seq, once the key's seqs stop being consecutive (imported histories may skip). */
  allSeqs: Set<number> | null;
  /** v2 reads: the key's `ok` writes in seq order are arena.oks[okFrom, okTo): [seq, complete_ms, 1 if a delete else 0] each. */
  okFrom: number;
  okTo: number;
  /** v2 reads: the key's deletes (any outcome) in seq order are arena.dels[delFrom, delTo): [seq, invoke_ms] each. */
  delFrom: number;
  delTo: number;
  /** The seq the final read matches (0: the initial state); null when it names no write of the key, or none (set by the scan). */
  finalMatched: number | null;
}

/**
 * The times of a chunk's writes that the read rules need, in flat float arrays (no per-write
 * allocation): a key's entries are contiguous (its rows arrive together, in seq order).
 */
export class TimeArena {
  oks: Float64Array<ArrayBuffer> = new Float64Array(3 * 65_536);
  okN = 0;
  dels: Float64Array<ArrayBuffer> = new Float64Array(2 * 8_192);
  delN = 0;

  reset(): void {
    this.okN = 0;
    this.delN = 0;
  }

  addOk(seq: number, complete: number, del: boolean): void {
    if (this.okN + 3 > this.oks.length) this.oks = grow(this.oks);
    this.oks[this.okN++] = seq;
    this.oks[this.okN++] = complete;
    this.oks[this.okN++] = del ? 1 : 0;
  }

  addDel(seq: number, invoke: number): void {
    if (this.delN + 2 > this.dels.length) this.dels = grow(this.dels);
    this.dels[this.delN++] = seq;
    this.dels[this.delN++] = invoke;
  }
}

function grow(a: Float64Array): Float64Array<ArrayBuffer> {
  const b = new Float64Array(a.length * 2);
  b.set(a);
  return b;
}

/**
 * Registers the verifier's SQL functions on a connection:
 * - `zaris_first_regression(seq, version)` (v1 tools and tests): over a key's `ok` non-delete
 *   writes, the seq of the first write whose version is not above the one before (null none);
 * - `zaris_key(seq, code, version, epoch, node, copies, invoke, complete, key_id)` over all of a
 *   key's writes (code: 0 ok, 1 fail, 2 indeterminate, +4 for a delete): an index into `sink`
 *   where the key's {@link KeyFacts} were put (the caller reads and clears it after each
 *   statement). `lossesOf(key_id)`: the starts of the total losses of the key's partition (our
 *   total-amnesia reading, total-loss.ts), or null: acks of different lives are not compared.
 * Both rely on receiving a key's rows in seq order, which the GROUP BY over the writes table's
 * (key_id, seq) primary key gives; they check that order and throw rather than answer from rows
 * out of order. (An `ORDER BY seq` inside the call would enforce it in SQL but costs ~20% of the
 * pass: DESIGN.md §8.) One JS call per write row is the verifier's main cost: everything it
 * needs of a key's writes is taken from that one call.
 */
export function registerScanFunctions(
  db: Database.Database,
  sink: KeyFacts[] = [],
  arena: TimeArena | null = null,
  lossesOf: (keyId: number) => readonly number[] | null = () => null,
): void {
  type State = [prevVersion: number, firstRegression: number | null, prevSeq: number] | null;
  const step = (state: State, seq: number, version: number | null): State => {
    if (version === null) return state;
    if (state === null) return [version, null, seq];
    if (seq <= state[2]) throw new Error(`verifier: writes were not scanned in (key_id, seq) order (seq ${seq} after ${state[2]})`);
    state[2] = seq;
    if (state[1] === null && version <= state[0]) state[1] = seq;
    state[0] = version;
    return state;
  };
  db.aggregate<State>(REGRESSION_UDF, {
    start: null,
    // the typings allow one argument per step; SQLite passes (seq, version)
    step: step as unknown as (state: State, next: unknown) => State,
    result: (state: State) => (state === null ? null : state[1]),
  });
  const keyStep = makeKeyStep(arena, lossesOf);
  db.aggregate<KeyFacts | null>(KEY_UDF, {
    start: null,
    step: keyStep as unknown as (state: KeyFacts | null, next: unknown) => KeyFacts,
    result: (s: KeyFacts | null) => {
      if (s === null) return null;
      sink.push(s);
      return sink.length - 1;
    },
  });
}

/**
 * One step of a key's facts ({@link KeyFacts}) over its writes in seq order: (facts so far or
 * null, seq, code: 0 ok / 1 fail / 2 indeterminate, +4 for a delete, version, epoch, ack node,
 * copies, invoke ms, complete ms). The `zaris_key` aggregate and the packed scan share it.
 * @throws Error when the writes are not in seq order.
 */
export type KeyStep = (
  s: KeyFacts | null,
  seq: number,
  code: number,
  version: number | null,
  epoch: number | null,
  node: string | null,
  copies: number | null,
  invoke: number,
  complete: number | null,
  keyId: number | null,
) => KeyFacts;

/**
 * Builds the key step (see {@link KeyStep}), recording ok writes and deletes in `arena` (v2 reads)
 * when given; `lossesOf(keyId)` gives the starts of the total losses of the key's partition (ms,
 * total-loss.ts) or null.
 */
export function makeKeyStep(arena: TimeArena | null, lossesOf: (keyId: number) => readonly number[] | null = () => null): KeyStep {
  // the parameters' types are KeyStep's (the function's declared return type)
  return (s, seq, code, version, epoch, node, copies, invoke, complete, keyId) => {
    if (s === null) {
      s = {
        n: 0, nOk: 0, nFail: 0, lastOk: null, lastDel: null, reg: null, under: null, pairs: [], firstSeq: seq, prevSeq: seq - 1,
        prevVersion: -Infinity, notOk: null, allSeqs: null, okFrom: arena?.okN ?? 0, okTo: arena?.okN ?? 0, delFrom: arena?.delN ?? 0, delTo: arena?.delN ?? 0, finalMatched: null,
        losses: keyId === null ? null : lossesOf(keyId), prevLife: 0,
      };
    }
    if (seq <= s.prevSeq) throw new Error(`verifier: writes were not scanned in (key_id, seq) order (seq ${seq} after ${s.prevSeq})`);
    if (seq !== s.prevSeq + 1 && s.allSeqs === null) {
      // not consecutive: remember every seq from here on (and the ones before: firstSeq..prevSeq)
      s.allSeqs = new Set();
      for (let x = s.firstSeq; x <= s.prevSeq; x++) s.allSeqs.add(x);
    }
    if (s.allSeqs !== null) s.allSeqs.add(seq);
    s.prevSeq = seq;
    s.n++;
    const outcome = code & 3;
    const del = code >= DELETE_BIT;
    if (outcome === OK) {
      s.nOk++;
      s.lastOk = seq;
      if (arena !== null) {
        if (arena.okN !== s.okTo) throw new Error('verifier: a key\'s writes were not scanned together');
        arena.addOk(seq, complete ?? Infinity, del);
        s.okTo = arena.okN;
      }
      const life = s.losses === null ? 0 : lifeAt(s.losses, complete ?? Infinity);
      if (!del && version !== null) {
        // two acks of different lives of the partition are not compared (a new memory)
        if (life !== s.prevLife) s.prevVersion = -Infinity;
        if (s.reg === null && version <= s.prevVersion) s.reg = seq;
        s.prevVersion = version;
        s.prevLife = life;
      }
      if (copies !== null && copies < 2 && s.under === null) s.under = seq;
      if (epoch !== null && node !== null) {
        const last = s.pairs[s.pairs.length - 1];
        if ((last === undefined || last[0] !== epoch || last[1] !== node || last[3] !== life) && !s.pairs.some((p) => p[0] === epoch && p[1] === node && p[3] === life)) s.pairs.push([epoch, node, seq, life]);
      }
    } else {
      if (outcome === FAIL) s.nFail++;
      (s.notOk ??= new Map()).set(seq, outcome);
    }
    if (del) {
      if (arena !== null) {
        if (arena.delN !== s.delTo) throw new Error('verifier: a key\'s writes were not scanned together');
        arena.addDel(seq, invoke);
        s.delTo = arena.delN;
      }
      if (outcome !== FAIL) s.lastDel = seq;
    }
    return s;
  };
}

/** Whether a key's writes include `seq`. */
export function hasSeq(k: KeyFacts, seq: number): boolean {
  return k.allSeqs !== null ? k.allSeqs.has(seq) : seq >= k.firstSeq && seq <= k.prevSeq;
}

/** The outcome code of a key's write `seq` (which must exist). */
export function outcomeOf(k: KeyFacts, seq: number): number {
  return k.notOk?.get(seq) ?? OK;
}

/** What a key's own finding depends on besides its facts (from the scan's context). */
export interface KeyRules {
  /** The v2 rules apply (else v1). */
  v2: boolean;
  /** Stores whose acks are durable on a majority, RF > 1 (under-replicated-ack applies: the contract). */
  syncReplicated: ReadonlySet<string>;
  /** `store\0partition` -> `life\0epoch` -> the actives its samples showed (ack-not-from-active). */
  actives: ReadonlyMap<string, ReadonlyMap<string, readonly string[]>>;
}

/**
 * A key's own finding (history-format.md, first that applies): unverified, unexpected, lost,
 * phantom, (v2) under-replicated-ack, ack-not-from-active, version-regression, recovered; with
 * the seq of the write it names. unverified: the key has no readable final read; unexpected: its
 * value names no write of the key; matched: the seq it matches (0 the initial state); null none.
 */
export function keyKind(
  rules: KeyRules,
  store: string,
  partition: number,
  unverified: boolean,
  unexpected: boolean,
  matched: number | null,
  k: KeyFacts,
  absent: boolean,
): [KeyFindingKind, number | null] | null {
  if (unverified) return ['unverified', k.lastOk];
  if (unexpected) return ['unexpected', null];
  if (k.lastOk !== null && k.lastOk > (matched as number)) return ['lost', k.lastOk];
  // the matched write's outcome (seq 0, the initial state, counts as acknowledged)
  const outcome = matched === null || matched === 0 ? OK : outcomeOf(k, matched);
  if (!absent && outcome === FAIL) return ['phantom', matched];
  if (rules.v2) {
    if (k.under !== null && rules.syncReplicated.has(store)) return ['under-replicated-ack', k.under];
    const epochs = rules.actives.get(`${store}\u0000${partition}`);
    if (epochs !== undefined) {
      let bad: number | null = null;
      for (const [epoch, node, seq, life] of k.pairs) {
        const list = epochs.get(`${life}\u0000${epoch}`);
        if (list !== undefined && list.some((a) => a !== node) && (bad === null || seq < bad)) bad = seq;
      }
      if (bad !== null) return ['ack-not-from-active', bad];
    }
  }
  if (k.reg !== null) return ['version-regression', k.reg];
  // recovered: the final value is a write not acknowledged (info, or still in flight); v2 also
  // an absent value matching a delete not acknowledged
  if (outcome === INDETERMINATE && (!absent || rules.v2)) return ['recovered', matched];
  return null;
}
