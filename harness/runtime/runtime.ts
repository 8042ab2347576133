import type { ClusterConfig } from '../../nodes/cluster-config.js';

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
  /** Removes every partition rule. */
  heal(): Promise<void>;
  /** Is the node's process (container) running now (not killed or stopped; paused counts as running). */
  isUp(nodeId: string): boolean;
  /** Ids of the nodes, in config order. */
  nodeIds(): string[];
  /** Stops everything and removes all the runtime created. Safe to call twice. */
  close(): Promise<void>;
}
