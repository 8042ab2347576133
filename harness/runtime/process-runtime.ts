import { mkdirSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { validateClusterConfig, type ClusterConfig } from '../../nodes/cluster-config.js';
import { distPath } from '../dist-path.js';
import { CLOCK_EFFECT_MS, ClockFiles, checkClockSetting, faketimeEnv, findHostLibfaketime, hostClockFaultsUnavailable, type ClockMode, type ClockSetting } from './faketime.js';
import { IptablesPartitioner } from './iptables.js';
import { nodeRoleFields, type ClusterStartOptions, type Grudge, type NodeEndpoint, type Runtime } from './runtime.js';

/** Where a node listens for clients in the process runtime (one loopback address per node). */
export const PROCESS_CLIENT_PORT = 7100;
/** Where a node listens for its peers in the process runtime. */
export const PROCESS_CLUSTER_PORT = 7200;
/** Metrics endpoint port of every process node (on its own loopback address; nodes/node-metrics.ts). */
export const PROCESS_METRICS_PORT = 7300;

/** Options of the process runtime. */
export interface ProcessRuntimeOptions {
  /** Run tag: names the loopback block and marks node processes for the leftover sweep. */
  runTag: string;
  /**
   * Partition support through iptables (needs CAP_NET_ADMIN; the harness checks first). Without
   * it partition() throws a one-line error.
   */
  partitions?: boolean;
  /** The node entry script (default: dist/nodes/node-main.js next to this file's build). */
  nodeEntry?: string;
}

interface NodeProc {
  id: string;
  host: string;
  proc: ResultPromise | null;
  paused: boolean;
  exited: Promise<void> | null;
}

/** The node entry in the build (dist/nodes/node-main.js). @throws Error when it is not built. */
export function defaultNodeEntry(): string {
  return distPath(import.meta.url, 'nodes/node-main.js');
}

/**
 * Loopback address block of a run: 127.<a>.<b>.x with a, b drawn from the run tag, so that two
 * runs (or two test files) on one machine never share addresses or ports.
 */
export function loopbackBlock(runTag: string): string {
  let h = 2166136261;
  for (let i = 0; i < runTag.length; i++) h = Math.imul(h ^ runTag.charCodeAt(i), 16777619);
  h >>>= 0;
  const a = 1 + (h % 250);
  const b = 1 + ((h >>> 8) % 250);
  return `127.${a}.${b}`;
}

/**
 * The `process` runtime (DESIGN.md §3): every node a child process (execa) on its own loopback
 * address 127.a.b.(10+i), binding its outgoing connections to that address too, so iptables
 * rules on source and destination cut exactly one direction of one link. Node logs are appended
 * to `<runDir>/nodes/<id>.log` across restarts.
 * - client cut (issue 13): the harness's own connections are not bound, so they come from the
 *   address the kernel picks (127.0.0.1 on loopback, found at start): `-s <that> -d <node> -j
 *   DROP` in the same chain cuts the harness from a node and from nothing else. A restarted node
 *   is waited for from its own address, which no cut drops.
 * - clock faults: with `clockModes`, every node starts with the host's libfaketime preloaded
 *   (runtime/faketime.ts) and a timestamp file in a `zaris-certify-clock-p<pid>-*` temp folder,
 *   removed at close and on exit.
 */
export class ProcessRuntime implements Runtime {
  readonly kind = 'process' as const;
  private nodes = new Map<string, NodeProc>();
  private cfg: ClusterConfig | null = null;
  private runDir = '';
  private configPath = '';
  private env: Record<string, string> = {};
  private closed = false;
  private partitioner: IptablesPartitioner | null = null;
  private clock: ClockFiles | null = null;
  private library = '';
  /** The address the harness's own connections to the nodes come from (the kernel's choice). */
  private clientSource = '';
  private readonly onExit = (): void => {
    this.partitioner?.closeSync();
    this.clock?.close();
  };

  constructor(private readonly opts: ProcessRuntimeOptions) {}

  get config(): ClusterConfig {
    if (!this.cfg) throw new Error('the cluster is not started');
    return this.cfg;
  }

  /**
   * Writes `<runDir>/cluster.json` and starts every node; resolves when all client ports answer.
   * With `clockModes`, every node starts with the host's libfaketime preloaded.
   * @throws Error (one line) when clock faults are asked for and libfaketime is not installed.
   */
  async start(o: ClusterStartOptions): Promise<ClusterConfig> {
    this.runDir = o.runDir;
    this.env = o.env ?? {};
    mkdirSync(path.join(o.runDir, 'nodes'), { recursive: true });
    const block = loopbackBlock(this.opts.runTag);
    const preferred = o.template.preferredPrimaries;
    const raw = {
      ...o.template,
      nodes: o.nodeIds.map((id, i) => ({
        id,
        host: `${block}.${11 + i}`,
        clientPort: PROCESS_CLIENT_PORT,
        clusterPort: PROCESS_CLUSTER_PORT,
        metricsPort: PROCESS_METRICS_PORT,
        ...nodeRoleFields({ nodeIds: o.nodeIds, spares: o.spares, preferredPrimaries: preferred }, id),
      })),
    };
    delete (raw as { preferredPrimaries?: unknown }).preferredPrimaries;
    this.cfg = validateClusterConfig(raw);
    this.configPath = path.join(o.runDir, 'cluster.json');
    writeFileSync(this.configPath, JSON.stringify(this.cfg, null, 2));
    for (const n of this.cfg.nodes) this.nodes.set(n.id, { id: n.id, host: n.host, proc: null, paused: false, exited: null });
    if (o.clockModes) {
      const why = hostClockFaultsUnavailable();
      if (why) throw new Error(why);
      this.library = findHostLibfaketime()!;
      for (const id of o.nodeIds) if (o.clockModes[id] === undefined) throw new Error(`clock faults: no clock mode for node ${id}`);
      this.clock = await ClockFiles.create(o.clockModes);
    }
    if (this.opts.partitions) {
      this.partitioner = await IptablesPartitioner.open({ addresses: Object.fromEntries(this.cfg.nodes.map((n) => [n.id, n.host])) });
    }
    // a crash of the harness must not leave rules or clock files behind
    process.once('exit', this.onExit);
    await Promise.all(this.cfg.nodes.map((n) => this.spawn(n.id)));
    const first = this.cfg.nodes[0];
    this.clientSource = await clientSourceAddress(first.host, first.clientPort);
    return this.cfg;
  }

  /** The address the harness's unbound connections to the nodes come from (after start()). */
  get harnessAddress(): string {
    return this.clientSource;
  }

  clientEndpoint(nodeId: string): NodeEndpoint {
    const n = this.config.nodes.find((x) => x.id === nodeId);
    if (!n) throw new Error(`unknown node ${nodeId}`);
    return { host: n.host, port: n.clientPort };
  }

  nodeIds(): string[] {
    return this.config.nodes.map((n) => n.id);
  }

  isUp(nodeId: string): boolean {
    return this.get(nodeId).proc !== null;
  }

  async kill(nodeId: string): Promise<void> {
    await this.terminate(nodeId, 'SIGKILL');
  }

  async stop(nodeId: string): Promise<void> {
    await this.terminate(nodeId, 'SIGTERM');
  }

  async restart(nodeId: string): Promise<void> {
    if (this.get(nodeId).proc) throw new Error(`node ${nodeId} is running; kill or stop it first`);
    await this.spawn(nodeId);
  }

  async pause(nodeId: string): Promise<void> {
    const n = this.get(nodeId);
    if (!n.proc) throw new Error(`node ${nodeId} is not running`);
    n.proc.kill('SIGSTOP');
    n.paused = true;
  }

  async resume(nodeId: string): Promise<void> {
    const n = this.get(nodeId);
    if (!n.proc) throw new Error(`node ${nodeId} is not running`);
    n.proc.kill('SIGCONT');
    n.paused = false;
  }

  async partition(grudge: Grudge): Promise<void> {
    await loopbackPartition(this.partitioner, grudge);
  }

  async cutClient(nodeIds: readonly string[]): Promise<void> {
    for (const id of nodeIds) this.get(id);
    await loopbackClientCut(this.partitioner, this.clientSource, nodeIds);
  }

  async heal(): Promise<void> {
    await this.partitioner?.heal();
  }

  async setClock(nodeId: string, setting: ClockSetting): Promise<void> {
    this.get(nodeId);
    if (!this.clock) throw new Error('clock faults are not available in this run (the cluster was started without clock modes)');
    checkClockSetting(this.clock.modes[nodeId], setting);
    this.clock.write(nodeId, setting);
    await new Promise((r) => setTimeout(r, CLOCK_EFFECT_MS));
  }

  clockModes(): Readonly<Record<string, ClockMode>> | null {
    return this.clock?.modes ?? null;
  }

  /** Kills every node, removes partition rules. Safe to call twice. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.nodes.keys()].map((id) => this.terminate(id, 'SIGKILL').catch(() => undefined)));
    await this.partitioner?.close();
    this.clock?.close();
    process.off('exit', this.onExit);
  }

  private get(nodeId: string): NodeProc {
    const n = this.nodes.get(nodeId);
    if (!n) throw new Error(`unknown node ${nodeId}`);
    return n;
  }

  private async spawn(nodeId: string): Promise<void> {
    const n = this.get(nodeId);
    const entry = this.opts.nodeEntry ?? defaultNodeEntry();
    const logPath = path.join(this.runDir, 'nodes', `${nodeId}.log`);
    const proc = execa(process.execPath, [entry, '--config', this.configPath, '--id', nodeId, '--run', this.opts.runTag], {
      stdin: 'ignore',
      stdout: { file: logPath, append: true },
      stderr: { file: logPath, append: true },
      env: {
        ...this.env,
        ...(this.clock ? faketimeEnv(this.library, path.join(this.clock.dir, ClockFiles.fileName(nodeId)), this.clock.modes[nodeId]) : {}),
        ZARIS_CERTIFY_RUN: this.opts.runTag,
      },
      reject: false,
      cleanup: true,
    });
    n.proc = proc;
    n.paused = false;
    n.exited = proc.then(() => {
      if (n.proc === proc) n.proc = null;
    });
    const self = this.config.nodes.find((x) => x.id === nodeId)!;
    // from the node's own address: a client cut (which drops the harness's address) must not
    // keep a restarted node from being seen up
    try {
      await waitForPort(self.host, self.clientPort, 15_000, () => n.proc !== proc, nodeId, logPath, self.host);
    } catch (e) {
      // a node that did not come up is down (killed), so that its start can be made again
      await this.terminate(nodeId, 'SIGKILL');
      throw e;
    }
  }

  private async terminate(nodeId: string, signal: 'SIGKILL' | 'SIGTERM'): Promise<void> {
    const n = this.get(nodeId);
    const proc = n.proc;
    if (!proc) return;
    if (n.paused && signal === 'SIGTERM') proc.kill('SIGCONT');
    proc.kill(signal);
    const grace = signal === 'SIGTERM' ? setTimeout(() => proc.kill('SIGKILL'), 5_000) : null;
    await n.exited;
    if (grace) clearTimeout(grace);
    n.proc = null;
    n.paused = false;
  }
}

/**
 * Applies a partition map (grudge) to nodes that are processes on loopback addresses (both
 * process runtimes: the store's and other targets').
 * @throws Error when the runtime was started without iptables, or iptables fails.
 */
export async function loopbackPartition(partitioner: IptablesPartitioner | null, grudge: Grudge): Promise<void> {
  if (!partitioner) throw new Error('partitions are not available in this run (the process runtime was started without iptables)');
  await partitioner.apply(grudge);
}

/**
 * Cuts the harness's client traffic (from `clientSource`) to exactly `nodeIds` (none: every cut
 * healed), on loopback nodes of either process runtime.
 * @throws Error when the runtime was started without iptables and a cut is asked, or iptables fails.
 */
export async function loopbackClientCut(partitioner: IptablesPartitioner | null, clientSource: string, nodeIds: readonly string[]): Promise<void> {
  if (!partitioner) {
    if (nodeIds.length === 0) return;
    throw new Error('client cuts are not available in this run (the process runtime was started without iptables)');
  }
  await partitioner.cutClient(clientSource, nodeIds);
}

/**
 * The local address the kernel picks for an unbound connection to host:port (on loopback:
 * 127.0.0.1): what a node sees the harness's client traffic come from.
 * @throws Error (one line) when no connection is accepted within 5 s.
 */
export function clientSourceAddress(host: string, port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host, port });
    const timer = setTimeout(() => {
      s.destroy();
      reject(new Error(`no connection to ${host}:${port} within 5 s`));
    }, 5_000);
    s.once('connect', () => {
      clearTimeout(timer);
      const a = s.localAddress ?? '';
      s.destroy();
      if (a === '') reject(new Error(`no local address for the connection to ${host}:${port}`));
      else resolve(a.replace(/^::ffff:/, ''));
    });
    s.once('error', (e) => {
      clearTimeout(timer);
      reject(new Error(`connection to ${host}:${port}: ${e.message}`));
    });
  });
}

/**
 * Resolves once host:port accepts a TCP connection (made from `localAddress` when given).
 * @throws Error after timeoutMs or when the process died.
 */
export async function waitForPort(host: string, port: number, timeoutMs: number, died: () => boolean, nodeId: string, logPath: string, localAddress?: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (died()) throw new Error(`node ${nodeId} exited during start-up (see ${logPath})`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect({ host, port, ...(localAddress ? { localAddress } : {}) });
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
      setTimeout(() => {
        s.destroy();
        resolve(false);
      }, 500).unref();
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`node ${nodeId} did not listen on ${host}:${port} within ${timeoutMs} ms (see ${logPath})`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
