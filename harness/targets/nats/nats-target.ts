import path from 'node:path';
import type { RuntimeKind } from '../../runtime/runtime.js';
import { missingExecutable, packageVersion, processRuntimeMissing, versionFromBinary, type BinaryRunner } from '../installed.js';
import type { ClientOptions, ErrorOutcome, FinalReader, LaunchContext, NodeLaunch, OwnershipSampler, Target, TargetClient, TargetCluster, TargetContract, TargetScope, TargetWorkloadShape } from '../target.js';
import { checkTargetContract } from '../target.js';
import { natsContract } from './nats-contract.js';
import { ensureStream, NatsClient, type NatsStreamConfig } from './nats-client.js';
import { NatsFinalReader } from './nats-final-read.js';
import { classifyNatsError } from './nats-outcome.js';
import { LeaderTenures, NatsSampler } from './nats-ownership.js';

/** The Debian package's binary (nats-server 2.9.10 on bookworm). */
export const NATS_BINARY = '/usr/sbin/nats-server';

/** The one-line reason the docker runtime is refused: the offline node image does not carry nats-server. */
export const NATS_NO_DOCKER = 'the node image does not carry nats-server (harness/docker/base-image.ts); use RUNTIME=process';

/** Options of {@link NatsJetStreamTarget}; every field has a default. */
export interface NatsJetStreamTargetOptions {
  /** The nats-server executable (default {@link NATS_BINARY}). */
  binary?: string;
  /** Name of the one store (default `nats`). */
  store?: string;
  /** The stream (default: `zaris-certify`, subjects `zc.>`, 3 replicas, a 120 s duplicate window). */
  stream?: Partial<NatsStreamConfig>;
  /**
   * The workload reads each key during the run (the last message on its subject, from the stream
   * leader), judged by the verifier's read rules (linearizable). Default false: JetStream's
   * at-least-once contract covers acknowledged publishes, not the freshness of reads; a 90 s run
   * with reads on saw stale reads right after a leader change (docs/targets.md).
   */
  reads?: boolean;
  /** The servers' PING interval on routes and client connections, ms (nats-server's default: 120,000). Default 2,000. */
  pingIntervalMs?: number;
}

/** What a run of this target tests and cannot test (results.json `scope`, the report, docs/targets.md). */
export const NATS_SCOPE: TargetScope = {
  tested: [
    'every acknowledged publish (PubAck) is in the stream read back after the heal: the whole stream is read in order through an ordered consumer and each key (one publish) is present or absent',
    'no message carries a value id that was never published (unexpected), and no publish that failed definitely is present (phantom)',
    'duplicates (one value id at two sequences) are counted, not judged: JetStream promises at-least-once',
    'reads of a key during the run (the last message on its subject, from the stream leader) against the acknowledged publishes',
    'under kill, stop (SIGTERM), pause, partitions, client cuts and, with BEYOND_BUDGET=1, power failures (every node killed at once) on the process runtime',
  ],
  notTested: [
    "losses that need a real power or kernel failure: a killed nats-server process leaves what it wrote in the OS page cache, which the next start reads back, so the 2-minute fsync of nats-server 2.9 (stream files; 5 minutes for Raft logs) is never exercised here (Jepsen's NATS 2.12.1 analysis lost acknowledged writes that way)",
    'file corruption and truncation (Jepsen found losses and split-brain from both)',
    'the order of the stream against the order of the acknowledgements, and sequence numbers against those the PubAcks named',
    "the verifier's ownership rules (one active per epoch, epochs never going back, acks only from the epoch's active): nats-server 2.9 exposes no Raft term, so the epoch is the harness's own count of the stream leader's tenures and these rules hold by construction",
    'consumers (delivery, acknowledgement, redelivery), exactly-once publishing across the duplicate window, membership changes, clock faults, the docker runtime',
  ],
};

/**
 * NATS JetStream (Debian's nats-server 2.9) as a target: three servers, each its own node (its own
 * address), clustered (routes), JetStream on, one stream with file storage replicated on all three
 * (R3: its Raft group acknowledges a publish once a majority stored it).
 *
 * Contract: JetStream's documented promise for acknowledged publishes, at-least-once: an
 * acknowledged publish is never lost, duplicates are allowed. One store (RF 3, sync), no claimed
 * loss class. A stream is a log, not a key-value map: every publish is its own key, written once
 * (nats-readback.ts says how the verifier's rules then judge each publish), and the final read is
 * the whole stream read back (nats-final-read.ts).
 *
 * A server's data folder (JetStream's store) survives kill, stop and restart of its node; its
 * config file is written at the first start. nats-server 2.9 has no `sync_interval` setting (it
 * came in 2.10): a stream's file store writes every message to its file (the OS) before the ack and
 * fsyncs every 2 minutes, its Raft log every 5 (server/stream.go, server/jetstream_cluster.go).
 */
export class NatsJetStreamTarget implements Target {
  readonly name = 'nats-jetstream' as const;
  readonly nodeIds = ['n1', 'n2', 'n3'] as const;
  readonly ports = { client: 4222, cluster: 6222, monitor: 8222 } as const;
  readonly contract: TargetContract;
  readonly clientLibrary = `nats ${packageVersion('nats')}`;
  readonly store: string;
  readonly stream: NatsStreamConfig;
  readonly options: Readonly<Record<string, unknown>>;
  readonly workload: TargetWorkloadShape;
  readonly scope: TargetScope;
  private readonly binary: string;
  private readonly pingIntervalMs: number;
  private readonly tenures = new WeakMap<TargetCluster, LeaderTenures>();

  constructor(opts: NatsJetStreamTargetOptions = {}) {
    this.binary = opts.binary ?? NATS_BINARY;
    this.store = opts.store ?? 'nats';
    this.stream = { stream: 'zaris-certify', prefix: 'zc', replicas: this.nodeIds.length, duplicateWindowMs: 120_000, ...(opts.stream ?? {}) };
    if (!/^[A-Za-z0-9_-]+$/.test(this.stream.stream)) throw new RangeError(`NATS stream name "${this.stream.stream}" must be [A-Za-z0-9_-]+`);
    if (!/^[A-Za-z0-9_-]+$/.test(this.stream.prefix)) throw new RangeError(`NATS subject prefix "${this.stream.prefix}" must be one token [A-Za-z0-9_-]+`);
    this.pingIntervalMs = opts.pingIntervalMs ?? 2_000;
    const reads = opts.reads === true;
    this.workload = { writesPerKey: { min: 1, max: 1 }, ...(reads ? {} : { readFraction: 0, batchReadFraction: 0 }) };
    this.scope = reads ? NATS_SCOPE : { tested: NATS_SCOPE.tested.filter((x) => !x.startsWith('reads of a key')), notTested: [...NATS_SCOPE.notTested, 'reads during the run (NATS_READS=1 turns them on, judged as linearizable)'] };
    this.contract = natsContract({ store: this.store, replicas: this.stream.replicas, reads });
    checkTargetContract(this.contract);
    this.options = { stream: this.stream.stream, replicas: this.stream.replicas, storage: 'file', duplicateWindowMs: this.stream.duplicateWindowMs, serverPingIntervalMs: this.pingIntervalMs, writesPerKey: 1, reads };
  }

  async unavailableReason(runtime: RuntimeKind): Promise<string | null> {
    if (runtime === 'docker') return NATS_NO_DOCKER;
    return missingExecutable(this.binary, 'nats-server', 'apt-get install nats-server') ?? processRuntimeMissing();
  }

  async version(run?: BinaryRunner): Promise<string> {
    return `nats-server ${await versionFromBinary(this.binary, ['--version'], /nats-server:?\s*v?(\d+\.\d+\.\d+\S*)/, run)}`;
  }

  partitionOf(store: string): number {
    if (store !== this.store) throw new RangeError(`nats-jetstream target has no store ${store}`);
    return 0;
  }

  /** The config file of a node (nats-server's format): its name, addresses, JetStream store and routes to every node. */
  config(nodeId: string, ctx: LaunchContext): string {
    const host = ctx.cluster.nodes.find((n) => n.id === nodeId)?.host;
    if (!host) throw new Error(`unknown node ${nodeId}`);
    const routes = ctx.cluster.nodes.map((n) => `nats-route://${n.host}:${this.ports.cluster}`);
    const ping = `"${Math.max(1, Math.round(this.pingIntervalMs / 1000))}s"`;
    return [
      `server_name: ${nodeId}`,
      `listen: "${host}:${this.ports.client}"`,
      `http: "${host}:${this.ports.monitor}"`,
      `ping_interval: ${ping}`,
      'ping_max: 2',
      // nats-server keeps its files in <store_dir>/jetstream
      `jetstream { store_dir: "${ctx.dataDir}" }`,
      'cluster {',
      `  name: "zaris-certify-${ctx.runTag}"`,
      `  listen: "${host}:${this.ports.cluster}"`,
      `  routes: [ ${routes.map((r) => `"${r}"`).join(', ')} ]`,
      '}',
      '',
    ].join('\n');
  }

  /** One nats-server per node, its config `nats.conf` in the node's data folder (written at the first start). */
  launch(nodeId: string, ctx: LaunchContext): NodeLaunch {
    const conf = this.config(nodeId, ctx);
    return {
      files: [{ path: 'nats.conf', content: conf }],
      processes: [{ name: 'nats', command: this.binary, args: ['-c', path.join(ctx.dataDir, 'nats.conf')], readyPort: 'client' }],
    };
  }

  private book(cluster: TargetCluster): LeaderTenures {
    let t = this.tenures.get(cluster);
    if (!t) {
      t = new LeaderTenures();
      this.tenures.set(cluster, t);
    }
    return t;
  }

  /** Creates the stream (retried while JetStream elects its meta leader; bounded 60 s). */
  async prepare(cluster: TargetCluster): Promise<void> {
    await ensureStream(cluster, this.stream);
  }

  client(cluster: TargetCluster, opts: ClientOptions): TargetClient {
    return new NatsClient(cluster, this.book(cluster), this.stream, opts);
  }

  sampler(cluster: TargetCluster): OwnershipSampler {
    return new NatsSampler(cluster, this.book(cluster), this.store, this.stream.stream);
  }

  finalReader(cluster: TargetCluster): FinalReader {
    return new NatsFinalReader(cluster, this.stream, this.store);
  }

  classifyError(error: unknown): ErrorOutcome {
    return classifyNatsError(error);
  }
}
