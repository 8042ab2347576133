import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ContainerSpec } from '../runtime/docker-container.js';
import { DockerNodes, type DockerNodesOptions } from '../runtime/docker-nodes.js';
import type { ClockMode } from '../runtime/runtime.js';
import { makeTempDir } from '../sweep.js';
import type { LaunchSpec } from './node-launcher.js';
import { TARGET_NO_CLOCK, type NodeLaunch, type Target, type TargetCluster, type TargetRuntime } from './target.js';

/** Where a node's data folder is mounted inside its container (the LaunchContext's dataDir). */
export const CONTAINER_DATA_DIR = '/var/lib/zaris-certify/node';
/** Where the launcher's spec is copied inside every container. */
export const CONTAINER_LAUNCH_SPEC = '/etc/zaris-certify/launch.json';
/** The launcher in the node image (WORKDIR /opt/zaris-certify; dist/ of the checkout). */
export const LAUNCHER_IN_IMAGE = 'dist/harness/targets/node-launcher.js';

/** Options of {@link TargetDockerRuntime}: those of every container runtime (docker-nodes.ts). */
export type TargetDockerRuntimeOptions = DockerNodesOptions;

/**
 * The `docker` runtime for targets (DESIGN.md §3 "Runtime", "Targets"; issue 15): every node of
 * the target is a container of the offline node image, which carries the stores' Debian packages
 * (etcd-server, redis-server, redis-sentinel: harness/docker/base-image.ts), on the run's own
 * network at a fixed address (docker-nodes.ts: the same network, grudges, client cuts, pause and
 * kill as the Zaris nodes' containers). The container runs the node's processes through
 * node-launcher.ts, in order, each waited for on its ready port.
 *
 * A node's data folder is a host folder (in one temporary folder
 * `zaris-certify-target-data-p<pid>-*`) mounted at {@link CONTAINER_DATA_DIR}: it survives kill,
 * stop and restart of the node's container (a node is a machine whose processes crash; its disk
 * stays), as on the process runtime, and is removed at close. The launch's files are written
 * there before the node's first start only. Clock faults are not offered ({@link TARGET_NO_CLOCK}).
 */
export class TargetDockerRuntime extends DockerNodes implements TargetRuntime {
  private clusterValue: TargetCluster | null = null;
  private dataRoot: string | null = null;
  private readonly launches = new Map<string, NodeLaunch>();

  constructor(opts: TargetDockerRuntimeOptions = {}) {
    super(opts);
  }

  get cluster(): TargetCluster {
    if (!this.clusterValue) throw new Error('the cluster is not started');
    return this.clusterValue;
  }

  /** The host folder of a node's data (mounted into its container). */
  dataDirOf(nodeId: string): string {
    if (!this.dataRoot || !this.launches.has(nodeId)) throw new Error(`unknown node ${nodeId}`);
    return path.join(this.dataRoot, nodeId);
  }

  async start(o: { runDir: string; target: Target; nodeIds: readonly string[] }): Promise<TargetCluster> {
    if (this.clusterValue) throw new Error('the cluster is already started');
    this.dataRoot = await makeTempDir('target-data');
    const root = this.dataRoot;
    await this.startNodes(o.runDir, o.nodeIds, async (hosts) => {
      const cluster: TargetCluster = { nodes: o.nodeIds.map((id) => ({ id, host: hosts.get(id)! })), ports: { ...o.target.ports } };
      this.clusterValue = cluster;
      for (const n of cluster.nodes) {
        const hostDir = path.join(root, n.id);
        mkdirSync(hostDir, { recursive: true });
        const launch = o.target.launch(n.id, { cluster, dataDir: CONTAINER_DATA_DIR, runtime: 'docker', runTag: this.runTag });
        for (const p of launch.processes) if (cluster.ports[p.readyPort] === undefined) throw new Error(`node ${n.id}: process ${p.name} names ready port "${p.readyPort}", which the target does not have`);
        for (const f of launch.files ?? []) {
          const file = path.join(hostDir, f.path);
          if (!existsSync(file)) writeFileSync(file, f.content);
        }
        this.launches.set(n.id, launch);
      }
    });
    return this.cluster;
  }

  /** The launcher's spec of a node (what its container runs). */
  launchSpec(id: string): LaunchSpec {
    const launch = this.launches.get(id);
    if (!launch) throw new Error(`unknown node ${id}`);
    return {
      node: id,
      host: this.hostOf(id),
      cwd: CONTAINER_DATA_DIR,
      readyTimeoutMs: this.baseOpts.readyTimeoutMs ?? 30_000,
      processes: launch.processes.map((p) => ({
        name: p.name,
        command: p.command,
        args: p.args,
        ...(p.env ? { env: p.env } : {}),
        port: this.cluster.ports[p.readyPort],
        ...(p.readyTimeoutMs !== undefined ? { readyTimeoutMs: p.readyTimeoutMs } : {}),
        ...(p.user !== undefined ? { user: p.user } : {}),
      })),
    };
  }

  /** A node's start may take as long as its processes' starts in turn (each its own bound, else the runtime's). */
  protected override readyBound(id: string): number {
    const base = super.readyBound(id);
    const launch = this.launches.get(id);
    return launch === undefined ? base : launch.processes.reduce((sum, p) => sum + (p.readyTimeoutMs ?? base), 0);
  }

  protected containerSpec(id: string): ContainerSpec {
    const spec = this.launchSpec(id);
    return {
      command: ['node', LAUNCHER_IN_IMAGE, CONTAINER_LAUNCH_SPEC],
      env: { ZARIS_CERTIFY_RUN: this.runTag },
      contents: [{ content: `${JSON.stringify(spec, null, 2)}\n`, target: CONTAINER_LAUNCH_SPEC }],
      binds: [{ source: this.dataDirOf(id), target: CONTAINER_DATA_DIR, mode: 'rw' }],
      readyPorts: spec.processes.map((p) => p.port),
    };
  }

  /** Runs a store binary in the first node's container (the image's Debian packages). */
  readonly binaryRunner = async (file: string, args: string[]): Promise<string> => {
    const r = await this.containerOf(this.cluster.nodes[0].id).exec([file, ...args]);
    if (r.exitCode !== 0 && r.output.trim() === '') throw new Error(`${file} ${args.join(' ')} failed in the node image (exit ${r.exitCode})`);
    return r.output;
  };

  /** @throws Error: clock faults are not offered to targets. */
  async setClock(nodeId: string): Promise<void> {
    this.dataDirOf(nodeId);
    throw new Error(TARGET_NO_CLOCK);
  }

  clockModes(): Readonly<Record<string, ClockMode>> | null {
    return null;
  }

  /** Removes every container and the network (docker-nodes.ts), then the nodes' data folders. Safe to call twice. */
  override async close(): Promise<void> {
    try {
      await super.close();
    } finally {
      if (this.dataRoot) rmSync(this.dataRoot, { recursive: true, force: true });
    }
  }
}
