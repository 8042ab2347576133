import { validateClusterConfig, type ClusterConfig, type NodeConfig } from '../../nodes/cluster-config.js';
import type { ContainerSpec } from './docker-container.js';
import { DockerNodes, type DockerNodesOptions } from './docker-nodes.js';
import { CLOCK_EFFECT_MS, ClockFiles, CONTAINER_CLOCK_DIR, checkClockSetting, faketimeEnv, IMAGE_LIBFAKETIME, type ClockMode, type ClockSetting } from './faketime.js';
import { nodeRoleFields, type ClusterStartOptions, type NodeEndpoint, type Runtime } from './runtime.js';

/** Where the cluster config is written inside every node container. */
export const CONTAINER_CONFIG_PATH = '/etc/zaris-certify/cluster.json';

/** Client port of every node (each container has its own address, so all use the same ports). */
export const DOCKER_CLIENT_PORT = 7000;
/** Cluster (node-to-node) port of every node. */
export const DOCKER_CLUSTER_PORT = 7001;
/** Metrics endpoint port of every container node (on its own network address; nodes/node-metrics.ts). */
export const DOCKER_METRICS_PORT = 7002;

/**
 * The store node's command inside the image (WORKDIR /opt/zaris-certify):
 * `node dist/nodes/node-main.js --config FILE --id ID`.
 */
export function defaultNodeCommand(nodeId: string, configPath: string): string[] {
  return ['node', 'dist/nodes/node-main.js', '--config', configPath, '--id', nodeId];
}

/** Options of {@link DockerRuntime}; every field is optional. */
export interface DockerRuntimeOptions extends DockerNodesOptions {
  /** Command run in each container (default {@link defaultNodeCommand}). */
  nodeCommand?: (nodeId: string, configPath: string) => string[];
  /** Extra host files copied into every container before it starts (absolute target paths). */
  files?: Array<{ source: string; target: string }>;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * The docker runtime of the Zaris nodes (DESIGN.md §3 "Runtime"): the container machinery of
 * docker-nodes.ts (a network of the run, fixed addresses, kill / stop / pause through the engine,
 * grudges and client cuts as iptables rules inside the containers), each container running
 * `node dist/nodes/node-main.js` with the cluster config copied in at CONTAINER_CONFIG_PATH. A
 * node killed, stopped or restarted gets a fresh container: it starts with empty memory.
 * - clock faults: with `clockModes`, every container preloads the image's libfaketime
 *   (runtime/faketime.ts IMAGE_LIBFAKETIME) and reads its timestamp file from the host folder
 *   bind-mounted read-only at CONTAINER_CLOCK_DIR; the folder is removed at close.
 */
export class DockerRuntime extends DockerNodes implements Runtime {
  private readonly opts: DockerRuntimeOptions;
  private cfg: ClusterConfig | undefined;
  private env: Record<string, string> = {};
  private clock: ClockFiles | undefined;

  constructor(opts: DockerRuntimeOptions = {}) {
    super(opts);
    this.opts = opts;
  }

  get config(): ClusterConfig {
    if (this.cfg === undefined) throw new Error('docker runtime: not started');
    return this.cfg;
  }

  private nodeCfg(id: string): NodeConfig {
    const n = this.config.nodes.find((x) => x.id === id);
    if (n === undefined) throw new Error(`docker runtime: unknown node "${id}"`);
    return n;
  }

  async start(opts: ClusterStartOptions): Promise<ClusterConfig> {
    const { preferredPrimaries, ...template } = opts.template;
    for (const p of preferredPrimaries ?? []) {
      if (!opts.nodeIds.includes(p)) throw new Error(`docker runtime: preferred primary "${p}" is not one of the nodes`);
    }
    this.env = { ...(opts.env ?? {}) };
    await this.startNodes(opts.runDir, opts.nodeIds, async (hosts) => {
      this.cfg = validateClusterConfig({
        ...template,
        nodes: opts.nodeIds.map((id) => ({
          id,
          host: hosts.get(id)!,
          clientPort: DOCKER_CLIENT_PORT,
          clusterPort: DOCKER_CLUSTER_PORT,
          metricsPort: DOCKER_METRICS_PORT,
          ...nodeRoleFields({ nodeIds: opts.nodeIds, spares: opts.spares, preferredPrimaries }, id),
        })),
      });
      if (opts.clockModes) {
        for (const id of opts.nodeIds) if (opts.clockModes[id] === undefined) throw new Error(`clock faults: no clock mode for node ${id}`);
        this.clock = await ClockFiles.create(opts.clockModes);
      }
    });
    if (this.clock) {
      const r = await this.containerOf(this.config.nodes[0].id).exec(['sh', '-c', `test -e ${IMAGE_LIBFAKETIME}`]);
      if (r.exitCode !== 0) {
        await this.close().catch(() => undefined);
        throw new Error(`docker runtime: start failed: clock faults: the node image ${this.imageRef} has no ${IMAGE_LIBFAKETIME} (rebuild it: make image)`);
      }
    }
    return this.config;
  }

  protected containerSpec(id: string): ContainerSpec {
    const n = this.nodeCfg(id);
    const command = (this.opts.nodeCommand ?? defaultNodeCommand)(id, CONTAINER_CONFIG_PATH);
    const clockEnv = this.clock ? faketimeEnv(IMAGE_LIBFAKETIME, `${CONTAINER_CLOCK_DIR}/${ClockFiles.fileName(id)}`, this.clock.modes[id]) : {};
    return {
      command,
      env: { ...this.env, ...clockEnv },
      contents: [{ content: `${JSON.stringify(this.config, null, 2)}\n`, target: CONTAINER_CONFIG_PATH }],
      ...(this.opts.files && this.opts.files.length > 0 ? { files: this.opts.files } : {}),
      ...(this.clock ? { binds: [{ source: this.clock.dir, target: CONTAINER_CLOCK_DIR, mode: 'ro' as const }] } : {}),
      readyPorts: [n.clientPort],
    };
  }

  clientEndpoint(nodeId: string): NodeEndpoint {
    const n = this.nodeCfg(nodeId);
    return { host: n.host, port: n.clientPort };
  }

  async setClock(nodeId: string, setting: ClockSetting): Promise<void> {
    this.nodeCfg(nodeId);
    if (!this.clock) throw new Error('docker runtime: clock faults are not available in this run (the cluster was started without clock modes)');
    checkClockSetting(this.clock.modes[nodeId], setting);
    this.clock.write(nodeId, setting);
    await sleep(CLOCK_EFFECT_MS);
  }

  clockModes(): Readonly<Record<string, ClockMode>> | null {
    return this.clock?.modes ?? null;
  }

  protected override beforeClose(): void {
    this.clock?.close();
  }
}
