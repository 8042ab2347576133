/**
 * Delivery watchdog of one outbound peer link (issue 11, the soak freeze).
 *
 * A node sends to a peer on its own outbound TCP connection. When a partition drops that
 * connection's packets, nothing closes it: TCP retransmits with exponential backoff (RTO doubling
 * from ~200 ms on loopback, capped at 120 s) and, after the partition heals, delivers nothing
 * until the next retransmission, which comes as late as the partition was long (a 28 s cut:
 * 27 s of silence after the heal, measured on loopback; up to the 120 s cap on long cuts or
 * loaded machines). The node shell used to replace a peer link only when it closed, so a node
 * whose links were cut stayed deaf and mute long after the heal and was failed over with no
 * fault on it.
 *
 * The receiving end acknowledges, on the same connection, how many bytes it has read (a
 * `link-ack`, at most every {@link LINK_ACK_MS}); the sending end keeps the times of its writes
 * that are not acknowledged yet. A link with something unacknowledged on which the peer has
 * acknowledged nothing new for longer than the bound ({@link LinkWatch.stalledFor}) delivers
 * nothing: the shell destroys it (a reset, so that no stale bytes trickle in later) and dials a
 * fresh connection, which either connects at once (healed) or keeps failing fast (connect
 * timeout) while the cut lasts. A large transfer whose acknowledgements keep coming is not a
 * stall, however long it takes.
 *
 * Pure: no sockets, no clocks. The node shell (node-shell.ts) and the simulation
 * (sim/failover-sim.ts) drive it with their own time and byte counts.
 */

/** The receiving end acknowledges what it read at most this often, ms. */
export const LINK_ACK_MS = 50;

/** One write not yet acknowledged: the cumulative count after it, and when it was written. */
interface Mark {
  total: number;
  at: number;
}

/** Writes closer together than this share one mark (ms): the watch holds few marks under load. */
const MARK_BUCKET_MS = 20;

/**
 * The sending end's view of one connection: cumulative units (bytes in the shell, messages in the
 * simulation) written and acknowledged, and when the oldest unacknowledged write happened.
 */
export class LinkWatch {
  private readonly marks: Mark[] = [];
  private head = 0;
  private sentTotal = 0;
  private ackedTotal = 0;
  /** When the peer last acknowledged something new (-Infinity: never). */
  private progressAt = -Infinity;

  /**
   * Records `units` more written at time `now` (ms).
   * @throws RangeError for a negative or non-finite count.
   */
  sent(units: number, now: number): void {
    if (!(units >= 0) || !Number.isFinite(units)) throw new RangeError(`link-watch: cannot send ${units} units`);
    if (units === 0) return;
    this.sentTotal += units;
    const last = this.marks.length > this.head ? this.marks[this.marks.length - 1] : null;
    // a mark keeps the time of the earliest write it covers: the watch never under-reports a stall
    if (last && now - last.at < MARK_BUCKET_MS) last.total = this.sentTotal;
    else this.marks.push({ total: this.sentTotal, at: now });
  }

  /**
   * The peer acknowledged `total` units read in all, at `now` (ms; cumulative: stale or repeated
   * acks are ignored; an ack above what was sent is clamped: a confused peer cannot hide a stall).
   */
  acked(total: number, now: number): void {
    if (!(total > this.ackedTotal) || this.ackedTotal >= this.sentTotal) return;
    this.ackedTotal = Math.min(total, this.sentTotal);
    this.progressAt = now;
    while (this.head < this.marks.length && this.marks[this.head].total <= this.ackedTotal) this.head++;
    if (this.head === this.marks.length) {
      this.marks.length = 0;
      this.head = 0;
    } else if (this.head > 64 && this.head * 2 > this.marks.length) {
      this.marks.splice(0, this.head);
      this.head = 0;
    }
  }

  /**
   * How long the link has made no progress at `now`, ms: 0 when everything written is
   * acknowledged; else the time since the later of the oldest unacknowledged write and the last
   * acknowledgement of something new.
   */
  stalledFor(now: number): number {
    if (this.head >= this.marks.length) return 0;
    return Math.max(0, now - Math.max(this.marks[this.head].at, this.progressAt));
  }

  /** Units written in all. */
  get sentUnits(): number {
    return this.sentTotal;
  }

  /** Units the peer acknowledged in all. */
  get ackedUnits(): number {
    return this.ackedTotal;
  }

  /** Unacknowledged marks held (for tests: stays small however long the link lives). */
  get pendingMarks(): number {
    return this.marks.length - this.head;
  }
}

/**
 * The receiving end: counts what it read and says when an acknowledgement is due (new units
 * since the last one, and {@link LINK_ACK_MS} passed since it).
 */
export class LinkAcker {
  private readTotal = 0;
  private ackedTotal = 0;
  private lastAckAt = -Infinity;

  /** Records `units` read. */
  read(units: number): void {
    this.readTotal += units;
  }

  /** The cumulative count to acknowledge now, or null when no ack is due at `now` (ms). */
  due(now: number): number | null {
    if (this.readTotal === this.ackedTotal || now - this.lastAckAt < LINK_ACK_MS) return null;
    this.ackedTotal = this.readTotal;
    this.lastAckAt = now;
    return this.readTotal;
  }
}
