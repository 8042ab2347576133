/**
 * The key packer: a ledger's hot rows into one key_log row per key, in one streaming pass, while
 * the run goes on and at the seal (seal.ts).
 */
import type Database from 'better-sqlite3';
import { KR_FIELDS, KR_TEXT, KW_FIELDS, packKey, type KeyExtra } from './key-log.js';
import { mergeKeyRow, sortRows, type StoredKeyRow } from './key-row-merge.js';
import { columnsOf, packLegacyRows } from './legacy-rows.js';
import { ActivityQueue, BatchCounts, MinHeap, NULL, Pending, Staging, type OpenKey } from './packer-indexes.js';
import { applySchema } from './schema.js';
import { decodeBatch, INV_FIELDS, RD_ABSENT, RD_FIELDS, RD_TEXT, type BatchRow, type BatchScratch } from './write-batches.js';

/**
 * A {@link KeyPacker} packs the seal's rows (seal.ts) in one streaming pass in recorded order, and
 * can do it while the run goes on (the ledger's worker thread gives it a small share of its time
 * between group commits): invokes are joined with their completions, and a key's rows are held
 * until the key has been idle for {@link IDLE_MS} of run time (no invoke, completion or read, none
 * of its writes in flight; a workload key lives a few seconds to a minute, then its slot moves to
 * a fresh key), then packed into its row, in key order as far as the oldest open key allows (past
 * it when more than {@link STAGING_ROWS} rows wait). A batch is deleted once every row of it is
 * packed, so the file's free pages are reused by the run and the end of a 4-hour run has only its
 * last seconds left to pack. Every step is one transaction: a crash leaves each write in key_log
 * or in a batch (or both: a key whose row exists gets the batch's rows merged in, each write once
 * by its seq, each read once by its rid). Memory: the rows of the keys open at once, never the
 * run's.
 */

/** Run time a key must stay idle before it is packed, ms. */
export const IDLE_MS = 5_000;
/** Rows (writes plus reads) held at most while waiting for an older key to go idle. */
export const STAGING_ROWS = 262_144;

/** The tables the seal consumes. */
export const HOT_TABLES = ['write_batches', 'invokes', 'completions', 'read_log'] as const;

/** Options of a {@link KeyPacker}. */
export interface KeyPackerOptions {
  /** Run time a key must stay idle before it is packed, ms (default {@link IDLE_MS}). */
  idleMs?: number;
  /** Rows held at most while an older key is open (default {@link STAGING_ROWS}). */
  stagingRows?: number;
}

/**
 * Packs a ledger's hot rows into key_log (the pass described above), on the caller's connection.
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
    const old = this.st.existing.get(k) as StoredKeyRow;
    const m = mergeKeyRow(old, sw, nW, sr, nR, extra);
    this.packed += m.added;
    this.st.replace.run(m.row.writes, m.row.reads, m.row.extra, k);
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
    packLegacyRows(this.db, this.cf, {
      addWrite: (batch, w, k, seq, op, invoke) => this.addWrite(batch, w, k, seq, op, invoke),
      addCompletion: (batch, w, f, trace) => this.addCompletion(batch, w, f, trace),
      addRead: (batch, rid, k, invoke, complete, outcome, node, vk, vs, kind, text) => this.addRead(batch, rid, k, invoke, complete, outcome, node, vk, vs, kind, text),
      advance: () => this.advance(false),
      code: (t) => this.code(t),
    });
  }
}
