import { existsSync, renameSync, rmSync } from 'node:fs';
import Database from 'better-sqlite3';
import { unpackRows } from './column-pack.js';
import { hasTable, KR_FIELDS, KR_TEXT, KW_FIELDS, packKey, parseExtra, type KeyExtra } from './key-log.js';
import { applySchema, LEDGER_DDL } from './schema.js';
import { decodeBatch, INV_FIELDS, OPS, OUTCOMES, RD_ABSENT, RD_FIELDS, RD_TEXT, READ_KINDS, type BatchRow, type BatchScratch } from './write-batches.js';

/**
 * The seal (DESIGN.md §4, issue 11): at the end of a run (or at the first analysis of a run that
 * crashed) the hot path's appended rows (packed `write_batches`, and the `invokes` /
 * `completions` / `read_log` rows of the plain SQLite writer) become one `key_log` row per key
 * (key-log.ts), in key order, which the verifier reads.
 *
 * One streaming pass in recorded order: invokes are joined with their completions, and a key's
 * rows are held until the key has been idle for {@link IDLE_MS} of run time (no invoke, completion
 * or read; none of its writes in flight): a workload key lives a few seconds to a minute, then
 * its slot moves to a fresh key. Keys are written in key order (the keys table's) as far as the
 * oldest key still open allows; when more than {@link STAGING_ROWS} rows wait, the idle keys are
 * written past it (a later row goes in out of order, which only costs SQLite a page split). A key
 * that gets a write or read after it was written (a read of an old key, a write after a long
 * pause) is merged into its row. Memory: the rows of the keys open at once, never the run's.
 *
 * {@link sealLedgerFile} writes the sealed ledger into a new file beside the old one and renames
 * it over it (so the file does not keep the hot path's pages as free space: the sealed ledger is
 * the size of its contents); {@link sealLedger} seals in place (in-memory ledgers, tests).
 */

/** Run time a key must stay idle before it is packed, ms. */
export const IDLE_MS = 5_000;
/** Rows (writes plus reads) held at most while waiting for an older key to go idle. */
export const STAGING_ROWS = 262_144;

/** The tables the seal consumes. */
const HOT_TABLES = ['write_batches', 'invokes', 'completions', 'read_log'] as const;

/** Whether the ledger holds appended rows that a seal would move. */
export function needsSeal(db: Database.Database): boolean {
  for (const t of HOT_TABLES) {
    if (hasTable(db, t) && db.prepare(`SELECT 1 FROM ${t} LIMIT 1`).get() !== undefined) return true;
  }
  return false;
}

/** A growable Float64Array of fixed-width rows with a free list, a next-link and a key per row. */
class Staging {
  data: Float64Array;
  next: Int32Array;
  /** 1 when the row has a text beside it (a trace, a read value that is not a write id). */
  text: Uint8Array;
  private free: Int32Array;
  private freeN = 0;
  private size = 0;
  used = 0;

  constructor(
    readonly fields: number,
    cap = 4096,
  ) {
    this.data = new Float64Array(cap * fields);
    this.next = new Int32Array(cap);
    this.text = new Uint8Array(cap);
    this.free = new Int32Array(cap);
  }

  alloc(): number {
    this.used++;
    if (this.freeN > 0) return this.free[--this.freeN];
    if (this.size === this.next.length) {
      const cap = this.next.length * 2;
      this.data = grownF64(this.data, cap * this.fields);
      this.next = grownI32(this.next, cap);
      const t = new Uint8Array(cap);
      t.set(this.text);
      this.text = t;
      this.free = grownI32(this.free, cap);
    }
    return this.size++;
  }

  release(slot: number): void {
    this.used--;
    this.text[slot] = 0;
    this.free[this.freeN++] = slot;
  }
}

function grownF64(a: Float64Array, n: number): Float64Array {
  const b = new Float64Array(n);
  b.set(a);
  return b;
}

function grownI32(a: Int32Array, n: number, fill?: number): Int32Array {
  const b = new Int32Array(n);
  if (fill !== undefined) b.fill(fill, a.length);
  b.set(a);
  return b;
}

/** Key ids the seal can index: the harness numbers keys 1, 2, ... */
const MAX_KEY_ID = 2 ** 28;

/** Per-key state, indexed by key_id (growable). */
class KeyTable {
  len = 0;
  headW: Int32Array = new Int32Array(0);
  tailW: Int32Array = new Int32Array(0);
  headR: Int32Array = new Int32Array(0);
  tailR: Int32Array = new Int32Array(0);
  nW: Int32Array = new Int32Array(0);
  nR: Int32Array = new Int32Array(0);
  outstanding: Int32Array = new Int32Array(0);
  last: Float64Array = new Float64Array(0);
  /** 0 not seen, 1 open, 2 idle (ready to write), 3 written, 4 written and open again (a merge) */
  state = new Uint8Array(0);

  ensure(keyId: number): void {
    if (!(Number.isInteger(keyId) && keyId >= 0 && keyId < MAX_KEY_ID)) throw new Error(`ledger: key id ${keyId} cannot be sealed (the harness numbers keys from 1)`);
    if (keyId < this.len) return;
    let n = Math.max(1024, this.len);
    while (n <= keyId) n *= 2;
    this.headW = grownI32(this.headW, n, -1);
    this.tailW = grownI32(this.tailW, n, -1);
    this.headR = grownI32(this.headR, n, -1);
    this.tailR = grownI32(this.tailR, n, -1);
    this.nW = grownI32(this.nW, n);
    this.nR = grownI32(this.nR, n);
    this.outstanding = grownI32(this.outstanding, n);
    this.last = grownF64(this.last, n);
    const st = new Uint8Array(n);
    st.set(this.state);
    this.state = st;
    this.len = n;
  }
}

/** A FIFO of (key, time) activity marks, in nondecreasing time. */
class ActivityQueue {
  private keys: Int32Array = new Int32Array(1 << 16);
  private times: Float64Array = new Float64Array(1 << 16);
  private head = 0;
  private tail = 0;

  push(key: number, t: number): void {
    if (this.tail === this.keys.length) {
      if (this.head > this.keys.length / 2) {
        this.keys.copyWithin(0, this.head, this.tail);
        this.times.copyWithin(0, this.head, this.tail);
        this.tail -= this.head;
        this.head = 0;
      } else {
        this.keys = grownI32(this.keys, this.keys.length * 2);
        this.times = grownF64(this.times, this.times.length * 2);
      }
    }
    this.keys[this.tail] = key;
    this.times[this.tail++] = t;
  }

  /** Pops every mark older than `before`, calling fn(key, time). */
  popBefore(before: number, fn: (key: number, t: number) => void): void {
    while (this.head < this.tail && this.times[this.head] < before) {
      const k = this.keys[this.head];
      const t = this.times[this.head++];
      fn(k, t);
    }
  }
}

/** Pending completions: write number w -> staging row (a ring by w, a map for collisions). */
class Pending {
  private readonly mask = (1 << 20) - 1;
  private readonly slot = new Float64Array(1 << 20).fill(-1);
  private readonly w = new Float64Array(1 << 20).fill(NaN);
  private readonly other = new Map<number, number>();

  set(w: number, s: number): void {
    const i = w & this.mask;
    if (this.slot[i] < 0) {
      this.slot[i] = s;
      this.w[i] = w;
    } else this.other.set(w, s);
  }

  take(w: number): number {
    const i = w & this.mask;
    if (this.w[i] === w && this.slot[i] >= 0) {
      const s = this.slot[i];
      this.slot[i] = -1;
      this.w[i] = NaN;
      return s;
    }
    const s = this.other.get(w);
    if (s === undefined) return -1;
    this.other.delete(w);
    return s;
  }
}

/** Where the seal reads the hot rows from (schema `src`) and writes key_log and strings (schema `dst`). */
interface SealIo {
  db: Database.Database;
  src: string;
  dst: string;
  phase?: (name: string, ms: number) => void;
}

/** Phase timings of a seal, ms (for the seal benchmark and the run's log). */
export interface SealTimings {
  copy: number;
  pack: number;
  swap: number;
}

const NULL = NaN;

/** Columns of a table in a schema. */
function columnsOf(db: Database.Database, schema: string, table: string): string[] {
  return (db.prepare(`SELECT name FROM pragma_table_info(?, ?)`).all(table, schema) as Array<{ name: string }>).map((c) => c.name);
}

/**
 * The streaming seal over one connection (see the module comment).
 * @returns the number of writes sealed.
 */
function sealStream(io: SealIo): number {
  const { db, src, dst } = io;
  const started = performance.now();
  const has = (t: string): boolean => db.prepare(`SELECT 1 FROM ${src}.sqlite_master WHERE type = 'table' AND name = ?`).get(t) !== undefined;
  const hasRows = (t: string): boolean => has(t) && db.prepare(`SELECT 1 FROM ${src}.${t} LIMIT 1`).get() !== undefined;
  const legacyInvokes = hasRows('invokes');
  const legacyReads = hasRows('read_log');
  // a ledger from before fmt, rd and rdx existed lacks those columns
  const batchCols = has('write_batches') ? new Set(columnsOf(db, src, 'write_batches')) : new Set<string>();
  const opt = (c: string): string => (batchCols.has(c) ? c : `NULL AS ${c}`);
  const batchIds = has('write_batches') ? (db.prepare(`SELECT id FROM ${src}.write_batches ORDER BY id`).pluck().all() as number[]) : [];
  const batchAt = has('write_batches') ? db.prepare(`SELECT inv, cmp, dict, traces, ${opt('fmt')}, ${opt('rd')}, ${opt('rdx')} FROM ${src}.write_batches WHERE id = ?`) : null;

  // strings: the sealed table's codes (kept from an earlier seal), the batches' own codes mapped to them
  const codes = new Map<string, number>();
  const texts: string[] = [];
  for (const [c, t] of db.prepare(`SELECT code, text FROM ${dst}.strings ORDER BY code`).raw().iterate() as Iterable<[number, string]>) {
    codes.set(t, c);
    texts[c] = t;
  }
  let nextCode = texts.length;
  const code = (t: string | null | undefined): number => {
    if (t === null || t === undefined) return NULL;
    let c = codes.get(t);
    if (c === undefined) {
      c = nextCode++;
      codes.set(t, c);
      texts[c] = t;
    }
    return c;
  };
  const batchCode: number[] = [];

  // the keys table's ids, in order: keys are written in this order as far as the open ones allow
  const order = db.prepare(`SELECT key_id FROM ${src}.keys WHERE key_id >= 0 AND key_id < ${MAX_KEY_ID} ORDER BY key_id`).pluck().all() as number[];
  let emitIdx = 0;
  const keys = new KeyTable();
  if (order.length > 0) keys.ensure(order[order.length - 1]);
  const ws = new Staging(KW_FIELDS);
  const rs = new Staging(KR_FIELDS);
  const pending = new Pending();
  const traces = new Map<number, string>();
  const readTexts = new Map<number, string>();
  const activity = new ActivityQueue();
  const idle: number[] = [];
  const insert = db.prepare(`INSERT INTO ${dst}.key_log (key_id, writes, reads, extra) VALUES (?, ?, ?, ?)`);
  const existing = db.prepare(`SELECT writes, reads, extra FROM ${dst}.key_log WHERE key_id = ?`);
  const replace = db.prepare(`UPDATE ${dst}.key_log SET writes = ?, reads = ?, extra = ? WHERE key_id = ?`);
  let sealed = 0;
  let now = -Infinity;
  let scratchW = new Float64Array(KW_FIELDS * 128);
  let scratchR = new Float64Array(KR_FIELDS * 128);
  let order2 = new Int32Array(128);

  const touch = (k: number): void => {
    keys.last[k] = now;
    activity.push(k, now);
    const st = keys.state[k];
    if (st === 0 || st === 2) keys.state[k] = 1;
    else if (st === 3) keys.state[k] = 4;
  };

  /** Writes key k's staged rows (merged with its row when it has one). */
  const emit = (k: number): void => {
    const st = keys.state[k];
    if (st === 3 || st === 0) return;
    const merge = st === 4;
    keys.state[k] = 3;
    let nW = keys.nW[k];
    let nR = keys.nR[k];
    if (nW === 0 && nR === 0) return;
    const extra: KeyExtra = {};
    let baseW = 0;
    let baseR = 0;
    let old: { writes: Buffer | null; reads: Buffer | null; extra: string | null } | undefined;
    if (merge) {
      old = existing.get(k) as typeof old;
      if (old !== undefined) {
        const oe = parseExtra(old.extra);
        if (old.writes !== null) baseW = unpackRows(old.writes).n;
        if (old.reads !== null) baseR = unpackRows(old.reads).n;
        if (oe?.t) extra.t = [...oe.t];
        if (oe?.x) extra.x = [...oe.x];
      }
    }
    const totalW = baseW + nW;
    const totalR = baseR + nR;
    if (scratchW.length < totalW * KW_FIELDS) scratchW = new Float64Array(totalW * KW_FIELDS * 2);
    if (scratchR.length < totalR * KR_FIELDS) scratchR = new Float64Array(totalR * KR_FIELDS * 2);
    if (old?.writes) scratchW.set(unpackRows(old.writes).rows.subarray(0, baseW * KW_FIELDS));
    if (old?.reads) scratchR.set(unpackRows(old.reads).rows.subarray(0, baseR * KR_FIELDS));
    // writes: the staged rows after the old ones
    const wd = ws.data;
    let i = baseW;
    let sorted = true;
    for (let s = keys.headW[k]; s >= 0; ) {
      const to = i * KW_FIELDS;
      const from = s * KW_FIELDS;
      for (let f = 0; f < KW_FIELDS; f++) scratchW[to + f] = wd[from + f];
      if (i > 0 && scratchW[to] <= scratchW[to - KW_FIELDS]) sorted = false;
      if (ws.text[s] === 1) {
        (extra.t ??= []).push([wd[from], traces.get(s)!]);
        traces.delete(s);
      }
      const next = ws.next[s];
      ws.release(s);
      s = next;
      i++;
    }
    if (!sorted) sortRows(scratchW, totalW, KW_FIELDS, (a, b) => a[0] - b[0]);
    // reads: in (invoke, recorded) order; their text by position after sorting
    const rd = rs.data;
    i = baseR;
    if (order2.length < totalR) order2 = new Int32Array(totalR * 2);
    const readText = new Map<number, string>();
    for (const [pos, t] of extra.x ?? []) readText.set(scratchR[pos * KR_FIELDS], t);
    for (let s = keys.headR[k]; s >= 0; ) {
      const to = i * KR_FIELDS;
      const from = s * KR_FIELDS;
      for (let f = 0; f < KR_FIELDS; f++) scratchR[to + f] = rd[from + f];
      if (rs.text[s] === 1) {
        readText.set(rd[from], readTexts.get(s)!);
        readTexts.delete(s);
      }
      const next = rs.next[s];
      rs.release(s);
      s = next;
      i++;
    }
    if (totalR > 1) sortRows(scratchR, totalR, KR_FIELDS, (a, b) => a[1] - b[1] || a[0] - b[0]);
    if (readText.size > 0) {
      extra.x = [];
      for (let j = 0; j < totalR; j++) {
        const t = readText.get(scratchR[j * KR_FIELDS]);
        if (t !== undefined) extra.x.push([j, t]);
      }
    }
    if (extra.t !== undefined && !sorted) extra.t.sort((a, b) => a[0] - b[0]);
    keys.headW[k] = keys.tailW[k] = keys.headR[k] = keys.tailR[k] = -1;
    keys.nW[k] = 0;
    keys.nR[k] = 0;
    nW = totalW;
    nR = totalR;
    const p = packKey(scratchW, nW, scratchR, nR, extra);
    if (old !== undefined) replace.run(p.writes, p.reads, p.extra, k);
    else insert.run(k, p.writes, p.reads, p.extra);
    sealed += nW - baseW;
  };

  /** Keys idle since before now - IDLE_MS become ready; ready keys are written in key order. */
  const advance = (end: boolean): void => {
    activity.popBefore(end ? Infinity : now - IDLE_MS, (k, t) => {
      if (keys.last[k] !== t || (keys.outstanding[k] > 0 && !end)) return;
      const st = keys.state[k];
      if (st === 1) {
        keys.state[k] = 2;
        idle.push(k);
      } else if (st === 4) {
        // a late write or read of a key already written: merged into its row now
        emit(k);
      }
    });
    while (emitIdx < order.length) {
      const k = order[emitIdx];
      const st = keys.state[k];
      if (st === 2) emit(k);
      else if (st === 1 || (st === 0 && !end)) break;
      emitIdx++;
    }
    if (end || ws.used + rs.used > STAGING_ROWS) {
      // the oldest open key holds up the order: write the idle keys past it
      for (const k of idle.splice(0).sort((a, b) => a - b)) emit(k);
    } else if (idle.length > 65_536) {
      let j = 0;
      for (const k of idle) if (keys.state[k] === 2) idle[j++] = k;
      idle.length = j;
    }
  };

  const addWrite = (w: number, keyId: number, seq: number, op: number, invoke: number): void => {
    keys.ensure(keyId);
    if (invoke > now) now = invoke;
    const s = ws.alloc();
    const d = ws.data;
    const b = s * KW_FIELDS;
    d[b] = seq;
    d[b + 1] = op;
    d[b + 2] = invoke;
    for (let f = 3; f < KW_FIELDS; f++) d[b + f] = NULL;
    ws.next[s] = -1;
    if (keys.tailW[keyId] < 0) keys.headW[keyId] = s;
    else ws.next[keys.tailW[keyId]] = s;
    keys.tailW[keyId] = s;
    keys.nW[keyId]++;
    keys.outstanding[keyId]++;
    pending.set(w, s * MAX_KEY_ID_BITS + keyId);
    touch(keyId);
  };
  /** fields: complete, outcome, status, attempts, node, epoch, version, revision, mode, copies (sealed codes) */
  const addCompletion = (w: number, f: ArrayLike<number>, trace: string | undefined): void => {
    const p = pending.take(w);
    if (p < 0) return;
    const k = p % MAX_KEY_ID_BITS;
    const s = (p - k) / MAX_KEY_ID_BITS;
    const b = s * KW_FIELDS;
    const d = ws.data;
    for (let i = 0; i < 10; i++) d[b + 3 + i] = f[i];
    if (trace !== undefined) {
      traces.set(s, trace);
      ws.text[s] = 1;
    }
    keys.outstanding[k]--;
    touch(k);
  };
  let nextRid = 1;
  const addRead = (rid: number, keyId: number, invoke: number, complete: number, outcome: number, node: number, vk: number, vs: number, kind: number, text: string | undefined): void => {
    keys.ensure(keyId);
    if (invoke > now) now = invoke;
    const s = rs.alloc();
    const d = rs.data;
    const b = s * KR_FIELDS;
    d[b] = rid;
    d[b + 1] = invoke;
    d[b + 2] = complete;
    d[b + 3] = outcome;
    d[b + 4] = node;
    d[b + 5] = vk;
    d[b + 6] = vs;
    d[b + 7] = kind;
    if (text !== undefined) {
      readTexts.set(s, text);
      rs.text[s] = 1;
    }
    rs.next[s] = -1;
    if (keys.tailR[keyId] < 0) keys.headR[keyId] = s;
    else rs.next[keys.tailR[keyId]] = s;
    keys.tailR[keyId] = s;
    keys.nR[keyId]++;
    if (rid >= nextRid) nextRid = rid + 1;
    touch(keyId);
  };

  const opCode = (op: string): number => {
    const i = OPS.indexOf(op as (typeof OPS)[number]);
    if (i < 0) throw new Error(`ledger: unknown op ${op}`);
    return i;
  };
  const outcomeCode = (o: string | null): number => (o === null ? NULL : OUTCOMES.indexOf(o as (typeof OUTCOMES)[number]) < 0 ? 2 : OUTCOMES.indexOf(o as (typeof OUTCOMES)[number]));
  const cf = new Float64Array(10);

  // the plain writer's rows first (a ledger has these or batches; both only from a hand-made mix)
  if (legacyInvokes) {
    type Legacy = [number, number, number, string, number, number | null, string | null, string | null, number | null, string | null, number | null, number | null, number | null, string | null, string | null, number | null];
    const hasCopies = db.prepare(`SELECT 1 FROM pragma_table_info('completions', '${src}') WHERE name = 'ack_copies'`).get() !== undefined;
    const page = db
      .prepare(
        `SELECT i.w, i.key_id, i.seq, i.op, i.invoke_ms, c.complete_ms, c.outcome, c.status, c.attempts, c.ack_node, c.ack_epoch, c.ack_version, c.ack_revision, c.ack_mode, c.trace, ${hasCopies ? 'c.ack_copies' : 'NULL'}
         FROM ${src}.invokes i LEFT JOIN ${src}.completions c ON c.w = i.w WHERE i.w > ? ORDER BY i.w LIMIT 65536`,
      )
      .raw();
    // pages (.all): the seal writes between them, which an open iterator would not allow
    for (let after = -Infinity, rows = page.all(after) as Legacy[]; rows.length > 0; after = rows[rows.length - 1][0], rows = page.all(after) as Legacy[]) {
      for (const r of rows) {
        addWrite(r[0], r[1], r[2], opCode(r[3]), r[4]);
        if (r[5] !== null) {
          cf[0] = r[5];
          cf[1] = outcomeCode(r[6]);
          cf[2] = code(r[7]);
          cf[3] = r[8] ?? NULL;
          cf[4] = code(r[9]);
          cf[5] = r[10] ?? NULL;
          cf[6] = r[11] ?? NULL;
          cf[7] = r[12] ?? NULL;
          cf[8] = r[13] === null ? NULL : r[13] === 'async' ? 1 : 0;
          cf[9] = r[15] ?? NULL;
          addCompletion(r[0], cf, r[14] ?? undefined);
        }
      }
      advance(false);
    }
  }
  if (legacyReads) {
    type LegacyRead = [number, number, number, number | null, string, string | null, string | null, number | null, number | null, string | null];
    const page = db.prepare(`SELECT rid, key_id, invoke_ms, complete_ms, outcome, node, value, value_key_id, value_seq, kind FROM ${src}.read_log WHERE rid > ? ORDER BY rid LIMIT 65536`).raw();
    for (let after = -Infinity, rows = page.all(after) as LegacyRead[]; rows.length > 0; after = rows[rows.length - 1][0], rows = page.all(after) as LegacyRead[]) {
      for (const r of rows) {
        const text = r[6] !== null && r[7] === null ? r[6] : undefined;
        const kind = r[9] === null ? NULL : READ_KINDS.indexOf(r[9] as (typeof READ_KINDS)[number]);
        addRead(r[0], r[1], r[2], r[3] ?? NULL, outcomeCode(r[4]), code(r[5]), r[6] === null ? NULL : r[7] === null ? KR_TEXT : r[7], r[8] ?? NULL, kind < 0 ? NULL : kind, text);
      }
      advance(false);
    }
  }

  const scratch: BatchScratch = {};
  for (const id of batchIds) {
    const b = decodeBatch(batchAt!.get(id) as BatchRow, scratch);
    for (const [c, t] of b.dict) batchCode[c] = code(t);
    const inv = b.inv;
    for (let i = 0; i < inv.length; i += INV_FIELDS) addWrite(inv[i], inv[i + 1], inv[i + 2], inv[i + 3], inv[i + 4]);
    const tr = b.traces.length === 0 ? null : new Map(b.traces);
    const cmp = b.cmp;
    const width = b.cmpFields;
    for (let i = 0; i < cmp.length; i += width) {
      const acked = cmp[i + 5] >= 0;
      const st = cmp[i + 3];
      cf[0] = cmp[i + 1];
      cf[1] = cmp[i + 2];
      cf[2] = st >= 0 ? (batchCode[st] ?? NULL) : NULL;
      cf[3] = cmp[i + 4];
      cf[4] = acked ? (batchCode[cmp[i + 5]] ?? NULL) : NULL;
      cf[5] = acked ? cmp[i + 6] : NULL;
      cf[6] = acked ? cmp[i + 7] : NULL;
      cf[7] = acked ? cmp[i + 8] : NULL;
      cf[8] = acked ? (cmp[i + 9] === 1 ? 1 : 0) : NULL;
      cf[9] = acked && width > 10 && cmp[i + 10] >= 0 ? cmp[i + 10] : NULL;
      addCompletion(cmp[i], cf, tr === null ? undefined : tr.get(cmp[i]));
    }
    const rd = b.rd;
    const rdTexts = b.rdx.length === 0 ? null : new Map(b.rdx);
    for (let i = 0, j = 0; i < rd.length; i += RD_FIELDS, j++) {
      const vk = rd[i + 5];
      const text = vk === RD_TEXT ? (rdTexts?.get(j) ?? undefined) : undefined;
      const value = vk === RD_ABSENT ? NULL : vk === RD_TEXT ? (text === undefined ? NULL : KR_TEXT) : vk;
      const node = rd[i + 4];
      addRead(nextRid, rd[i], rd[i + 1], rd[i + 2], rd[i + 3], node >= 0 ? (batchCode[node] ?? NULL) : NULL, value, vk >= 0 ? rd[i + 6] : NULL, rd[i + 7] >= 0 ? rd[i + 7] : NULL, text);
    }
    advance(false);
  }
  // the end: writes never completed stay indeterminate (outcome NULL)
  advance(true);
  const insString = db.prepare(`INSERT OR IGNORE INTO ${dst}.strings (code, text) VALUES (?, ?)`);
  for (let c = 0; c < texts.length; c++) if (texts[c] !== undefined) insString.run(c, texts[c]);
  io.phase?.('pack', performance.now() - started);
  return sealed;
}

/** Packs (staging row, key) into one number for the pending map. */
const MAX_KEY_ID_BITS = MAX_KEY_ID;

/** Sorts n rows of `fields` numbers in place (rarely needed: rows mostly arrive in order). */
function sortRows(data: Float64Array, n: number, fields: number, cmp: (a: Float64Array, b: Float64Array) => number): void {
  const rows: Float64Array[] = [];
  for (let i = 0; i < n; i++) rows.push(data.slice(i * fields, (i + 1) * fields));
  rows.sort(cmp);
  rows.forEach((r, i) => data.set(r, i * fields));
}

/**
 * Seals a ledger in place, in one transaction (all or nothing): the hot rows become key_log rows
 * and are deleted. Idempotent. The file keeps the hot rows' pages as free space: for a file, use
 * {@link sealLedgerFile}.
 * @returns the number of writes sealed.
 */
export function sealLedger(db: Database.Database): number {
  if (!needsSeal(db)) return 0;
  applySchema(db);
  return db.transaction(() => {
    const n = sealStream({ db, src: 'main', dst: 'main' });
    for (const t of HOT_TABLES) db.exec(`DELETE FROM ${t}`);
    return n;
  })();
}

const quote = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/**
 * Seals the ledger file at `path` into a new file and renames it over the old one (crash-safe:
 * until the rename the old file is untouched; a leftover `<path>.sealing` is removed first). Every
 * table but the hot ones is copied as it is; tables this code does not know are copied with
 * their own definition. No other connection may write to the ledger meanwhile; connections open
 * on the old file keep seeing the old file.
 * @returns the number of writes sealed (0, with no file written, when nothing needed sealing).
 * @throws Error (SQLite's, or one line) when the ledger cannot be read or the new file written.
 */
export function sealLedgerFile(path: string, timings?: Partial<SealTimings>): number {
  const t0 = performance.now();
  const tmp = `${path}.sealing`;
  for (const s of ['', '-wal', '-shm', '-journal']) rmSync(tmp + s, { force: true });
  const probe = new Database(path, { fileMustExist: true });
  try {
    if (!needsSeal(probe)) return 0;
    // the old file's WAL folded in, so that the rename leaves no WAL of the old file behind
    probe.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    probe.close();
  }
  const db = new Database(tmp);
  let sealed = 0;
  let mark = 0;
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = OFF');
    db.pragma('cache_size = -32768');
    applySchema(db);
    db.prepare('ATTACH DATABASE ? AS src').run(path);
    const ours = new Set(LEDGER_DDL.map((d) => /CREATE (?:TABLE|INDEX) IF NOT EXISTS (\w+)/.exec(d)?.[1]).filter((n): n is string => n !== undefined));
    db.transaction(() => {
      const tables = db.prepare("SELECT name, sql FROM src.sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all() as Array<{ name: string; sql: string }>;
      for (const t of tables) {
        if ((HOT_TABLES as readonly string[]).includes(t.name)) continue;
        if (!ours.has(t.name)) db.exec(t.sql.replace(/^CREATE TABLE\s+("?[\w]+"?)/i, `CREATE TABLE main.$1`));
        const have = new Set(columnsOf(db, 'main', t.name));
        const cols = columnsOf(db, 'src', t.name).filter((c) => have.has(c)).map(quote);
        if (cols.length > 0) db.exec(`INSERT INTO main.${quote(t.name)} (${cols.join(', ')}) SELECT ${cols.join(', ')} FROM src.${quote(t.name)}`);
      }
      const indexes = db.prepare("SELECT name, sql FROM src.sqlite_master WHERE type = 'index' AND sql IS NOT NULL").all() as Array<{ name: string; sql: string }>;
      for (const i of indexes) if (!ours.has(i.name)) db.exec(i.sql.replace(/^CREATE (UNIQUE )?INDEX\s+/i, 'CREATE $1INDEX IF NOT EXISTS main.'));
      if (timings) timings.copy = performance.now() - t0;
      sealed = sealStream({ db, src: 'src', dst: 'main', phase: (name, ms) => timings && (timings[name as 'pack'] = ms) });
      mark = performance.now();
    })();
    db.exec('DETACH DATABASE src');
    db.pragma('synchronous = NORMAL');
    db.pragma('wal_checkpoint(TRUNCATE)');
  } catch (e) {
    db.close();
    for (const s of ['', '-wal', '-shm', '-journal']) rmSync(tmp + s, { force: true });
    throw e;
  }
  db.close();
  for (const s of ['-wal', '-shm']) if (existsSync(path + s)) rmSync(path + s, { force: true });
  renameSync(tmp, path);
  if (timings) timings.swap = performance.now() - mark;
  return sealed;
}
