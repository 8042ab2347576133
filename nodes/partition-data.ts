/**
 * One node's copy of one partition: the records of its segments and a bounded op log per
 * segment (DESIGN.md §2 "Replication", seed 002 "One Log, Two Jobs").
 *
 * Revisions are partition-wide and strictly increasing along one active's tenure; every op
 * carries its revision, so the per-segment logs can be merged back into revision order. A log
 * "reaches back" to revision r when it still holds every op of its segment above r; otherwise
 * the segment is sent as a snapshot.
 */

/** A stored record; `value === null` is a tombstone (kept so versions never go backwards). */
export interface StoredRecord {
  value: Buffer | null;
  version: number;
  revision: number;
}

/** One replicated operation (a put, or a delete when value is null). */
export interface ReplicatedOp {
  rev: number;
  seg: number;
  key: string;
  value: Buffer | null;
  version: number;
}

/** A segment's state shipped to a catching-up replica: a snapshot, or the ops above a revision. */
export interface SegmentSync {
  seg: number;
  /** Full content: [key, value|null, version, revision] tuples. Present when the log could not reach back. */
  snapshot?: Array<[string, Buffer | null, number, number]>;
  /** Ops above the requested revision, in revision order. */
  ops?: ReplicatedOp[];
}

class SegmentLog {
  ops: ReplicatedOp[] = [];
  head = 0;
  /** Every op of this segment with rev > floor is in the log. */
  floor = 0;

  constructor(private readonly cap: number) {}

  append(op: ReplicatedOp): void {
    this.ops.push(op);
    if (this.ops.length - this.head > this.cap) {
      this.floor = this.ops[this.head].rev;
      this.head++;
      if (this.head > this.cap) {
        this.ops = this.ops.slice(this.head);
        this.head = 0;
      }
    }
  }

  reachesBack(rev: number): boolean {
    return rev >= this.floor;
  }

  /** The ops above `rev`, oldest first; `skipLast` is self-test bug `catchup-skips-last-op` (the newest is left out). */
  since(rev: number, skipLast = false): ReplicatedOp[] {
    const out: ReplicatedOp[] = [];
    for (let i = this.ops.length - (skipLast ? 2 : 1); i >= this.head; i--) {
      const op = this.ops[i];
      if (op.rev <= rev) break;
      out.push(op);
    }
    return out.reverse();
  }

  /**
   * The last op of `key` at or below revision `rev`: the op when this log still holds it; null
   * when there was none (the log holds every op since revision 0 and none of them is one); else
   * undefined (the key's state at `rev` is older than the log reaches back).
   */
  lastOf(key: string, rev: number): ReplicatedOp | null | undefined {
    for (let i = this.ops.length - 1; i >= this.head; i--) {
      const op = this.ops[i];
      if (op.rev <= rev && op.key === key) return op;
    }
    return this.floor === 0 ? null : undefined;
  }

  reset(floor: number): void {
    this.ops = [];
    this.head = 0;
    this.floor = floor;
  }
}

/** Default number of ops kept per segment log. */
export const DEFAULT_SEGMENT_LOG_CAP = 4096;

/**
 * The records and op logs of one partition on one node.
 * Not thread-safe (single event loop); all methods are synchronous.
 */
export class PartitionData {
  private readonly data = new Map<number, Map<string, StoredRecord>>();
  private readonly logs = new Map<number, SegmentLog>();
  /** Last applied revision. */
  revision = 0;
  /** Records that hold a value (tombstones excluded): the possession proof's count (seed 002). */
  heldKeys = 0;

  /**
   * @param segments the segment ids of this partition. @param logCap ops kept per segment log.
   * @param catchupSkipsLastOp self-test bug `catchup-skips-last-op` (cluster-config.ts): a catch-up
   *   from the log ({@link syncSince}) leaves out the last op of each segment's suffix.
   */
  constructor(
    readonly segments: readonly number[],
    logCap = DEFAULT_SEGMENT_LOG_CAP,
    private readonly catchupSkipsLastOp = false,
  ) {
    for (const s of segments) {
      this.data.set(s, new Map());
      this.logs.set(s, new SegmentLog(logCap));
    }
  }

  /** The record of a key in a segment of this partition (tombstones included). */
  get(seg: number, key: string): StoredRecord | undefined {
    return this.data.get(seg)?.get(key);
  }

  /**
   * The record of a key as this copy's log stood at revision `rev` (tombstones included): null
   * when the key had no record then (records are never removed, a tombstone stays: a key without
   * a record now never had one in this log), undefined when this copy cannot tell (its present
   * record was written above `rev`, and its segment's op log no longer reaches back to the key's
   * last op at or below `rev`). For checkers (the simulation's replica-divergence rule), not the store.
   */
  recordAt(seg: number, key: string, rev: number): StoredRecord | null | undefined {
    const cur = this.get(seg, key);
    if (!cur) return null;
    if (cur.revision <= rev) return cur;
    const op = this.logs.get(seg)?.lastOf(key, rev);
    return op ? { value: op.value, version: op.version, revision: op.rev } : op;
  }

  /**
   * Applies an op (as the active, or as a replica replaying the active's stream): stores the
   * record, appends it to its segment log, advances the revision.
   * @throws Error if the segment is not one of this partition's.
   */
  apply(op: ReplicatedOp): void {
    const m = this.data.get(op.seg);
    const log = this.logs.get(op.seg);
    if (!m || !log) throw new Error(`segment ${op.seg} is not in this partition`);
    const prev = m.get(op.key);
    const prevHeld = prev !== undefined && prev.value !== null;
    const nowHeld = op.value !== null;
    m.set(op.key, { value: op.value, version: op.version, revision: op.rev });
    if (prevHeld !== nowHeld) this.heldKeys += nowHeld ? 1 : -1;
    log.append(op);
    if (op.rev > this.revision) this.revision = op.rev;
  }

  /**
   * What a replica that holds everything up to `haveRev` of the same tenure needs: per segment,
   * the ops above haveRev when the log reaches back, else a snapshot. `haveRev < 0` forces
   * snapshots of every segment.
   */
  syncSince(haveRev: number): SegmentSync[] {
    const out: SegmentSync[] = [];
    for (const seg of this.segments) {
      const log = this.logs.get(seg)!;
      if (haveRev >= 0 && log.reachesBack(haveRev)) {
        const ops = log.since(haveRev, this.catchupSkipsLastOp);
        if (ops.length > 0) out.push({ seg, ops });
      } else {
        out.push({ seg, snapshot: this.snapshotSegment(seg) });
      }
    }
    return out;
  }

  /** The full content of one segment as [key, value|null, version, revision] tuples. */
  snapshotSegment(seg: number): Array<[string, Buffer | null, number, number]> {
    const m = this.data.get(seg)!;
    const out: Array<[string, Buffer | null, number, number]> = [];
    for (const [k, r] of m) out.push([k, r.value, r.version, r.revision]);
    return out;
  }

  /**
   * Installs what {@link syncSince} produced on the sending side, then sets the revision to
   * `revision` (the sender's at the time). Snapshot segments replace the local segment; op lists
   * are applied in order.
   */
  installSync(segs: SegmentSync[], revision: number): void {
    for (const s of segs) {
      if (s.snapshot) {
        const m = this.data.get(s.seg);
        if (!m) throw new Error(`segment ${s.seg} is not in this partition`);
        for (const r of m.values()) if (r.value !== null) this.heldKeys--;
        m.clear();
        for (const [k, v, ver, rev] of s.snapshot) {
          m.set(k, { value: v, version: ver, revision: rev });
          if (v !== null) this.heldKeys++;
        }
        this.logs.get(s.seg)!.reset(revision);
      }
      if (s.ops) for (const op of s.ops) this.apply(op);
    }
    this.revision = revision;
  }

  /** Drops everything (a replica about to take a full snapshot, or a re-homed partition). */
  clear(revision = 0): void {
    for (const m of this.data.values()) m.clear();
    for (const l of this.logs.values()) l.reset(revision);
    this.heldKeys = 0;
    this.revision = revision;
  }

  /** Number of records including tombstones (for memory figures). */
  get recordCount(): number {
    let n = 0;
    for (const m of this.data.values()) n += m.size;
    return n;
  }
}
