/**
 * Set-up of the Zaris store: its cluster started (spares beside it) and watched through the
 * harness's own client until every partition is Healthy.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { DEFAULT_MAX_FRAME_BYTES, DEFAULT_TIMING, type ClusterConfig } from '../../nodes/cluster-config.js';
import { ZarisClient } from '../../nodes/client/zaris-client.js';
import type { RetryOptions } from '../../nodes/client/retry-policy.js';
import { assignAll } from '../../nodes/partitioning.js';
import type { Ledger } from '../../ledger/ledger-writer.js';
import type { RunClock } from '../clock.js';
import { ClusterWatch } from '../cluster-watch.js';
import type { MetricsEndpoint } from '../metrics-sampler.js';
import { defaultClockModes } from '../runtime/faketime.js';
import type { NodeEndpoint, Runtime } from '../runtime/runtime.js';
import type { RunMeta } from './run-meta.js';
import type { RunPlan } from './plan.js';
import type { RunState } from './run-state.js';
import type { RunSetUp } from './setup.js';
import { waitUntil } from './wait.js';

/**
 * Retry bounds of the harness's OWN client (cluster watch, nemesis probes, final reads): fixed,
 * whatever ZARIS_* variables the user set for the client under test.
 */
const HARNESS_CLIENT_RETRY: RetryOptions = { maxAttempts: 3, backoffMillis: 100, timeoutMs: 15_000, disableRetries: false };

/** A started Zaris cluster, every partition Healthy. */
export interface ZarisCluster {
  /** The cluster as started (also `<runDir>/cluster.json`). */
  config: ClusterConfig;
  /** The voters' client endpoints, where a client starts discovering the cluster. */
  seeds: NodeEndpoint[];
  /** The harness's watch of the cluster (through its own client, `RunState.harnessClient`); not started yet. */
  watch: ClusterWatch;
  /** The nodes' metrics endpoints (sampled into the ledger during the fault phase). */
  metricsEndpoints: MetricsEndpoint[];
}

/**
 * Starts the voters and spares (libfaketime modes when the run plays clock faults), writes
 * cluster.json, registers the topology in the ledger, makes the harness's own client
 * (`state.harnessClient`, closed at the run's end) and waits until the cluster answers and every
 * partition is Healthy; records the event `cluster-up` `{ ms }`.
 * @throws WorldError when a node does not start, or the cluster does not answer within 20 s or
 *   is not Healthy within 30 s (the run ends INCONCLUSIVE).
 */
export async function startZarisCluster(c: { runtime: Runtime; plan: RunPlan; meta: RunMeta; run: RunSetUp; clock: RunClock; log: (line: string) => void; state: RunState }): Promise<ZarisCluster> {
  const { runtime: zr, plan, clock, log } = c;
  const { runDir, runTag } = c.run;
  const ledger: Ledger = c.run.ledger;
  const { nodeIds } = c.meta;
  const { spareIds, selfTestBug, stores, escalationTimeoutMs, evictionTimeoutMs } = plan;
  const started = clock.now();
  const clockModes = c.meta.runKinds.includes('clock') ? defaultClockModes([...nodeIds, ...spareIds]) : undefined;
  const config: ClusterConfig = await zr.start({
    runDir,
    nodeIds: [...nodeIds, ...spareIds],
    spares: spareIds,
    // the seed 004 long-tail retry policy on: the nodes advertise the seed's default table
    template: { ...(selfTestBug ? { selfTestBug } : {}), cluster: `zaris-${runTag}`, stores, timing: { ...DEFAULT_TIMING, escalationTimeoutMs, evictionTimeoutMs }, maxFrameBytes: DEFAULT_MAX_FRAME_BYTES, multiKeyLongTailRetryThresholdsMs: c.meta.runConfig.multiKeyLongTailRetryThresholdsMs },
    ...(clockModes ? { clockModes } : {}),
  });
  if (clockModes) ledger.event(clock.now(), 'clock-modes', clockModes);
  writeFileSync(path.join(runDir, 'cluster.json'), `${JSON.stringify(config, null, 2)}\n`);
  const metricsEndpoints = config.nodes.filter((n) => n.metricsPort).map((n) => ({ node: n.id, host: n.host, port: n.metricsPort! }));
  const partitions = assignAll(config).map((p) => ({ store: p.store, partition: p.partition, replicas: p.replicas }));
  ledger.registerTopology({ nodes: config.nodes, stores: config.stores, partitions });
  const seeds = nodeIds.map((id) => zr.clientEndpoint(id));
  // the harness watches the cluster through a client of its own: the client under test gets no
  // map from the harness, it refreshes only when its own operations tell it to (seed 000)
  const harnessClient = new ZarisClient({ seeds, attemptTimeoutMs: 2_000, refreshWaitBudgetMs: 15_000, retry: HARNESS_CLIENT_RETRY });
  c.state.harnessClient = harnessClient;
  await waitUntil(async () => !!(await harnessClient.connect().then(() => true).catch(() => false)), 20_000, 'the cluster to answer');
  const rf = new Map(config.stores.map((s) => [s.name, s.replicationFactor]));
  const zw = new ClusterWatch(harnessClient, ledger, clock, (s) => rf.get(s) ?? 1, new Map(partitions.map((p) => [`${p.store}/${p.partition}`, p.replicas])));
  await waitUntil(async () => (await zw.unhealthy().catch(() => ['?'])).length === 0, 30_000, 'every partition to be Healthy');
  const upMs = clock.now() - started;
  ledger.event(clock.now(), 'cluster-up', { ms: Math.round(upMs) });
  log(`cluster up in ${(upMs / 1000).toFixed(1)} s${spareIds.length > 0 ? `; spare node${spareIds.length > 1 ? 's' : ''} ${spareIds.join(', ')} outside the member set (membership changes join and drain them)` : ''}`);
  return { config, seeds, watch: zw, metricsEndpoints };
}
