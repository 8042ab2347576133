/**
 * DockerNodes, the node machinery every docker runtime shares: the cluster's start and close, a
 * node's (re)start, kill, stop, pause and resume, and the grudge and client cut of the moment.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ContainerRuntimeClient, StartedTestContainer } from 'testcontainers';
import { ensureNodeImage, repoRootFrom } from '../docker/node-image.js';
import { nodeContainer, oneLine, saveLogAndRemove, sleep, tcpAccepts, type ContainerSpec, type Dockerode, type NodeSlot } from './docker-container.js';
import { runInNetns } from './docker-netns.js';
import { createRunNetwork } from './docker-network.js';
import { NODE_LABEL, OWNER_LABEL, ownerToken, RUN_LABEL } from './docker-owner.js';
import { grudgeDrops, healScript, partitionScript } from './docker-partition.js';
import { gatewayAddress, nodeAddress } from './docker-subnet.js';
import { sweepDockerLeftovers } from './docker-sweep.js';
import type { Grudge } from './runtime.js';
import { loadTestcontainers, type TestcontainersModule } from './testcontainers-loader.js';

/** Options every container runtime takes; every field is optional. */
export interface DockerNodesOptions {
  /** Node image reference (default: zaris-certify-node:<digest of dist/>, built when missing). */
  image?: string;
  /** Checkout whose dist/ makes the default image (default: the one holding this module). */
  repoRoot?: string;
  /** Grace period of stop() between SIGTERM and SIGKILL, ms (default 5,000; whole seconds, rounded up). */
  stopGraceMs?: number;
  /** Bound on a node's start (container up and its ready ports accepting), ms (default 30,000). */
  readyTimeoutMs?: number;
  /** Run tag naming the network and labelling everything (default: random, 10 hex digits). */
  runTag?: string;
  /** Progress lines (default: none). */
  log?: (line: string) => void;
}

/**
 * The container machinery of the docker runtimes (DESIGN.md §3 "Runtime"), whatever store the
 * containers run: the Zaris nodes (docker-runtime.ts) or a target's (targets/target-docker-runtime.ts).
 * Every node is a container of the node image, started through testcontainers on a network of its
 * own run (`zaris-certify-<runtag>`, an explicit free /24 in 172.29.0.0/16), at the fixed address
 * `.11 + index` that it keeps across restarts. Containers carry `zaris-certify=1`,
 * `zaris-certify.run=<runtag>`, the node id and the owner process, run docker-init as PID 1, and
 * add NET_ADMIN as their only capability.
 *
 * - kill: SIGKILL through the engine; stop: SIGTERM, SIGKILL after the grace period. Either way
 *   the container's log is appended to `<runDir>/nodes/<id>.log` and the container removed, so a
 *   restart creates a fresh container (of the subclass's {@link ContainerSpec}) at the same address.
 * - pause / resume: the engine's freezer (memory and sockets kept).
 * - partition: the grudge as `-s PEER -j DROP` rules in the chain `zaris-certify` jumped to
 *   from INPUT inside each container (`docker exec`; for a paused container, a short-lived
 *   helper container joined to its network namespace). A node (re)started while a grudge holds
 *   gets its rules right after its container starts, before it is reported ready.
 * - The harness reaches nodes from the host at their container addresses (the bridge is routed),
 *   so its traffic arrives from the network's gateway address: a client cut (issue 13) is a
 *   `-s GATEWAY -j DROP` rule in the cut node's chain, installed after a restarted node is ready.
 * - close: every container and the network are removed; leftovers of crashed runs are swept at
 *   start and close (sweepDockerLeftovers).
 */
export abstract class DockerNodes {
  readonly kind = 'docker' as const;
  /** The run tag: names the network and labels every container of this runtime. */
  readonly runTag: string;
  protected readonly baseOpts: DockerNodesOptions;
  private readonly owner = ownerToken();
  private readonly slots = new Map<string, NodeSlot>();
  private order: string[] = [];
  private tc: TestcontainersModule | undefined;
  private dockerode: Dockerode | undefined;
  private image = '';
  private networkId: string | undefined;
  private subnetCidr: string | undefined;
  private runDir = '';
  private drops = new Map<string, string[]>();
  /** Nodes the harness's traffic is cut from (client cut). */
  private clientCut = new Set<string>();
  private startedOnce = false;
  private closed = false;

  constructor(opts: DockerNodesOptions = {}) {
    this.baseOpts = opts;
    this.runTag = opts.runTag ?? randomBytes(5).toString('hex');
    if (!/^[a-z0-9][a-z0-9_.-]{0,40}$/.test(this.runTag)) throw new Error(`docker runtime: run tag "${this.runTag}" must be 1-41 characters of [a-z0-9_.-]`);
  }

  /** What node `id`'s next container runs (called at every start of the node). */
  protected abstract containerSpec(id: string): ContainerSpec;

  /** Name of this run's docker network. */
  get networkName(): string {
    return `zaris-certify-${this.runTag}`;
  }

  /** The run's subnet (CIDR), once started. */
  get subnet(): string | undefined {
    return this.subnetCidr;
  }

  /** The image the nodes run (after start). */
  get imageRef(): string {
    return this.image;
  }

  protected log(line: string): void {
    this.baseOpts.log?.(line);
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

  /** The address of node `id` (after its cluster was prepared). */
  protected hostOf(id: string): string {
    return this.slot(id).host;
  }

  /**
   * Starts the cluster: sweeps crashed runs' leftovers, makes sure of the image, creates the run's
   * network, gives node i the address `.11 + i`, lets `prepare` see the addresses (the subclass
   * builds its config there), starts every node and waits for each to be ready. On failure
   * everything is removed and one line thrown: `docker runtime: start failed: <why>`.
   * @throws Error when called twice on one runtime.
   */
  protected async startNodes(runDir: string, nodeIds: readonly string[], prepare: (hosts: ReadonlyMap<string, string>) => Promise<void>): Promise<void> {
    if (this.startedOnce) throw new Error('docker runtime: start() was already called; use a new runtime per cluster');
    this.startedOnce = true;
    if (nodeIds.length === 0 || nodeIds.length > 244) throw new Error('docker runtime: a cluster has 1 to 244 nodes');
    this.runDir = runDir;
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
      this.image = this.baseOpts.image ?? (await ensureNodeImage({ repoRoot: this.baseOpts.repoRoot ?? repoRootFrom(import.meta.url), log: (l) => this.log(l) })).image;
      const subnet = await this.createNetwork(client);
      const hosts = new Map(nodeIds.map((id, i) => [id, nodeAddress(subnet, i)]));
      await prepare(hosts);
      this.order = [...nodeIds];
      for (const id of nodeIds) this.slots.set(id, { id, host: hosts.get(id)!, state: 'down', incarnation: 0 });
      await Promise.all(nodeIds.map((id) => this.launch(id)));
    } catch (e) {
      await this.close().catch(() => undefined);
      throw new Error(`docker runtime: start failed: ${oneLine(e).replace(/^docker runtime: /, '')}`);
    }
  }

  /** Creates the run's network on the first free /24 (retrying when another run took it meanwhile). */
  private async createNetwork(client: ContainerRuntimeClient): Promise<string> {
    const { id, subnet } = await createRunNetwork(this.engine, client, this.networkName, this.labels({}));
    this.networkId = id;
    this.subnetCidr = subnet;
    this.log(`network ${this.networkName} on ${subnet}`);
    return subnet;
  }

  /** How long node `id`'s start may take until its ready ports accept, ms (the option readyTimeoutMs, 30 s by default). */
  protected readyBound(id: string): number {
    void id;
    return this.baseOpts.readyTimeoutMs ?? 30_000;
  }

  /** Creates and starts the node's next container, installs its partition rules, waits until its ready ports accept. */
  private async launch(id: string): Promise<void> {
    const s = this.slot(id);
    const spec = this.containerSpec(id);
    const c = nodeContainer(this.tc!, {
      image: this.image,
      name: this.containerName(id),
      labels: this.labels({ [NODE_LABEL]: id }),
      network: this.networkName,
      address: s.host,
      spec,
      startupTimeoutMs: this.readyBound(id),
    });
    try {
      s.container = await c.start();
    } catch (e) {
      // a container created but not started keeps its name: remove it, so the launch can be made again
      await this.engine.getContainer(this.containerName(id)).remove({ force: true }).catch(() => undefined);
      throw e;
    }
    s.state = 'up';
    s.incarnation++;
    try {
      const drops = this.drops.get(id) ?? [];
      if (drops.length > 0) await this.runInNetns(id, partitionScript(this.peerSources(id)), 'partition');
      await this.waitReady(id, spec.readyPorts);
      // the client cut last: waitReady reaches the node from the host, which the cut drops
      if (this.clientCut.has(id)) await this.runInNetns(id, partitionScript(this.dropSources(id)), 'client cut');
    } catch (e) {
      // a node half started is down: its container goes (log kept), so a restart can be made again
      if (s.container !== undefined) await this.retire(id, `start-up failed: ${oneLine(e)}`).catch(() => undefined);
      throw e;
    }
  }

  /** The peers' addresses a node drops under the current grudge. */
  private peerSources(id: string): string[] {
    return (this.drops.get(id) ?? []).map((p) => this.slot(p).host);
  }

  /** Every source a node drops: its grudge's peers, plus the harness (the gateway) when cut from it. */
  private dropSources(id: string): string[] {
    return [...this.peerSources(id), ...(this.clientCut.has(id) && this.subnetCidr ? [gatewayAddress(this.subnetCidr)] : [])];
  }

  /** Polls the node's ready ports from the host until each accepts, failing fast when the container exits. */
  private async waitReady(id: string, ports: readonly number[]): Promise<void> {
    const s = this.slot(id);
    const bound = this.readyBound(id);
    const deadline = performance.now() + bound;
    for (const port of ports) {
      for (let i = 1; ; i++) {
        if (await tcpAccepts(s.host, port, 500)) break;
        if (i % 4 === 0) {
          const info = await this.engine.getContainer(s.container!.getId()).inspect();
          if (!info.State.Running) {
            const code = info.State.ExitCode;
            await this.retire(id, `exited during start-up (exit code ${code})`);
            throw new Error(`node ${id} exited during start-up (exit code ${code}); see ${this.logPath(id)}`);
          }
        }
        if (performance.now() > deadline) {
          throw new Error(`node ${id} did not accept connections on ${s.host}:${port} within ${bound} ms`);
        }
        await sleep(50);
      }
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
    await saveLogAndRemove(this.engine, s, ctr, this.logPath(id), why);
  }

  private running(id: string, op: string): NodeSlot {
    const s = this.slot(id);
    if (s.state === 'down' || s.container === undefined) throw new Error(`docker runtime: ${op} ${id}: the node is not running`);
    return s;
  }

  /** The running container of a node (tests, checks inside the image). @throws Error when it is down. */
  protected containerOf(id: string): StartedTestContainer {
    return this.running(id, 'exec in').container!;
  }

  /**
   * The node to kill or stop: a running one, or one whose earlier kill or stop failed half-way
   * (marked down, its container not yet removed), so that the call can be made again.
   */
  private toTerminate(id: string, op: string): NodeSlot {
    const s = this.slot(id);
    return s.state === 'down' && s.container !== undefined ? s : this.running(id, op);
  }

  async kill(nodeId: string): Promise<void> {
    const s = this.toTerminate(nodeId, 'kill');
    // down from now on: a partition, heal or client cut arriving while the engine kills it skips
    // it (an exec into a container that stopped is refused, 409); its rules die with it, and
    // launch() installs the grudge of the moment in the next container
    const was = s.state;
    s.state = 'down';
    const handle = this.engine.getContainer(s.container!.getId());
    await handle.kill({ signal: 'SIGKILL' }).catch((e: unknown) => {
      if (/is not running/i.test(oneLine(e))) return;
      s.state = was; // not killed: still what it was
      throw new Error(`docker runtime: kill ${nodeId}: ${oneLine(e)}`);
    });
    await handle.wait({ condition: 'not-running' });
    await this.retire(nodeId, 'killed (SIGKILL)');
  }

  async stop(nodeId: string): Promise<void> {
    const s = this.toTerminate(nodeId, 'stop');
    const was = s.state;
    s.state = 'down'; // as in kill(): network changes skip a node on its way down
    const graceS = Math.max(0, Math.ceil((this.baseOpts.stopGraceMs ?? 5_000) / 1000));
    const handle = this.engine.getContainer(s.container!.getId());
    await handle.stop({ t: graceS }).catch((e: unknown) => {
      if (/not modified|304|is not running|already stopped/i.test(oneLine(e))) return;
      s.state = was;
      throw new Error(`docker runtime: stop ${nodeId}: ${oneLine(e)}`);
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
    } else if (s.container !== undefined) {
      // an earlier kill or stop failed half-way: finish it (the container would hold the node's name)
      await this.engine.getContainer(s.container.getId()).kill({ signal: 'SIGKILL' }).catch(() => undefined);
      await this.retire(nodeId, 'removed before a restart (its kill or stop had not finished)');
    }
    await this.launch(nodeId);
  }

  async pause(nodeId: string): Promise<void> {
    const s = this.running(nodeId, 'pause');
    if (s.state === 'paused') return;
    // (an earlier attempt that the engine carried out but whose answer was lost: already paused)
    await this.engine.getContainer(s.container!.getId()).pause().catch((e: unknown) => {
      if (!/is already paused/i.test(oneLine(e))) throw e;
    });
    s.state = 'paused';
  }

  async resume(nodeId: string): Promise<void> {
    const s = this.running(nodeId, 'resume');
    if (s.state !== 'paused') return;
    await this.engine.getContainer(s.container!.getId()).unpause().catch((e: unknown) => {
      if (!/is not paused/i.test(oneLine(e))) throw e;
    });
    s.state = 'up';
  }

  /**
   * Runs an `sh` script in the running or paused node's network namespace (docker-netns.ts; a
   * paused node's helper container is labelled with the run and the node).
   * @throws Error (one line) when the node is down or the script fails.
   */
  private async runInNetns(id: string, script: string, what: string): Promise<void> {
    const s = this.running(id, what);
    await runInNetns(this.engine, s, script, what, {
      image: this.image,
      name: this.containerName(id),
      labels: this.labels({ [NODE_LABEL]: id, 'zaris-certify.role': 'netns-helper' }),
    });
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
    try {
      await Promise.all(touched.map((id) => this.runInNetns(id, partitionScript(this.dropSources(id)), 'client cut')));
    } catch (e) {
      // the cut as it was: a second call installs the whole change again (each script replaces a node's rules)
      this.clientCut = before;
      throw e;
    }
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
    return [...this.order];
  }

  /** Called by close() before the containers are removed (subclasses release their own things). Never throws. */
  protected beforeClose(): void {}

  /**
   * Kills every node container (its log saved first), removes it, removes the network, then
   * sweeps whatever else carries this run's tag and the leftovers of crashed runs.
   * Safe to call twice; a failure to remove something is thrown (one line) after trying all.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.beforeClose();
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
