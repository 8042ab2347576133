/**
 * The plain SQLite writer's hot rows (`invokes` joined with `completions`, and `read_log`), read
 * in pages and handed to the key packer (key-packer.ts) row by row.
 */
import type Database from 'better-sqlite3';
import { KR_TEXT } from './key-log.js';
import { NULL } from './packer-indexes.js';
import { OPS, OUTCOMES, READ_KINDS } from './write-batches.js';

/** Columns of a table. */
export function columnsOf(db: Database.Database, table: string): string[] {
  return (db.prepare(`SELECT name FROM pragma_table_info(?)`).all(table) as Array<{ name: string }>).map((c) => c.name);
}

/**
 * What the key packer takes of a row (batch -1: the row is in no batch; w: the plain writer's write
 * number w as -w - 1, apart from the batches' ones; times in ms; strings as the packer's sealed
 * codes, {@link NULL} for none).
 */
export interface LegacyRowSink {
  addWrite(batch: number, w: number, k: number, seq: number, op: number, invoke: number): void;
  /** f: complete, outcome, status, attempts, node, epoch, version, revision, mode, copies (sealed codes). */
  addCompletion(batch: number, w: number, f: Float64Array, trace: string | undefined): void;
  addRead(batch: number, rid: number, k: number, invoke: number, complete: number, outcome: number, node: number, vk: number, vs: number, kind: number, text: string | undefined): void;
  /** Called after each page: keys gone idle are packed. */
  advance(): void;
  /** The sealed code of a string (NULL for none). */
  code(t: string | null | undefined): number;
}

/**
 * Hands the plain SQLite writer's rows to `sink`: invokes joined with their completions in write
 * order, then read_log in rid order, in pages of 65,536 (the sink writes between them). `cf` is
 * the completion's field scratch (10 numbers).
 * @throws Error when an invoke names an op the ledger does not know.
 */
export function packLegacyRows(db: Database.Database, cf: Float64Array, sink: LegacyRowSink): void {
  const opCode = (op: string): number => {
    const i = OPS.indexOf(op as (typeof OPS)[number]);
    if (i < 0) throw new Error(`ledger: unknown op ${op}`);
    return i;
  };
  const outcomeCode = (o: string | null): number => (o === null ? NULL : o === OUTCOMES[0] ? 0 : o === OUTCOMES[1] ? 1 : 2);
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
      sink.addWrite(-1, -r[0] - 1, r[1], r[2], opCode(r[3]), r[4]);
      if (r[5] !== null) {
        cf[0] = r[5];
        cf[1] = outcomeCode(r[6]);
        cf[2] = sink.code(r[7]);
        cf[3] = r[8] ?? NULL;
        cf[4] = sink.code(r[9]);
        cf[5] = r[10] ?? NULL;
        cf[6] = r[11] ?? NULL;
        cf[7] = r[12] ?? NULL;
        cf[8] = r[13] === null ? NULL : r[13] === 'async' ? 1 : 0;
        cf[9] = r[15] ?? NULL;
        sink.addCompletion(-1, -r[0] - 1, cf, r[14] ?? undefined);
      }
    }
    sink.advance();
  }
  type LegacyRead = [number, number, number, number | null, string, string | null, string | null, number | null, number | null, string | null];
  const reads = db.prepare('SELECT rid, key_id, invoke_ms, complete_ms, outcome, node, value, value_key_id, value_seq, kind FROM read_log WHERE rid > ? ORDER BY rid LIMIT 65536').raw();
  for (let after = -Infinity, rows = reads.all(after) as LegacyRead[]; rows.length > 0; after = rows[rows.length - 1][0], rows = reads.all(after) as LegacyRead[]) {
    for (const r of rows) {
      const text = r[6] !== null && r[7] === null ? r[6] : undefined;
      const kind = r[9] === null ? NULL : READ_KINDS.indexOf(r[9] as (typeof READ_KINDS)[number]);
      sink.addRead(-1, r[0], r[1], r[2], r[3] ?? NULL, outcomeCode(r[4]), sink.code(r[5]), r[6] === null ? NULL : r[7] === null ? KR_TEXT : r[7], r[8] ?? NULL, kind < 0 ? NULL : kind, text);
    }
    sink.advance();
  }
}
