/**
 * The target seam (DESIGN.md §3 "Targets"; issue 15): everything the harness needs to certify a
 * store it did not build. A target says
 * - how its nodes start, stop, are killed, paused and addressed on each runtime ({@link NodeLaunch},
 *   run by a {@link TargetRuntime}: `process` puts every node on its own loopback address with its
 *   outgoing connections leaving from it too, so the existing iptables grudges cut its links;
 *   `docker` runs the same launch in a container of the offline node image, which carries the
 *   store's Debian packages);
 * - how a client talks to it ({@link TargetClient}): a write carries a unique value id, a read
 *   returns the value id it found, and every outcome follows that store's client rules
 *   ({@link ErrorOutcome}: `ok` acknowledged, `fail` definitely not applied, `info` indeterminate);
 * - which ownership facts it can sample ({@link OwnershipSampler}: the active owner and its epoch,
 *   e.g. the Raft leader and its term, or the master Sentinel names and its config epoch), as rows
 *   of the ledger's runtime-map samples;
 * - its contract for the verifier ({@link TargetContract}): its stores with replication factor and
 *   ack mode, the allowed-loss classes it claims and every rule's parameter with its source.
 *
 * The nemesis, ledger, verifier and report do not know which target runs: they see node ids,
 * faults, writes with acks, reads, and samples. Zaris is one target among them (phase 2 of issue 15).
 */
import type { Outcome, WriteOp } from '../../ledger/ledger-writer.js';
import type { FaultRuntime, RuntimeKind } from '../runtime/runtime.js';
import type { FaultKind } from '../nemesis/schedule.js';
import type { BinaryRunner } from './installed.js';
import { checkContract, ContractError, type Contract, type ContractStore } from '../../ledger/contract.js';

/** The names `make certify TARGET=` accepts. */
export type TargetName = 'zaris' | 'etcd' | 'redis-sentinel' | 'nats-jetstream' | 'postgres-patroni' | 'example-kv';

// ---------------------------------------------------------------------------------------------
// Nodes: launch and addresses

/** Where the nodes of a running target cluster are: every node has its own address. */
export interface TargetCluster {
  /** The nodes in order; `host` is an IPv4 address (127.a.b.N on `process`, the container's on `docker`). */
  nodes: ReadonlyArray<{ id: string; host: string }>;
  /** The target's named ports (the same numbers on every node: each node has its own address). */
  ports: Readonly<Record<string, number>>;
}

/** `host:port` of one named port of one node. @throws Error for an unknown node or port name. */
export function endpointOf(cluster: TargetCluster, nodeId: string, port: string): { host: string; port: number } {
  const n = cluster.nodes.find((x) => x.id === nodeId);
  if (!n) throw new Error(`unknown node ${nodeId}`);
  const p = cluster.ports[port];
  if (p === undefined) throw new Error(`unknown port name ${port}`);
  return { host: n.host, port: p };
}

/** The node whose address is `host`, or null. */
export function nodeOfHost(cluster: TargetCluster, host: string): string | null {
  return cluster.nodes.find((n) => n.host === host)?.id ?? null;
}

/** What a runtime tells a target when it asks for a node's launch. */
export interface LaunchContext {
  /** Every node's address (configs name their peers). */
  cluster: TargetCluster;
  /**
   * The node's data folder as the node sees it. It survives kill, stop and restart of the node (a
   * node is a machine whose processes crash; its disk stays), and is removed when the runtime closes.
   */
  dataDir: string;
  runtime: RuntimeKind;
  /** Unique per run (for cluster tokens and names): `[a-z0-9-]+`. */
  runTag: string;
}

/** One process of a node (etcd: one; Redis with Sentinel: redis-server and redis-sentinel). */
export interface NodeProcessSpec {
  /** Short name, `[a-z0-9-]+` (log file suffix, messages). */
  name: string;
  /** Absolute path of the executable (the same on the host and in the node image: Debian packages). */
  command: string;
  args: string[];
  env?: Record<string, string>;
  /** The named port (a key of the target's ports) that accepts TCP once the process is up. */
  readyPort: string;
  /**
   * The user the process runs as (process runtime; default the harness's own). PostgreSQL refuses
   * to run as root: the runtime then gives the node's data folder to that user before each start.
   */
  user?: string;
  /**
   * How long the runtime waits for readyPort to accept connections, ms (default: the runtime's own,
   * 20 s on the process runtime). Patroni opens its REST API only after PostgreSQL's crash recovery.
   */
  readyTimeoutMs?: number;
}

/** How one node starts. A restart starts the same processes again with the same data folder. */
export interface NodeLaunch {
  /** Started in order, each waited for (readyPort) before the next; signals go to all of them. */
  processes: NodeProcessSpec[];
  /**
   * Files written into the data folder before the node's FIRST start only (paths relative to it):
   * stores that rewrite their own config (Redis, Sentinel) keep what they wrote across restarts.
   */
  files?: Array<{ path: string; content: string }>;
  /**
   * Signals reach every process of the node (process runtime: every process with the node's
   * group id), not only the processes started: for stores whose processes start children in a
   * session of their own (Patroni starts the PostgreSQL postmaster with setsid), so that a kill or
   * a pause of the node takes its whole database down with it.
   */
  wholeNode?: boolean;
}

/**
 * The runtime side of a target cluster: the nemesis-facing {@link FaultRuntime} (kill, stop,
 * restart, pause, resume, partition by grudge, client cut, heal, isUp, nodeIds, close; same
 * semantics, except that a restarted node keeps its data folder) plus a start that runs a target's
 * {@link NodeLaunch}. Implementations: target-process-runtime.ts (loopback addresses, gid-owner SNAT
 * so outgoing connections leave from the node's address, iptables grudges) and
 * target-docker-runtime.ts (one container of the offline node image per node, which carries the
 * stores' Debian packages; the data folder a host folder mounted into it). Clock faults are not
 * offered to targets (`setClock` throws, `clockModes()` is null): libfaketime cannot move the
 * clocks of a Go binary such as etcd.
 */
export interface TargetRuntime extends FaultRuntime {
  /**
   * Starts every node of the target (nodes in parallel, a node's processes in order); resolves
   * when each process's ready port accepts connections. Node logs go to `<runDir>/nodes/`.
   * @throws Error (one line) when a node does not come up; everything started is stopped first.
   */
  start(opts: { runDir: string; target: Target; nodeIds: readonly string[] }): Promise<TargetCluster>;
  /** The running cluster (after start). @throws Error before start. */
  readonly cluster: TargetCluster;
  /**
   * Where the nodes' binaries run, for {@link Target.version}: the docker runtime runs them in a
   * node container (the image's packages); absent = on the host.
   */
  readonly binaryRunner?: BinaryRunner;
}

/** The error of `setClock` on a target runtime (one line). */
export const TARGET_NO_CLOCK = 'clock faults are not available for targets other than zaris (libfaketime cannot move the clocks of every store, e.g. etcd, a Go binary)';

// ---------------------------------------------------------------------------------------------
// The client adapter

/** One write of the workload: a unique value id (the ledger's write id `w<key_id>.<seq>`) to a key. */
export interface WriteRequest {
  store: string;
  key: string;
  /** put: unconditional; cas: only if the key's version is `ifMatchVersion`; create: only if absent; delete. */
  op: WriteOp;
  /** The value written (put, cas, create); reads return it. Ignored for delete. */
  valueId: string;
  /** cas only: the version the key must have (a version an earlier ack of this key named). */
  ifMatchVersion?: number;
}

/**
 * What an acknowledged write names (the ledger's ack columns; history-format.md `ack`):
 * - `node`: the active owner that acknowledged it (etcd: the leader of the term; Redis: the master
 *   the client wrote to);
 * - `epoch`: its tenure (etcd: Raft term; Redis: Sentinel's config epoch of that master);
 * - `version`: the key's version after the write, strictly increasing over the key's acked
 *   writes, also across owners (etcd: mod revision; Redis: kept by the write script);
 * - `revision`: the write's position in its partition's replication order, comparable with the
 *   `revisions` of samples (etcd: the store revision; Redis: the script's partition counter);
 * - `copies`: how many copies held it at the ack, when the store says (optional).
 * The ack mode is the store's configured mode (the verifier never trusts a response's).
 */
export interface TargetAck {
  node: string;
  epoch: number;
  version: number;
  revision: number;
  copies?: number;
}

/** One attempt of an operation (the ledger's attempt trace). Times are the run clock's ms. */
export interface TargetAttempt {
  n: number;
  /** The node the attempt went to, when known. */
  node: string | null;
  /** `OK`, a store status (`Conflict`, `NotFound`) or an error kind (`READONLY`, `DeadlineExceeded`). */
  status: string;
  epoch?: number;
  startMs: number;
  endMs: number;
  /** What the adapter could not establish about this attempt, in words (e.g. the leader of a term). */
  note?: string;
}

/** The outcome of a write (never thrown: store and transport errors are outcomes). */
export interface WriteOutcome {
  outcome: Outcome;
  /** The final status name (`OK`, `Conflict`, an error kind). */
  status: string;
  /** Present exactly when `outcome` is `ok`. */
  ack?: TargetAck;
  attempts: TargetAttempt[];
}

/** The outcome of reading one key. */
export interface ReadOutcome {
  key: string;
  /** ok: `value` is what the key holds (a value id, or null when absent); fail / info: no value. */
  outcome: Outcome;
  status: string;
  /** The node that answered, when known. */
  node: string | null;
  value: string | null;
}

/** How a store client's error maps to an outcome: `fail` only when the write surely was not applied. */
export interface ErrorOutcome {
  outcome: 'fail' | 'info';
  /** A short status name for the ledger (`NoConnection`, `DeadlineExceeded`, `READONLY`). */
  status: string;
}

/**
 * A client adapter: the store's own well-kept client library under the harness's outcome rules.
 * Methods never throw for the store's or the network's errors (they are outcomes); they throw only
 * after close(). One adapter serves all the workload's writers (concurrent calls).
 */
export interface TargetClient {
  /** One write; resolves with its outcome (bounded by the adapter's deadline). */
  write(req: WriteRequest): Promise<WriteOutcome>;
  /** One read (linearizable where the store offers it: etcd's default get; Redis: the master). */
  read(store: string, key: string): Promise<ReadOutcome>;
  /** A batch read: one outcome per key, in the order of `keys`. */
  readMany(store: string, keys: readonly string[]): Promise<ReadOutcome[]>;
  close(): Promise<void>;
}

/** Options every adapter takes. */
export interface ClientOptions {
  /** The run clock (ms since the run started): attempt times are on it. */
  now: () => number;
  /** Bound on one operation, ms (default 5,000). */
  operationTimeoutMs?: number;
}

// ---------------------------------------------------------------------------------------------
// Ownership samples

/** A partition's health as a sample states it. */
export type SampleHealth = 'Healthy' | 'Degraded' | 'Unavailable';

/**
 * One row of the ledger's runtime-map samples (CONTRACT.md "Ledger": `Ledger.sample` rows with
 * `node`, `inSync`, `revisions`; history-format.md v2 `ownership[]`).
 * - `node` null: the harness's merged view (the highest epoch any node reported, with the nodes
 *   that follow it); else the view of that one node (etcd: that member's leader and term; Redis:
 *   the master and config epoch of the Sentinel beside it).
 * - `inSync`: the nodes holding the active's data (the active included); `revisions`: the last
 *   revision each reported holding (merged rows only; absent where unknown).
 * - `health`: Healthy exactly when every replica is in `inSync`.
 */
export interface OwnershipSample {
  store: string;
  partition: number;
  node: string | null;
  active: string | null;
  epoch: number;
  health: SampleHealth;
  replicatedRevision: number;
  inSync?: string[];
  revisions?: Record<string, number>;
}

/** One sampling round. */
export interface OwnershipView {
  /** The merged row of each partition first, then one row per node that answered. */
  rows: OwnershipSample[];
  /** The node the nemesis means by "the leader" (etcd: the Raft leader; Redis: the master), or null. */
  leader: string | null;
  /** Nodes that answered this round. */
  answered: string[];
}

/**
 * Samples a running target's ownership facts. `sample()` asks every node (bounded per node, in
 * parallel) and never throws for a node that does not answer (it is left out of `answered`).
 */
export interface OwnershipSampler {
  sample(): Promise<OwnershipView>;
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// The contract for the verifier

/**
 * A store of the target: the contract's description of it (ledger/contract.ts
 * {@link ContractStore}: name, replication factor, ack mode, what an ack is durable on, the
 * source) plus how the harness splits its key space: `partitions` partitions over `segments`
 * segments (etcd, Redis: 1 and 1, replicated on every node).
 */
export interface TargetStore extends ContractStore {
  partitions: number;
  segments: number;
}

/**
 * What the store promises, as the verifier judges it: a contract declaration (ledger/contract.ts,
 * `zaris-contract/1`: the allowed-loss classes claimed and every rule's parameter with its source)
 * whose stores also say how their key space is split. The run stores the declaration in the
 * ledger (meta `contract`) and the verifier applies exactly its rules; docs/targets.md explains
 * each field.
 */
export interface TargetContract extends Contract {
  stores: TargetStore[];
}

/** The declaration part of a target's contract (what the ledger stores): the stores without their partitioning. */
export function declarationOf(c: TargetContract): Contract {
  return { ...c, stores: c.stores.map(({ partitions: _p, segments: _s, ...s }) => s) };
}

/**
 * Checks a target's contract: the declaration ({@link checkContract}: unique store names, claims
 * the stores can use, parameters in range) and 1 <= partitions <= segments per store.
 * @throws ContractError (one line) naming the first problem.
 */
export function checkTargetContract(c: TargetContract): void {
  checkContract(declarationOf(c), `${c.target} contract`);
  for (const s of c.stores) {
    if (!Number.isInteger(s.partitions) || s.partitions < 1 || !Number.isInteger(s.segments) || s.segments < s.partitions) throw new ContractError(`${c.target} contract: store ${s.name} needs 1 <= partitions <= segments`);
  }
}

// ---------------------------------------------------------------------------------------------
// Stores that are logs, not key-value maps (NATS JetStream)

/**
 * How the workload writes a target's keys when the store is not a key-value map (optional; the
 * workload's defaults otherwise: harness/workload.ts). A stream target writes every key once
 * (`writesPerKey` 1..1: each publish its own key, so that the final read of a key is "present" or
 * "absent" in the stream and the verifier's per-key rules judge each publish on its own).
 */
export interface TargetWorkloadShape {
  /** Writes per key before it retires (inclusive bounds). */
  writesPerKey?: { min: number; max: number };
  /** Fraction of writes followed by a single read of the key written (0..1). */
  readFraction?: number;
  /** Fraction of writes followed by a batch read of the writer's current keys (0..1). */
  batchReadFraction?: number;
}

/**
 * What a whole-store read back found (a stream target's final read: every message of the stream,
 * each with its sequence and value id). Recorded in the ledger (event `final-readback`) and in
 * results.json (`readback`). Counts are messages unless named otherwise.
 */
export interface FinalReadback {
  /** True when every message up to `lastSeq` was read; false: keys not found are unknown (unverified), not absent. */
  complete: boolean;
  /** The stream's state when the read began, as its leader reported it. */
  stream: { messages: number; firstSeq: number; lastSeq: number };
  /** Messages read. */
  read: number;
  /** Distinct workload keys found. */
  keys: number;
  /** Messages whose value id had already been read (at-least-once: allowed, counted). */
  duplicates: number;
  /** Up to 20 value ids read more than once, with their sequences. */
  duplicateSamples: Array<{ id: string; seqs: number[] }>;
  /** Messages that name no workload key (wrong subject) or carry no value id of their key: each an unexpected value. */
  anomalies: number;
  /** Each node's own copy of the stream at the read, when its monitoring endpoint answered. */
  replicas: Record<string, { messages: number; firstSeq: number; lastSeq: number } | null>;
  /** How long the read took, ms. */
  ms: number;
  /** Why the read stopped early, when `complete` is false. */
  reason?: string;
}

/**
 * A target's final reader (optional; without one the final reads go key by key through a client
 * adapter): reads the whole store once after the heal, then answers each key from what it read.
 */
export interface FinalReader {
  /** Reads everything (bounded; never throws for the store's errors: an incomplete read says so). */
  readAll(): Promise<FinalReadback>;
  /**
   * A key's final value after {@link readAll}: its value id, null when surely absent (the read
   * was complete), undefined when unknown (the read was incomplete and did not find it).
   */
  valueOf(store: string, key: string): string | null | undefined;
  close(): Promise<void>;
}

/** What a run of a target tests and does not test, in words, for results.json (`scope`) and the report. */
export interface TargetScope {
  tested: string[];
  notTested: string[];
}

// ---------------------------------------------------------------------------------------------
// The target

/**
 * A store the harness can certify. Implementations: etcd/etcd-target.ts, redis/redis-target.ts
 * (and Zaris, phase 2). A target object holds configuration only; running state lives in the
 * runtime, client and sampler it makes.
 */
export interface Target {
  readonly name: TargetName;
  /** Node ids in order (three nodes). */
  readonly nodeIds: readonly string[];
  /** Named ports every node listens on (e.g. etcd `client` 2379, `peer` 2380). */
  readonly ports: Readonly<Record<string, number>>;
  readonly contract: TargetContract;
  /** The client library the adapter uses, `name version` (e.g. `etcd3 1.1.2`), for the report. */
  readonly clientLibrary: string;
  /** The store settings a run records beside the client's (run meta `clientOptions`), e.g. Sentinel's down-after. */
  readonly options?: Readonly<Record<string, unknown>>;
  /**
   * Null when the target can run on `runtime` here, else a one-line reason naming what is missing
   * (e.g. "etcd is not installed (apt-get install etcd-server)"). Tests skip on it, certify refuses.
   */
  unavailableReason(runtime: RuntimeKind): Promise<string | null>;
  /**
   * The store's version as its installed binary reports it, e.g. `etcd 3.4.23`: the host's, or
   * through `run` the one the nodes run (the docker runtime's node image). @throws Error (one line).
   */
  version(run?: BinaryRunner): Promise<string>;
  /** The partition of a key (0 where the store does not split its key space). */
  partitionOf(store: string, key: string): number;
  /** How node `nodeId` starts. Pure: the same context gives the same launch. */
  launch(nodeId: string, ctx: LaunchContext): NodeLaunch;
  /** The client adapter for a running cluster (it connects lazily; the first calls may fail or be info). */
  client(cluster: TargetCluster, opts: ClientOptions): TargetClient;
  /** The ownership sampler for a running cluster. */
  sampler(cluster: TargetCluster): OwnershipSampler;
  /** The outcome rules of the store's client for an error a write met (pure; tested on its own). */
  classifyError(error: unknown): ErrorOutcome;
  /**
   * Optional: run once after every node is up and before the harness waits for Healthy (NATS:
   * creates the replicated stream). @throws Error (one line) when the store cannot be set up.
   */
  prepare?(cluster: TargetCluster): Promise<void>;
  /** Optional: how the workload writes this store (a stream: each key written once). */
  readonly workload?: TargetWorkloadShape;
  /** Optional: the whole-store final reader (a stream read back after the heal). */
  finalReader?(cluster: TargetCluster, opts: ClientOptions): FinalReader;
  /** Optional: what a run of this target tests and what it cannot (results.json `scope`, the report). */
  readonly scope?: TargetScope;
  /**
   * Fault kinds this target cannot express, each with a one-line reason (e.g. a single-node store:
   * `partition`); absent: it takes every kind but {@link ZARIS_ONLY_FAULTS}. certify refuses a kind
   * asked for by name, and leaves it out of the default mix with a note ({@link faultRefusals}).
   */
  readonly unsupportedFaults?: Readonly<Partial<Record<FaultKind, string>>>;
}

const MEMBERSHIP_ONLY_ZARIS = 'membership changes (join, leave, rebalance) are only available for TARGET=zaris (they are its admin requests)';

/** The kinds no target but Zaris can express, with why. */
export const ZARIS_ONLY_FAULTS: Readonly<Partial<Record<FaultKind, string>>> = {
  clock: 'clock faults are only available for TARGET=zaris (libfaketime cannot move the clocks of every store, e.g. etcd, a Go binary)',
  join: MEMBERSHIP_ONLY_ZARIS,
  leave: MEMBERSHIP_ONLY_ZARIS,
  rebalance: MEMBERSHIP_ONLY_ZARIS,
};

/** The fault kinds a target refuses, with the one-line reason: {@link ZARIS_ONLY_FAULTS}, then its own. */
export function faultRefusals(t: Pick<Target, 'name' | 'unsupportedFaults'>): Array<[FaultKind, string]> {
  return Object.entries({ ...ZARIS_ONLY_FAULTS, ...(t.unsupportedFaults ?? {}) }).map(([k, why]) => [k as FaultKind, `TARGET=${t.name}: ${why}`]);
}
