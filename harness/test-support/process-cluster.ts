import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { ClusterConfig, StoreConfig, TimingConfig } from '../../nodes/cluster-config.js';
import { DEFAULT_MAX_FRAME_BYTES, DEFAULT_TIMING } from '../../nodes/cluster-config.js';
import { ZarisClient, type ClusterView } from '../../nodes/client/zaris-client.js';
import { ProcessRuntime } from '../runtime/process-runtime.js';

/** The three stores of DESIGN.md §3, with few segments (tests). */
export const TEST_STORES: StoreConfig[] = [
  { name: 'sync3', replicationFactor: 3, ackMode: 'sync', segments: 12 },
  { name: 'async3', replicationFactor: 3, ackMode: 'async', segments: 12 },
  { name: 'rf1', replicationFactor: 1, ackMode: 'sync', segments: 12 },
];

/** Short timers for tests (escalation 2 s instead of 10 s). */
export const TEST_TIMING: TimingConfig = { ...DEFAULT_TIMING, escalationTimeoutMs: 2_000, evictionTimeoutMs: 20_000, recoveryCooldownMs: 500 };

/** A running test cluster: runtime, client, temp run dir. */
export interface TestCluster {
  runtime: ProcessRuntime;
  client: ZarisClient;
  config: ClusterConfig;
  runDir: string;
  close(): Promise<void>;
}

/**
 * Starts a 3-node process cluster in a temp folder (named zaris-certify-*) and connects a client.
 * The caller must `close()` it (afterAll) — that kills the nodes and removes the folder.
 */
export async function startTestCluster(opts: { timing?: Partial<TimingConfig>; partitions?: boolean; stores?: StoreConfig[] } = {}): Promise<TestCluster> {
  const runDir = mkdtempSync(path.join(os.tmpdir(), 'zaris-certify-test-'));
  const runtime = new ProcessRuntime({ runTag: `t${randomBytes(4).toString('hex')}`, partitions: opts.partitions });
  let client: ZarisClient | null = null;
  const close = async (): Promise<void> => {
    client?.close();
    await runtime.close();
    rmSync(runDir, { recursive: true, force: true });
  };
  try {
    const config = await runtime.start({
      runDir,
      nodeIds: ['n1', 'n2', 'n3'],
      template: { cluster: 'test', stores: opts.stores ?? TEST_STORES, timing: { ...TEST_TIMING, ...opts.timing }, maxFrameBytes: DEFAULT_MAX_FRAME_BYTES, multiKeyLongTailRetryThresholdsMs: '' },
    });
    client = new ZarisClient({ seeds: config.nodes.map((n) => ({ host: n.host, port: n.clientPort })), attemptTimeoutMs: 1_500, retry: { maxAttempts: 3, backoffMillis: 100, timeoutMs: 10_000, disableRetries: false } });
    await waitFor(async () => {
      try {
        await client!.connect();
        return true;
      } catch {
        return false;
      }
    }, 10_000, 'the cluster to answer metadata');
    await waitHealthy(client, 15_000);
    return { runtime, client, config, runDir, close };
  } catch (e) {
    await close();
    throw e;
  }
}

/** Polls until `cond` is true. @throws Error naming `what` after timeoutMs. */
export async function waitFor(cond: () => Promise<boolean> | boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await cond()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Every partition Healthy, each owned by its preferred primary (when `preferred`). */
export function allHealthy(v: ClusterView, preferred = true): boolean {
  for (const e of v.runtime.values()) {
    if (e.health !== 'Healthy' || !e.active) return false;
    if (preferred && e.active !== e.replicas[0]) return false;
  }
  return v.runtime.size > 0;
}

/** Waits until every partition is Healthy and back with its preferred primary. */
export async function waitHealthy(client: ZarisClient, timeoutMs: number, preferred = true): Promise<ClusterView> {
  let last: ClusterView | null = null;
  await waitFor(async () => {
    try {
      last = await client.fetchView();
      return allHealthy(last, preferred);
    } catch {
      return false;
    }
  }, timeoutMs, 'every partition to be Healthy');
  return last!;
}
