/**
 * The chunk scan: a key_id range of a ledger read in a few ordered statements and merged by key,
 * each key judged (key-judge.ts) and, under the v2 rules, its reads checked (read-checks.ts).
 */
import type Database from 'better-sqlite3';
import type { KeyFindingKind } from '../../ledger/history-findings.js';
import { unpackRows } from '../../ledger/column-pack.js';
import { hasTable, KW_FIELDS, loadStrings } from '../../ledger/key-log.js';
import { DELETE_BIT, FAIL, hasSeq, INDETERMINATE, KEY_UDF, keyKind, makeKeyStep, OK, registerScanFunctions, TimeArena, type KeyFacts, type KeyRules, type KeyStep } from './key-judge.js';
import { ReadChecks, READS_SQL, type PackedKeyReads, type ReadFindingRow } from './read-checks.js';

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
 * Scans key_id ranges of a ledger (history-format.md, per key): counts, the key's own finding
 * (its kind and the write it names; the details and a loss's class are looked up afterwards for
 * the candidates alone) and (v2) its read finding. Memory is bounded by the chunk width. Usable
 * on any connection to the ledger (the verifier's worker thread opens its own).
 */
export class ChunkScanner {
  private readonly writesSt: Database.Statement;
  private readonly keysSt: Database.Statement;
  private readonly finalsSt: Database.Statement;
  /** `store\0partition` -> `life\0epoch` -> the actives its samples showed. */
  private readonly actives = new Map<string, Map<string, string[]>>();
  /** `store\0partition` -> the starts of its total losses. */
  private readonly losses = new Map<string, number[]>();
  /** key_id -> its partition's loss starts, for the keys of the chunk being scanned (only when some partition had a total loss). */
  private readonly keyLosses = new Map<number, number[]>();
  /** What a key's own finding depends on besides its facts (the context's v2, stores, actives). */
  private readonly rules: KeyRules;
  /** The key aggregate's per-key facts of the statement being read (cleared per chunk). */
  private readonly sink: KeyFacts[] = [];
  private readonly arena = new TimeArena();
  /** key_id -> facts of the chunk being scanned (for the reads). */
  private readonly byKey = new Map<number, KeyFacts>();
  /** The read checks (v2), judged against `arena` and `byKey` after the writes of a chunk. */
  private readonly readChecks: ReadChecks;
  /** The packed form (key_log): its range statement, the string table, the key step, scratch rows. */
  private readonly packedSt: Database.Statement | null;
  private readonly strings: string[];
  private readonly keyStep: KeyStep;
  private scratch: Float64Array = new Float64Array(KW_FIELDS * 256);
  /** The packed reads of the chunk being scanned, judged after its writes. */
  private readonly packedReads: PackedKeyReads[] = [];

  constructor(
    db: Database.Database,
    private readonly ctx: ScanContext,
  ) {
    registerScanFunctions(db, this.sink, ctx.v2 ? this.arena : null, (keyId) => this.keyLosses.get(keyId) ?? null);
    const packed = hasTable(db, 'key_log');
    this.strings = packed ? loadStrings(db) : [];
    this.readChecks = new ReadChecks(db, ctx, this.arena, this.byKey, this.strings);
    this.writesSt = db.prepare(writesSql(ctx.v2)).raw(true);
    this.keysSt = db.prepare(KEYS_SQL).raw(true);
    this.finalsSt = db.prepare(FINALS_SQL).raw(true);
    this.packedSt = packed ? db.prepare('SELECT key_id, writes, reads, extra FROM key_log WHERE key_id >= @lo AND key_id < @hi ORDER BY key_id').raw(true) : null;
    this.keyStep = makeKeyStep(ctx.v2 ? this.arena : null, (keyId) => this.keyLosses.get(keyId) ?? null);
    for (const [store, partition, life, epoch, list] of ctx.actives) {
      const k = `${store}\u0000${partition}`;
      (this.actives.get(k) ?? this.actives.set(k, new Map()).get(k)!).set(`${life}\u0000${epoch}`, list);
    }
    for (const [store, partition, starts] of ctx.losses) this.losses.set(`${store}\u0000${partition}`, starts);
    this.rules = { v2: ctx.v2, syncReplicated: new Set(ctx.syncReplicated), actives: this.actives };
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
      const cand = keyKind(this.rules, store, partition, f === null || f[1] !== 0, !absent && named === null, matched, k, absent);
      if (cand !== null) candidates.push({ keyId, store, kind: cand[0], seq: cand[1], matchedSeq: cand[0] === 'unverified' || cand[0] === 'unexpected' ? null : matched });
    }
    let packedReads = 0;
    for (const p of this.packedReads) packedReads += p.reads.readUInt32LE(2);
    const reads = this.readChecks.findings(range, stores, keyRows, this.packedReads);
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
}
