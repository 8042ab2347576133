import type Database from 'better-sqlite3';

/** One partition's replica lists over time: the instants where the recorded list changes. */
interface Runs {
  /** t_ms of the first sample of each run of equal `replicas` texts (ascending). */
  starts: number[];
  /** The `replicas` text of each run. */
  texts: string[];
}

/**
 * The partition's replicas at an instant as the samples recorded them (v2: the partition map of
 * that moment, after a regeneration or a move; history-index.ts, `replicasAt`): the `replicas` of
 * the latest sample at or before t that carries them (ties on t_ms: the last recorded), or
 * undefined when none does.
 *
 * Reads each partition's samples once (through samples_by_partition, on the first question about
 * it) and keeps only the instants where the recorded text changes, so that a question is a binary
 * search. It answers exactly what the point query
 * `SELECT replicas FROM samples WHERE store = ? AND partition = ? AND t_ms <= ? AND replicas IS
 * NOT NULL ORDER BY t_ms DESC, rowid DESC LIMIT 1` answers (the latest such sample lies in the
 * last run that starts at or before t, and carries that run's text), without that query's
 * backward walk over every sample of the partition that carries none (a 40-minute run's 42,000
 * lost writes spent 7 minutes there). Memory: one entry per change of a partition's replicas.
 */
export class ReplicaTimeline {
  private readonly st: Database.Statement;
  private readonly runs = new Map<string, Runs>();
  private readonly parsed = new Map<string, string[]>();

  constructor(db: Database.Database) {
    this.st = db.prepare('SELECT t_ms, replicas FROM samples WHERE store = ? AND partition = ? AND replicas IS NOT NULL ORDER BY t_ms, rowid').raw(true);
  }

  /**
   * The replicas text of the latest sample of (store, partition) at or before t that carries
   * them, or undefined.
   */
  textAt(store: string, partition: number, t: number): string | undefined {
    const r = this.runsOf(store, partition);
    // the last run that starts at or before t
    let lo = 0;
    let hi = r.starts.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (r.starts[mid] <= t) lo = mid + 1;
      else hi = mid;
    }
    return lo === 0 ? undefined : r.texts[lo - 1];
  }

  /**
   * The replicas of (store, partition) at t (see {@link textAt}), parsed; undefined when no sample
   * at or before t carries them.
   * @throws Error when that sample's replicas are not a JSON array of node ids.
   */
  at(store: string, partition: number, t: number): string[] | undefined {
    const text = this.textAt(store, partition, t);
    if (text === undefined) return undefined;
    let list = this.parsed.get(text);
    if (list === undefined) {
      let v: unknown;
      try {
        v = JSON.parse(text);
      } catch {
        v = null;
      }
      if (!Array.isArray(v) || !v.every((n) => typeof n === 'string')) throw new Error(`ledger: samples(${store}, ${partition}).replicas is not a JSON array of node ids`);
      list = v as string[];
      this.parsed.set(text, list);
    }
    return list;
  }

  /**
   * The spans of (store, partition)'s replicas from t on: the list in effect at t (if any sample
   * at or before t carries one) and every later one, each with the instant it took effect (`from`,
   * never before t) and the instant the next one did (`until`, Infinity for the last). For the
   * rf1 rule across moves: a node holds the only copy while it is listed.
   */
  spansFrom(store: string, partition: number, t: number): Array<{ from: number; until: number; replicas: string[] }> {
    const r = this.runsOf(store, partition);
    const out: Array<{ from: number; until: number; replicas: string[] }> = [];
    for (let i = 0; i < r.starts.length; i++) {
      const until = i + 1 < r.starts.length ? r.starts[i + 1] : Infinity;
      if (until <= t) continue;
      out.push({ from: Math.max(t, r.starts[i]), until, replicas: this.at(store, partition, r.starts[i])! });
    }
    return out;
  }

  private runsOf(store: string, partition: number): Runs {
    const k = `${store}\u0000${partition}`;
    let r = this.runs.get(k);
    if (r === undefined) {
      r = { starts: [], texts: [] };
      let last: string | null = null;
      for (const [t, text] of this.st.iterate(store, partition) as IterableIterator<[number, string]>) {
        if (text === last) continue;
        r.starts.push(t);
        r.texts.push(text);
        last = text;
      }
      this.runs.set(k, r);
    }
    return r;
  }
}
