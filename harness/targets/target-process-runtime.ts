import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { IptablesPartitioner, newRunTag } from '../runtime/iptables.js';
import { clientSourceAddress, loopbackBlock, loopbackClientCut, loopbackPartition, waitForPort } from '../runtime/process-runtime.js';
import type { ClockMode, Grudge } from '../runtime/runtime.js';
import { makeTempDir } from '../sweep.js';
import { SETPRIV } from './installed.js';
import { LoopbackSourceNat, nodeGid } from './loopback-snat.js';
import { groupPids, killGroup, signalGroup } from './node-group.js';
import { TARGET_NO_CLOCK, type NodeLaunch, type NodeProcessSpec, type Target, type TargetCluster, type TargetRuntime } from './target.js';

/** Options of {@link TargetProcessRuntime}. */
export interface TargetProcessRuntimeOptions {
  /** Run tag `[a-z0-9-]+`: names the loopback block (two runs never share addresses) and the cluster. */
  runTag: string;
  /**
   * Partitions through iptables, with the nat rules that give each node's outgoing connections
   * its own address (needs CAP_NET_ADMIN; the caller checks with checkNetAdmin first). Without
   * it partition() throws a one-line error.
   */
  partitions?: boolean;
  /** Bound on one process's start (its ready port accepting), ms. Default 20,000. */
  readyTimeoutMs?: number;
  /** stop(): SIGTERM, then SIGKILL after this long, ms. Default 5,000. */
  stopGraceMs?: number;
}

interface RunningProcess {
  spec: NodeProcessSpec;
  proc: ResultPromise;
  exited: Promise<void>;
  alive: boolean;
}

interface NodeSlot {
  id: string;
  host: string;
  gid: number;
  dataDir: string;
  launch: NodeLaunch;
  procs: RunningProcess[];
  paused: boolean;
}

/** The environment a node process gets: PATH only, plus its spec's (no ETCD_* or REDIS_* of the harness's leaks in). */
const BASE_ENV = { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' };

/**
 * The `process` runtime for targets (DESIGN.md §3 "Runtime"): every node of the target on its own
 * loopback address 127.a.b.(11+i), its processes started in order through
 * `setpriv --regid <gid> --clear-groups --pdeathsig SIGKILL`, so that
 * - with partitions on, the node's outgoing loopback connections leave from its address
 *   (loopback-snat.ts rewrites the source of its group's connections) and the grudge rules of
 *   runtime/iptables.ts cut its links exactly as they cut the Zaris nodes';
 * - a node process dies with the harness, even when the harness is killed with SIGKILL.
 * Each node has a data folder that survives kill, stop and restart (in one temporary folder
 * `zaris-certify-target-data-p<pid>-*`, removed on close, swept after a crash). Logs are appended to
 * `<runDir>/nodes/<id>.log` (first process) and `<runDir>/nodes/<id>.<name>.log` (the others).
 * kill: SIGKILL to every process of the node; stop: SIGTERM, SIGKILL after the grace period;
 * pause / resume: SIGSTOP / SIGCONT to every process. A client cut (issue 13) drops, in the same
 * chain as the grudges, what the harness's own unbound connections send to the node: they come
 * from the address the kernel picks (127.0.0.1 on loopback), which no node process uses once
 * its connections are rewritten to its own address; a node is waited for from its own address,
 * which no cut drops.
 */
export class TargetProcessRuntime implements TargetRuntime {
  readonly kind = 'process' as const;
  private readonly nodes = new Map<string, NodeSlot>();
  private clusterValue: TargetCluster | null = null;
  private runDir = '';
  private dataRoot: string | null = null;
  private partitioner: IptablesPartitioner | null = null;
  /** The address the harness's own connections to the nodes come from (the kernel's choice). */
  private clientSource = '';
  private snat: LoopbackSourceNat | null = null;
  private closed = false;
  private readonly onExit = (): void => {
    this.partitioner?.closeSync();
    this.snat?.closeSync();
    if (this.dataRoot) rmSync(this.dataRoot, { recursive: true, force: true });
  };

  constructor(private readonly opts: TargetProcessRuntimeOptions) {
    if (!/^[a-z0-9-]+$/.test(opts.runTag)) throw new RangeError(`run tag "${opts.runTag}" must be [a-z0-9-]+`);
  }

  get cluster(): TargetCluster {
    if (!this.clusterValue) throw new Error('the cluster is not started');
    return this.clusterValue;
  }

  async start(o: { runDir: string; target: Target; nodeIds: readonly string[] }): Promise<TargetCluster> {
    if (this.clusterValue) throw new Error('the cluster is already started');
    this.runDir = o.runDir;
    mkdirSync(path.join(o.runDir, 'nodes'), { recursive: true });
    const block = loopbackBlock(this.opts.runTag);
    const cluster: TargetCluster = { nodes: o.nodeIds.map((id, i) => ({ id, host: `${block}.${11 + i}` })), ports: { ...o.target.ports } };
    this.clusterValue = cluster;
    process.once('exit', this.onExit);
    try {
      this.dataRoot = await makeTempDir('target-data');
      for (const n of cluster.nodes) {
        const dataDir = path.join(this.dataRoot, n.id);
        mkdirSync(dataDir, { recursive: true });
        const launch = o.target.launch(n.id, { cluster, dataDir, runtime: 'process', runTag: this.opts.runTag });
        for (const f of launch.files ?? []) {
          const p = path.join(dataDir, f.path);
          if (!existsSync(p)) writeFileSync(p, f.content);
        }
        this.nodes.set(n.id, { id: n.id, host: n.host, gid: nodeGid(n.host), dataDir, launch, procs: [], paused: false });
      }
      if (this.opts.partitions) {
        this.snat = await LoopbackSourceNat.open(cluster.nodes.map((n) => ({ gid: nodeGid(n.host), address: n.host })));
        this.partitioner = await IptablesPartitioner.open({ addresses: Object.fromEntries(cluster.nodes.map((n) => [n.id, n.host])), runTag: newRunTag() });
      }
      await Promise.all(cluster.nodes.map((n) => this.spawnNode(n.id)));
      const first = cluster.nodes[0];
      const port = cluster.ports[this.nodes.get(first.id)!.launch.processes[0].readyPort];
      if (this.partitioner) this.clientSource = await clientSourceAddress(first.host, port);
    } catch (e) {
      await this.close();
      throw e;
    }
    return cluster;
  }

  nodeIds(): string[] {
    return this.cluster.nodes.map((n) => n.id);
  }

  /** Every process of the node is running (paused counts as running). */
  isUp(nodeId: string): boolean {
    const n = this.slot(nodeId);
    return n.procs.length === n.launch.processes.length && n.procs.every((p) => p.alive);
  }

  /** The node's data folder (survives restarts). */
  dataDirOf(nodeId: string): string {
    return this.slot(nodeId).dataDir;
  }

  /** Pids of the node's running processes, in launch order (tests check that nothing is left). */
  pidsOf(nodeId: string): number[] {
    return this.slot(nodeId)
      .procs.filter((p) => p.alive)
      .map((p) => p.proc.pid!)
      .filter((p) => p !== undefined);
  }

  /** The iptables chains this runtime created: the nat chain and the filter chain (none without partitions). */
  iptablesChains(): { nat: string | null; filter: string | null } {
    return { nat: this.snat?.chain ?? null, filter: this.partitioner?.chain ?? null };
  }

  async kill(nodeId: string): Promise<void> {
    await this.terminate(nodeId, 'SIGKILL');
  }

  async stop(nodeId: string): Promise<void> {
    await this.terminate(nodeId, 'SIGTERM');
  }

  /** Starts the node again (same address, same data folder); kills a straggler process of it first. */
  async restart(nodeId: string): Promise<void> {
    if (this.isUp(nodeId)) throw new Error(`node ${nodeId} is running; kill or stop it first`);
    await this.terminate(nodeId, 'SIGKILL');
    await this.spawnNode(nodeId);
  }

  async pause(nodeId: string): Promise<void> {
    const n = this.slot(nodeId);
    if (!this.isUp(nodeId)) throw new Error(`node ${nodeId} is not running`);
    for (const p of n.procs) p.proc.kill('SIGSTOP');
    this.signalNode(n, 'SIGSTOP');
    n.paused = true;
    // a signal takes effect when the kernel next schedules the process: on a loaded machine a
    // request sent right after kill() returned was still answered (etcd-client test, ~1 run in 4)
    await Promise.all(n.procs.map((p) => (p.proc.pid === undefined ? undefined : waitStopped(p.proc.pid, 2_000))));
  }

  async resume(nodeId: string): Promise<void> {
    const n = this.slot(nodeId);
    if (n.procs.length === 0) throw new Error(`node ${nodeId} is not running`);
    this.signalNode(n, 'SIGCONT');
    for (const p of n.procs) if (p.alive) p.proc.kill('SIGCONT');
    n.paused = false;
  }

  async partition(grudge: Grudge): Promise<void> {
    await loopbackPartition(this.partitioner, grudge);
  }

  async cutClient(nodeIds: readonly string[]): Promise<void> {
    for (const id of nodeIds) this.slot(id);
    await loopbackClientCut(this.partitioner, this.clientSource, nodeIds);
  }

  async heal(): Promise<void> {
    await this.partitioner?.heal();
  }

  /** @throws Error: clock faults are not offered to targets ({@link TARGET_NO_CLOCK}). */
  async setClock(nodeId: string): Promise<void> {
    this.slot(nodeId);
    throw new Error(TARGET_NO_CLOCK);
  }

  clockModes(): Readonly<Record<string, ClockMode>> | null {
    return null;
  }

  /** Kills every process, removes the nat and filter rules and the data folders. Safe to call twice. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.nodes.keys()].map((id) => this.terminate(id, 'SIGKILL').catch(() => undefined)));
    await this.partitioner?.close();
    await this.snat?.close();
    if (this.dataRoot) rmSync(this.dataRoot, { recursive: true, force: true });
    process.off('exit', this.onExit);
  }

  private slot(nodeId: string): NodeSlot {
    const n = this.nodes.get(nodeId);
    if (!n) throw new Error(`unknown node ${nodeId}`);
    return n;
  }

  private logPath(nodeId: string, index: number, spec: NodeProcessSpec): string {
    return path.join(this.runDir, 'nodes', index === 0 ? `${nodeId}.log` : `${nodeId}.${spec.name}.log`);
  }

  private async spawnNode(nodeId: string): Promise<void> {
    const n = this.slot(nodeId);
    if (this.closed) throw new Error('the runtime is closed');
    n.procs = [];
    n.paused = false;
    const readyTimeoutMs = this.opts.readyTimeoutMs ?? 20_000;
    for (let i = 0; i < n.launch.processes.length; i++) {
      const spec = n.launch.processes[i];
      const logPath = this.logPath(nodeId, i, spec);
      const port = this.cluster.ports[spec.readyPort];
      if (port === undefined) throw new Error(`node ${nodeId}: process ${spec.name} names ready port "${spec.readyPort}", which the target does not have`);
      if (spec.user) await giveTo(this.dataRoot!, n.dataDir, spec.user);
      const user = spec.user ? ['--reuid', spec.user] : [];
      const proc = execa(SETPRIV, [...user, '--regid', String(n.gid), '--clear-groups', '--pdeathsig', 'SIGKILL', '--', spec.command, ...spec.args], {
        cwd: n.dataDir,
        stdin: 'ignore',
        stdout: { file: logPath, append: true },
        stderr: { file: logPath, append: true },
        env: { ...BASE_ENV, ...spec.env, ZARIS_CERTIFY_RUN: this.opts.runTag },
        extendEnv: false,
        reject: false,
        cleanup: true,
      });
      const rp: RunningProcess = { spec, proc, alive: true, exited: Promise.resolve() };
      rp.exited = proc.then(() => {
        rp.alive = false;
      });
      n.procs.push(rp);
      // from the node's own address: a client cut of this node must not hold up its restart
      try {
        await waitForPort(n.host, port, spec.readyTimeoutMs ?? readyTimeoutMs, () => !rp.alive, `${nodeId} (${spec.name})`, logPath, n.host);
      } catch (e) {
        // a node half started is down (its processes killed), so that its start can be made again
        await this.terminate(nodeId, 'SIGKILL');
        throw e;
      }
    }
  }

  /** Sends `signal` to every process of the node's group id (launches with `wholeNode` only). */
  private signalNode(n: NodeSlot, signal: NodeJS.Signals): void {
    if (n.launch.wholeNode) signalGroup(n.gid, signal);
  }

  private async terminate(nodeId: string, signal: 'SIGKILL' | 'SIGTERM'): Promise<void> {
    const n = this.slot(nodeId);
    const live = n.procs.filter((p) => p.alive);
    if (live.length > 0) {
      for (const p of live) {
        if (n.paused && signal === 'SIGTERM') p.proc.kill('SIGCONT');
        p.proc.kill(signal);
      }
      if (signal === 'SIGKILL' || n.paused) this.signalNode(n, signal === 'SIGKILL' ? 'SIGKILL' : 'SIGCONT');
      const grace = signal === 'SIGTERM' ? setTimeout(() => live.forEach((p) => p.proc.kill('SIGKILL')), this.opts.stopGraceMs ?? 5_000) : null;
      await Promise.all(live.map((p) => p.exited));
      if (grace) clearTimeout(grace);
    }
    if (n.launch.wholeNode) {
      // what the started processes left behind (a postmaster in a session of its own) goes too
      const deadline = Date.now() + (signal === 'SIGTERM' ? (this.opts.stopGraceMs ?? 5_000) : 0);
      while (groupPids(n.gid).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      await killGroup(n.gid);
    }
    n.procs = [];
    n.paused = false;
  }
}

/** Lets `user` reach the data root and own the node's data folder (a store that refuses to run as root). */
async function giveTo(dataRoot: string, dataDir: string, user: string): Promise<void> {
  chmodSync(dataRoot, 0o711);
  await execa('chown', ['-R', `${user}:`, dataDir]);
}

/**
 * Resolves once /proc says process `pid` is stopped (state T or t), or it is gone, or after
 * `timeoutMs` (ms) however it is; polls every 5 ms. Never throws (no /proc: resolves at once).
 */
export async function waitStopped(pid: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let state: string | undefined;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // "pid (comm) S ...": the state follows the last ')' (a comm may hold parentheses)
      state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    } catch {
      return;
    }
    if (state === 'T' || state === 't' || state === 'Z' || Date.now() >= deadline) return;
    await new Promise((res) => setTimeout(res, 5));
  }
}
