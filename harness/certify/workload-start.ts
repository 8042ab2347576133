/**
 * Workload of the Zaris store: seed 004's retry policy set, the client under test made (library
 * defaults and the user's ZARIS_* variables, nothing of the harness's) and the workload built on it.
 */
import { ZarisClient } from '../../nodes/client/zaris-client.js';
import { META } from '../../ledger/schema.js';
import type { RunClock } from '../clock.js';
import { clientOptionsRecord, type ClientOptionsRecord } from '../client-options.js';
import type { MetricsEndpoint } from '../metrics-sampler.js';
import { createPrng } from '../nemesis/prng.js';
import { POLICY_STORE, POLICY_TABLES, setStorePolicy, type SetPolicyRecord } from '../policy-change.js';
import { zarisContract } from '../targets/zaris-contract.js';
import { Workload, type AckProber, type WorkloadStore } from '../workload.js';
import type { CertifyOptions } from './options.js';
import type { RunPlan } from './plan.js';
import type { RunMeta } from './run-meta.js';
import type { RunState, RunWatch } from './run-state.js';
import type { RunSetUp } from './setup.js';
import { sleep, waitUntil } from './wait.js';
import type { ZarisCluster } from './zaris-cluster.js';

/**
 * Seed 004 in certification (the Zaris store only): the multi-key retry policy of one store, set
 * from the start and changed halfway through the fault phase.
 */
export interface RunPolicy {
  /** Whether the run sets it (not in a scenario, which plays its own script; not for a target). */
  on: boolean;
  /** Every set-policy request made, in order (the heal phase tells whether the client followed). */
  sets: SetPolicyRecord[];
  /** Sets the policy's table (a line says whether the store accepted it). */
  set: (table: string) => Promise<void>;
}

/** The policy of a run that sets none. */
export function noPolicy(): RunPolicy {
  return { on: false, sets: [], set: async () => undefined };
}

/** The store side the fault phase runs on, whatever the target. */
export interface RunStore {
  /** The harness's watch of the cluster (not started yet). */
  watch: RunWatch;
  /** The workload (not started yet). */
  workload: Workload;
  policy: RunPolicy;
  /** The nodes' metrics endpoints (a target's nodes have none the harness reads). */
  metricsEndpoints: MetricsEndpoint[];
}

/** One line for the console: the workload client's bounds and the variables that set them. */
function describeClientOptions(c: ClientOptionsRecord): string {
  const env = Object.entries(c.env).map(([k, v]) => `${k}=${v}`);
  return `${c.disableRetries ? '1 attempt (retries disabled)' : `${c.maxAttempts} attempts`}, backoff ${c.backoffMillis} ms, deadline ${c.timeoutMs === null ? 'none' : `${c.timeoutMs / 1000} s`}, map refresh wait ${c.mapRefreshWaitMs / 1000} s (${env.length > 0 ? `set by ${env.join(' ')}` : 'library defaults'})`;
}

/**
 * On a started Zaris cluster: sets seed 004's first policy table (unless a scenario runs), makes
 * the client under test (`state.client`) and waits until it discovers the cluster, writes the run
 * config again with its options and the declared lease and the run meta `contract`, then builds
 * the workload (`state.workload`, its sync-ack probes through the harness's client) and hands the
 * watch to the run (`state.watch`).
 * @throws WorldError when the client under test does not discover the cluster within 20 s.
 */
export async function startZarisWorkload(c: { o: CertifyOptions; plan: RunPlan; meta: RunMeta; run: RunSetUp; clock: RunClock; log: (line: string) => void; state: RunState; cluster: ZarisCluster }): Promise<RunStore> {
  const { o, plan, clock, log, state } = c;
  const { ledger, seed } = c.run;
  const { runConfig } = c.meta;
  const { config, seeds, watch: zw } = c.cluster;
  const harnessClient = state.harnessClient!;
  const { stores, asyncLagMaxMs } = plan;

  // seed 004 in certification: a non-empty multi-key retry policy on one store from the start (a
  // scenario plays its own script: none there); it changes halfway through the fault phase
  const policySets: SetPolicyRecord[] = [];
  const policy: RunPolicy = {
    on: !plan.scenario && config.stores.some((s) => s.name === POLICY_STORE),
    sets: policySets,
    set: async (table: string): Promise<void> => {
      const r = await setStorePolicy(POLICY_STORE, table, { admin: (cmd) => harnessClient.admin(cmd), now: () => clock.now(), sleep: (ms) => sleep(ms), ledger });
      policySets.push(r);
      log(r.ok ? `seed 004: ${POLICY_STORE} multi-key retry policy set to "${table}" (${r.message})` : `seed 004: set-policy ${POLICY_STORE} "${table}" not accepted after ${r.attempts} attempts: ${r.message}`);
    },
  };
  if (policy.on) await policy.set(POLICY_TABLES[0]);

  // the client under test: the library's defaults and the user's ZARIS_* variables, nothing of the harness's
  const client = new ZarisClient({ seeds });
  state.client = client;
  await waitUntil(async () => !!(await client.connect().then(() => true).catch(() => false)), 20_000, 'the workload client to discover the cluster');
  runConfig.clientOptions = clientOptionsRecord(client.options);
  runConfig.leaseMs = zw.leaseMs;
  ledger.setMeta(META.runConfig, JSON.stringify(runConfig));
  ledger.setMeta(META.contract, JSON.stringify(zarisContract({ stores, asyncLagMs: asyncLagMaxMs, asyncLagFromOption: o.asyncLagMaxMs !== undefined, leaseMs: zw.leaseMs })));
  log(`workload client: ${describeClientOptions(clientOptionsRecord(client.options))}; owner lease declared by the store: ${runConfig.leaseMs ?? '?'} ms; async lag bound ${asyncLagMaxMs} ms`);

  const view = harnessClient.clusterView;
  const workloadStores: WorkloadStore[] = config.stores.map((s) => ({ name: s.name, segments: s.segments, partitions: view.stores.get(s.name)!.partitions, replicationFactor: s.replicationFactor, ackMode: s.ackMode }));
  // sync-ack probes read the other in-sync members of the ack's epoch through the harness's client
  const prober: AckProber = { inSyncAt: (store, partition, epoch) => zw.inSyncAt(store, partition, epoch), getLocal: (node, store, key) => harnessClient.getLocal(node, store, key) };
  const rng = createPrng(seed ^ 0x5eed);
  const workload = new Workload(client, ledger, clock, { stores: workloadStores, writersPerStore: o.writersPerStore, keysPerWriter: o.keysPerWriter, ratePerSec: o.rate, random: () => rng.next(), ...(o.readsOff ? { readFraction: 0, batchReadFraction: 0 } : { prober }) });
  state.workload = workload;
  workload.onAck(zw.onAck);
  state.watch = zw;
  return { watch: zw, workload, policy, metricsEndpoints: c.cluster.metricsEndpoints };
}
