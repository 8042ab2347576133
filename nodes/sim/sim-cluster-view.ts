/** The simulator's view of the whole cluster at once (god's view): the best runtime entry, who serves, who is current. */
import { supersedes, type RuntimeEntry } from '../cluster-messages.js';
import type { DurableView } from './sim-durability.js';
import type { SimNode } from './sim-world.js';

/**
 * Reads the simulated nodes' cores as no node can: the highest committed runtime entry of a
 * partition anywhere, whether every partition is Healthy and served, whether the map names only
 * running incarnations. The convergence watcher, the nemesis's budget gates and the final checks
 * ask it; it changes nothing.
 */
export class ClusterView {
  constructor(
    private readonly nodes: readonly SimNode[],
    private readonly byId: ReadonlyMap<string, SimNode>,
    /** Every partition, as `store/partition`. */
    private readonly pkeys: readonly string[],
  ) {}

  /** The highest-epoch committed entry of a partition on any node that is up. */
  bestEntry(pkey: string): RuntimeEntry | undefined {
    let best: RuntimeEntry | undefined;
    for (const x of this.nodes) {
      const e = x.core?.committedEntry(pkey);
      if (e && (!best || supersedes(e, best))) best = e;
    }
    return best;
  }

  /** This member is the running incarnation of its node. */
  current(m: { node: string; inc: string }): boolean {
    return this.byId.get(m.node)?.core?.inc === m.inc;
  }

  /** Every partition's best entry names only current incarnations (active and in-sync set). */
  mapCurrent(): boolean {
    for (const p of this.pkeys) {
      const e = this.bestEntry(p);
      if (!e || (e.active && !this.current(e.active)) || !e.inSync.every((m) => this.current(m))) return false;
    }
    return true;
  }

  /** Every partition's best entry says Healthy. */
  allHealthy(): boolean {
    for (const p of this.pkeys) if (this.bestEntry(p)?.health !== 'Healthy') return false;
    return true;
  }

  /** Every partition's best entry names an up, unpaused node that serves it. */
  allServing(): boolean {
    for (const p of this.pkeys) if (!this.servingActive(p)) return false;
    return true;
  }

  /** The node that the partition's best entry names active, if it is up, unpaused, that incarnation, and serving; else null. */
  servingActive(pkey: string): SimNode | null {
    const e = this.bestEntry(pkey);
    if (!e?.active) return null;
    const x = this.byId.get(e.active.node)!;
    if (!x.core || x.paused || x.core.inc !== e.active.inc || !x.core.isServingActive(pkey)) return null;
    return x;
  }

  /** The durability checker's views of the nodes that are up, in node order. */
  upViews(): DurableView[] {
    const out: DurableView[] = [];
    for (const y of this.nodes) if (y.view) out.push(y.view);
    return out;
  }
}
