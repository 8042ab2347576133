import path from 'node:path';
import type { RuntimeKind } from '../../runtime/runtime.js';
import { missingExecutable, packageVersion, processRuntimeMissing, versionFromBinary, type BinaryRunner } from '../installed.js';
import type { ClientOptions, ErrorOutcome, LaunchContext, NodeLaunch, OwnershipSampler, Target, TargetClient, TargetCluster, TargetContract } from '../target.js';
import { checkTargetContract } from '../target.js';
import { etcdContract } from './etcd-contract.js';
import { EtcdClient } from './etcd-client.js';
import { EtcdMembers, TermLeaders } from './etcd-members.js';
import { classifyEtcdError } from './etcd-outcome.js';
import { EtcdSampler } from './etcd-ownership.js';

/** The Debian package's binary (etcd-server 3.4.23 on bookworm). */
export const ETCD_BINARY = '/usr/bin/etcd';

/** Options of {@link EtcdTarget}; every field has a default. */
export interface EtcdTargetOptions {
  /** The etcd executable (default {@link ETCD_BINARY}). */
  binary?: string;
  /** Raft heartbeat interval, ms (etcd's --heartbeat-interval, default 100). */
  heartbeatMs?: number;
  /** Raft election timeout, ms (etcd's --election-timeout, default 1,000). */
  electionMs?: number;
  /** Name of the one store (default `etcd`). */
  store?: string;
}

/**
 * etcd 3.4 as a target (issue 15): three members, each its own node (its own address), Raft
 * replicating one key space to all three. Its contract claims no loss at all: every acknowledged
 * write is committed by a majority and must survive kills, pauses and partitions of a minority
 * (one store, RF = 3 = the cluster size, sync).
 *
 * A member's data folder survives kill and restart (etcd keeps its WAL and snapshots on disk); a
 * restarted member rejoins with its data, as an etcd member does after a crash.
 */
export class EtcdTarget implements Target {
  readonly name = 'etcd' as const;
  readonly nodeIds = ['n1', 'n2', 'n3'] as const;
  readonly ports = { client: 2379, peer: 2380 } as const;
  readonly contract: TargetContract;
  readonly clientLibrary = `etcd3 ${packageVersion('etcd3')}`;
  readonly store: string;
  readonly options: Readonly<Record<string, unknown>>;
  private readonly binary: string;
  private readonly terms = new WeakMap<TargetCluster, TermLeaders>();

  constructor(private readonly opts: EtcdTargetOptions = {}) {
    this.binary = opts.binary ?? ETCD_BINARY;
    this.store = opts.store ?? 'etcd';
    this.contract = etcdContract(this.store, this.nodeIds.length);
    checkTargetContract(this.contract);
    this.options = { heartbeatMs: opts.heartbeatMs ?? 100, electionMs: opts.electionMs ?? 1_000 };
  }

  async unavailableReason(runtime: RuntimeKind): Promise<string | null> {
    // on docker the node image carries the Debian packages (harness/docker/base-image.ts); whether
    // the image can be had here is the runtime selection's question
    if (runtime === 'docker') return null;
    return missingExecutable(this.binary, 'etcd', 'apt-get install etcd-server') ?? processRuntimeMissing();
  }

  async version(run?: BinaryRunner): Promise<string> {
    return `etcd ${await versionFromBinary(this.binary, ['--version'], /etcd Version:\s*(\S+)/, run)}`;
  }

  partitionOf(store: string): number {
    if (store !== this.store) throw new RangeError(`etcd target has no store ${store}`);
    return 0;
  }

  /**
   * One etcd process per node: client URL `http://<host>:2379`, peer URL `http://<host>:2380`, the
   * initial cluster of all three, its data in `<dataDir>/etcd`, revision-based auto-compaction
   * (keeps the newest 100,000 revisions, so a long run's store does not grow without bound).
   */
  launch(nodeId: string, ctx: LaunchContext): NodeLaunch {
    const host = ctx.cluster.nodes.find((n) => n.id === nodeId)?.host;
    if (!host) throw new Error(`unknown node ${nodeId}`);
    const peer = (h: string): string => `http://${h}:${this.ports.peer}`;
    const client = `http://${host}:${this.ports.client}`;
    return {
      processes: [
        {
          name: 'etcd',
          command: this.binary,
          readyPort: 'client',
          args: [
            '--name', nodeId,
            '--data-dir', path.join(ctx.dataDir, 'etcd'),
            '--listen-client-urls', client,
            '--advertise-client-urls', client,
            '--listen-peer-urls', peer(host),
            '--initial-advertise-peer-urls', peer(host),
            '--initial-cluster', ctx.cluster.nodes.map((n) => `${n.id}=${peer(n.host)}`).join(','),
            '--initial-cluster-state', 'new',
            '--initial-cluster-token', `zaris-certify-${ctx.runTag}`,
            '--heartbeat-interval', String(this.opts.heartbeatMs ?? 100),
            '--election-timeout', String(this.opts.electionMs ?? 1_000),
            '--auto-compaction-mode', 'revision',
            '--auto-compaction-retention', '100000',
            '--logger', 'zap',
            '--log-outputs', 'stderr',
          ],
        },
      ],
    };
  }

  private book(cluster: TargetCluster): TermLeaders {
    let t = this.terms.get(cluster);
    if (!t) {
      t = new TermLeaders();
      this.terms.set(cluster, t);
    }
    return t;
  }

  client(cluster: TargetCluster, opts: ClientOptions): TargetClient {
    return new EtcdClient(new EtcdMembers(cluster, this.book(cluster)), opts);
  }

  sampler(cluster: TargetCluster): OwnershipSampler {
    return new EtcdSampler(new EtcdMembers(cluster, this.book(cluster)), this.store);
  }

  classifyError(error: unknown): ErrorOutcome {
    return classifyEtcdError(error);
  }
}
