/** What a node core needs from its surroundings: clock, randomness, sends, answers, probes, log. */
import type { ClientResponse } from '../client-protocol.js';
import type { ClusterMsg } from '../cluster-messages.js';

/**
 * What the node core needs from its surroundings. The node process (node-shell.ts) backs it with
 * sockets and timers; the simulation (sim/failover-sim.ts) with a virtual network and clock.
 */
export interface CoreEnv {
  /** Monotonic local time, ms. */
  now(): number;
  /** Uniform [0, 1): election jitter. Seeded in the simulation. */
  random(): number;
  /** Queue a message to a peer; delivery is best effort, ordered per peer connection. */
  send(to: string, msg: ClusterMsg): void;
  /** Answer a client request (possibly long after onClient returned). */
  respond(token: unknown, res: ClientResponse): void;
  /** Ask for a direct liveness check of a peer; the answer comes back through onProbeResult. */
  probe(node: string): void;
  /** Structured log line. */
  log(event: string, fields?: Record<string, unknown>): void;
  /** This process's recent event-loop delay (the node shell measures it; absent in the simulation). */
  loopDelay?(): LoopDelay;
}

/**
 * A node's own event-loop delay over a rolling recent window (issue 11: a stall shows here, not
 * only as silence). Never reset by reading it.
 */
export interface LoopDelay {
  /** Longest delay seen in the window, ms. */
  maxMs: number;
  /** The highest 99th percentile of the window's slices, ms. */
  p99Ms: number;
  /** How far back the window reaches, ms. */
  windowMs: number;
}
