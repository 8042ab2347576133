import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdirSync } from 'node:fs';
import net from 'node:net';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import type { ContainerRuntimeClient, StartedTestContainer } from 'testcontainers';
import { validateClusterConfig, type ClusterConfig, type NodeConfig } from '../../nodes/cluster-config.js';
import { ensureNodeImage, repoRootFrom } from '../docker/node-image.js';
import { demuxDockerLog } from './docker-log.js';
import { CLOCK_EFFECT_MS, ClockFiles, CONTAINER_CLOCK_DIR, checkClockSetting, faketimeEnv, IMAGE_LIBFAKETIME, type ClockMode, type ClockSetting } from './faketime.js';
import { NODE_LABEL, OWNER_LABEL, ownerToken, RUN_LABEL } from './docker-owner.js';
import { grudgeDrops, healScript, partitionScript } from './docker-partition.js';
import { gatewayAddress, nodeAddress, pickFreeSubnet, RUN_SUBNET_PREFIX } from './docker-subnet.js';
import { sweepDockerLeftovers } from './docker-sweep.js';
import type { ClusterStartOptions, Grudge, NodeEndpoint, Runtime } from './runtime.js';
import { loadTestcontainers, type TestcontainersModule } from './testcontainers-loader.js';

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
export interface DockerRuntimeOptions {
  /** Node image reference (default: zaris-certify-node:<digest of dist/>, built when missing). */
  image?: string;
  /** Checkout whose dist/ makes the default image (default: the one holding this module). */
  repoRoot?: string;
  /** Command run in each container (default {@link defaultNodeCommand}). */
  nodeCommand?: (nodeId: string, configPath: string) => string[];
  /** Extra host files copied into every container before it starts (absolute target paths). */
  files?: Array<{ source: string; target: string }>;
  /** Grace period of stop() between SIGTERM and SIGKILL, ms (default 5,000; whole seconds, rounded up). */
  stopGraceMs?: number;
  /** Bound on a node's start (container up and client port accepting), ms (default 30,000). */
  readyTimeoutMs?: number;
  /** Run tag naming the network and labelling everything (default: random, 10 hex digits). */
  runTag?: string;
  /** Progress lines (default: none). */
  log?: (line: string) => void;
}

type NodeState = 'up' | 'paused' | 'down';

interface NodeSlot {
  cfg: NodeConfig;
  state: NodeState;
  /** Container of the current incarnation (set while state is up or paused). */
  container?: StartedTestContainer;
  /** Starts so far; the n-th container of a node is its incarnation n. */
  incarnation: number;
}

type Dockerode = ContainerRuntimeClient['container']['dockerode'];

/** Builds the GenericContainer subclass that can pin an address and run docker-init. */
function nodeContainerClass(tc: TestcontainersModule) {
  return class NodeContainer extends tc.GenericContainer {
    /** Attaches the container to `network` at the fixed IPv4 `address` (IPAM config at create). */
    withStaticAddress(network: string, address: string): this {
      this.createOpts.NetworkingConfig = { EndpointsConfig: { [network]: { IPAMConfig: { IPv4Address: address } } } };
      return this.withNetworkMode(network);
    }
    /** Runs docker-init as PID 1 so SIGTERM reaches the node and zombies are reaped. */
    withInit(): this {
      this.hostConfig.Init = true;
      return this;
    }
  };
}

function oneLine(e: unknown): string {
  return String((e as Error)?.message ?? e).split('\n')[0];
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Whether a TCP connection to host:port is accepted within timeoutMs. */
function tcpAccepts(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host, port });
    const done = (v: boolean): void => {
      clearTimeout(timer);
      s.destroy();
      resolve(v);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
  });
}

/**
 * The docker runtime (DESIGN.md §3 "Runtime"): every node is a container of the node image,
 * started through testcontainers on a network of its own run (`zaris-certify-<runtag>`, an
 * explicit free /24 in 172.29.0.0/16), at the fixed address `.11 + index` that it keeps across
 * restarts. Containers carry `zaris-certify=1`, `zaris-certify.run=<runtag>`, the node id and the
 * owner process, run docker-init as PID 1, and add NET_ADMIN as their only capability.
 *
 * - kill: SIGKILL through the engine; stop: SIGTERM, SIGKILL after the grace period. Either way
 *   the container's log is appended to `<runDir>/nodes/<id>.log` and the container removed, so a
 *   restart creates a fresh container (empty memory) at the same address.
 * - pause / resume: the engine's freezer (memory and sockets kept).
 * - partition: the grudge as `-s PEER -j DROP` rules in the chain `zaris-certify` jumped to
 *   from INPUT inside each container (`docker exec`; for a paused container, a short-lived
 *   helper container joined to its network namespace). A node (re)started while a grudge holds
 *   gets its rules right after its container starts, before it is reported ready.
 * - The harness reaches nodes from the host at their container addresses (the bridge is routed),
 *   so its traffic arrives from the network's gateway address: a client cut (issue 13) is a
 *   `-s GATEWAY -j DROP` rule in the cut node's chain, installed after a restarted node is ready.
 * - clock faults: with `clockModes`, every container preloads the image's libfaketime
 *   (runtime/faketime.ts IMAGE_LIBFAKETIME) and reads its timestamp file from the host folder
 *   bind-mounted read-only at CONTAINER_CLOCK_DIR; the folder is removed at close.
 * - close: every container and the network are removed; leftovers of crashed runs are swept at
 *   start and close (sweepDockerLeftovers).
 */
export class DockerRuntime implements Runtime {
  readonly kind = 'docker' as const;
  /** The run tag: names the network and labels every container of this runtime. */
  readonly runTag: string;
  private readonly opts: DockerRuntimeOptions;
  private readonly owner = ownerToken();
  private readonly slots = new Map<string, NodeSlot>();
  private cfg: ClusterConfig | undefined;
  private tc: TestcontainersModule | undefined;
  private dockerode: Dockerode | undefined;
  private image = '';
  private networkId: string | undefined;
  private subnetCidr: string | undefined;
  private runDir = '';
  private env: Record<string, string> = {};
  private drops = new Map<string, string[]>();
  /** Nodes the harness's traffic is cut from (client cut). */
  private clientCut = new Set<string>();
  private clock: ClockFiles | undefined;
  private startedOnce = false;
  private closed = false;

  constructor(opts: DockerRuntimeOptions = {}) {
    this.opts = opts;
    this.runTag = opts.runTag ?? randomBytes(5).toString('hex');
    if (!/^[a-z0-9][a-z0-9_.-]{0,40}$/.test(this.runTag)) throw new Error(`docker runtime: run tag "${this.runTag}" must be 1-41 characters of [a-z0-9_.-]`);
  }

  /** Name of this run's docker network. */
  get networkName(): string {
    return `zaris-certify-${this.runTag}`;
  }

  /** The run's subnet (CIDR), once started. */
  get subnet(): string | undefined {
    return this.subnetCidr;
  }

  get config(): ClusterConfig {
    if (this.cfg === undefined) throw new Error('docker runtime: not started');
    return this.cfg;
  }

  /** The image the nodes run (after start()). */
  get imageRef(): string {
    return this.image;
  }

  private log(line: string): void {
    this.opts.log?.(line);
  }

  private containerName(id: string): string {
    return `zaris-certify-${this.runTag}-${id}`;
  }

  private labels(extra: Record<string, string>): Record<string, string> {
    return { 'zaris-certify': '1', [RUN_LABEL]: this.runTag, [OWNER_LABEL]: this.owner, ...extra };
  }

  private slot(id: string): NodeSlot {
    const s = this.slots.get(id);
    if (s === undefined) throw new Error(`docker runtime: unknown node "${id}"`);
    return s;
  }

  private get engine(): Dockerode {
    if (this.dockerode === undefined) throw new Error('docker runtime: not started');
    return this.dockerode;
  }

  async start(opts: ClusterStartOptions): Promise<ClusterConfig> {
    if (this.startedOnce) throw new Error('docker runtime: start() was already called; use a new runtime per cluster');
    this.startedOnce = true;
    const { preferredPrimaries, ...template } = opts.template;
    for (const p of preferredPrimaries ?? []) {
      if (!opts.nodeIds.includes(p)) throw new Error(`docker runtime: preferred primary "${p}" is not one of the nodes`);
    }
    if (opts.nodeIds.length === 0 || opts.nodeIds.length > 244) throw new Error('docker runtime: a cluster has 1 to 244 nodes');
    this.runDir = opts.runDir;
    this.env = { ...(opts.env ?? {}) };
    mkdirSync(join(this.runDir, 'nodes'), { recursive: true });
    try {
      this.tc = await loadTestcontainers();
      const client = await this.tc.getContainerRuntimeClient();
      this.dockerode = client.container.dockerode;
      const swept = await sweepDockerLeftovers();
      if (swept.containers.length + swept.networks.length > 0) {
        this.log(`swept leftovers of crashed runs: ${[...swept.containers, ...swept.networks].join(', ')}`);
      }
      for (const e of swept.errors) this.log(`sweep of crashed runs: ${e}`);
      this.image = this.opts.image ?? (await ensureNodeImage({ repoRoot: this.opts.repoRoot ?? repoRootFrom(import.meta.url), log: (l) => this.log(l) })).image;
      const subnet = await this.createNetwork(client);
      const cfg = validateClusterConfig({
        ...template,
        nodes: opts.nodeIds.map((id, i) => ({
          id,
          host: nodeAddress(subnet, i),
          clientPort: DOCKER_CLIENT_PORT,
          clusterPort: DOCKER_CLUSTER_PORT,
          metricsPort: DOCKER_METRICS_PORT,
          preferredPrimary: preferredPrimaries === undefined ? true : preferredPrimaries.includes(id),
        })),
      });
      this.cfg = cfg;
      if (opts.clockModes) {
        for (const id of opts.nodeIds) if (opts.clockModes[id] === undefined) throw new Error(`clock faults: no clock mode for node ${id}`);
        this.clock = await ClockFiles.create(opts.clockModes);
      }
      for (const n of cfg.nodes) this.slots.set(n.id, { cfg: n, state: 'down', incarnation: 0 });
      await Promise.all(cfg.nodes.map((n) => this.launch(n.id)));
      if (this.clock) {
        const r = await this.slot(cfg.nodes[0].id).container!.exec(['sh', '-c', `test -e ${IMAGE_LIBFAKETIME}`]);
        if (r.exitCode !== 0) throw new Error(`clock faults: the node image ${this.image} has no ${IMAGE_LIBFAKETIME} (rebuild it: make image)`);
      }
      return cfg;
    } catch (e) {
      await this.close().catch(() => undefined);
      throw new Error(`docker runtime: start failed: ${oneLine(e).replace(/^docker runtime: /, '')}`);
    }
  }

  /** Creates the run's network on the first free /24 (retrying when another run took it meanwhile). */
  private async createNetwork(client: ContainerRuntimeClient): Promise<string> {
    const taken: string[] = [];
    for (const n of await this.engine.listNetworks()) for (const c of n.IPAM?.Config ?? []) if (c.Subnet) taken.push(c.Subnet);
    for (const addrs of Object.values(networkInterfaces())) for (const a of addrs ?? []) if (a.family === 'IPv4' && a.cidr) taken.push(a.cidr);
    for (let attempt = 0; attempt < 8; attempt++) {
      const subnet = pickFreeSubnet(taken, (process.pid + attempt * 37) % 256);
      if (subnet === undefined) throw new Error(`no free /24 left in ${RUN_SUBNET_PREFIX}.0.0/16 for the run network`);
      try {
        const network = await client.network.create({
          Name: this.networkName,
          CheckDuplicate: true,
          Driver: 'bridge',
          IPAM: { Driver: 'default', Config: [{ Subnet: subnet, Gateway: gatewayAddress(subnet) }] },
          Labels: this.labels({}),
        });
        this.networkId = network.id;
        this.subnetCidr = subnet;
        this.log(`network ${this.networkName} on ${subnet}`);
        return subnet;
      } catch (e) {
        if (!/overlap/i.test(oneLine(e))) throw new Error(`cannot create network ${this.networkName}: ${oneLine(e)}`);
        taken.push(subnet);
      }
    }
    throw new Error(`cannot create network ${this.networkName}: every subnet tried overlapped another network`);
  }

  /** Creates and starts the node's next container, installs its partition rules, waits until its client port accepts. */
  private async launch(id: string): Promise<void> {
    const s = this.slot(id);
    const tc = this.tc!;
    const NodeContainer = nodeContainerClass(tc);
    const command = (this.opts.nodeCommand ?? defaultNodeCommand)(id, CONTAINER_CONFIG_PATH);
    const clockEnv = this.clock ? faketimeEnv(IMAGE_LIBFAKETIME, `${CONTAINER_CLOCK_DIR}/${ClockFiles.fileName(id)}`, this.clock.modes[id]) : {};
    let c = new NodeContainer(this.image)
      .withName(this.containerName(id))
      .withLabels(this.labels({ [NODE_LABEL]: id }))
      .withAddedCapabilities('NET_ADMIN')
      .withStaticAddress(this.networkName, s.cfg.host)
      .withInit()
      .withEnvironment({ ...this.env, ...clockEnv })
      .withCopyContentToContainer([{ content: `${JSON.stringify(this.config, null, 2)}\n`, target: CONTAINER_CONFIG_PATH }])
      .withCommand(command)
      .withStartupTimeout(this.opts.readyTimeoutMs ?? 30_000);
    if (this.opts.files && this.opts.files.length > 0) c = c.withCopyFilesToContainer(this.opts.files);
    if (this.clock) c = c.withBindMounts([{ source: this.clock.dir, target: CONTAINER_CLOCK_DIR, mode: 'ro' }]);
    s.container = await c.start();
    s.state = 'up';
    s.incarnation++;
    const drops = this.drops.get(id) ?? [];
    if (drops.length > 0) await this.runInNetns(id, partitionScript(this.peerSources(id)), 'partition');
    await this.waitReady(id);
    // the client cut last: waitReady reaches the node from the host, which the cut drops
    if (this.clientCut.has(id)) await this.runInNetns(id, partitionScript(this.dropSources(id)), 'client cut');
  }

  /** The peers' addresses a node drops under the current grudge. */
  private peerSources(id: string): string[] {
    return (this.drops.get(id) ?? []).map((p) => this.slot(p).cfg.host);
  }

  /** Every source a node drops: its grudge's peers, plus the harness (the gateway) when cut from it. */
  private dropSources(id: string): string[] {
    return [...this.peerSources(id), ...(this.clientCut.has(id) && this.subnetCidr ? [gatewayAddress(this.subnetCidr)] : [])];
  }

  /** Polls the node's client port from the host until it accepts, failing fast when the container exits. */
  private async waitReady(id: string): Promise<void> {
    const s = this.slot(id);
    const bound = this.opts.readyTimeoutMs ?? 30_000;
    const deadline = performance.now() + bound;
    for (let i = 1; ; i++) {
      if (await tcpAccepts(s.cfg.host, s.cfg.clientPort, 500)) return;
      if (i % 4 === 0) {
        const info = await this.engine.getContainer(s.container!.getId()).inspect();
        if (!info.State.Running) {
          const code = info.State.ExitCode;
          await this.retire(id, `exited during start-up (exit code ${code})`);
          throw new Error(`node ${id} exited during start-up (exit code ${code}); see ${this.logPath(id)}`);
        }
      }
      if (performance.now() > deadline) {
        throw new Error(`node ${id} did not accept connections on ${s.cfg.host}:${s.cfg.clientPort} within ${bound} ms`);
      }
      await sleep(50);
    }
  }

  private logPath(id: string): string {
    return join(this.runDir, 'nodes', `${id}.log`);
  }

  /** Appends the container's log to `<runDir>/nodes/<id>.log` under a header line, then removes the container. */
  private async retire(id: string, why: string): Promise<void> {
    const s = this.slot(id);
    const ctr = s.container;
    s.container = undefined;
    s.state = 'down';
    if (ctr === undefined) return;
    const handle = this.engine.getContainer(ctr.getId());
    try {
      const raw = (await handle.logs({ stdout: true, stderr: true, follow: false })) as unknown as Buffer;
      appendFileSync(this.logPath(id), `--- zaris-certify: ${id} container ${ctr.getId().slice(0, 12)} incarnation ${s.incarnation}: ${why} ---\n`);
      appendFileSync(this.logPath(id), demuxDockerLog(Buffer.from(raw)));
    } finally {
      await handle.remove({ force: true }).catch((e: unknown) => {
        if (!/no such container|404|already in progress/i.test(oneLine(e))) throw e;
      });
    }
  }

  clientEndpoint(nodeId: string): NodeEndpoint {
    const s = this.slot(nodeId);
    return { host: s.cfg.host, port: s.cfg.clientPort };
  }

  private running(id: string, op: string): NodeSlot {
    const s = this.slot(id);
    if (s.state === 'down' || s.container === undefined) throw new Error(`docker runtime: ${op} ${id}: the node is not running`);
    return s;
  }

  async kill(nodeId: string): Promise<void> {
    const s = this.running(nodeId, 'kill');
    const handle = this.engine.getContainer(s.container!.getId());
    await handle.kill({ signal: 'SIGKILL' }).catch((e: unknown) => {
      if (!/is not running/i.test(oneLine(e))) throw new Error(`docker runtime: kill ${nodeId}: ${oneLine(e)}`);
    });
    await handle.wait({ condition: 'not-running' });
    await this.retire(nodeId, 'killed (SIGKILL)');
  }

  async stop(nodeId: string): Promise<void> {
    const s = this.running(nodeId, 'stop');
    const graceS = Math.max(0, Math.ceil((this.opts.stopGraceMs ?? 5_000) / 1000));
    const handle = this.engine.getContainer(s.container!.getId());
    await handle.stop({ t: graceS }).catch((e: unknown) => {
      if (!/not modified|304|is not running|already stopped/i.test(oneLine(e))) throw new Error(`docker runtime: stop ${nodeId}: ${oneLine(e)}`);
    });
    await handle.wait({ condition: 'not-running' });
    await this.retire(nodeId, `stopped (SIGTERM, ${graceS} s grace)`);
  }

  async restart(nodeId: string): Promise<void> {
    const s = this.slot(nodeId);
    if (s.state !== 'down' && s.container !== undefined) {
      // a node that died on its own is down, whatever we last did to it
      const info = await this.engine.getContainer(s.container.getId()).inspect();
      if (info.State.Running) throw new Error(`docker runtime: restart ${nodeId}: the node is running; kill or stop it first`);
      await this.retire(nodeId, `exited on its own (exit code ${info.State.ExitCode})`);
    }
    await this.launch(nodeId);
  }

  async pause(nodeId: string): Promise<void> {
    const s = this.running(nodeId, 'pause');
    if (s.state === 'paused') return;
    await this.engine.getContainer(s.container!.getId()).pause();
    s.state = 'paused';
  }

  async resume(nodeId: string): Promise<void> {
    const s = this.running(nodeId, 'resume');
    if (s.state !== 'paused') return;
    await this.engine.getContainer(s.container!.getId()).unpause();
    s.state = 'up';
  }

  /**
   * Runs an `sh` script in the node container's network namespace: `docker exec` when it runs,
   * a helper container (same image, `--network container:<id>`, NET_ADMIN, labelled with the
   * run) when it is paused, since a frozen container cannot exec.
   * @throws Error (one line) when the script fails.
   */
  private async runInNetns(id: string, script: string, what: string): Promise<void> {
    const s = this.running(id, what);
    if (s.state === 'up') {
      const r = await s.container!.exec(['sh', '-c', script]);
      if (r.exitCode !== 0) throw new Error(`docker runtime: ${what} in ${id} failed (exit ${r.exitCode}): ${r.output.trim().split('\n').pop() ?? ''}`);
      return;
    }
    const helper = await this.engine.createContainer({
      Image: this.image,
      name: `${this.containerName(id)}-netns-${randomBytes(3).toString('hex')}`,
      Cmd: ['sh', '-c', script],
      Labels: this.labels({ [NODE_LABEL]: id, 'zaris-certify.role': 'netns-helper' }),
      HostConfig: { NetworkMode: `container:${s.container!.getId()}`, CapAdd: ['NET_ADMIN'] },
    });
    try {
      await helper.start();
      const r = (await helper.wait()) as { StatusCode: number };
      if (r.StatusCode !== 0) {
        const out = demuxDockerLog(Buffer.from((await helper.logs({ stdout: true, stderr: true })) as unknown as Buffer)).toString();
        throw new Error(`docker runtime: ${what} in paused ${id} failed (exit ${r.StatusCode}): ${out.trim().split('\n').pop() ?? ''}`);
      }
    } finally {
      await helper.remove({ force: true }).catch(() => undefined);
    }
  }

  async partition(grudge: Grudge): Promise<void> {
    const ids = this.nodeIds();
    this.drops = grudgeDrops(grudge, ids);
    await Promise.all(
      ids
        .filter((id) => this.slot(id).state !== 'down')
        .map((id) => this.runInNetns(id, partitionScript(this.dropSources(id)), 'partition')),
    );
  }

  /**
   * The harness reaches the containers from the host through the network's gateway address, so a
   * client cut is a `-s GATEWAY -j DROP` rule in the cut node's chain, beside its grudge's rules;
   * node-to-node traffic never comes from the gateway.
   */
  async cutClient(nodeIds: readonly string[]): Promise<void> {
    for (const id of nodeIds) this.slot(id);
    const before = this.clientCut;
    this.clientCut = new Set(nodeIds);
    const touched = this.nodeIds().filter((id) => before.has(id) !== this.clientCut.has(id) && this.slot(id).state !== 'down');
    await Promise.all(touched.map((id) => this.runInNetns(id, partitionScript(this.dropSources(id)), 'client cut')));
  }

  async setClock(nodeId: string, setting: ClockSetting): Promise<void> {
    this.slot(nodeId);
    if (!this.clock) throw new Error('docker runtime: clock faults are not available in this run (the cluster was started without clock modes)');
    checkClockSetting(this.clock.modes[nodeId], setting);
    this.clock.write(nodeId, setting);
    await sleep(CLOCK_EFFECT_MS);
  }

  clockModes(): Readonly<Record<string, ClockMode>> | null {
    return this.clock?.modes ?? null;
  }

  async heal(): Promise<void> {
    this.drops = new Map();
    this.clientCut = new Set();
    await Promise.all(
      this.nodeIds()
        .filter((id) => this.slot(id).state !== 'down')
        .map((id) => this.runInNetns(id, healScript(), 'heal')),
    );
  }

  isUp(nodeId: string): boolean {
    return this.slot(nodeId).state !== 'down';
  }

  nodeIds(): string[] {
    return this.cfg === undefined ? [] : this.cfg.nodes.map((n) => n.id);
  }

  /**
   * Kills every node container (its log saved first), removes it, removes the network, then
   * sweeps whatever else carries this run's tag and the leftovers of crashed runs.
   * Safe to call twice; a failure to remove something is thrown (one line) after trying all.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.clock?.close();
    if (this.dockerode === undefined) return;
    const errors: string[] = [];
    await Promise.all(
      [...this.slots.keys()].map(async (id) => {
        const s = this.slot(id);
        if (s.container === undefined) return;
        try {
          const handle = this.engine.getContainer(s.container.getId());
          await handle.kill({ signal: 'SIGKILL' }).catch(() => undefined);
          await handle.wait({ condition: 'not-running' }).catch(() => undefined);
          await this.retire(id, 'removed at close');
        } catch (e) {
          errors.push(`${id}: ${oneLine(e)}`);
        }
      }),
    );
    if (this.networkId !== undefined) {
      try {
        await this.engine.getNetwork(this.networkId).remove();
      } catch (e) {
        if (!/no such network|not found|404/i.test(oneLine(e))) errors.push(`network ${this.networkName}: ${oneLine(e)}`);
      }
    }
    try {
      errors.push(...(await sweepDockerLeftovers({ runTag: this.runTag })).errors);
      for (const e of (await sweepDockerLeftovers()).errors) this.log(`sweep of crashed runs: ${e}`);
    } catch (e) {
      errors.push(oneLine(e));
    }
    if (errors.length > 0) throw new Error(`docker runtime: close left something behind: ${errors[0]}${errors.length > 1 ? ` (and ${errors.length - 1} more)` : ''}`);
  }
}
