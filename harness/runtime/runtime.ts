import type { ClusterConfig } from '../../nodes/cluster-config.js';
import type { ClockMode, ClockSetting } from './faketime.js';

export type { ClockMode, ClockSetting } from './faketime.js';

/**
 * A grudge: for each node, the nodes whose traffic it drops (Jepsen's term). A node missing
 * from the map drops nothing. Directional: `{ n1: ['n2'] }` cuts n2 -> n1 only.
 */
export type Grudge = Record<string, readonly string[]>;

/** Which runtime ran the nodes. */
export type RuntimeKind = 'process' | 'docker';

/** Where the harness (the client side) reaches one node. */
export interface NodeEndpoint {
  host: string;
  port: number;
}

/** Options for starting a cluster. */
export interface ClusterStartOptions {
  /** The run directory; node logs go to `<runDir>/nodes/<id>.log`. */
  runDir: string;
  /**
   * The cluster shape to run. The runtime decides the nodes' hosts and ports (loopback
   * addresses, container addresses) and returns the config the nodes actually use.
   */
  nodeIds: string[];
  /** Everything of the config except where nodes listen. */
  template: Omit<ClusterConfig, 'nodes'> & { preferredPrimaries?: string[] };
  /** Extra environment for the node processes. */
  env?: Record<string, string>;
  /**
   * Clock faults (faketime.ts): every node starts with libfaketime preloaded in the given mode,
   * so that {@link Runtime.setClock} can change its clock later. Omitted: no clock faults.
   */
  clockModes?: Record<string, ClockMode>;
}

/**
 * The seam between the harness and the way nodes run (DESIGN.md §3 "Runtime").
 * Implementations: process-runtime.ts (child processes on 127.0.0.N), docker-runtime.ts.
 *
 * Every method that changes the cluster resolves once the change took effect (a killed node's
 * process has exited, a rule is installed). Errors are thrown as Error with a one-line message.
 * `close()` must leave nothing behind: no process, container, network or iptables rule.
 */
export interface Runtime {
  readonly kind: RuntimeKind;
  /** Starts every node; resolves when each node's client port accepts connections. */
  start(opts: ClusterStartOptions): Promise<ClusterConfig>;
  /** The config the nodes were started with (after start()). */
  readonly config: ClusterConfig;
  /** Where the harness connects to a node's client port. */
  clientEndpoint(nodeId: string): NodeEndpoint;
  /** SIGKILL: the node loses its memory. Resolves when it is gone. */
  kill(nodeId: string): Promise<void>;
  /** SIGTERM, then wait for exit (SIGKILL after a grace period). The node loses its memory. */
  stop(nodeId: string): Promise<void>;
  /** Starts a killed or stopped node again, at the same address, with empty memory. */
  restart(nodeId: string): Promise<void>;
  /** Freezes the node (SIGSTOP / engine pause): it keeps its memory and sockets. */
  pause(nodeId: string): Promise<void>;
  resume(nodeId: string): Promise<void>;
  /** Installs the grudge as DROP rules between node addresses (replaces any earlier grudge). */
  partition(grudge: Grudge): Promise<void>;
  /**
   * Cuts the harness's own traffic (its client, probes and samples) from exactly these nodes,
   * replacing any earlier client cut ([] ends it); the nodes still reach each other. The cut is
   * by the harness's source address on the nodes' side (DROP of what it sends).
   */
  cutClient(nodeIds: readonly string[]): Promise<void>;
  /** Removes every partition rule and every client cut. */
  heal(): Promise<void>;
  /**
   * Sets a node's clock (the cluster must have been started with `clockModes`). Resolves once
   * the setting is surely in effect (faketime.ts CLOCK_EFFECT_MS), also for a node that is down
   * (it starts with the setting).
   * @throws Error (one line) when clock faults were not enabled; RangeError for a setting that
   * does not fit the node's mode.
   */
  setClock(nodeId: string, setting: ClockSetting): Promise<void>;
  /** Each node's clock mode, or null when the cluster was started without clock faults. */
  clockModes(): Readonly<Record<string, ClockMode>> | null;
  /** Is the node's process (container) running now (not killed or stopped; paused counts as running). */
  isUp(nodeId: string): boolean;
  /** Ids of the nodes, in config order. */
  nodeIds(): string[];
  /** Stops everything and removes all the runtime created. Safe to call twice. */
  close(): Promise<void>;
}
