/**
 * A certification run's store side for a target other than Zaris (issue 15, `make certify
 * TARGET=etcd|redis-sentinel`): its cluster started on a {@link TargetRuntime}, the ledger's
 * topology from its contract, the harness's own sampler ({@link TargetWatch}: samples, the
 * nemesis's probe, failovers), the workload writing and reading through the target's client
 * adapter ({@link TargetDriver}), and the final reads through a second adapter of the harness's
 * own. harness/certify.ts runs the rest (schedule, nemesis, heal, seal, verify) as for Zaris.
 */
import type { Ledger } from '../../ledger/ledger-writer.js';
import type { RunClock } from '../clock.js';
import { finalReadAll } from '../final-reads.js';
import { Workload } from '../workload.js';
import { WorldError } from '../runtime/runtime-errors.js';
import { TargetDriver } from './target-driver.js';
import type { FinalReader, Target, TargetClient, TargetCluster, TargetRuntime } from './target.js';
import { TargetWatch } from './target-watch.js';
import { describeReadback, FINAL_READBACK_EVENT } from './final-readback.js';

/** The bound on one operation of the workload's adapter, ms (etcd3's and ioredis's are per call). */
export const TARGET_OPERATION_TIMEOUT_MS = 5_000;

/** What {@link startTargetSession} needs. */
export interface TargetSessionOptions {
  target: Target;
  runtime: TargetRuntime;
  runDir: string;
  ledger: Ledger;
  clock: RunClock;
  writersPerStore: number;
  keysPerWriter: number;
  /** writes/s over all stores, 0 = unthrottled. */
  rate: number;
  random: () => number;
  /** The workload reads nothing (benchmark only). */
  readsOff?: boolean;
  log: (line: string) => void;
  /** Bound on the wait for every partition to be Healthy before the fault phase, ms (default 60,000). */
  healthyWaitMs?: number;
}

/** A running target under test. */
export interface TargetSession {
  cluster: TargetCluster;
  watch: TargetWatch;
  workload: Workload;
  /** What the run meta records as the workload client's options. */
  clientOptions: Record<string, unknown>;
  /** The end phase's final read of every key (the harness's own adapter); returns the keys read. */
  finalReads(): Promise<number>;
  /** Closes the adapters and the sampler (not the runtime). Safe to call twice. */
  close(): Promise<void>;
}

async function waitUntil(cond: () => Promise<boolean>, timeoutMs: number, what: string, last: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    // the target's nodes did not come up as they should: the world's failure (the run ends INCONCLUSIVE)
    if (Date.now() > deadline) throw new WorldError(`cluster start: timed out after ${timeoutMs / 1000} s waiting for ${what}${last() ? ` (${last()})` : ''}`, { source: 'target', op: 'cluster start', attempts: 1, transient: false });
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * Starts the target's cluster and everything the run needs around it, and waits (bounded) for
 * every partition to be Healthy with every node in sync.
 * @throws WorldError (one line, runtime/runtime-errors.ts) when the cluster does not start or never
 *   becomes Healthy: the run ends INCONCLUSIVE; whatever was made is closed first (the runtime is
 *   the caller's to close).
 */
export async function startTargetSession(o: TargetSessionOptions): Promise<TargetSession> {
  const { target, ledger, clock } = o;
  const t0 = clock.now();
  const cluster = await o.runtime.start({ runDir: o.runDir, target, nodeIds: target.nodeIds });
  // the store's own setup (NATS: its stream), before the harness waits for Healthy
  if (target.prepare) await target.prepare(cluster);
  ledger.registerTopology({
    nodes: cluster.nodes.map((n) => ({ id: n.id, host: n.host, clientPort: Object.values(cluster.ports)[0] ?? 0, clusterPort: Object.values(cluster.ports)[1] ?? 0, preferredPrimary: false })),
    stores: target.contract.stores.map((s) => ({ name: s.name, replicationFactor: s.replicationFactor, ackMode: s.ackMode, segments: s.segments })),
    partitions: target.contract.stores.flatMap((s) => Array.from({ length: s.partitions }, (_, p) => ({ store: s.name, partition: p, replicas: cluster.nodes.map((n) => n.id) }))),
  });
  const sampler = target.sampler(cluster);
  let client: TargetClient | null = null;
  let judge: TargetClient | null = null;
  const close = async (): Promise<void> => {
    await Promise.all([client?.close(), judge?.close(), sampler.close()].map((p) => p?.catch(() => undefined)));
    client = null;
    judge = null;
  };
  try {
    const watch = new TargetWatch(sampler, ledger, clock, target.contract, cluster.nodes.map((n) => n.id));
    let why: string[] = [];
    await waitUntil(
      async () => {
        why = await watch.unhealthy().catch((e: unknown) => [String((e as Error).message)]);
        return why.length === 0;
      },
      o.healthyWaitMs ?? 60_000,
      'every partition to be Healthy with every node in sync',
      () => why.join(', '),
    );
    const upMs = clock.now() - t0;
    ledger.event(clock.now(), 'cluster-up', { ms: Math.round(upMs) });
    o.log(`cluster up in ${(upMs / 1000).toFixed(1)} s`);
    // the client under test: the store's own client library through the adapter, nothing of the harness's
    client = target.client(cluster, { now: () => clock.now(), operationTimeoutMs: TARGET_OPERATION_TIMEOUT_MS });
    // the judge's client: final reads only
    judge = target.client(cluster, { now: () => clock.now(), operationTimeoutMs: TARGET_OPERATION_TIMEOUT_MS });
    const workload = new Workload(new TargetDriver(client, target.clientLibrary), ledger, clock, {
      stores: target.contract.stores.map((s) => ({ name: s.name, segments: s.segments, partitions: s.partitions, replicationFactor: s.replicationFactor, ackMode: s.ackMode, partitionOf: (key: string) => target.partitionOf(s.name, key) })),
      writersPerStore: o.writersPerStore,
      keysPerWriter: o.keysPerWriter,
      ratePerSec: o.rate,
      random: o.random,
      ...(target.workload?.writesPerKey ? { writesPerKey: target.workload.writesPerKey } : {}),
      ...(target.workload?.readFraction !== undefined ? { readFraction: target.workload.readFraction } : {}),
      ...(target.workload?.batchReadFraction !== undefined ? { batchReadFraction: target.workload.batchReadFraction } : {}),
      ...(o.readsOff ? { readFraction: 0, batchReadFraction: 0 } : {}),
    });
    workload.onAck(watch.onAck);
    const j = judge;
    return {
      cluster,
      watch,
      workload,
      clientOptions: { library: target.clientLibrary, operationTimeoutMs: TARGET_OPERATION_TIMEOUT_MS, ...(target.options ?? {}) },
      finalReads: () => (target.finalReader ? finalReadsWhole(target.finalReader(cluster, { now: () => clock.now(), operationTimeoutMs: TARGET_OPERATION_TIMEOUT_MS }), ledger, clock, o.log) : finalReadsThrough(j, ledger, clock)),
      close,
    };
  } catch (e) {
    await close();
    throw e;
  }
}

/**
 * The end phase's final reads through a target's client (harness/final-reads.ts): an `ok` answer
 * for the key asked is its value (null: absent); any other answer is read again next round.
 * Returns the number of keys.
 */
export function finalReadsThrough(client: TargetClient, ledger: Ledger, clock: RunClock): Promise<number> {
  return finalReadAll(ledger, clock, async (store, keys) => {
    const got = await client.readMany(store, keys);
    return keys.map((key, i) => {
      const r = got[i];
      return r && r.key === key && r.outcome === 'ok' ? r.value : undefined;
    });
  }, 2_000);
}

/**
 * The end phase's final reads through a target's {@link FinalReader} (a stream target): one read
 * of the whole store, recorded as the ledger event {@link FINAL_READBACK_EVENT}, then every key of
 * the ledger answered from it (harness/final-reads.ts: a key the read could not tell stays
 * unreadable, the verifier's unverified). Closes the reader. Returns the number of keys.
 */
export async function finalReadsWhole(reader: FinalReader, ledger: Pick<Ledger, 'keysPage' | 'finalRead' | 'flush' | 'event'>, clock: Pick<RunClock, 'now'>, log: (line: string) => void = () => undefined): Promise<number> {
  try {
    const r = await reader.readAll();
    ledger.event(clock.now(), FINAL_READBACK_EVENT, r);
    log(describeReadback(r));
    return await finalReadAll(ledger, clock, async (store, keys) => keys.map((k) => reader.valueOf(store, k)), 2_000, r.complete ? 0 : 1_000);
  } finally {
    await reader.close().catch(() => undefined);
  }
}
