import type Database from 'better-sqlite3';
import type { KeyFindingKind, ReadFindingKind } from '../../ledger/history-rules.js';

/**
 * What a chunk scan needs to know besides the ledger (plain data: it is also sent to the
 * verifier's worker thread).
 */
export interface ScanContext {
  /** The v2 rules apply (else v1). */
  v2: boolean;
  /** Stores that acknowledge in sync mode with RF > 1 (under-replicated-ack applies). */
  syncReplicated: string[];
  /** [store, partition, epoch, actives[]] of the samples (ack-not-from-active). */
  actives: Array<[string, number, number, string[]]>;
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
}

/** One chunk's result. */
export interface ChunkResult {
  /** store -> [attempted, acknowledged, failed] */
  counts: Array<[string, number, number, number]>;
  keys: number;
  candidates: KeyCandidate[];
  reads: ReadFindingRow[];
}

const REGRESSION_UDF = 'zaris_first_regression';
const ACKS_UDF = 'zaris_acks';

/**
 * v1: the first version regression of a key, as an SQL aggregate over (seq, version) of its `ok`
 * non-delete writes: the seq of the first write whose version is not above the one before
 * (null when none). It relies on receiving a key's rows in seq order, which the GROUP BY over
 * the writes table's (key_id, seq) primary key gives; it checks that order and throws rather
 * than answer from rows out of order. (An `ORDER BY seq` inside the call would enforce it in SQL
 * but costs ~20% of the pass: DESIGN.md §8.)
 *
 * v2: `zaris_acks(seq, version or NULL for a delete, epoch, node)` over a key's `ok` writes:
 * JSON `[firstRegression | null, epoch, node, firstSeq, ...]`, the distinct (epoch, node) pairs
 * of the acks with the seq of the first write that carried each (ack-not-from-active), in order
 * of first appearance.
 */
export function registerScanFunctions(db: Database.Database): void {
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
  interface Acks {
    prevVersion: number;
    reg: number | null;
    prevSeq: number;
    epoch: number;
    node: string;
    /** [epoch, node, firstSeq] triples after the first. */
    pairs: Array<[number, string, number]>;
    firstSeq: number;
  }
  const ackStep = (s: Acks | null, seq: number, version: number | null, epoch: number, node: string): Acks => {
    if (s === null) {
      s = { prevVersion: -Infinity, reg: null, prevSeq: seq, epoch, node, pairs: [], firstSeq: seq };
    } else {
      if (seq <= s.prevSeq) throw new Error(`verifier: writes were not scanned in (key_id, seq) order (seq ${seq} after ${s.prevSeq})`);
      s.prevSeq = seq;
      if (epoch !== s.epoch || node !== s.node) {
        if (!s.pairs.some((p) => p[0] === epoch && p[1] === node)) s.pairs.push([epoch, node, seq]);
      }
    }
    if (version !== null) {
      if (s.reg === null && version <= s.prevVersion) s.reg = seq;
      s.prevVersion = version;
    }
    return s;
  };
  db.aggregate<Acks | null>(ACKS_UDF, {
    start: null,
    step: ackStep as unknown as (state: Acks | null, next: unknown) => Acks,
    result: (s: Acks | null) => {
      if (s === null) return null;
      const out: unknown[] = [s.reg, s.epoch, s.node, s.firstSeq];
      for (const p of s.pairs) out.push(p[0], p[1], p[2]);
      return JSON.stringify(out);
    },
  });
}

/**
 * Per key of a key_id range, in one ordered pass over the writes table (clustered by
 * (key_id, seq)): counts, the last `ok` seq, the latest delete whose outcome is ok or info (a
 * write still in flight counts as info), and (v1) the first version regression or (v2) the
 * acks' regression and (epoch, node) pairs and the first under-replicated ack. `k1` is the first
 * of unverified, unexpected, lost, phantom that applies (history-format.md); the rest is decided
 * in JS. `mw` is the write the final value names (same key only); `dw` the matched delete.
 */
function chunkSql(v2: boolean): string {
  return `
  SELECT k.store, k.partition, a.key_id, a.n, a.n_ok, a.n_fail,
    CASE
      WHEN fr.key_id IS NULL OR fr.unreadable <> 0 THEN 'unverified'
      WHEN fr.value IS NOT NULL AND mw.seq IS NULL THEN 'unexpected'
      WHEN a.last_ok > (CASE WHEN fr.value IS NULL THEN COALESCE(a.last_del, 0) ELSE mw.seq END) THEN 'lost'
      WHEN mw.outcome = 'fail' THEN 'phantom'
    END AS k1,
    a.last_ok, a.acks,
    CASE WHEN fr.value IS NULL THEN COALESCE(a.last_del, 0) ELSE mw.seq END AS matched_seq,
    (mw.seq IS NOT NULL AND mw.outcome IS NOT 'ok') ${v2 ? `OR (fr.value IS NULL AND dw.seq IS NOT NULL AND dw.outcome IS NOT 'ok')` : ''} AS recovered,
    ${v2 ? 'a.first_under' : 'NULL'} AS first_under,
    (fr.key_id IS NOT NULL) AS has_read
  FROM (
    SELECT key_id, COUNT(*) AS n, COUNT(*) FILTER (WHERE outcome = 'ok') AS n_ok,
           COUNT(*) FILTER (WHERE outcome = 'fail') AS n_fail,
           MAX(seq) FILTER (WHERE outcome = 'ok') AS last_ok,
           MAX(seq) FILTER (WHERE op = 'delete' AND outcome IS NOT 'fail') AS last_del,
           ${
             v2
               ? `MIN(seq) FILTER (WHERE outcome = 'ok' AND ack_copies < 2) AS first_under,
           ${ACKS_UDF}(seq, CASE WHEN op <> 'delete' THEN ack_version END, ack_epoch, ack_node) FILTER (WHERE outcome = 'ok') AS acks`
               : `${REGRESSION_UDF}(seq, ack_version) FILTER (WHERE outcome = 'ok' AND op <> 'delete') AS acks`
           }
    FROM writes WHERE key_id >= @lo AND key_id < @hi GROUP BY key_id
  ) AS a
  JOIN keys k ON k.key_id = a.key_id
  LEFT JOIN final_reads fr ON fr.key_id = a.key_id
  LEFT JOIN writes mw ON fr.value IS NOT NULL AND fr.value_key_id = a.key_id AND mw.key_id = a.key_id AND mw.seq = fr.value_seq
  ${v2 ? `LEFT JOIN writes dw ON fr.value IS NULL AND dw.key_id = a.key_id AND dw.seq = a.last_del` : ''}`;
}

type ChunkRow = [
  store: string, partition: number, keyId: number, n: number, nOk: number, nFail: number, k1: KeyFindingKind | null,
  lastOk: number | null, acks: string | number | null, matchedSeq: number | null, recovered: number | null, firstUnder: number | null,
  hasRead: number,
];

/** Final reads of a key_id range whose key has no write: only `unexpected` can apply. */
const READ_ONLY_KEYS_SQL = `
  SELECT fr.key_id, k.store, fr.value, fr.unreadable FROM final_reads fr JOIN keys k ON k.key_id = fr.key_id
  WHERE fr.key_id >= @lo AND fr.key_id < @hi AND NOT EXISTS (SELECT 1 FROM writes w WHERE w.key_id = fr.key_id)`;

/**
 * The `ok` reads of a key_id range (v2) that may have a finding, in (key, invoke, order recorded)
 * order: `c` 1 unexpected-read (the value names no write of the key), 2 phantom-read (it names a
 * failed write), 3 a stale-read candidate. Candidates rest on "a key's writes never overlap in
 * time" (the writes' invoke and complete times grow with seq; the v2 parser enforces it, the
 * workload writes so): a value read is stale-looking when the first `ok` write after it was
 * acknowledged before the read began; an absent value when, walking down from the writes invoked
 * before the read completed, an `ok` write acknowledged before the read began comes before any
 * delete. Each candidate is then confirmed by the letter of the rule (ReadChecker).
 */
const READS_SQL = `
  SELECT * FROM (
    SELECT r.key_id, r.invoke_ms, r.rid, r.complete_ms, r.node, r.value, r.id, r.value_seq,
      CASE
        WHEN r.value IS NOT NULL AND mw.seq IS NULL THEN 1
        WHEN mw.outcome = 'fail' THEN 2
        WHEN r.value IS NOT NULL THEN
          (SELECT 3 FROM (SELECT w.complete_ms FROM writes w WHERE w.key_id = r.key_id AND w.seq > r.value_seq AND w.outcome = 'ok' ORDER BY w.seq LIMIT 1) AS nx
           WHERE nx.complete_ms < r.invoke_ms)
        ELSE
          (SELECT CASE WHEN p.op <> 'delete' THEN 3 END FROM (
             SELECT w.op FROM writes w WHERE w.key_id = r.key_id AND w.invoke_ms < r.complete_ms
               AND (w.op = 'delete' OR (w.outcome = 'ok' AND w.complete_ms < r.invoke_ms))
             ORDER BY w.seq DESC LIMIT 1) AS p)
      END AS c
    FROM reads r
    LEFT JOIN writes mw ON r.value_key_id = r.key_id AND mw.key_id = r.key_id AND mw.seq = r.value_seq
    WHERE r.key_id >= @lo AND r.key_id < @hi AND r.outcome = 'ok'
  ) WHERE c IS NOT NULL`;

type ReadRow = [keyId: number, invokeMs: number, rid: number, completeMs: number | null, node: string | null, value: string | null, id: string | null, valueSeq: number | null, c: number];

const READ_KIND: Record<number, ReadFindingKind> = { 1: 'unexpected-read', 2: 'phantom-read', 3: 'stale-read' };

/**
 * Scans key_id ranges of a ledger (history-format.md, per key): counts, the key's own finding
 * (its kind and the write it names; the details and a loss's class are looked up afterwards for
 * the candidates alone) and (v2) its read finding. Memory is bounded by the chunk width. Usable
 * on any connection to the ledger (the verifier's worker thread opens its own).
 */
export class ChunkScanner {
  private readonly chunk: Database.Statement;
  private readonly readOnlyKeys: Database.Statement;
  private readonly readsInRange: Database.Statement;
  private readonly reads: Database.Statement | null;
  private readonly lastOkBefore: Database.Statement;
  private readonly deleteAfter: Database.Statement;
  private readonly finalOf: Database.Statement;
  private readonly writeSeq: Database.Statement;
  private readonly latestDelete: Database.Statement;
  private readonly keyStore: Database.Statement;
  private readonly actives = new Map<string, Map<number, string[]>>();
  private readonly syncReplicated: Set<string>;
  private readonly ackCache = new Map<string, [number | null, Array<[number, string, number]>]>();

  constructor(
    db: Database.Database,
    private readonly ctx: ScanContext,
  ) {
    registerScanFunctions(db);
    this.chunk = db.prepare(chunkSql(ctx.v2)).raw(true);
    this.readOnlyKeys = db.prepare(READ_ONLY_KEYS_SQL).raw(true);
    this.readsInRange = db.prepare('SELECT COUNT(*) FROM final_reads WHERE key_id >= @lo AND key_id < @hi').pluck();
    this.reads = ctx.v2 ? db.prepare(READS_SQL).raw(true) : null;
    this.lastOkBefore = db.prepare("SELECT seq, op FROM writes WHERE key_id = ? AND outcome = 'ok' AND complete_ms < ? ORDER BY seq DESC LIMIT 1");
    this.deleteAfter = db.prepare("SELECT 1 FROM writes WHERE key_id = ? AND op = 'delete' AND seq > ? AND invoke_ms < ? LIMIT 1").pluck();
    this.finalOf = db.prepare('SELECT value, value_key_id, value_seq, unreadable FROM final_reads WHERE key_id = ?');
    this.writeSeq = db.prepare('SELECT 1 FROM writes WHERE key_id = ? AND seq = ?').pluck();
    this.latestDelete = db.prepare("SELECT MAX(seq) FROM writes WHERE key_id = ? AND op = 'delete' AND outcome IS NOT 'fail'").pluck();
    this.keyStore = db.prepare('SELECT store FROM keys WHERE key_id = ?').pluck();
    for (const [store, partition, epoch, list] of ctx.actives) {
      const k = `${store}\u0000${partition}`;
      let m = this.actives.get(k);
      if (m === undefined) this.actives.set(k, (m = new Map()));
      m.set(epoch, list);
    }
    this.syncReplicated = new Set(ctx.syncReplicated);
  }

  /** EXPLAIN QUERY PLAN of the per-range writes statement (details, in order). */
  explain(): string[] {
    return (this.chunk.database.prepare(`EXPLAIN QUERY PLAN ${chunkSql(this.ctx.v2)}`).all({ lo: 0, hi: 1 }) as { detail: string }[]).map((r) => r.detail);
  }

  /** EXPLAIN QUERY PLAN of the per-range reads statement (v2). */
  explainReads(): string[] {
    return (this.chunk.database.prepare(`EXPLAIN QUERY PLAN ${READS_SQL}`).all({ lo: 0, hi: 1 }) as { detail: string }[]).map((r) => r.detail);
  }

  /** Scans keys with lo <= key_id < hi. */
  scan(lo: number, hi: number): ChunkResult {
    const range = { lo, hi };
    const counts = new Map<string, [string, number, number, number]>();
    const candidates: KeyCandidate[] = [];
    const rows = this.chunk.all(range) as ChunkRow[];
    let withRead = 0;
    for (const r of rows) {
      const [store, partition, keyId, n, nOk, nFail, k1, lastOk, acks, matchedSeq, recovered, firstUnder, hasRead] = r;
      let c = counts.get(store);
      if (c === undefined) counts.set(store, (c = [store, 0, 0, 0]));
      c[1] += n;
      c[2] += nOk;
      c[3] += nFail;
      withRead += hasRead;
      const cand = this.keyKind(store, partition, k1, lastOk, acks, matchedSeq, recovered, firstUnder);
      if (cand !== null) candidates.push({ keyId, store, kind: cand[0], seq: cand[1], matchedSeq: k1 === 'unverified' || k1 === 'unexpected' ? null : matchedSeq });
    }
    let keys = rows.length;
    if ((this.readsInRange.get(range) as number) > withRead) {
      // keys read at the end that no write names: a value there names no write (unexpected)
      for (const [keyId, store, value, unreadable] of this.readOnlyKeys.all(range) as Array<[number, string, string | null, number]>) {
        keys++;
        if (unreadable === 0 && value !== null) candidates.push({ keyId, store, kind: 'unexpected', seq: null, matchedSeq: null });
      }
    }
    const reads = this.reads === null ? [] : this.readFindings(range);
    return { counts: [...counts.values()], keys, candidates, reads };
  }

  private keyKind(
    store: string,
    partition: number,
    k1: KeyFindingKind | null,
    lastOk: number | null,
    acks: string | number | null,
    matchedSeq: number | null,
    recovered: number | null,
    firstUnder: number | null,
  ): [KeyFindingKind, number | null] | null {
    switch (k1) {
      case 'unverified':
      case 'lost':
        return [k1, lastOk];
      case 'unexpected':
        return [k1, null];
      case 'phantom':
        return [k1, matchedSeq];
      default:
    }
    let reg: number | null;
    if (this.ctx.v2) {
      if (firstUnder !== null && this.syncReplicated.has(store)) return ['under-replicated-ack', firstUnder];
      const [r, pairs] = this.parseAcks(acks as string | null);
      reg = r;
      const epochs = this.actives.get(`${store}\u0000${partition}`);
      if (epochs !== undefined) {
        let bad: number | null = null;
        for (const [epoch, node, seq] of pairs) {
          const list = epochs.get(epoch);
          if (list !== undefined && list.some((a) => a !== node) && (bad === null || seq < bad)) bad = seq;
        }
        if (bad !== null) return ['ack-not-from-active', bad];
      }
    } else {
      reg = acks as number | null;
    }
    if (reg !== null) return ['version-regression', reg];
    if (recovered) return ['recovered', matchedSeq];
    return null;
  }

  private parseAcks(text: string | null): [number | null, Array<[number, string, number]>] {
    if (text === null) return [null, []];
    let v = this.ackCache.get(text);
    if (v === undefined) {
      const a = JSON.parse(text) as unknown[];
      const pairs: Array<[number, string, number]> = [];
      for (let i = 1; i < a.length; i += 3) pairs.push([a[i] as number, a[i + 1] as string, a[i + 2] as number]);
      v = [a[0] as number | null, pairs];
      if (this.ackCache.size > 50_000) this.ackCache.clear();
      this.ackCache.set(text, v);
    }
    return v;
  }

  /** The key's read findings of a range: per key, the earliest read (by invoke) with a confirmed finding. */
  private readFindings(range: { lo: number; hi: number }): ReadFindingRow[] {
    const out: ReadFindingRow[] = [];
    let doneKey = -1;
    let matched: { keyId: number; seq: number | null } | null = null;
    for (const [keyId, invokeMs, rid, completeMs, node, value, id, valueSeq, c] of this.reads!.all(range) as ReadRow[]) {
      if (keyId === doneKey) continue;
      const row: ReadFindingRow = { keyId, store: '', kind: READ_KIND[c], read: id ?? `r${rid}`, value, invokeMs, completeMs, node };
      if (c === 3) {
        // W: the last ok write acknowledged before the read began
        const w = this.lastOkBefore.get(keyId, invokeMs) as { seq: number; op: string } | undefined;
        if (w === undefined) continue;
        const older = value !== null && valueSeq !== null && valueSeq < w.seq;
        const absent = value === null && w.op !== 'delete' && this.deleteAfter.get(keyId, w.seq, completeMs) === undefined;
        if (!older && !absent) continue;
        // ... and the final read holds W or a write ordered after W
        if (matched === null || matched.keyId !== keyId) matched = { keyId, seq: this.finalMatch(keyId) };
        if (matched.seq === null || matched.seq < w.seq) continue;
        row.wSeq = w.seq;
      }
      row.store = this.keyStore.get(keyId) as string;
      out.push(row);
      doneKey = keyId;
    }
    return out;
  }

  /** The seq the key's final read matches (0: the initial state); null when missing, unreadable or naming no write of the key. */
  private finalMatch(keyId: number): number | null {
    const fr = this.finalOf.get(keyId) as { value: string | null; value_key_id: number | null; value_seq: number | null; unreadable: number } | undefined;
    if (fr === undefined || fr.unreadable !== 0) return null;
    if (fr.value === null) return (this.latestDelete.get(keyId) as number | null) ?? 0;
    if (fr.value_key_id !== keyId || fr.value_seq === null || this.writeSeq.get(keyId, fr.value_seq) === undefined) return null;
    return fr.value_seq;
  }
}
