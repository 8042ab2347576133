/**
 * A min-priority queue of timed events for the discrete-event simulation: ordered by time (ms),
 * then by insertion order, so that events scheduled for the same instant run in the order they
 * were scheduled (determinism: no tie is ever broken by anything but the sequence number).
 */
export class EventQueue<T> {
  private readonly heap: Array<{ at: number; seq: number; item: T }> = [];
  private seq = 0;

  /** Number of queued events. */
  get size(): number {
    return this.heap.length;
  }

  /** Time of the earliest event, or Infinity when empty. */
  peekTime(): number {
    return this.heap.length > 0 ? this.heap[0].at : Infinity;
  }

  /** Queues `item` at time `at` (ms). @throws RangeError for a NaN time. */
  push(at: number, item: T): void {
    if (Number.isNaN(at)) throw new RangeError('EventQueue.push: NaN time');
    const h = this.heap;
    const node = { at, seq: this.seq++, item };
    let i = h.length;
    h.push(node);
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!less(node, h[p])) break;
      h[i] = h[p];
      i = p;
    }
    h[i] = node;
  }

  /** Removes and returns the earliest event, or undefined when empty. */
  pop(): { at: number; item: T } | undefined {
    const h = this.heap;
    if (h.length === 0) return undefined;
    const top = h[0];
    const last = h.pop()!;
    if (h.length > 0) {
      let i = 0;
      const n = h.length;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const r = l + 1;
        const c = r < n && less(h[r], h[l]) ? r : l;
        if (!less(h[c], last)) break;
        h[i] = h[c];
        i = c;
      }
      h[i] = last;
    }
    return { at: top.at, item: top.item };
  }
}

function less(a: { at: number; seq: number }, b: { at: number; seq: number }): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}
