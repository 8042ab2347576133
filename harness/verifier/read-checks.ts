/**
 * The read checks (v2): each `ok` read of a chunk judged against its key's write facts (unexpected,
 * phantom, stale), the `reads` table's through `zaris_read` in SQL and the packed ones in JS.
 */
import type Database from 'better-sqlite3';
import type { ReadFindingKind } from '../../ledger/history-findings.js';
import { unpackRows } from '../../ledger/column-pack.js';
import { KR_FIELDS, KR_TEXT, parseExtra } from '../../ledger/key-log.js';
import { FAIL, hasSeq, outcomeOf, type KeyFacts, type TimeArena } from './key-judge.js';

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

/** A packed key's reads as key_log holds them (its packed rows and extra texts). */
export interface PackedKeyReads {
  keyId: number;
  reads: Buffer;
  extra: string | null;
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

const READ_UDF = 'zaris_read';

/**
 * The `ok` reads of a range (v2), in (key, invoke, order recorded) order, each judged by
 * `zaris_read` in JS against its key's {@link KeyFacts}; the function records the findings (the
 * earliest read per key) and the statement returns only their count.
 */
export const READS_SQL = `
  SELECT COUNT(*) FROM reads
  WHERE key_id >= @lo AND key_id < @hi AND outcome = 'ok'
    AND ${READ_UDF}(key_id, invoke_ms, complete_ms, value_key_id, value_seq, value IS NULL, rid)`;

/**
 * A chunk scanner's read checks on its connection (registers `zaris_read`): judges the reads of a
 * range in both forms against the facts of the range's keys and returns the read findings. The
 * facts are the scanner's: `arena` and `byKey` are filled by its pass over the writes first.
 */
export class ReadChecks {
  private readonly readsSt: Database.Statement | null;
  private readonly readAt: Database.Statement;
  private readonly hits: ReadHit[] = [];
  private lastRead: [keyId: number, invoke: number] = [-1, -Infinity];
  private lastHitKey = -1;
  private staleHitsOfKey = 0;

  /** `strings`: the ledger's string table (packed reads name their node by its code). */
  constructor(
    db: Database.Database,
    private readonly ctx: { readonly v2: boolean; readonly staleReads?: boolean },
    private readonly arena: TimeArena,
    private readonly byKey: ReadonlyMap<number, KeyFacts>,
    private readonly strings: readonly string[],
  ) {
    db.function(READ_UDF, { varargs: false, deterministic: false }, (keyId: unknown, invoke: unknown, complete: unknown, vk: unknown, vs: unknown, absent: unknown, rid: unknown) =>
      this.judgeRead(keyId as number, invoke as number, complete as number, vk as number | null, vs as number | null, absent === 1, rid as number),
    );
    this.readsSt = ctx.v2 ? db.prepare(READS_SQL).pluck() : null;
    this.readAt = db.prepare('SELECT complete_ms, node, value, id FROM reads WHERE key_id = ? AND invoke_ms = ? AND rid = ?');
  }

  /**
   * The read findings of a range, in key then invoke order: per key, the earliest read that has
   * one, and when that is a stale read, the key's later read findings too (up to
   * {@link STALE_HITS_PER_KEY} stale reads): the main thread keeps the first one not excused.
   * [] without the v2 rules. `packedReads`: the range's packed reads, judged after its `reads` rows.
   */
  findings(
    range: { lo: number; hi: number },
    stores: ReadonlyMap<number, string>,
    keyRows: ReadonlyArray<readonly [keyId: number, store: string, partition: number]>,
    packedReads: readonly PackedKeyReads[],
  ): ReadFindingRow[] {
    if (this.readsSt === null) return [];
    this.hits.length = 0;
    this.lastRead = [-1, -Infinity];
    this.lastHitKey = -1;
    this.readsSt.get(range);
    const fromSql = this.hits.length;
    this.judgePackedReads(packedReads);
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
  private judgePackedReads(packedReads: readonly PackedKeyReads[]): void {
    this.lastRead = [-1, -Infinity];
    for (const p of packedReads) {
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
}
