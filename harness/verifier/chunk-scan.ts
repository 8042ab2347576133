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

/** What the acks aggregate learns of a key's `ok` writes (handed to JS by index, not serialized). */
export interface AckFacts {
  /** `ok` writes. */
  nOk: number;
  /** The last `ok` seq. */
  lastOk: number;
  /** The first `ok` non-delete write whose version is not above the one before; null none. */
  reg: number | null;
  /** The first `ok` write whose ack names fewer than 2 copies; null none. */
  under: number | null;
  /** The acks' distinct (epoch, node) pairs, with the first seq that carried each. */
  pairs: Array<[epoch: number, node: string, firstSeq: number]>;
  prevSeq: number;
  prevVersion: number;
}

/**
 * Registers the verifier's SQL functions on a connection:
 * - `zaris_first_regression(seq, version)` (v1 tests and tools): over a key's `ok` non-delete
 *   writes, the seq of the first write whose version is not above the one before (null none);
 * - `zaris_acks(seq, version or NULL for a delete, epoch, node, copies)` over a key's `ok`
 *   writes: an index into `sink` where the key's {@link AckFacts} were put (the caller reads and
 *   clears it after each statement; no serialization).
 * Both rely on receiving a key's rows in seq order, which the GROUP BY over the writes table's
 * (key_id, seq) primary key gives; they check that order and throw rather than answer from rows
 * out of order. (An `ORDER BY seq` inside the call would enforce it in SQL but costs ~20% of the
 * pass: DESIGN.md §8.)
 */
export function registerScanFunctions(db: Database.Database, sink: AckFacts[] = []): void {
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
  const ackStep = (s: AckFacts | null, seq: number, version: number | null, epoch: number | null, node: string | null, copies: number | null): AckFacts => {
    if (s === null) {
      s = { nOk: 0, lastOk: seq, reg: null, under: null, pairs: [], prevSeq: -Infinity, prevVersion: -Infinity };
    }
    if (seq <= s.prevSeq) throw new Error(`verifier: writes were not scanned in (key_id, seq) order (seq ${seq} after ${s.prevSeq})`);
    s.prevSeq = seq;
    s.nOk++;
    s.lastOk = seq;
    if (version !== null) {
      if (s.reg === null && version <= s.prevVersion) s.reg = seq;
      s.prevVersion = version;
    }
    if (copies !== null && copies < 2 && s.under === null) s.under = seq;
    if (epoch !== null && node !== null) {
      const last = s.pairs[s.pairs.length - 1];
      if (last === undefined || last[0] !== epoch || last[1] !== node) {
        if (!s.pairs.some((p) => p[0] === epoch && p[1] === node)) s.pairs.push([epoch, node, seq]);
      }
    }
    return s;
  };
  db.aggregate<AckFacts | null>(ACKS_UDF, {
    start: null,
    step: ackStep as unknown as (state: AckFacts | null, next: unknown) => AckFacts,
    result: (s: AckFacts | null) => {
      if (s === null) return null;
      sink.push(s);
      return sink.length - 1;
    },
  });
}

/**
 * Per key of a key_id range, in one ordered pass over the writes table (clustered by
 * (key_id, seq)): counts, the latest delete whose outcome is ok or info (a write still in flight
 * counts as info) and, through `zaris_acks` over the `ok` writes, their count, the last one, the
 * first version regression, the first under-replicated ack and the acks' (epoch, node) pairs.
 * The keys and final reads of the range are read by their own range scans and merged in JS by
 * key_id (cheaper than a lookup per key); the rules are applied in JS ({@link ChunkScanner}).
 */
const WRITES_SQL = `
  SELECT key_id, COUNT(*) AS n, COUNT(*) FILTER (WHERE outcome = 'fail') AS n_fail,
         MAX(seq) FILTER (WHERE op = 'delete' AND outcome IS NOT 'fail') AS last_del,
         ${ACKS_UDF}(seq, CASE WHEN op <> 'delete' THEN ack_version END, ack_epoch, ack_node, ack_copies) FILTER (WHERE outcome = 'ok') AS acks
  FROM writes WHERE key_id >= @lo AND key_id < @hi GROUP BY key_id`;
type WritesRow = [keyId: number, n: number, nFail: number, lastDel: number | null, acks: number | null];

const KEYS_SQL = 'SELECT key_id, store, partition FROM keys WHERE key_id >= @lo AND key_id < @hi ORDER BY key_id';
type KeysRow = [keyId: number, store: string, partition: number];

/** The final reads of a range, with the write a value names (same key only): its seq and outcome. */
const FINALS_SQL = `
  SELECT fr.key_id, fr.unreadable, fr.value IS NULL AS absent, mw.seq, mw.outcome
  FROM final_reads fr
  LEFT JOIN writes mw ON fr.value IS NOT NULL AND fr.value_key_id = fr.key_id AND mw.key_id = fr.key_id AND mw.seq = fr.value_seq
  WHERE fr.key_id >= @lo AND fr.key_id < @hi ORDER BY fr.key_id`;
type FinalsRow = [keyId: number, unreadable: number, absent: number, mseq: number | null, moutcome: string | null];

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
  private readonly writesSt: Database.Statement;
  private readonly keysSt: Database.Statement;
  private readonly finalsSt: Database.Statement;
  private readonly outcomeAt: Database.Statement;
  private readonly reads: Database.Statement | null;
  private readonly lastOkBefore: Database.Statement;
  private readonly deleteAfter: Database.Statement;
  private readonly finalOf: Database.Statement;
  private readonly writeSeq: Database.Statement;
  private readonly latestDelete: Database.Statement;
  private readonly keyStore: Database.Statement;
  private readonly actives = new Map<string, Map<number, string[]>>();
  private readonly syncReplicated: Set<string>;
  /** The acks aggregate's per-key facts of the statement being read (cleared per chunk). */
  private readonly sink: AckFacts[] = [];

  constructor(
    db: Database.Database,
    private readonly ctx: ScanContext,
  ) {
    registerScanFunctions(db, this.sink);
    this.writesSt = db.prepare(WRITES_SQL).raw(true);
    this.keysSt = db.prepare(KEYS_SQL).raw(true);
    this.finalsSt = db.prepare(FINALS_SQL).raw(true);
    this.outcomeAt = db.prepare('SELECT outcome FROM writes WHERE key_id = ? AND seq = ?').pluck();
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
    const db = this.writesSt.database;
    return [WRITES_SQL, KEYS_SQL, FINALS_SQL].flatMap((q) => (db.prepare(`EXPLAIN QUERY PLAN ${q}`).all({ lo: 0, hi: 1 }) as { detail: string }[]).map((r) => r.detail));
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
    this.sink.length = 0;
    const writes = this.writesSt.all(range) as WritesRow[];
    const keyRows = this.keysSt.all(range) as KeysRow[];
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
      const [, n, nFail, lastDel, acksAt] = w;
      const acks = acksAt === null ? null : this.sink[acksAt];
      let c = counts.get(store);
      if (c === undefined) counts.set(store, (c = [store, 0, 0, 0]));
      c[1] += n;
      c[2] += acks === null ? 0 : acks.nOk;
      c[3] += nFail;
      const absent = f !== null && f[2] === 1;
      const mseq = f === null ? null : f[3];
      // the final read matches its write, else (absent) the latest ok/info delete, else seq 0
      const matched = absent ? (lastDel ?? 0) : mseq;
      const cand = this.keyKind(keyId, store, partition, f === null || f[1] !== 0, !absent && mseq === null, matched, f !== null && f[4] === 'fail', acks, absent ? lastDel : null, f === null ? null : f[4]);
      if (cand !== null) candidates.push({ keyId, store, kind: cand[0], seq: cand[1], matchedSeq: cand[0] === 'unverified' || cand[0] === 'unexpected' ? null : matched });
    }
    this.sink.length = 0;
    const reads = this.reads === null ? [] : this.readFindings(range);
    return { counts: [...counts.values()], keys, candidates, reads };
  }

  /**
   * A key's own finding (history-format.md, first that applies): unverified, unexpected, lost,
   * phantom, (v2) under-replicated-ack, ack-not-from-active, version-regression, recovered; with
   * the seq of the write it names.
   */
  private keyKind(
    keyId: number,
    store: string,
    partition: number,
    unverified: boolean,
    unexpected: boolean,
    matched: number | null,
    phantom: boolean,
    acks: AckFacts | null,
    matchedDelete: number | null,
    matchedOutcome: string | null,
  ): [KeyFindingKind, number | null] | null {
    const lastOk = acks === null ? null : acks.lastOk;
    if (unverified) return ['unverified', lastOk];
    if (unexpected) return ['unexpected', null];
    if (lastOk !== null && lastOk > (matched as number)) return ['lost', lastOk];
    if (phantom) return ['phantom', matched];
    if (acks !== null && this.ctx.v2) {
      if (acks.under !== null && this.syncReplicated.has(store)) return ['under-replicated-ack', acks.under];
      const epochs = this.actives.get(`${store}\u0000${partition}`);
      if (epochs !== undefined) {
        let bad: number | null = null;
        for (const [epoch, node, seq] of acks.pairs) {
          const list = epochs.get(epoch);
          if (list !== undefined && list.some((a) => a !== node) && (bad === null || seq < bad)) bad = seq;
        }
        if (bad !== null) return ['ack-not-from-active', bad];
      }
    }
    if (acks !== null && acks.reg !== null) return ['version-regression', acks.reg];
    // recovered: the final value is a write not acknowledged (info, or still in flight); v2 also
    // an absent value matching a delete not acknowledged
    if (matchedDelete === null) {
      if (matched !== null && matched > 0 && matchedOutcome !== 'ok') return ['recovered', matched];
    } else if (this.ctx.v2 && this.outcomeAt.get(keyId, matchedDelete) !== 'ok') {
      return ['recovered', matchedDelete];
    }
    return null;
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
