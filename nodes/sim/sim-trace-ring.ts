/** The last events of a run, kept in a ring for a violation's report. */

/**
 * A fixed-size ring of trace lines, each stamped with the virtual time it was added at (ms, one
 * decimal). A line may be given as a function: it is rendered only if a violation asks for the
 * trace, so hot paths pay nothing for their description.
 */
export class TraceRing {
  private readonly ring: Array<string | (() => string)>;
  private at = 0;

  /** @param size lines kept (the newest `size`). */
  constructor(size: number) {
    this.ring = new Array(size).fill('');
  }

  /** Adds one line at virtual time `nowMs`, dropping the oldest when the ring is full. */
  add(nowMs: number, line: string | (() => string)): void {
    this.ring[this.at] = typeof line === 'string' ? `${nowMs.toFixed(1)} ${line}` : () => `${nowMs.toFixed(1)} ${line()}`;
    this.at = (this.at + 1) % this.ring.length;
  }

  /** The lines kept, oldest first, rendered. */
  lines(): string[] {
    const out: string[] = [];
    for (let i = 0; i < this.ring.length; i++) {
      const e = this.ring[(this.at + i) % this.ring.length];
      const s = typeof e === 'string' ? e : e();
      if (s) out.push(s);
    }
    return out;
  }
}
