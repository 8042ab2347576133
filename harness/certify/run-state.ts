/**
 * What a run holds while it runs, filled in by its phases: what is closed at its end however it
 * ends ({@link releaseRun}), its status and its acknowledged rate.
 */
import type { ZarisClient } from '../../nodes/client/zaris-client.js';
import type { Ledger } from '../../ledger/ledger-writer.js';
import type { ClusterWatch } from '../cluster-watch.js';
import type { MetricsSampler } from '../metrics-sampler.js';
import type { ClusterProbe } from '../nemesis/nemesis-types.js';
import type { RunMonitor } from '../run-monitor.js';
import type { TargetSession } from '../targets/target-session.js';
import type { Workload } from '../workload.js';

/**
 * What the run needs of a cluster watch, whatever the target (cluster-watch.ts for Zaris,
 * targets/target-watch.ts for the others): the nemesis's probe, the periodic samples into the
 * ledger, crash starts and failover measurements.
 */
export type RunWatch = ClusterProbe & Pick<ClusterWatch, 'start' | 'stop' | 'crashStarting' | 'failoverMs'> & { sample(): Promise<unknown> };

/** A run's parts as its phases make them (null until made), its status and its rate. */
export interface RunState {
  /** The client under test: the workload's, routing and refreshing only by seed 000's rules. */
  client: ZarisClient | null;
  /** The harness's own client: runtime-map samples, nemesis probes, final reads. */
  harnessClient: ZarisClient | null;
  /** The store side of a target other than Zaris (its adapters, sampler, workload). */
  session: TargetSession | null;
  watch: RunWatch | null;
  workload: Workload | null;
  monitor: RunMonitor | null;
  metrics: MetricsSampler | null;
  /** `interrupted` once SIGINT ended the fault phase (the run is then INCONCLUSIVE). */
  status: 'complete' | 'interrupted';
  /** Acknowledged writes/s over the fault phase (for the benchmark). */
  ackedPerSec: number;
  /** Aborted when the run ends however it ends: a pending mid-run policy change is dropped. */
  runOver: AbortController;
}

/** The state of a run that has made nothing yet. */
export function newRunState(): RunState {
  return { client: null, harnessClient: null, session: null, watch: null, workload: null, monitor: null, metrics: null, status: 'complete', ackedPerSec: 0, runOver: new AbortController() };
}

/**
 * The end of every run, however it ended: a pending policy change dropped, then the monitor,
 * samplers, workload, watch, clients, target session and runtime stopped or closed (the
 * workload's and the runtime's errors ignored), and the ledger closed last.
 */
export async function releaseRun(s: RunState, runtime: { close(): Promise<void> }, ledger: Pick<Ledger, 'close'>): Promise<void> {
  s.runOver.abort();
  s.monitor?.stop();
  await s.metrics?.stop();
  s.workload && (await s.workload.stop().catch(() => undefined));
  s.watch?.stop();
  s.client?.close();
  s.harnessClient?.close();
  await s.session?.close();
  await runtime.close().catch(() => undefined);
  ledger.close();
}
