import { existsSync, renameSync, rmSync } from 'node:fs';
import Database from 'better-sqlite3';
import { hasTable, KR_FIELDS, KR_TEXT, KW_FIELDS, packKey, type KeyExtra } from './key-log.js';
import { applySchema, LEDGER_DDL } from './schema.js';
import { decodeBatch, INV_FIELDS, OPS, OUTCOMES, RD_ABSENT, RD_FIELDS, RD_TEXT, READ_KINDS, type BatchRow } from './write-batches.js';

/**
 * The seal (DESIGN.md §4, issue 11): at the end of a run (or at the first analysis of a run that
 * crashed) the hot path's appended rows (packed `write_batches`, and the `invokes` /
 * `completions` / `read_log` rows of the plain SQLite writer) become one `key_log` row per key
 * (key-log.ts), in key order, which the verifier reads.
 *
 * One streaming pass in time order: a first pass counts each key's invokes and reads and marks
 * which writes complete; the second joins invokes with their completions and holds a key's rows
 * only until the key has all of them (a key lives a few seconds to a minute of a run), then packs
 * it. Keys are written in key order as far as the oldest key still open allows; when more than
 * {@link STAGING_ROWS} rows wait, finished keys are written past it (the open key's row goes in
 * later, out of order, which only costs SQLite a page split). Memory: the rows of the keys open at
 * once, never the run's.
 *
 * {@link sealLedgerFile} writes the sealed ledger into a new file beside the old one and renames
 * it over it (so the file does not keep the hot path's pages as free space: the sealed ledger is
 * the size of its contents); {@link sealLedger} seals in place (in-memory ledgers, tests).
 */

/** Rows (writes plus reads) held at most while waiting for an older key to finish. */
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

/** A growable Float64Array of fixed-width rows with a free list. */
class Staging {
  data: Float64Array;
  next: Int32Array;
  keyOf: Int32Array;
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
    this.keyOf = new Int32Array(cap);
    this.free = new Int32Array(cap);
  }

  alloc(): number {
    this.used++;
    if (this.freeN > 0) return this.free[--this.freeN];
    if (this.size === this.next.length) {
      const cap = this.next.length * 2;
      const d = new Float64Array(cap * this.fields);
      d.set(this.data);
      this.data = d;
      const n = new Int32Array(cap);
      n.set(this.next);
      this.next = n;
      const k = new Int32Array(cap);
      k.set(this.keyOf);
      this.keyOf = k;
      const f = new Int32Array(cap);
      f.set(this.free);
      this.free = f;
    }
    return this.size++;
  }

  release(slot: number): void {
    this.used--;
    this.free[this.freeN++] = slot;
  }
}

/** Per-key counters, indexed by key_id - base (growable). */
class KeyTable {
  base = 0;
  len = 0;
  totalW = new Uint32Array(0);
  totalR = new Uint32Array(0);
  seenW = new Uint32Array(0);
  seenR = new Uint32Array(0);
  outstanding = new Int32Array(0);
  headW = new Int32Array(0);
  tailW = new Int32Array(0);
  headR = new Int32Array(0);
  tailR = new Int32Array(0);
  /** 0 open, 1 waiting to be written, 2 written */
  state = new Uint8Array(0);

  init(min: number, max: number): void {
    if (max - min > 200_000_000) throw new Error(`ledger: key ids ${min}..${max} are too sparse to seal`);
    this.base = min;
    this.len = max - min + 1;
    const n = this.len;
    this.totalW = new Uint32Array(n);
    this.totalR = new Uint32Array(n);
    this.seenW = new Uint32Array(n);
    this.seenR = new Uint32Array(n);
    this.outstanding = new Int32Array(n);
    this.headW = new Int32Array(n).fill(-1);
    this.tailW = new Int32Array(n).fill(-1);
    this.headR = new Int32Array(n).fill(-1);
    this.tailR = new Int32Array(n).fill(-1);
    this.state = new Uint8Array(n);
  }

  index(keyId: number): number {
    const k = keyId - this.base;
    if (!(k >= 0 && k < this.len && Number.isInteger(k))) throw new Error(`ledger: a write or read names key ${keyId}, outside the keys counted`);
    return k;
  }
}

/** A growable bitmap over write numbers w (which writes have a completion). */
class Bits {
  bits = new Uint8Array(1 << 16);
  set(w: number): void {
    if (!Number.isSafeInteger(w) || w < 0 || w > 2 ** 34) throw new Error(`ledger: write number ${w} out of range`);
    const byte = w >>> 3 === w / 8 ? w >>> 3 : Math.floor(w / 8);
    if (byte >= this.bits.length) {
      let n = this.bits.length;
      while (n <= byte) n *= 2;
      const b = new Uint8Array(n);
      b.set(this.bits);
      this.bits = b;
    }
    this.bits[byte] |= 1 << (w % 8);
  }
  has(w: number): boolean {
    const byte = Math.floor(w / 8);
    return byte < this.bits.length && (this.bits[byte] & (1 << (w % 8))) !== 0;
  }
}

/** Where the seal reads the hot rows from (schema `src`) and writes key_log and strings (schema `dst`). */
interface SealIo {
  db: Database.Database;
  src: string;
  dst: string;
}

const NULL = NaN;

/**
 * The streaming seal over one connection (see the module comment).
 * @returns the number of writes sealed.
 */
function sealStream(io: SealIo): number {
  const { db, src, dst } = io;
  const has = (t: string): boolean => db.prepare(`SELECT 1 FROM ${src}.sqlite_master WHERE type = 'table' AND name = ?`).get(t) !== undefined;
  const hasRows = (t: string): boolean => has(t) && db.prepare(`SELECT 1 FROM ${src}.${t} LIMIT 1`).get() !== undefined;
  const legacyInvokes = hasRows('invokes');
  const legacyReads = hasRows('read_log');
  const batchIds = has('write_batches') ? (db.prepare(`SELECT id FROM ${src}.write_batches ORDER BY id`).pluck().all() as number[]) : [];
  // a ledger from before fmt, rd and rdx existed lacks those columns
  const batchCols = has('write_batches') ? new Set(columnsOf(db, src, 'write_batches')) : new Set<string>();
  const opt = (c: string): string => (batchCols.has(c) ? c : `NULL AS ${c}`);
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

  // pass 1: key range, each key's invokes and reads, which writes complete
  const keys = new KeyTable();
  const done = new Bits();
  let minKey = Infinity;
  let maxKey = -Infinity;
  const see = (k: number): void => {
    if (k < minKey) minKey = k;
    if (k > maxKey) maxKey = k;
  };
  const perKeyW: Array<[number, number]> = [];
  const perKeyR: Array<[number, number]> = [];
  if (legacyInvokes) {
    for (const [k, n] of db.prepare(`SELECT key_id, COUNT(*) FROM ${src}.invokes GROUP BY key_id`).raw().iterate() as Iterable<[number, number]>) {
      see(k);
      perKeyW.push([k, n]);
    }
    if (has('completions')) for (const w of db.prepare(`SELECT c.w FROM ${src}.completions c JOIN ${src}.invokes i ON i.w = c.w`).pluck().iterate() as Iterable<number>) done.set(w);
  }
  if (legacyReads) {
    for (const [k, n] of db.prepare(`SELECT key_id, COUNT(*) FROM ${src}.read_log GROUP BY key_id`).raw().iterate() as Iterable<[number, number]>) {
      see(k);
      perKeyR.push([k, n]);
    }
  }
  // batch key ids are counted into a map first (the range is known only at the end of the pass)
  const countW = new Map<number, number>();
  const countR = new Map<number, number>();
  for (const id of batchIds) {
    const b = decodeBatch(batchAt!.get(id) as BatchRow);
    for (let i = 0; i < b.inv.length; i += INV_FIELDS) {
      const k = b.inv[i + 1];
      see(k);
      countW.set(k, (countW.get(k) ?? 0) + 1);
    }
    for (let i = 0; i < b.cmp.length; i += b.cmpFields) done.set(b.cmp[i]);
    for (let i = 0; i < b.rd.length; i += RD_FIELDS) {
      const k = b.rd[i];
      see(k);
      countR.set(k, (countR.get(k) ?? 0) + 1);
    }
  }
  if (minKey === Infinity) return 0;
  keys.init(minKey, maxKey);
  for (const [k, n] of perKeyW) keys.totalW[keys.index(k)] += n;
  for (const [k, n] of perKeyR) keys.totalR[keys.index(k)] += n;
  for (const [k, n] of countW) keys.totalW[keys.index(k)] += n;
  for (const [k, n] of countR) keys.totalR[keys.index(k)] += n;
  countW.clear();
  countR.clear();

  // pass 2
  const ws = new Staging(KW_FIELDS);
  const rs = new Staging(KR_FIELDS);
  const pending = new Map<number, number>();
  const traces = new Map<number, string>();
  const readTexts = new Map<number, string>();
  const insert = db.prepare(`INSERT INTO ${dst}.key_log (key_id, writes, reads, extra) VALUES (?, ?, ?, ?)`);
  let sealed = 0;
  let emitPtr = 0;
  const waiting: number[] = [];
  let scratchW = new Float64Array(KW_FIELDS * 128);
  let scratchR = new Float64Array(KR_FIELDS * 128);

  const finished = (k: number): boolean => keys.seenW[k] === keys.totalW[k] && keys.outstanding[k] === 0 && keys.seenR[k] === keys.totalR[k];

  const emit = (k: number): void => {
    if (keys.state[k] === 2) return;
    keys.state[k] = 2;
    const nW = keys.seenW[k];
    const nR = keys.seenR[k];
    if (nW === 0 && nR === 0) return;
    const extra: KeyExtra = {};
    // writes, in seq order (the order they were invoked, unless the writer reordered)
    if (scratchW.length < nW * KW_FIELDS) scratchW = new Float64Array(nW * KW_FIELDS * 2);
    const wSlots: number[] = [];
    for (let s = keys.headW[k]; s >= 0; s = ws.next[s]) wSlots.push(s);
    let sorted = true;
    for (let i = 1; i < wSlots.length; i++) if (ws.data[wSlots[i] * KW_FIELDS] <= ws.data[wSlots[i - 1] * KW_FIELDS]) sorted = false;
    if (!sorted) wSlots.sort((a, b) => ws.data[a * KW_FIELDS] - ws.data[b * KW_FIELDS]);
    for (let i = 0; i < wSlots.length; i++) {
      const s = wSlots[i];
      scratchW.set(ws.data.subarray(s * KW_FIELDS, (s + 1) * KW_FIELDS), i * KW_FIELDS);
      const t = traces.get(s);
      if (t !== undefined) {
        (extra.t ??= []).push([ws.data[s * KW_FIELDS], t]);
        traces.delete(s);
      }
      ws.release(s);
    }
    // reads, in (invoke, recorded) order
    if (scratchR.length < nR * KR_FIELDS) scratchR = new Float64Array(nR * KR_FIELDS * 2);
    const rSlots: number[] = [];
    for (let s = keys.headR[k]; s >= 0; s = rs.next[s]) rSlots.push(s);
    const rd = rs.data;
    rSlots.sort((a, b) => rd[a * KR_FIELDS + 1] - rd[b * KR_FIELDS + 1] || rd[a * KR_FIELDS] - rd[b * KR_FIELDS]);
    for (let i = 0; i < rSlots.length; i++) {
      const s = rSlots[i];
      scratchR.set(rd.subarray(s * KR_FIELDS, (s + 1) * KR_FIELDS), i * KR_FIELDS);
      const t = readTexts.get(s);
      if (t !== undefined) {
        (extra.x ??= []).push([i, t]);
        readTexts.delete(s);
      }
      rs.release(s);
    }
    const p = packKey(scratchW, nW, scratchR, nR, extra);
    insert.run(keys.base + k, p.writes, p.reads, p.extra);
    sealed += nW;
  };

  const advance = (force: boolean): void => {
    while (emitPtr < keys.len && (keys.state[emitPtr] === 2 || force || finished(emitPtr))) emit(emitPtr++);
    if (waiting.length > 65_536) {
      let j = 0;
      for (const k of waiting) if (keys.state[k] === 1) waiting[j++] = k;
      waiting.length = j;
    }
    if (ws.used + rs.used > STAGING_ROWS) {
      // an old key holds up the order: write the finished keys past it
      for (const k of waiting.splice(0)) if (keys.state[k] === 1) emit(k);
    }
  };
  const check = (k: number): void => {
    if (keys.state[k] === 0 && finished(k)) {
      keys.state[k] = 1;
      if (k !== emitPtr) waiting.push(k);
    }
  };

  const addWrite = (w: number, keyId: number, seq: number, op: number, invoke: number): void => {
    const k = keys.index(keyId);
    if (keys.state[k] === 2) throw new Error(`ledger: key ${keyId} got a write after it was sealed`);
    const s = ws.alloc();
    const d = ws.data;
    const b = s * KW_FIELDS;
    d.fill(NULL, b, b + KW_FIELDS);
    d[b] = seq;
    d[b + 1] = op;
    d[b + 2] = invoke;
    ws.keyOf[s] = k;
    ws.next[s] = -1;
    if (keys.tailW[k] < 0) keys.headW[k] = s;
    else ws.next[keys.tailW[k]] = s;
    keys.tailW[k] = s;
    keys.seenW[k]++;
    if (done.has(w)) {
      keys.outstanding[k]++;
      pending.set(w, s);
    }
    check(k);
  };
  /** fields: complete, outcome, status, attempts, node, epoch, version, revision, mode, copies (codes already sealed ones) */
  const addCompletion = (w: number, f: ArrayLike<number>, trace: string | undefined): void => {
    const s = pending.get(w);
    if (s === undefined) return;
    pending.delete(w);
    const b = s * KW_FIELDS;
    const d = ws.data;
    for (let i = 0; i < 10; i++) d[b + 3 + i] = f[i];
    if (trace !== undefined) traces.set(s, trace);
    const k = ws.keyOf[s];
    keys.outstanding[k]--;
    check(k);
  };
  let nextRid = 1;
  const addRead = (rid: number, keyId: number, invoke: number, complete: number, outcome: number, node: number, vk: number, vs: number, kind: number, text: string | undefined): void => {
    const k = keys.index(keyId);
    if (keys.state[k] === 2) throw new Error(`ledger: key ${keyId} got a read after it was sealed`);
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
    if (text !== undefined) readTexts.set(s, text);
    rs.keyOf[s] = k;
    rs.next[s] = -1;
    if (keys.tailR[k] < 0) keys.headR[k] = s;
    else rs.next[keys.tailR[k]] = s;
    keys.tailR[k] = s;
    keys.seenR[k]++;
    if (rid >= nextRid) nextRid = rid + 1;
    check(k);
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
    for (let after = -Infinity, rows = page.all(after) as Legacy[]; rows.length > 0; after = rows[rows.length - 1][0], rows = page.all(after) as Legacy[])
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
      advance(false);
    }
  }
  if (legacyReads) {
    type LegacyRead = [number, number, number, number | null, string, string | null, string | null, number | null, number | null, string | null];
    const page = db.prepare(`SELECT rid, key_id, invoke_ms, complete_ms, outcome, node, value, value_key_id, value_seq, kind FROM ${src}.read_log WHERE rid > ? ORDER BY rid LIMIT 65536`).raw();
    for (let after = -Infinity, rows = page.all(after) as LegacyRead[]; rows.length > 0; after = rows[rows.length - 1][0], rows = page.all(after) as LegacyRead[])
    for (const r of rows) {
      const text = r[6] !== null && r[7] === null ? r[6] : undefined;
      const kind = r[9] === null ? NULL : READ_KINDS.indexOf(r[9] as (typeof READ_KINDS)[number]);
      addRead(r[0], r[1], r[2], r[3] ?? NULL, outcomeCode(r[4]), code(r[5]), r[6] === null ? NULL : r[7] === null ? KR_TEXT : r[7], r[8] ?? NULL, kind < 0 ? NULL : kind, text);
      advance(false);
    }
  }

  for (const id of batchIds) {
    const b = decodeBatch(batchAt!.get(id) as BatchRow);
    for (const [c, t] of b.dict) batchCode[c] = code(t);
    const mapped = (c: number): number => (c < 0 || c !== c ? NULL : (batchCode[c] ?? NULL));
    const inv = b.inv;
    for (let i = 0; i < inv.length; i += INV_FIELDS) addWrite(inv[i], inv[i + 1], inv[i + 2], inv[i + 3], inv[i + 4]);
    const tr = b.traces.length === 0 ? null : new Map(b.traces);
    const cmp = b.cmp;
    const width = b.cmpFields;
    for (let i = 0; i < cmp.length; i += width) {
      const acked = cmp[i + 5] >= 0;
      cf[0] = cmp[i + 1];
      cf[1] = cmp[i + 2];
      cf[2] = mapped(cmp[i + 3]);
      cf[3] = cmp[i + 4];
      cf[4] = acked ? mapped(cmp[i + 5]) : NULL;
      cf[5] = acked ? cmp[i + 6] : NULL;
      cf[6] = acked ? cmp[i + 7] : NULL;
      cf[7] = acked ? cmp[i + 8] : NULL;
      cf[8] = acked ? (cmp[i + 9] === 1 ? 1 : 0) : NULL;
      cf[9] = acked && width > 10 && cmp[i + 10] >= 0 ? cmp[i + 10] : NULL;
      addCompletion(cmp[i], cf, tr?.get(cmp[i]));
    }
    const rd = b.rd;
    const rdTexts = b.rdx.length === 0 ? null : new Map(b.rdx);
    for (let i = 0, j = 0; i < rd.length; i += RD_FIELDS, j++) {
      const vk = rd[i + 5];
      const text = vk === RD_TEXT ? (rdTexts?.get(j) ?? undefined) : undefined;
      const value = vk === RD_ABSENT ? NULL : vk === RD_TEXT ? (text === undefined ? NULL : KR_TEXT) : vk;
      addRead(nextRid, rd[i], rd[i + 1], rd[i + 2], rd[i + 3], mapped(rd[i + 4]), value, vk >= 0 ? rd[i + 6] : NULL, rd[i + 7] >= 0 ? rd[i + 7] : NULL, text);
    }
    advance(false);
  }
  // the end: writes never completed stay indeterminate (outcome NULL)
  advance(true);
  for (const k of waiting) emit(k);
  const insString = db.prepare(`INSERT OR IGNORE INTO ${dst}.strings (code, text) VALUES (?, ?)`);
  for (let c = 0; c < texts.length; c++) if (texts[c] !== undefined) insString.run(c, texts[c]);
  return sealed;
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

/** Columns of a table in a schema. */
function columnsOf(db: Database.Database, schema: string, table: string): string[] {
  return (db.prepare(`SELECT name FROM pragma_table_info(?, ?)`).all(table, schema) as Array<{ name: string }>).map((c) => c.name);
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
export function sealLedgerFile(path: string): number {
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
      sealed = sealStream({ db, src: 'src', dst: 'main' });
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
  return sealed;
}
