/** What the nemesis did to whom and when, as the durability rules ask it: faults in effect, crash instants, broken connections. */

/** A fault in effect over [start, end] (virtual ms; end Infinity while it lasts), touching `nodes`. */
interface Touch {
  nodes: readonly string[];
  start: number;
  end: number;
}

/**
 * The faults of one run, recorded as they start and end (virtual ms from the simulator's clock):
 * every nemesis fault (crash until the restart, pause, partition) with the nodes it touched,
 * every crash instant, and every connection between two nodes that broke or came back (any
 * cause: a fault, a crash, a random reset). The durability rules ask whether a fault touched a
 * node within a window, and whether a replication stream ran undisturbed.
 */
export class FaultTimeline {
  private readonly faults: Touch[] = [];
  /** `${a}|${b}` (a < b) -> the last time a connection between the two broke or came back. */
  private readonly lastLinkChange = new Map<string, number>();
  /** Directed connections down now, `${from}>${to}`. */
  private readonly linksDown = new Set<string>();
  /** Node -> crash times, in order. */
  private readonly crashes = new Map<string, number[]>();

  /** @param now the simulator's virtual clock, ms. */
  constructor(private readonly now: () => number) {}

  /** A fault started now, touching `nodes`; returns the function that ends it (once; later calls change nothing). */
  faultStart(nodes: readonly string[]): () => void {
    const f: Touch = { nodes, start: this.now(), end: Infinity };
    this.faults.push(f);
    return () => {
      if (f.end === Infinity) f.end = this.now();
    };
  }

  /** `node` crashed now (the crash's fault is recorded apart, by {@link faultStart}). */
  noteCrash(node: string): void {
    const list = this.crashes.get(node) ?? [];
    list.push(this.now());
    this.crashes.set(node, list);
  }

  /** The instants `node` crashed at, in order (empty when never). */
  crashTimes(node: string): readonly number[] {
    return this.crashes.get(node) ?? [];
  }

  /** The connection from `a` to `b` broke or came back up now. */
  linkChanged(a: string, b: string, up: boolean): void {
    this.lastLinkChange.set(pairKey(a, b), this.now());
    if (up) this.linksDown.delete(`${a}>${b}`);
    else this.linksDown.add(`${a}>${b}`);
  }

  /** Was `node` touched by a fault in effect at some instant of [from, to]. */
  touched(node: string, from: number, to: number): boolean {
    return this.faults.some((f) => f.start <= to && f.end >= from && f.nodes.includes(node));
  }

  /** Did a connection between `a` and `b` (either direction) break or come back at or after `from`, or is one down now. */
  linkDisturbed(a: string, b: string, from: number): boolean {
    return (this.lastLinkChange.get(pairKey(a, b)) ?? -Infinity) >= from || this.linksDown.has(`${a}>${b}`) || this.linksDown.has(`${b}>${a}`);
  }
}

/** The key of an unordered pair of nodes. */
function pairKey(a: string, b: string): string {
  return a < b ? `${a}|${b}` : `${b}|${a}`;
}
