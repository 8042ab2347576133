import type Database from 'better-sqlite3';
import type { KeyFindingKind, ReadFindingKind } from '../../ledger/history-rules.js';
import { unpackRows } from '../../ledger/column-pack.js';
import { hasTable, KR_FIELDS, KR_TEXT, KW_FIELDS, loadStrings, parseExtra } from '../../ledger/key-log.js';
import { lifeAt } from './total-loss.js';

/**
 * What a chunk scan needs to know besides the ledger (plain data: it is also sent to the
 * verifier's worker thread).
 */
export interface ScanContext {
  /** The v2 rules apply (else v1). */
  v2: boolean;
  /** Stores whose acks are durable on a majority, RF > 1 (under-replicated-ack applies: the contract). */
  syncReplicated: string[];
  /** false: the contract declares reads not linearizable and stale reads are not judged (absent: judged). */
  staleReads?: boolean;
  /** [store, partition, life, epoch, actives[]] of the samples (ack-not-from-active; life: total-loss.ts, 0 within the budget). */
  actives: Array<[string, number, number, number, string[]]>;
  /**
   * [store, partition, starts] of the partitions that lost every copy at once, in runs allowed past
   * the fault budget (total-loss.ts): version-regression and ack-not-from-active compare within
   * one life of the partition. [] otherwise.
   */
  losses: Array<[string, number, number[]]>;
}

/** A key with a finding, as the scan hands it over (the details are looked up for it alone). */
export interface KeyCandidate {
  keyId: number;
  store: string;
  kind: KeyFindingKind;
  /** The seq of the write the finding names (lost: L; regression, under-replicated, ack: that write; unverified: last ok or null; phantom/recovered: the matched write). */
  seq: number | null;
  /** The seq the final read matches (0 = the initial state); null when it names none. */
  matchedSeq: number | null;
}

/** A key's read finding (v2), confirmed. */
export interface ReadFindingRow {
  keyId: number;
  store: string;
  kind: ReadFindingKind;
  /** The read's id (its history id, or `r<rid>`). */
  read: string;
  /** The value read (a write id; null = absent). */
  value: string | null;
  invokeMs: number;
  completeMs: number | null;
  node: string | null;
  /** stale-read: the seq of W, the last write acknowledged before the read began. */
  wSeq?: number;
  /** stale-read of a value (not absent): the seq of the write read. */
  valueSeq?: number;
}

/** One chunk's result. */
export interface ChunkResult {
  /** store -> [attempted, acknowledged, failed] */
  counts: Array<[string, number, number, number]>;
  keys: number;
  candidates: KeyCandidate[];
  reads: ReadFindingRow[];
  /** Reads of the range held in the packed form (key_log; the `reads` table's are counted in SQL). */
  packedReads: number;
}

const REGRESSION_UDF = 'zaris_first_regression';
const KEY_UDF = 'zaris_key';
const READ_UDF = 'zaris_read';

/** Outcome codes of a write row as `zaris_key` receives them (plus {@link DELETE_BIT} for a delete). */
const OK = 0;
const FAIL = 1;
/** info, or still in flight (outcome NULL): the store may or may not have applied it. */
const INDETERMINATE = 2;
const DELETE_BIT = 4;

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
 * A read finding as `zaris_read` records it: key, invoke, rid, kind, W's seq and the value's seq
 * (stale); for a packed read also what the `reads` row would say (looked up in SQL otherwise).
 */
type ReadHit = [keyId: number, invokeMs: number, rid: number, kind: ReadFindingKind, wSeq: number | null, valueSeq: number | null, row?: PackedReadRow];
type PackedReadRow = { complete_ms: number | null; node: string | null; value: string | null; id: string | null };

/**
 * Stale reads kept per key for the main thread to judge (a stale read whose missed writes were all
 * lost to an allowed class is excused there, and the key's next read finding counts: see
 * verifier.ts `readFindingsOf`). Beyond this many, the key's later reads are not looked at.
 */
export const STALE_HITS_PER_KEY = 64;

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
  return (
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
  ): KeyFacts => {
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
function hasSeq(k: KeyFacts, seq: number): boolean {
  return k.allSeqs !== null ? k.allSeqs.has(seq) : seq >= k.firstSeq && seq <= k.prevSeq;
}

/** The outcome code of a key's write `seq` (which must exist). */
function outcomeOf(k: KeyFacts, seq: number): number {
  return k.notOk?.get(seq) ?? OK;
}

/**
 * A read R of a key by the v2 read rules (history-format.md, "Reads", first that applies):
 * unexpected-read (the value names no write of the key), phantom-read (it names a failed write),
 * stale-read (W the last `ok` write with W.complete < R.invoke: the value is a write ordered
 * before W, or absent while W is not a delete and no delete ordered after W was invoked before
 * R.complete; and the final read holds W or a write ordered after it). `k` null: the key has no
 * write. Returns the kind and W's seq (stale), or null.
 */
export function readKind(
  arena: TimeArena,
  k: KeyFacts | null,
  keyId: number,
  invoke: number,
  complete: number,
  valueKeyId: number | null,
  valueSeq: number | null,
  absent: boolean,
): [ReadFindingKind, number | null] | null {
  const named = !absent && valueKeyId === keyId && valueSeq !== null && k !== null && hasSeq(k, valueSeq) ? valueSeq : null;
  if (!absent && named === null) return ['unexpected-read', null];
  if (k === null) return null;
  if (named !== null && outcomeOf(k, named) === FAIL) return ['phantom-read', null];
  // W: the last ok write (in seq order) acknowledged before the read began
  let wSeq = -1;
  let wDel = false;
  const oks = arena.oks;
  for (let i = k.okFrom; i < k.okTo; i += 3) {
    if (oks[i + 1] < invoke) {
      wSeq = oks[i];
      wDel = oks[i + 2] === 1;
    }
  }
  if (wSeq < 0) return null;
  let stale = named !== null && named < wSeq;
  if (absent && !wDel) {
    stale = true;
    const dels = arena.dels;
    for (let i = k.delFrom; i < k.delTo; i += 2) {
      if (dels[i] > wSeq && dels[i + 1] < complete) {
        stale = false;
        break;
      }
    }
  }
  if (!stale || k.finalMatched === null || k.finalMatched < wSeq) return null;
  return ['stale-read', wSeq];
}

/**
 * Per key of a key_id range, in one ordered pass over the writes table (clustered by
 * (key_id, seq)), everything the rules need of its writes ({@link KeyFacts}). The keys and final
 * reads of the range are read by their own range scans and merged in JS by key_id (cheaper than
 * a lookup per key); the rules are applied in JS ({@link ChunkScanner}).
 */
function writesSql(v2: boolean): string {
  return `
  SELECT key_id,
    ${KEY_UDF}(seq, (CASE outcome WHEN 'ok' THEN ${OK} WHEN 'fail' THEN ${FAIL} ELSE ${INDETERMINATE} END) + (CASE op WHEN 'delete' THEN ${DELETE_BIT} ELSE 0 END),
               ack_version, ack_epoch, ack_node, ack_copies${v2 ? ', invoke_ms, complete_ms, key_id' : ', NULL, NULL, NULL'}) AS facts
  FROM writes WHERE key_id >= @lo AND key_id < @hi GROUP BY key_id`;
}
type WritesRow = [keyId: number, facts: number];

const KEYS_SQL = 'SELECT key_id, store, partition FROM keys WHERE key_id >= @lo AND key_id < @hi ORDER BY key_id';
type KeysRow = [keyId: number, store: string, partition: number];

/** The final reads of a range: unreadable, absent, and the write a value names (key and seq). */
const FINALS_SQL = `
  SELECT key_id, unreadable, value IS NULL AS absent, value_key_id, value_seq
  FROM final_reads WHERE key_id >= @lo AND key_id < @hi ORDER BY key_id`;
type FinalsRow = [keyId: number, unreadable: number, absent: number, valueKeyId: number | null, valueSeq: number | null];

/**
 * The `ok` reads of a range (v2), in (key, invoke, order recorded) order, each judged by
 * `zaris_read` in JS against its key's {@link KeyFacts}; the function records the findings (the
 * earliest read per key) and the statement returns only their count.
 */
const READS_SQL = `
  SELECT COUNT(*) FROM reads
  WHERE key_id >= @lo AND key_id < @hi AND outcome = 'ok'
    AND ${READ_UDF}(key_id, invoke_ms, complete_ms, value_key_id, value_seq, value IS NULL, rid)`;

/**
 * Scans key_id ranges of a ledger (history-format.md, per key): counts, the key's own finding
 * (its kind and the write it names; the details and a loss's class are looked up afterwards for
 * the candidates alone) and (v2) its read finding. Memory is bounded by the chunk width. Usable
 * on any connection to the ledger (the verifier's worker thread opens its own).
 */
export class ChunkScanner {
  private readonly writesSt: Database.Statement;
  private readonly keysSt: Database.Statement;
  private readonly finalsSt: Database.Statement;
  private readonly readsSt: Database.Statement | null;
  private readonly readAt: Database.Statement;
  /** `store\0partition` -> `life\0epoch` -> the actives its samples showed. */
  private readonly actives = new Map<string, Map<string, string[]>>();
  /** `store\0partition` -> the starts of its total losses. */
  private readonly losses = new Map<string, number[]>();
  /** key_id -> its partition's loss starts, for the keys of the chunk being scanned (only when some partition had a total loss). */
  private readonly keyLosses = new Map<number, number[]>();
  private readonly syncReplicated: Set<string>;
  /** The key aggregate's per-key facts of the statement being read (cleared per chunk). */
  private readonly sink: KeyFacts[] = [];
  private readonly arena = new TimeArena();
  /** key_id -> facts of the chunk being scanned (for the reads). */
  private readonly byKey = new Map<number, KeyFacts>();
  private readonly hits: ReadHit[] = [];
  private lastRead: [keyId: number, invoke: number] = [-1, -Infinity];
  private lastHitKey = -1;
  private staleHitsOfKey = 0;
  /** The packed form (key_log): its range statement, the string table, the key step, scratch rows. */
  private readonly packedSt: Database.Statement | null;
  private readonly strings: string[];
  private readonly keyStep: KeyStep;
  private scratch: Float64Array = new Float64Array(KW_FIELDS * 256);
  /** The packed reads of the chunk being scanned, judged after its writes. */
  private readonly packedReads: Array<{ keyId: number; reads: Buffer; extra: string | null }> = [];

  constructor(
    db: Database.Database,
    private readonly ctx: ScanContext,
  ) {
    registerScanFunctions(db, this.sink, ctx.v2 ? this.arena : null, (keyId) => this.keyLosses.get(keyId) ?? null);
    db.function(READ_UDF, { varargs: false, deterministic: false }, (keyId: unknown, invoke: unknown, complete: unknown, vk: unknown, vs: unknown, absent: unknown, rid: unknown) =>
      this.judgeRead(keyId as number, invoke as number, complete as number, vk as number | null, vs as number | null, absent === 1, rid as number),
    );
    this.writesSt = db.prepare(writesSql(ctx.v2)).raw(true);
    this.keysSt = db.prepare(KEYS_SQL).raw(true);
    this.finalsSt = db.prepare(FINALS_SQL).raw(true);
    this.readsSt = ctx.v2 ? db.prepare(READS_SQL).pluck() : null;
    this.readAt = db.prepare('SELECT complete_ms, node, value, id FROM reads WHERE key_id = ? AND invoke_ms = ? AND rid = ?');
    this.packedSt = hasTable(db, 'key_log') ? db.prepare('SELECT key_id, writes, reads, extra FROM key_log WHERE key_id >= @lo AND key_id < @hi ORDER BY key_id').raw(true) : null;
    this.strings = this.packedSt === null ? [] : loadStrings(db);
    this.keyStep = makeKeyStep(ctx.v2 ? this.arena : null, (keyId) => this.keyLosses.get(keyId) ?? null);
    for (const [store, partition, life, epoch, list] of ctx.actives) {
      const k = `${store}\u0000${partition}`;
      (this.actives.get(k) ?? this.actives.set(k, new Map()).get(k)!).set(`${life}\u0000${epoch}`, list);
    }
    for (const [store, partition, starts] of ctx.losses) this.losses.set(`${store}\u0000${partition}`, starts);
    this.syncReplicated = new Set(ctx.syncReplicated);
  }

  /** EXPLAIN QUERY PLAN of the per-range writes, keys and final-reads statements (details, in order). */
  explain(): string[] {
    const db = this.writesSt.database;
    return [writesSql(this.ctx.v2), KEYS_SQL, FINALS_SQL].flatMap((q) => (db.prepare(`EXPLAIN QUERY PLAN ${q}`).all({ lo: 0, hi: 1 }) as { detail: string }[]).map((r) => r.detail));
  }

  /** EXPLAIN QUERY PLAN of the per-range reads statement (v2). */
  explainReads(): string[] {
    return (this.writesSt.database.prepare(`EXPLAIN QUERY PLAN ${READS_SQL}`).all({ lo: 0, hi: 1 }) as { detail: string }[]).map((r) => r.detail);
  }

  /** Scans keys with lo <= key_id < hi. */
  scan(lo: number, hi: number): ChunkResult {
    const range = { lo, hi };
    const counts = new Map<string, [string, number, number, number]>();
    const candidates: KeyCandidate[] = [];
    const stores = new Map<number, string>();
    this.sink.length = 0;
    this.arena.reset();
    this.byKey.clear();
    this.packedReads.length = 0;
    const keyRows = this.keysSt.all(range) as KeysRow[];
    this.keyLosses.clear();
    if (this.losses.size > 0) {
      for (const [keyId, store, partition] of keyRows) {
        const starts = this.losses.get(`${store}\u0000${partition}`);
        if (starts !== undefined) this.keyLosses.set(keyId, starts);
      }
    }
    const writes = this.mergePacked(this.writesSt.all(range) as WritesRow[], range);
    const finals = this.finalsSt.all(range) as FinalsRow[];
    let keys = 0;
    // merge by key_id: every list is in key order; a key counts when it has writes or a final read
    let ki = 0;
    let fi = 0;
    let wi = 0;
    while (wi < writes.length || fi < finals.length) {
      const wKey = wi < writes.length ? writes[wi][0] : Infinity;
      const fKey = fi < finals.length ? finals[fi][0] : Infinity;
      const keyId = Math.min(wKey, fKey);
      while (ki < keyRows.length && keyRows[ki][0] < keyId) ki++;
      if (ki >= keyRows.length || keyRows[ki][0] !== keyId) throw new Error(`ledger: key ${keyId} has writes or a final read but no row in keys`);
      const [, store, partition] = keyRows[ki];
      const w = wKey === keyId ? writes[wi++] : null;
      const f = fKey === keyId ? finals[fi++] : null;
      keys++;
      if (w === null) {
        // a key read at the end that no write names: a value there names no write (unexpected)
        if (f![1] === 0 && f![2] === 0) candidates.push({ keyId, store, kind: 'unexpected', seq: null, matchedSeq: null });
        continue;
      }
      const k = this.sink[w[1]];
      this.byKey.set(keyId, k);
      stores.set(keyId, store);
      let c = counts.get(store);
      if (c === undefined) counts.set(store, (c = [store, 0, 0, 0]));
      c[1] += k.n;
      c[2] += k.nOk;
      c[3] += k.nFail;
      const absent = f !== null && f[2] === 1;
      // the write the final value names: same key, and a seq the key has
      const named = f !== null && !absent && f[3] === keyId && f[4] !== null && hasSeq(k, f[4]) ? f[4] : null;
      // the final read matches its write, else (absent) the latest ok/info delete, else seq 0
      const matched = absent ? (k.lastDel ?? 0) : named;
      k.finalMatched = f === null || f[1] !== 0 ? null : matched;
      const cand = this.keyKind(store, partition, f === null || f[1] !== 0, !absent && named === null, matched, k, absent);
      if (cand !== null) candidates.push({ keyId, store, kind: cand[0], seq: cand[1], matchedSeq: cand[0] === 'unverified' || cand[0] === 'unexpected' ? null : matched });
    }
    let packedReads = 0;
    for (const p of this.packedReads) packedReads += p.reads.readUInt32LE(2);
    const reads = this.readsSt === null ? [] : this.readFindings(range, stores, keyRows);
    this.sink.length = 0;
    this.byKey.clear();
    this.packedReads.length = 0;
    return { counts: [...counts.values()], keys, candidates, reads, packedReads };
  }

  /**
   * The range's packed keys (key_log) through the same key step as the `zaris_key` aggregate,
   * merged by key_id with the aggregate's rows of the `writes` table; their reads are kept for
   * the read pass.
   * @throws Error when a key has writes in both forms.
   */
  private mergePacked(rows: WritesRow[], range: { lo: number; hi: number }): WritesRow[] {
    if (this.packedSt === null) return rows;
    const packed = this.packedSt.all(range) as Array<[number, Buffer | null, Buffer | null, string | null]>;
    if (packed.length === 0) return rows;
    const out: WritesRow[] = [];
    let i = 0;
    const strings = this.strings;
    for (const [keyId, w, r, extra] of packed) {
      while (i < rows.length && rows[i][0] < keyId) out.push(rows[i++]);
      if (i < rows.length && rows[i][0] === keyId) throw new Error(`ledger: key ${keyId} has rows in writes and in key_log`);
      if (r !== null) this.packedReads.push({ keyId, reads: r, extra });
      if (w === null) continue;
      const { n, rows: d } = unpackRows(w, this.scratch);
      if (d.length > this.scratch.length) this.scratch = d;
      let facts: KeyFacts | null = null;
      for (let j = 0; j < n; j++) {
        const b = j * KW_FIELDS;
        const outcome = d[b + 4];
        const code = (outcome === 0 ? OK : outcome === 1 ? FAIL : INDETERMINATE) + (d[b + 1] === 3 ? DELETE_BIT : 0);
        const node = d[b + 7];
        facts = this.keyStep(
          facts,
          d[b],
          code,
          d[b + 9] !== d[b + 9] ? null : d[b + 9],
          d[b + 8] !== d[b + 8] ? null : d[b + 8],
          node !== node ? null : (strings[node] ?? null),
          d[b + 12] !== d[b + 12] ? null : d[b + 12],
          d[b + 2],
          d[b + 3] !== d[b + 3] ? null : d[b + 3],
          keyId,
        );
      }
      if (facts === null) continue;
      this.sink.push(facts);
      out.push([keyId, this.sink.length - 1]);
    }
    while (i < rows.length) out.push(rows[i++]);
    return out;
  }

  /**
   * A key's own finding (history-format.md, first that applies): unverified, unexpected, lost,
   * phantom, (v2) under-replicated-ack, ack-not-from-active, version-regression, recovered; with
   * the seq of the write it names.
   */
  private keyKind(
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
    if (this.ctx.v2) {
      if (k.under !== null && this.syncReplicated.has(store)) return ['under-replicated-ack', k.under];
      const epochs = this.actives.get(`${store}\u0000${partition}`);
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
    if (outcome === INDETERMINATE && (!absent || this.ctx.v2)) return ['recovered', matched];
    return null;
  }

  /** `zaris_read`: judges one read (in key, invoke order) and records the key's first finding. */
  private judgeRead(keyId: number, invoke: number, complete: number, vk: number | null, vs: number | null, absent: boolean, rid: number): number {
    if (keyId < this.lastRead[0] || (keyId === this.lastRead[0] && invoke < this.lastRead[1])) {
      throw new Error(`verifier: reads were not scanned in (key_id, invoke) order (key ${keyId} at ${invoke} ms after key ${this.lastRead[0]} at ${this.lastRead[1]} ms)`);
    }
    this.lastRead[0] = keyId;
    this.lastRead[1] = invoke;
    if (keyId === this.lastHitKey) return 0;
    const found = readKind(this.arena, this.byKey.get(keyId) ?? null, keyId, invoke, complete, vk, vs, absent);
    if (found === null || (found[0] === 'stale-read' && this.ctx.staleReads === false)) return 0;
    this.hits.push([keyId, invoke, rid, found[0], found[1], absent ? null : vs]);
    // a stale read may be excused on the main thread (its missed writes lost to allowed classes):
    // keep looking at the key's later reads, up to a bound
    if (this.hits.length < 2 || this.hits[this.hits.length - 2][0] !== keyId) this.staleHitsOfKey = 0;
    if (found[0] !== 'stale-read' || ++this.staleHitsOfKey >= STALE_HITS_PER_KEY) this.lastHitKey = keyId;
    return 1;
  }

  /** The chunk's packed `ok` reads through `zaris_read`'s judge, in key, invoke, recorded order. */
  private judgePackedReads(): void {
    this.lastRead = [-1, -Infinity];
    for (const p of this.packedReads) {
      const { n, rows: d } = unpackRows(p.reads);
      let texts: Map<number, string> | null = null;
      for (let i = 0; i < n; i++) {
        const b = i * KR_FIELDS;
        if (d[b + 3] !== 0) continue;
        const vk = d[b + 5];
        const absent = vk !== vk;
        const before = this.hits.length;
        this.judgeRead(p.keyId, d[b + 1], d[b + 2], absent || vk < 0 ? null : vk, absent || vk < 0 ? null : d[b + 6], absent, d[b]);
        if (this.hits.length > before) {
          let value: string | null = null;
          if (vk === KR_TEXT) {
            texts ??= new Map(parseExtra(p.extra)?.x ?? []);
            value = texts.get(i) ?? null;
          } else if (!absent) value = `w${vk}.${d[b + 6]}`;
          const node = d[b + 4];
          this.hits[before][6] = { complete_ms: d[b + 2] !== d[b + 2] ? null : d[b + 2], node: node !== node ? null : (this.strings[node] ?? null), value, id: null };
        }
      }
    }
  }

  /**
   * The read findings of a range, in key then invoke order: per key, the earliest read that has
   * one, and when that is a stale read, the key's later read findings too (up to
   * {@link STALE_HITS_PER_KEY} stale reads): the main thread keeps the first one not excused.
   */
  private readFindings(range: { lo: number; hi: number }, stores: Map<number, string>, keyRows: KeysRow[]): ReadFindingRow[] {
    this.hits.length = 0;
    this.lastRead = [-1, -Infinity];
    this.lastHitKey = -1;
    this.readsSt!.get(range);
    const fromSql = this.hits.length;
    this.judgePackedReads();
    // the two forms hold different keys: back to key order (stable: each key's hits stay in order)
    if (fromSql > 0 && this.hits.length > fromSql) this.hits.sort((a, b) => a[0] - b[0]);
    const out: ReadFindingRow[] = [];
    for (const [keyId, invokeMs, rid, kind, wSeq, valueSeq, packed] of this.hits) {
      const r = packed ?? (this.readAt.get(keyId, invokeMs, rid) as PackedReadRow);
      const store = stores.get(keyId) ?? keyRows.find((x) => x[0] === keyId)?.[1];
      if (store === undefined) throw new Error(`ledger: read of key ${keyId}, which has no row in keys`);
      const row: ReadFindingRow = { keyId, store, kind, read: r.id ?? `r${rid}`, value: r.value, invokeMs, completeMs: r.complete_ms, node: r.node };
      if (wSeq !== null) row.wSeq = wSeq;
      if (kind === 'stale-read' && valueSeq !== null) row.valueSeq = valueSeq;
      out.push(row);
    }
    this.hits.length = 0;
    return out;
  }
}
