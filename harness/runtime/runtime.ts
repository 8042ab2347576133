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
  /**
   * Spare nodes (issue 14), among `nodeIds`: each is written into the cluster config with
   * `"spare": true` and `preferredPrimary: false` (outside the member set at start: no copy, no
   * partition of its own, never a voter; it takes copies once it joins). Started, killed, paused
   * and cut like every node. Default none.
   */
  spares?: readonly string[];
  /** Extra environment for the node processes. */
  env?: Record<string, string>;
  /**
   * Clock faults (faketime.ts): every node starts with libfaketime preloaded in the given mode,
   * so that {@link Runtime.setClock} can change its clock later. Omitted: no clock faults.
   */
  clockModes?: Record<string, ClockMode>;
}

/**
 * The nemesis-facing part of a runtime (DESIGN.md §3 "Runtime", "Targets"): what faults and the
 * end phase's heal do to running nodes, whatever store they run. The nemesis (nemesis/nemesis.ts)
 * takes only this, so that it drives the Zaris nodes ({@link Runtime}) and any other target's
 * nodes (targets/target.ts `TargetRuntime`) alike. How a cluster starts is the other part.
 *
 * Every method that changes the cluster resolves once the change took effect (a killed node's
 * process has exited, a rule is installed). Errors are thrown as Error with a one-line message.
 * Each such method may be called again after it failed, and then does what the first call was
 * to do (fault-tolerant-runtime.ts retries transient failures: a node half started is left down,
 * a kill half done can be finished, a rule set is replaced whole).
 * `close()` must leave nothing behind: no process, container, network or iptables rule.
 */
export interface FaultRuntime {
  readonly kind: RuntimeKind;
  /** SIGKILL: the node's processes die at once. Resolves when they are gone. */
  kill(nodeId: string): Promise<void>;
  /** SIGTERM, then wait for exit (SIGKILL after a grace period). */
  stop(nodeId: string): Promise<void>;
  /** Starts a killed or stopped node again, at the same address (what it keeps is the store's: Zaris nodes start empty). */
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

/**
 * The seam between the harness and the way the Zaris nodes run (DESIGN.md §3): the
 * nemesis-facing {@link FaultRuntime} plus how a Zaris cluster starts from its cluster config.
 * Implementations: process-runtime.ts (child processes on 127.0.0.N), docker-runtime.ts.
 * A Zaris node killed, stopped or restarted loses its memory (it starts empty).
 */
export interface Runtime extends FaultRuntime {
  /** Starts every node; resolves when each node's client port accepts connections. */
  start(opts: ClusterStartOptions): Promise<ClusterConfig>;
  /** The config the nodes were started with (after start()). */
  readonly config: ClusterConfig;
  /** Where the harness connects to a node's client port. */
  clientEndpoint(nodeId: string): NodeEndpoint;
}

/**
 * The role fields of one node's cluster-config entry (issue 14): a spare (`o.spares`) is
 * `{ preferredPrimary: false, spare: true }`; any other node is a preferred primary unless
 * `preferredPrimaries` names others. The runtimes (process, docker) write these into the config.
 * @throws Error (one line) when a spare is not one of `nodeIds` or is also named a preferred primary.
 */
export function nodeRoleFields(o: Pick<ClusterStartOptions, 'nodeIds' | 'spares'> & { preferredPrimaries?: readonly string[] }, id: string): { preferredPrimary: boolean; spare?: true } {
  const spares = o.spares ?? [];
  for (const s of spares) if (!o.nodeIds.includes(s)) throw new Error(`spare node "${s}" is not one of the nodes (${o.nodeIds.join(', ')})`);
  if (spares.includes(id)) {
    if (o.preferredPrimaries?.includes(id)) throw new Error(`spare node "${id}" cannot be a preferred primary`);
    return { preferredPrimary: false, spare: true };
  }
  return { preferredPrimary: o.preferredPrimaries === undefined ? true : o.preferredPrimaries.includes(id) };
}
