import type { DurableView } from './sim-durability.js';
import type { NodeCore } from '../node-core.js';
import type { RuntimeEntry } from '../cluster-messages.js';

/** Poll period of the nemesis gates, the convergence watcher and the durability checks, ms. */
export const POLL_MS = 100;

/** One simulated node: its core (null while down), its views for the checkers, its crash/pause state. */
export interface SimNode {
  id: string;
  index: number;
  core: NodeCore | null;
  view: DurableView | null;
  /** Ends the durability checker's record of the node's current crash (at its restart) or pause. */
  crashTouch: (() => void) | null;
  pauseTouch: (() => void) | null;
  /** Bumped on every crash and restart; events carry the generation they were made for. */
  gen: number;
  restarts: number;
  paused: boolean;
  held: Array<() => void>;
  tickToken: number;
  /**
   * The core said it rejoined (its `rejoined` log line): it takes part in votes and proposals
   * again. A node that is down or not yet rejoined holds none of the cluster's memory.
   */
  rejoined: boolean;
}

/** A directed cluster connection between two simulated nodes. */
export interface Link {
  from: SimNode;
  to: SimNode;
  state: 'down' | 'connecting' | 'up';
  connId: number;
  /** Delivery time of the last message queued on the current connection (FIFO). */
  lastAt: number;
  /** The connection whose hello the acceptor has read. */
  helloConn: number;
  /** This link's own extra delay, ms (NetParams.linkSkewMs). */
  skewMs: number;
}

/** One runtime entry on one line, for traces and violation details. */
export function describeEntry(e: RuntimeEntry | undefined): string {
  if (!e) return 'none';
  return `[e${e.epoch} t${e.term} ${e.active ? `${e.active.node}/${e.active.inc}` : '-'} ${e.health} inSync=${e.inSync.map((m) => m.node).join(',')}${e.syncFrom ? ` syncFrom=${e.syncFrom.node}${e.syncTag ? `@${e.syncTag}` : ''}` : ''}${e.handoffTo ? ` handoff=${e.handoffTo.node}` : ''} mv${e.mapVersion}]`;
}
