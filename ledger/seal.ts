import { existsSync, renameSync, rmSync } from 'node:fs';
import Database from 'better-sqlite3';
import { unpackRows } from './column-pack.js';
import { hasTable, KR_FIELDS, KR_TEXT, KW_FIELDS, packKey, parseExtra, type KeyExtra } from './key-log.js';
import { applySchema } from './schema.js';
import { decodeBatch, INV_FIELDS, OPS, OUTCOMES, RD_ABSENT, RD_FIELDS, RD_TEXT, READ_KINDS, type BatchRow, type BatchScratch } from './write-batches.js';

/**
 * The seal (DESIGN.md §4, issue 11: the end of a long run stays short, the ledger small): the hot
 * path's appended rows (packed `write_batches`, and the `invokes` / `completions` / `read_log`
 * rows of the plain SQLite writer) become one `key_log` row per key (key-log.ts), which the
 * verifier reads.
 *
 * A {@link KeyPacker} does it in one streaming pass in recorded order, and can do it while the run
 * goes on (the ledger's worker thread gives it a small share of its time between group commits):
 * invokes are joined with their completions, and a key's rows are held until the key has been
 * idle for {@link IDLE_MS} of run time (no invoke, completion or read, none of its writes in
 * flight; a workload key lives a few seconds to a minute, then its slot moves to a fresh key),
 * then packed into its row, in key order as far as the oldest open key allows (past it when more
 * than {@link STAGING_ROWS} rows wait). A batch is deleted once every row of it is packed, so the
 * file's free pages are reused by the run and the end of a 4-hour run has only its last seconds
 * left to pack. Every step is one transaction: a crash leaves each write in key_log or in a batch
 * (or both: a key whose row exists gets the batch's rows merged in, each write once by its seq,
 * each read once by its rid). Memory: the rows of the keys open at once, never the run's.
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

function grownF64(a: Float64Array, n: number): Float64Array {
  const b = new Float64Array(n);
  b.set(a);
  return b;
}

function grownI32(a: Int32Array, n: number): Int32Array {
  const b = new Int32Array(n);
  b.set(a);
  return b;
}

/**
 * A growable Float64Array of fixed-width rows with a free list, a next-link per row and the
 * batches each row came from (its invoke's or read's, and its completion's).
 */
class Staging {
  data: Float64Array;
  next: Int32Array;
  batchA: Int32Array;
  batchB: Int32Array;
  /** The key of each row. */
  keyOf: Float64Array;
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
    this.batchA = new Int32Array(cap);
    this.batchB = new Int32Array(cap);
    this.keyOf = new Float64Array(cap);
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
      this.batchA = grownI32(this.batchA, cap);
      this.batchB = grownI32(this.batchB, cap);
      this.keyOf = grownF64(this.keyOf, cap);
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

/** An open key: its staged rows (linked lists), writes in flight, last activity. */
interface OpenKey {
  headW: number;
  tailW: number;
  headR: number;
  tailR: number;
  nW: number;
  nR: number;
  outstanding: number;
  last: number;
  idle: boolean;
}

/** A FIFO of (key, time) activity marks, in nondecreasing time. */
class ActivityQueue {
  private keys: Float64Array = new Float64Array(1 << 14);
  private times: Float64Array = new Float64Array(1 << 14);
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
        this.keys = grownF64(this.keys, this.keys.length * 2);
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

/** A min-heap of key ids (lazy: entries of keys no longer open are skipped when they surface). */
class MinHeap {
  private a: number[] = [];
  push(x: number): void {
    const a = this.a;
    a.push(x);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (a[p] <= x) break;
      a[i] = a[p];
      i = p;
    }
    a[i] = x;
  }
  peek(): number | undefined {
    return this.a[0];
  }
  get size(): number {
    return this.a.length;
  }
  pop(): void {
    const a = this.a;
    const last = a.pop()!;
    if (a.length === 0) return;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= a.length) break;
      const r = l + 1;
      const c = r < a.length && a[r] < a[l] ? r : l;
      if (a[c] >= last) break;
      a[i] = a[c];
      i = c;
    }
    a[i] = last;
  }
}

/** Counts per batch id (a ring by id, a map for collisions); a count of 0 frees its entry. */
class BatchCounts {
  private readonly mask = (1 << 18) - 1;
  private readonly n = new Int32Array(1 << 18);
  private readonly id = new Float64Array(1 << 18).fill(NaN);
  private readonly other = new Map<number, number>();

  /** Adds delta to batch's count; returns the new count. */
  add(batch: number, delta: number): number {
    const i = batch & this.mask;
    if (this.id[i] === batch) {
      const v = (this.n[i] += delta);
      if (v === 0) this.id[i] = NaN;
      return v;
    }
    if (this.id[i] !== this.id[i] && !this.other.has(batch)) {
      this.id[i] = batch;
      this.n[i] = delta;
      if (delta === 0) this.id[i] = NaN;
      return delta;
    }
    const v = (this.other.get(batch) ?? 0) + delta;
    if (v === 0) this.other.delete(batch);
    else this.other.set(batch, v);
    return v;
  }

  has(batch: number): boolean {
    return this.id[batch & this.mask] === batch || this.other.has(batch);
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

const NULL = NaN;

/** Columns of a table. */
function columnsOf(db: Database.Database, table: string): string[] {
  return (db.prepare(`SELECT name FROM pragma_table_info(?)`).all(table) as Array<{ name: string }>).map((c) => c.name);
}

/** Sorts n rows of `fields` numbers in place (rarely needed: rows mostly arrive in order). */
function sortRows(data: Float64Array, n: number, fields: number, cmp: (a: Float64Array, b: Float64Array) => number): void {
  const rows: Float64Array[] = [];
  for (let i = 0; i < n; i++) rows.push(data.slice(i * fields, (i + 1) * fields));
  rows.sort(cmp);
  rows.forEach((r, i) => data.set(r, i * fields));
}

/** Options of a {@link KeyPacker}. */
export interface KeyPackerOptions {
  /** Run time a key must stay idle before it is packed, ms (default {@link IDLE_MS}). */
  idleMs?: number;
  /** Rows held at most while an older key is open (default {@link STAGING_ROWS}). */
  stagingRows?: number;
}

/**
 * Packs a ledger's hot rows into key_log (see the module comment), on the caller's connection.
 * {@link step} packs what is committed so far for a bounded time (during the run);
 * {@link finish} packs everything and empties the hot tables (the seal).
 */
export class KeyPacker {
  private readonly idleMs: number;
  private readonly stagingRows: number;
  private cursor = 0;
  private readonly keys = new Map<number, OpenKey>();
  private readonly openHeap = new MinHeap();
  private readonly idle = new MinHeap();
  private readonly ws = new Staging(KW_FIELDS);
  private readonly rs = new Staging(KR_FIELDS);
  private readonly pending = new Pending();
  private readonly traces = new Map<number, string>();
  private readonly readTexts = new Map<number, string>();
  private readonly activity = new ActivityQueue();
  /** Rows of a processed batch not packed yet (batch id -> count); deleted at 0. */
  private readonly unpacked = new BatchCounts();
  private readonly doneBatches: number[] = [];
  private readonly codes = new Map<string, number>();
  private readonly texts: string[] = [];
  private readonly newTexts: number[] = [];
  /** The hot path's string codes -> the sealed ones. */
  private readonly hotCode: number[] = [];
  private now = -Infinity;
  private finishing = false;
  private nextRid = 1;
  private packed = 0;
  private scratchW = new Float64Array(KW_FIELDS * 128);
  private scratchR = new Float64Array(KR_FIELDS * 128);
  private readonly batchScratch: BatchScratch = {};
  private readonly cf = new Float64Array(10);
  private readonly st: {
    batches: Database.Statement;
    insert: Database.Statement;
    existing: Database.Statement;
    replace: Database.Statement;
    deleteBatch: Database.Statement;
    insString: Database.Statement;
  };

  constructor(
    private readonly db: Database.Database,
    opts: KeyPackerOptions = {},
  ) {
    this.idleMs = opts.idleMs ?? IDLE_MS;
    this.stagingRows = opts.stagingRows ?? STAGING_ROWS;
    applySchema(db);
    for (const [c, t] of db.prepare('SELECT code, text FROM strings ORDER BY code').raw().iterate() as Iterable<[number, string]>) {
      this.codes.set(t, c);
      this.texts[c] = t;
    }
    for (const [c, t] of db.prepare('SELECT code, text FROM hot_strings').raw().iterate() as Iterable<[number, string]>) this.hotCode[c] = this.code(t);
    const maxRid = db.prepare('SELECT MAX(rid) FROM read_log').pluck().get() as number | null;
    if (maxRid !== null) this.nextRid = maxRid + 1;
    const cols = new Set(columnsOf(db, 'write_batches'));
    this.st = {
      batches: db.prepare(`SELECT id, inv, cmp, dict, traces, fmt, rd, rdx, ${cols.has('rid0') ? 'rid0' : 'NULL AS rid0'} FROM write_batches WHERE id > ? ORDER BY id LIMIT 64`),
      insert: db.prepare('INSERT INTO key_log (key_id, writes, reads, extra) VALUES (?, ?, ?, ?) ON CONFLICT (key_id) DO NOTHING'),
      existing: db.prepare('SELECT writes, reads, extra FROM key_log WHERE key_id = ?'),
      replace: db.prepare('UPDATE key_log SET writes = ?, reads = ?, extra = ? WHERE key_id = ?'),
      deleteBatch: db.prepare('DELETE FROM write_batches WHERE id = ?'),
      insString: db.prepare('INSERT OR IGNORE INTO strings (code, text) VALUES (?, ?)'),
    };
  }

  /** Writes packed so far (this packer's). */
  get sealed(): number {
    return this.packed;
  }

  private code(t: string | null | undefined): number {
    if (t === null || t === undefined) return NULL;
    let c = this.codes.get(t);
    if (c === undefined) {
      c = this.texts.length;
      this.codes.set(t, c);
      this.texts[c] = t;
      this.newTexts.push(c);
    }
    return c;
  }

  private open(k: number): OpenKey {
    let o = this.keys.get(k);
    if (o === undefined) {
      if (!Number.isSafeInteger(k)) throw new Error(`ledger: key id ${k} is not an integer`);
      o = { headW: -1, tailW: -1, headR: -1, tailR: -1, nW: 0, nR: 0, outstanding: 0, last: -Infinity, idle: false };
      this.keys.set(k, o);
      this.openHeap.push(k);
    }
    return o;
  }

  private touch(k: number, o: OpenKey): void {
    o.last = this.now;
    if (o.idle) {
      o.idle = false;
      this.openHeap.push(k);
    }
    this.activity.push(k, this.now);
  }

  private count(batch: number, delta: number): void {
    if (batch < 0) return;
    if (this.unpacked.add(batch, delta) === 0 && batch <= this.cursor) this.doneBatches.push(batch);
  }

  private addWrite(batch: number, w: number, k: number, seq: number, op: number, invoke: number): void {
    const o = this.open(k);
    if (invoke > this.now) this.now = invoke;
    const ws = this.ws;
    const s = ws.alloc();
    const d = ws.data;
    const b = s * KW_FIELDS;
    d[b] = seq;
    d[b + 1] = op;
    d[b + 2] = invoke;
    for (let f = 3; f < KW_FIELDS; f++) d[b + f] = NULL;
    ws.next[s] = -1;
    ws.batchA[s] = batch;
    ws.batchB[s] = -1;
    ws.keyOf[s] = k;
    if (o.tailW < 0) o.headW = s;
    else ws.next[o.tailW] = s;
    o.tailW = s;
    o.nW++;
    o.outstanding++;
    this.count(batch, 1);
    this.pending.set(w, s);
    this.touch(k, o);
  }

  /** f: complete, outcome, status, attempts, node, epoch, version, revision, mode, copies (sealed codes). */
  private addCompletion(batch: number, w: number, f: Float64Array, trace: string | undefined): void {
    const s = this.pending.take(w);
    if (s < 0) return;
    const b = s * KW_FIELDS;
    const d = this.ws.data;
    for (let i = 0; i < 10; i++) d[b + 3 + i] = f[i];
    if (trace !== undefined) {
      this.traces.set(s, trace);
      this.ws.text[s] = 1;
    }
    this.ws.batchB[s] = batch;
    this.count(batch, 1);
    const k = this.ws.keyOf[s];
    const o = this.keys.get(k)!;
    o.outstanding--;
    this.touch(k, o);
  }

  private addRead(batch: number, rid: number, k: number, invoke: number, complete: number, outcome: number, node: number, vk: number, vs: number, kind: number, text: string | undefined): void {
    const o = this.open(k);
    if (invoke > this.now) this.now = invoke;
    const rs = this.rs;
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
      this.readTexts.set(s, text);
      rs.text[s] = 1;
    }
    rs.next[s] = -1;
    rs.batchA[s] = batch;
    if (o.tailR < 0) o.headR = s;
    else rs.next[o.tailR] = s;
    o.tailR = s;
    o.nR++;
    if (batch >= 0) this.count(batch, 1);
    if (rid >= this.nextRid) this.nextRid = rid + 1;
    this.touch(k, o);
  }

  /** Packs key k's staged rows into its row (merged into the row it has: each write once by seq, each read once by rid). */
  private emit(k: number, o: OpenKey): void {
    this.keys.delete(k);
    const ws = this.ws;
    const rs = this.rs;
    const nW = o.nW;
    const nR = o.nR;
    if (this.scratchW.length < nW * KW_FIELDS) this.scratchW = new Float64Array(nW * KW_FIELDS * 2);
    if (this.scratchR.length < nR * KR_FIELDS) this.scratchR = new Float64Array(nR * KR_FIELDS * 2);
    const sw = this.scratchW;
    const sr = this.scratchR;
    const extra: KeyExtra = {};
    const wd = ws.data;
    let i = 0;
    let sorted = true;
    for (let s = o.headW; s >= 0; ) {
      const to = i * KW_FIELDS;
      const from = s * KW_FIELDS;
      for (let f = 0; f < KW_FIELDS; f++) sw[to + f] = wd[from + f];
      if (i > 0 && sw[to] <= sw[to - KW_FIELDS]) sorted = false;
      if (ws.text[s] === 1) {
        (extra.t ??= []).push([wd[from], this.traces.get(s)!]);
        this.traces.delete(s);
      }
      this.count(ws.batchA[s], -1);
      if (ws.batchB[s] >= 0) this.count(ws.batchB[s], -1);
      const next = ws.next[s];
      ws.release(s);
      s = next;
      i++;
    }
    if (!sorted) {
      sortRows(sw, nW, KW_FIELDS, (a, b) => a[0] - b[0]);
      extra.t?.sort((a, b) => a[0] - b[0]);
    }
    const rd = rs.data;
    const readText = new Map<number, string>();
    i = 0;
    for (let s = o.headR; s >= 0; ) {
      const to = i * KR_FIELDS;
      const from = s * KR_FIELDS;
      for (let f = 0; f < KR_FIELDS; f++) sr[to + f] = rd[from + f];
      if (rs.text[s] === 1) {
        readText.set(rd[from], this.readTexts.get(s)!);
        this.readTexts.delete(s);
      }
      if (rs.batchA[s] >= 0) this.count(rs.batchA[s], -1);
      const next = rs.next[s];
      rs.release(s);
      s = next;
      i++;
    }
    if (nR > 1) sortRows(sr, nR, KR_FIELDS, (a, b) => a[1] - b[1] || a[0] - b[0]);
    if (readText.size > 0) {
      extra.x = [];
      for (let j = 0; j < nR; j++) {
        const t = readText.get(sr[j * KR_FIELDS]);
        if (t !== undefined) extra.x.push([j, t]);
      }
    }
    const p = packKey(sw, nW, sr, nR, extra);
    if (this.st.insert.run(k, p.writes, p.reads, p.extra).changes === 0) this.merge(k, sw, nW, sr, nR, extra);
    else this.packed += nW;
  }

  /** Merges rows into key k's existing row: each write once (by seq), each read once (by rid). */
  private merge(k: number, sw: Float64Array, nW: number, sr: Float64Array, nR: number, extra: KeyExtra): void {
    const old = this.st.existing.get(k) as { writes: Buffer | null; reads: Buffer | null; extra: string | null };
    const oe = parseExtra(old.extra) ?? {};
    const ow = old.writes === null ? { n: 0, rows: new Float64Array(0) } : unpackRows(old.writes);
    const or = old.reads === null ? { n: 0, rows: new Float64Array(0) } : unpackRows(old.reads);
    const seqs = new Set<number>();
    for (let i = 0; i < ow.n; i++) seqs.add(ow.rows[i * KW_FIELDS]);
    const rids = new Set<number>();
    for (let i = 0; i < or.n; i++) rids.add(or.rows[i * KR_FIELDS]);
    const W = new Float64Array((ow.n + nW) * KW_FIELDS);
    W.set(ow.rows.subarray(0, ow.n * KW_FIELDS));
    let w = ow.n;
    const traces = new Map<number, string>(oe.t ?? []);
    const newTraces = new Map<number, string>(extra.t ?? []);
    for (let i = 0; i < nW; i++) {
      const seq = sw[i * KW_FIELDS];
      if (seqs.has(seq)) continue;
      seqs.add(seq);
      W.set(sw.subarray(i * KW_FIELDS, (i + 1) * KW_FIELDS), w * KW_FIELDS);
      const t = newTraces.get(seq);
      if (t !== undefined) traces.set(seq, t);
      w++;
      this.packed++;
    }
    sortRows(W, w, KW_FIELDS, (a, b) => a[0] - b[0]);
    const R = new Float64Array((or.n + nR) * KR_FIELDS);
    R.set(or.rows.subarray(0, or.n * KR_FIELDS));
    const readText = new Map<number, string>();
    for (const [pos, t] of oe.x ?? []) readText.set(or.rows[pos * KR_FIELDS], t);
    for (const [pos, t] of extra.x ?? []) readText.set(sr[pos * KR_FIELDS], t);
    let r = or.n;
    for (let i = 0; i < nR; i++) {
      if (rids.has(sr[i * KR_FIELDS])) continue;
      R.set(sr.subarray(i * KR_FIELDS, (i + 1) * KR_FIELDS), r * KR_FIELDS);
      r++;
    }
    sortRows(R, r, KR_FIELDS, (a, b) => a[1] - b[1] || a[0] - b[0]);
    const merged: KeyExtra = {};
    if (traces.size > 0) merged.t = [...traces].sort((a, b) => a[0] - b[0]);
    for (let j = 0; j < r; j++) {
      const t = readText.get(R[j * KR_FIELDS]);
      if (t !== undefined) (merged.x ??= []).push([j, t]);
    }
    const p = packKey(W, w, R, r, merged);
    this.st.replace.run(p.writes, p.reads, p.extra, k);
  }

  /** Keys idle since before now - idleMs become ready; ready keys are packed in key order. */
  private advance(end: boolean): void {
    if (end) {
      // every key still open, in key order (also those whose last mark was consumed while a write of theirs was in flight)
      this.activity.popBefore(Infinity, () => undefined);
      for (const k of [...this.keys.keys()].sort((a, b) => a - b)) this.emit(k, this.keys.get(k)!);
      return;
    }
    this.activity.popBefore(this.now - this.idleMs, (k, t) => {
      const o = this.keys.get(k);
      if (o === undefined || o.last !== t || o.idle || o.outstanding > 0) return;
      o.idle = true;
      this.idle.push(k);
    });
    if (this.idle.size === 0) return;
    // the oldest key still open: idle keys below it are packed now, in key order
    let watermark = Infinity;
    for (let top = this.openHeap.peek(); top !== undefined; top = this.openHeap.peek()) {
      const o = this.keys.get(top);
      if (o !== undefined && !o.idle) {
        watermark = top;
        break;
      }
      this.openHeap.pop();
    }
    if (this.ws.used + this.rs.used > this.stagingRows) watermark = Infinity;
    for (let k = this.idle.peek(); k !== undefined && k < watermark; k = this.idle.peek()) {
      this.idle.pop();
      const o = this.keys.get(k);
      // a key touched again since it went idle is back in the open heap (and pushed here again when idle)
      if (o !== undefined && o.idle) this.emit(k, o);
    }
  }

  /** Processes one stored batch. */
  private batch(row: BatchRow & { id: number; rid0: number | null }): void {
    this.cursor = row.id;
    const b = decodeBatch(row, this.batchScratch);
    for (const [c, t] of b.dict) this.hotCode[c] = this.code(t);
    const hot = this.hotCode;
    const id = row.id;
    const inv = b.inv;
    for (let i = 0; i < inv.length; i += INV_FIELDS) this.addWrite(id, inv[i], inv[i + 1], inv[i + 2], inv[i + 3], inv[i + 4]);
    const tr = b.traces.length === 0 ? null : new Map(b.traces);
    const cmp = b.cmp;
    const width = b.cmpFields;
    const cf = this.cf;
    for (let i = 0; i < cmp.length; i += width) {
      const acked = cmp[i + 5] >= 0;
      const st = cmp[i + 3];
      cf[0] = cmp[i + 1];
      cf[1] = cmp[i + 2];
      cf[2] = st >= 0 ? (hot[st] ?? NULL) : NULL;
      cf[3] = cmp[i + 4];
      cf[4] = acked ? (hot[cmp[i + 5]] ?? NULL) : NULL;
      cf[5] = acked ? cmp[i + 6] : NULL;
      cf[6] = acked ? cmp[i + 7] : NULL;
      cf[7] = acked ? cmp[i + 8] : NULL;
      cf[8] = acked ? (cmp[i + 9] === 1 ? 1 : 0) : NULL;
      cf[9] = acked && width > 10 && cmp[i + 10] >= 0 ? cmp[i + 10] : NULL;
      this.addCompletion(id, cmp[i], cf, tr === null ? undefined : tr.get(cmp[i]));
    }
    const rd = b.rd;
    const rdTexts = b.rdx.length === 0 ? null : new Map(b.rdx);
    const rid0 = row.rid0 ?? this.nextRid;
    for (let i = 0, j = 0; i < rd.length; i += RD_FIELDS, j++) {
      const vk = rd[i + 5];
      const text = vk === RD_TEXT ? (rdTexts?.get(j) ?? undefined) : undefined;
      const value = vk === RD_ABSENT ? NULL : vk === RD_TEXT ? (text === undefined ? NULL : KR_TEXT) : vk;
      const node = rd[i + 4];
      this.addRead(id, rid0 + j, rd[i], rd[i + 1], rd[i + 2], rd[i + 3], node >= 0 ? (hot[node] ?? NULL) : NULL, value, vk >= 0 ? rd[i + 6] : NULL, rd[i + 7] >= 0 ? rd[i + 7] : NULL, text);
    }
    // a batch none of whose rows waits (only completions of writes packed before it) is done now
    if (!this.unpacked.has(id)) this.doneBatches.push(id);
  }

  /** Deletes the batches every row of which is packed; writes the new strings. */
  private settle(): void {
    const done = this.doneBatches.splice(0);
    // (the seal's finish empties the table at once)
    if (!this.finishing) for (const id of done) if (!this.unpacked.has(id)) this.st.deleteBatch.run(id);
    for (const c of this.newTexts.splice(0)) this.st.insString.run(c, this.texts[c]);
  }

  /**
   * Packs the committed batches after the last one seen, for about `budgetMs` (at least one batch
   * when any waits), in one transaction.
   * @returns true when more batches wait.
   */
  step(budgetMs: number): boolean {
    const deadline = performance.now() + budgetMs;
    let more = false;
    this.db.transaction(() => {
      for (;;) {
        const rows = this.st.batches.all(this.cursor) as Array<BatchRow & { id: number; rid0: number | null }>;
        if (rows.length === 0) break;
        for (const row of rows) {
          this.batch(row);
          this.advance(false);
          if (performance.now() > deadline) {
            more = true;
            break;
          }
        }
        if (more) break;
      }
      this.settle();
    })();
    return more;
  }

  /**
   * Packs everything: the remaining batches, then the plain writer's rows, then every key still
   * open (writes never completed stay indeterminate, outcome NULL); empties the hot tables. One
   * transaction.
   * @returns the writes this packer packed (in its steps and now).
   */
  finish(): number {
    this.finishing = true;
    this.db.transaction(() => {
      for (let rows = this.st.batches.all(this.cursor) as Array<BatchRow & { id: number; rid0: number | null }>; rows.length > 0; rows = this.st.batches.all(this.cursor) as typeof rows) {
        for (const row of rows) {
          this.batch(row);
          this.advance(false);
        }
      }
      this.legacy();
      this.advance(true);
      this.settle();
      this.doneBatches.length = 0;
      for (const t of HOT_TABLES) this.db.exec(`DELETE FROM ${t}`);
      this.db.exec('DELETE FROM hot_strings');
    })();
    return this.packed;
  }

  /** The plain SQLite writer's rows (invokes joined with completions, read_log), in pages. */
  private legacy(): void {
    const db = this.db;
    const opCode = (op: string): number => {
      const i = OPS.indexOf(op as (typeof OPS)[number]);
      if (i < 0) throw new Error(`ledger: unknown op ${op}`);
      return i;
    };
    const outcomeCode = (o: string | null): number => (o === null ? NULL : o === OUTCOMES[0] ? 0 : o === OUTCOMES[1] ? 1 : 2);
    const cf = this.cf;
    type Legacy = [number, number, number, string, number, number | null, string | null, string | null, number | null, string | null, number | null, number | null, number | null, string | null, string | null, number | null];
    const hasCopies = columnsOf(db, 'completions').includes('ack_copies');
    const page = db
      .prepare(
        `SELECT i.w, i.key_id, i.seq, i.op, i.invoke_ms, c.complete_ms, c.outcome, c.status, c.attempts, c.ack_node, c.ack_epoch, c.ack_version, c.ack_revision, c.ack_mode, c.trace, ${hasCopies ? 'c.ack_copies' : 'NULL'}
         FROM invokes i LEFT JOIN completions c ON c.w = i.w WHERE i.w > ? ORDER BY i.w LIMIT 65536`,
      )
      .raw();
    // pages (.all): the packer writes between them, which an open iterator would not allow
    for (let after = -Infinity, rows = page.all(after) as Legacy[]; rows.length > 0; after = rows[rows.length - 1][0], rows = page.all(after) as Legacy[]) {
      for (const r of rows) {
        this.addWrite(-1, -r[0] - 1, r[1], r[2], opCode(r[3]), r[4]);
        if (r[5] !== null) {
          cf[0] = r[5];
          cf[1] = outcomeCode(r[6]);
          cf[2] = this.code(r[7]);
          cf[3] = r[8] ?? NULL;
          cf[4] = this.code(r[9]);
          cf[5] = r[10] ?? NULL;
          cf[6] = r[11] ?? NULL;
          cf[7] = r[12] ?? NULL;
          cf[8] = r[13] === null ? NULL : r[13] === 'async' ? 1 : 0;
          cf[9] = r[15] ?? NULL;
          this.addCompletion(-1, -r[0] - 1, cf, r[14] ?? undefined);
        }
      }
      this.advance(false);
    }
    type LegacyRead = [number, number, number, number | null, string, string | null, string | null, number | null, number | null, string | null];
    const reads = db.prepare('SELECT rid, key_id, invoke_ms, complete_ms, outcome, node, value, value_key_id, value_seq, kind FROM read_log WHERE rid > ? ORDER BY rid LIMIT 65536').raw();
    for (let after = -Infinity, rows = reads.all(after) as LegacyRead[]; rows.length > 0; after = rows[rows.length - 1][0], rows = reads.all(after) as LegacyRead[]) {
      for (const r of rows) {
        const text = r[6] !== null && r[7] === null ? r[6] : undefined;
        const kind = r[9] === null ? NULL : READ_KINDS.indexOf(r[9] as (typeof READ_KINDS)[number]);
        this.addRead(-1, r[0], r[1], r[2], r[3] ?? NULL, outcomeCode(r[4]), this.code(r[5]), r[6] === null ? NULL : r[7] === null ? KR_TEXT : r[7], r[8] ?? NULL, kind < 0 ? NULL : kind, text);
      }
      this.advance(false);
    }
  }
}

/**
 * Seals a ledger in place, in one transaction (all or nothing): the hot rows become key_log rows
 * and are deleted. Idempotent. The file keeps the deleted rows' pages as free space (see
 * {@link sealLedgerFile}).
 * @returns the number of writes sealed.
 */
export function sealLedger(db: Database.Database): number {
  if (!needsSeal(db)) return 0;
  return new KeyPacker(db).finish();
}

/** Phase timings of a seal, ms (for the seal benchmark and the run's log). */
export interface SealTimings {
  pack: number;
  vacuum: number;
}

/**
 * Free pages above this share of the file (and above {@link VACUUM_MIN_BYTES}) are given back by
 * rewriting the file (a ledger sealed at once at the end, not during its run).
 */
export const VACUUM_FREE_SHARE = 0.25;
export const VACUUM_MIN_BYTES = 32 * 1024 * 1024;

/**
 * Rewrites the ledger file at `path` when its free pages are a large share of it (VACUUM INTO a
 * new file beside it, renamed over it: until the rename the file is untouched; the new file is in
 * WAL mode). No connection may be open on it.
 * @returns true when the file was rewritten.
 */
export function vacuumIfSparse(path: string): boolean {
  const db = new Database(path, { fileMustExist: true });
  const tmp = `${path}.sealing`;
  try {
    const pageSize = db.pragma('page_size', { simple: true }) as number;
    const free = (db.pragma('freelist_count', { simple: true }) as number) * pageSize;
    const total = (db.pragma('page_count', { simple: true }) as number) * pageSize;
    if (!(free > VACUUM_MIN_BYTES && free > VACUUM_FREE_SHARE * total)) return false;
    for (const s of ['', '-wal', '-shm', '-journal']) rmSync(tmp + s, { force: true });
    db.prepare('VACUUM INTO ?').run(tmp);
  } finally {
    db.close();
  }
  const v = new Database(tmp);
  v.pragma('journal_mode = WAL');
  v.close();
  for (const s of ['-wal', '-shm']) if (existsSync(path + s)) rmSync(path + s, { force: true });
  renameSync(tmp, path);
  return true;
}

/**
 * Seals the ledger file at `path` ({@link sealLedger}), then gives back the free pages when they
 * are a large share of it ({@link vacuumIfSparse}). No other connection may write to the ledger
 * meanwhile; connections open on it keep seeing the old file when it is rewritten.
 * @returns the number of writes sealed.
 * @throws Error (SQLite's) when the ledger cannot be read or written.
 */
export function sealLedgerFile(path: string, timings?: Partial<SealTimings>): number {
  const t0 = performance.now();
  const db = new Database(path, { fileMustExist: true });
  let sealed: number;
  try {
    sealed = sealLedger(db);
  } finally {
    db.close();
  }
  const t1 = performance.now();
  if (timings) timings.pack = t1 - t0;
  vacuumIfSparse(path);
  if (timings) timings.vacuum = performance.now() - t1;
  return sealed;
}
