import type Database from 'better-sqlite3';
import { packRows, unpackRows, type ColumnSpec } from './column-pack.js';
import type { WritesRow } from './schema.js';
import { OPS, OUTCOMES, READ_KINDS } from './write-batches.js';

/**
 * The sealed form of a harness ledger's writes and reads (issue 11: the ledger under 100 bytes per
 * write, the seal of a 4-hour run in seconds): one row of `key_log` per key, holding all of its
 * writes (in seq order) and all of its reads (in invoke, then recorded order) as packed columns
 * (column-pack.ts), strings as codes of the `strings` table, and the rare texts (attempt traces,
 * read values that are not write ids) as JSON beside them.
 *
 * Writes, per row, {@link KW_FIELDS} numbers (NaN = NULL): seq, op (index of OPS), invoke_ms,
 * complete_ms, outcome (index of OUTCOMES; NULL while in flight), status (string code), attempts,
 * ack_node (string code), ack_epoch, ack_version, ack_revision, ack_mode (0 sync, 1 async),
 * ack_copies. Reads: rid (the order recorded over the run), invoke_ms, complete_ms, outcome,
 * node (string code), value_key_id (NULL: no value; -2: a value that is not a write id, its text in
 * `extra.x`), value_seq, kind (index of READ_KINDS).
 * `extra`: JSON `{"t": [[seq, trace], ...], "x": [[index of the read in the key's reads, text], ...]}`
 * or NULL.
 *
 * A ledger may hold writes in both forms: rows of the `writes` table (imported histories, ledgers
 * sealed before this form existed, hand-made test ledgers) and rows of `key_log`; a key is in one
 * of them. The functions here read both.
 */
export const KW_FIELDS = 13;
export const KR_FIELDS = 8;
/** Column specs of the packed writes: times in µs, the completion relative to the invoke. */
export const KW_SPECS: ReadonlyArray<ColumnSpec | undefined> = [
  undefined,
  undefined,
  { micro: true },
  { micro: true, rel: 2 },
  undefined,
  undefined,
  undefined,
  undefined,
  undefined,
  // the store's versions are epoch * 2^32 + a counter
  { rel: 8, scale: 2 ** 32 },
];
/** Column specs of the packed reads. */
export const KR_SPECS: ReadonlyArray<ColumnSpec | undefined> = [undefined, { micro: true }, { micro: true, rel: 1 }];
/** value_key_id of a read whose value is not a harness write id (its text is in extra.x). */
export const KR_TEXT = -2;

/** One read as the `reads` table holds it. */
export interface ReadsRow {
  key_id: number;
  invoke_ms: number;
  rid: number;
  complete_ms: number | null;
  outcome: string;
  node: string | null;
  value: string | null;
  value_key_id: number | null;
  value_seq: number | null;
  kind: string | null;
  id: string | null;
}

/** The `extra` JSON of a key_log row. */
export interface KeyExtra {
  t?: Array<[number, string]>;
  x?: Array<[number, string]>;
}

/** The string table of a ledger (code -> text); empty when it has none. */
export function loadStrings(db: Database.Database): string[] {
  if (!hasTable(db, 'strings')) return [];
  const out: string[] = [];
  for (const [code, text] of db.prepare('SELECT code, text FROM strings ORDER BY code').raw().iterate() as Iterable<[number, string]>) out[code] = text;
  return out;
}

/** Whether the ledger has this table. */
export function hasTable(db: Database.Database, name: string): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;
}

const num = (x: number): number | null => (x !== x ? null : x);

/** A key's packed writes as `writes` rows (key order, seq order). */
export function decodeKeyWrites(keyId: number, writes: Uint8Array | null, extra: KeyExtra | null, strings: readonly string[]): WritesRow[] {
  if (writes === null) return [];
  const { n, rows } = unpackRows(writes);
  const traces = new Map(extra?.t ?? []);
  const text = (c: number): string | null => (c !== c ? null : (strings[c] ?? null));
  const out: WritesRow[] = [];
  for (let i = 0; i < n; i++) {
    const b = i * KW_FIELDS;
    const seq = rows[b];
    const mode = rows[b + 11];
    out.push({
      key_id: keyId,
      seq,
      op: OPS[rows[b + 1]] ?? 'put',
      invoke_ms: rows[b + 2],
      complete_ms: num(rows[b + 3]),
      outcome: rows[b + 4] !== rows[b + 4] ? null : OUTCOMES[rows[b + 4]],
      status: text(rows[b + 5]),
      attempts: num(rows[b + 6]),
      ack_node: text(rows[b + 7]),
      ack_epoch: num(rows[b + 8]),
      ack_version: num(rows[b + 9]),
      ack_revision: num(rows[b + 10]),
      ack_mode: mode !== mode ? null : mode === 1 ? 'async' : 'sync',
      trace: traces.get(seq) ?? null,
      wid: null,
      ack_copies: num(rows[b + 12]),
    });
  }
  return out;
}

/** A key's packed reads as `reads` rows (invoke, then recorded order). */
export function decodeKeyReads(keyId: number, reads: Uint8Array | null, extra: KeyExtra | null, strings: readonly string[]): ReadsRow[] {
  if (reads === null) return [];
  const { n, rows } = unpackRows(reads);
  const texts = new Map(extra?.x ?? []);
  const out: ReadsRow[] = [];
  for (let i = 0; i < n; i++) {
    const b = i * KR_FIELDS;
    const vk = rows[b + 5];
    const node = rows[b + 4];
    const kind = rows[b + 7];
    out.push({
      key_id: keyId,
      invoke_ms: rows[b + 1],
      rid: rows[b],
      complete_ms: num(rows[b + 2]),
      outcome: OUTCOMES[rows[b + 3]] ?? 'info',
      node: node !== node ? null : (strings[node] ?? null),
      value: vk !== vk ? null : vk === KR_TEXT ? (texts.get(i) ?? null) : `w${vk}.${rows[b + 6]}`,
      value_key_id: vk !== vk || vk < 0 ? null : vk,
      value_seq: vk !== vk || vk < 0 ? null : rows[b + 6],
      kind: kind !== kind ? null : (READ_KINDS[kind] ?? null),
      id: null,
    });
  }
  return out;
}

export function parseExtra(text: string | null): KeyExtra | null {
  if (text === null) return null;
  try {
    return JSON.parse(text) as KeyExtra;
  } catch {
    throw new Error('ledger: a key_log row has an extra column that is not JSON');
  }
}

const WRITE_COLUMNS = 'key_id, seq, op, invoke_ms, complete_ms, outcome, status, attempts, ack_node, ack_epoch, ack_version, ack_revision, ack_mode, trace, wid, ack_copies';
const READ_COLUMNS = 'key_id, invoke_ms, rid, complete_ms, outcome, node, value, value_key_id, value_seq, kind, id';

/**
 * A key's writes and reads, from either form (one key at a time, the last one cached): for the
 * verifier's point lookups, the report's drill-down and the export.
 */
export class KeyLogReader {
  private readonly strings: string[];
  private readonly rowsW: Database.Statement | null;
  private readonly rowsR: Database.Statement | null;
  private readonly packed: Database.Statement | null;
  private cached: { keyId: number; writes: WritesRow[]; reads: ReadsRow[] } | null = null;

  constructor(db: Database.Database) {
    this.strings = loadStrings(db);
    this.rowsW = hasTable(db, 'writes') ? db.prepare(`SELECT ${WRITE_COLUMNS} FROM writes WHERE key_id = ? ORDER BY seq`) : null;
    this.rowsR = hasTable(db, 'reads') ? db.prepare(`SELECT ${READ_COLUMNS} FROM reads WHERE key_id = ? ORDER BY invoke_ms, rid`) : null;
    this.packed = hasTable(db, 'key_log') ? db.prepare('SELECT writes, reads, extra FROM key_log WHERE key_id = ?') : null;
  }

  private load(keyId: number): { writes: WritesRow[]; reads: ReadsRow[] } {
    if (this.cached?.keyId === keyId) return this.cached;
    const p = this.packed?.get(keyId) as { writes: Buffer | null; reads: Buffer | null; extra: string | null } | undefined;
    let writes: WritesRow[];
    let reads: ReadsRow[];
    if (p !== undefined) {
      const extra = parseExtra(p.extra);
      writes = decodeKeyWrites(keyId, p.writes, extra, this.strings);
      reads = decodeKeyReads(keyId, p.reads, extra, this.strings);
    } else {
      writes = (this.rowsW?.all(keyId) as WritesRow[] | undefined) ?? [];
      reads = (this.rowsR?.all(keyId) as ReadsRow[] | undefined) ?? [];
    }
    this.cached = { keyId, writes, reads };
    return this.cached;
  }

  /** The key's writes in seq order. */
  writes(keyId: number): WritesRow[] {
    return this.load(keyId).writes;
  }

  /** The key's write `seq`, or undefined. */
  write(keyId: number, seq: number): WritesRow | undefined {
    return this.load(keyId).writes.find((w) => w.seq === seq);
  }

  /** The key's reads in (invoke, recorded) order. */
  reads(keyId: number): ReadsRow[] {
    return this.load(keyId).reads;
  }
}

/**
 * Every key's writes and reads in key order, from both forms (merged by key_id), one key at a time
 * (memory: one key). For the export and for tests.
 * @throws Error when a key is in both forms.
 */
export function* iterateKeyLog(db: Database.Database): Generator<{ keyId: number; writes: WritesRow[]; reads: ReadsRow[] }> {
  const strings = loadStrings(db);
  const rowsW = hasTable(db, 'writes') ? (db.prepare(`SELECT ${WRITE_COLUMNS} FROM writes ORDER BY key_id, seq`).iterate() as Iterator<WritesRow>) : null;
  const rowsR = hasTable(db, 'reads') ? (db.prepare(`SELECT ${READ_COLUMNS} FROM reads ORDER BY key_id, invoke_ms, rid`).iterate() as Iterator<ReadsRow>) : null;
  const packed = hasTable(db, 'key_log')
    ? (db.prepare('SELECT key_id, writes, reads, extra FROM key_log ORDER BY key_id').iterate() as Iterator<{ key_id: number; writes: Buffer | null; reads: Buffer | null; extra: string | null }>)
    : null;
  const next = <T>(it: Iterator<T> | null): T | null => {
    if (it === null) return null;
    const r = it.next();
    return r.done ? null : r.value;
  };
  let w = next(rowsW);
  let r = next(rowsR);
  let p = next(packed);
  try {
    for (;;) {
      const keyId = Math.min(w?.key_id ?? Infinity, r?.key_id ?? Infinity, p?.key_id ?? Infinity);
      if (keyId === Infinity) return;
      const writes: WritesRow[] = [];
      const reads: ReadsRow[] = [];
      while (w !== null && w.key_id === keyId) {
        writes.push(w);
        w = next(rowsW);
      }
      while (r !== null && r.key_id === keyId) {
        reads.push(r);
        r = next(rowsR);
      }
      if (p !== null && p.key_id === keyId) {
        if (writes.length > 0 || reads.length > 0) throw new Error(`ledger: key ${keyId} has rows in writes/reads and in key_log`);
        const extra = parseExtra(p.extra);
        writes.push(...decodeKeyWrites(keyId, p.writes, extra, strings));
        reads.push(...decodeKeyReads(keyId, p.reads, extra, strings));
        p = next(packed);
      }
      yield { keyId, writes, reads };
    }
  } finally {
    rowsW?.return?.();
    rowsR?.return?.();
    packed?.return?.();
  }
}

/** Every write of the ledger in (key_id, seq) order, from both forms (tests, small ledgers). */
export function allWrites(db: Database.Database): WritesRow[] {
  const out: WritesRow[] = [];
  for (const k of iterateKeyLog(db)) out.push(...k.writes);
  return out;
}

/** Every read of the ledger in (key_id, invoke_ms, rid) order, from both forms (tests, small ledgers). */
export function allReads(db: Database.Database): ReadsRow[] {
  const out: ReadsRow[] = [];
  for (const k of iterateKeyLog(db)) out.push(...k.reads);
  return out;
}

/** Writes of the ledger in both forms (COUNT of `writes` rows plus the packed writes' row counts). */
export function countWrites(db: Database.Database): number {
  let n = hasTable(db, 'writes') ? (db.prepare('SELECT COUNT(*) FROM writes').pluck().get() as number) : 0;
  if (hasTable(db, 'key_log')) {
    for (const b of db.prepare('SELECT writes FROM key_log WHERE writes IS NOT NULL').pluck().iterate() as Iterable<Buffer>) n += b.readUInt32LE(2);
  }
  return n;
}

/** Packs one key's write rows (KW_FIELDS each, row-major) and its reads, with their texts. */
export function packKey(
  writes: Float64Array,
  nWrites: number,
  reads: Float64Array,
  nReads: number,
  extra: KeyExtra,
): { writes: Buffer | null; reads: Buffer | null; extra: string | null } {
  const hasExtra = (extra.t?.length ?? 0) > 0 || (extra.x?.length ?? 0) > 0;
  return {
    writes: nWrites > 0 ? packRows(writes, KW_FIELDS, nWrites, KW_SPECS) : null,
    reads: nReads > 0 ? packRows(reads, KR_FIELDS, nReads, KR_SPECS) : null,
    extra: hasExtra ? JSON.stringify(extra) : null,
  };
}
