import type Database from 'better-sqlite3';

/** One block of a partition's samples: rows with BLOCK_MS * k <= t_ms < BLOCK_MS * (k + 1), in (t_ms, rowid) order. */
interface Block {
  t: Float64Array;
  epoch: Float64Array;
  replicated: Float64Array;
  /** The `revisions` JSON of each row (null: none), parsed on first use. */
  texts: Array<string | null>;
  parsed: Array<Record<string, number> | undefined>;
}

/** A sample row as {@link SampleBlocks.window} hands it over. */
export interface WindowRow {
  replicatedRevision: number;
  /** The node -> revision map the sample recorded, or null when it recorded none. */
  revisions(): Record<string, number> | null;
}

/** Width of a block, ms of run time. */
export const BLOCK_MS = 30_000;
/** Blocks kept (least recently used dropped first): ~400 rows each at the default sampling. */
export const BLOCKS_KEPT = 64;

/**
 * A partition's runtime-map samples in a time window at one epoch, for the async-ack rule's
 * "not yet held by the node that took over" (history-format.md v2, async-ack 3): the rows the
 * query `SELECT replicated_revision, revisions FROM samples WHERE store = ? AND partition = ? AND
 * t_ms >= ? AND t_ms <= ? AND epoch = ?` gives, in the same order (samples_by_partition's:
 * t_ms, then rowid), from blocks of {@link BLOCK_MS} read once each and kept (at most
 * {@link BLOCKS_KEPT}) with their revisions parsed once: the lost writes of one crash share their
 * partition and takeover window, and the query read and parsed the same samples again for each
 * (a second of the 40-minute run's re-analysis per thousand lost async writes).
 * @throws Error (JSON's) when a row's revisions, asked for, are not JSON.
 */
export class SampleBlocks {
  private readonly st: Database.Statement;
  private readonly blocks = new Map<string, Block>();

  constructor(db: Database.Database) {
    this.st = db.prepare('SELECT t_ms, epoch, replicated_revision, revisions FROM samples WHERE store = ? AND partition = ? AND t_ms >= ? AND t_ms < ? ORDER BY t_ms, rowid').raw(true);
  }

  /** The rows of (store, partition) with from <= t_ms <= to and the epoch given, in (t_ms, rowid) order. */
  *window(store: string, partition: number, from: number, to: number, epoch: number): Generator<WindowRow> {
    if (!(from <= to)) return;
    for (let k = Math.floor(from / BLOCK_MS); k * BLOCK_MS <= to; k++) {
      const b = this.block(store, partition, k);
      // the first row at or after `from`
      let lo = 0;
      let hi = b.t.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (b.t[mid] < from) lo = mid + 1;
        else hi = mid;
      }
      for (let i = lo; i < b.t.length && b.t[i] <= to; i++) {
        if (b.epoch[i] !== epoch) continue;
        const idx = i;
        yield {
          replicatedRevision: b.replicated[idx],
          revisions: () => {
            const text = b.texts[idx];
            if (text === null) return null;
            let r = b.parsed[idx];
            if (r === undefined) b.parsed[idx] = r = JSON.parse(text) as Record<string, number>;
            return r;
          },
        };
      }
    }
  }

  private block(store: string, partition: number, k: number): Block {
    const id = `${store}\u0000${partition}\u0000${k}`;
    let b = this.blocks.get(id);
    if (b !== undefined) {
      // most recently used last
      this.blocks.delete(id);
      this.blocks.set(id, b);
      return b;
    }
    const rows = this.st.all(store, partition, k * BLOCK_MS, (k + 1) * BLOCK_MS) as Array<[number, number, number, string | null]>;
    b = { t: new Float64Array(rows.length), epoch: new Float64Array(rows.length), replicated: new Float64Array(rows.length), texts: new Array(rows.length), parsed: new Array(rows.length) };
    rows.forEach(([t, epoch, rr, text], i) => {
      b!.t[i] = t;
      b!.epoch[i] = epoch;
      b!.replicated[i] = rr;
      b!.texts[i] = text;
    });
    this.blocks.set(id, b);
    if (this.blocks.size > BLOCKS_KEPT) this.blocks.delete(this.blocks.keys().next().value as string);
    return b;
  }
}
