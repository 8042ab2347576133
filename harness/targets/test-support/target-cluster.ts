import { readFileSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { makeTempDir } from '../../sweep.js';
import { TargetProcessRuntime } from '../target-process-runtime.js';
import type { OwnershipSampler, OwnershipView, Target, TargetClient, TargetCluster } from '../target.js';

/** A target cluster started for a test; close() (afterAll) stops every process and removes every folder. */
export interface TestTargetCluster {
  runtime: TargetProcessRuntime;
  cluster: TargetCluster;
  client: TargetClient;
  sampler: OwnershipSampler;
  runDir: string;
  close(): Promise<void>;
}

/** The run clock of the tests: ms since the module loaded. */
export const testNow = (): number => performance.now();

/**
 * Starts `nodeIds` of `target` on the process runtime in a temporary run folder
 * (`zaris-certify-target-test-p<pid>-*`: swept should the test process die), with a client and
 * a sampler. On a start failure everything is stopped and removed before the error is rethrown.
 */
export async function startTargetCluster(target: Target, nodeIds: readonly string[], opts: { partitions?: boolean; operationTimeoutMs?: number } = {}): Promise<TestTargetCluster> {
  const runDir = await makeTempDir('target-test');
  const runtime = new TargetProcessRuntime({ runTag: `t${randomBytes(4).toString('hex')}`, partitions: opts.partitions });
  let client: TargetClient | null = null;
  let sampler: OwnershipSampler | null = null;
  const close = async (): Promise<void> => {
    await client?.close();
    await sampler?.close();
    await runtime.close();
    rmSync(runDir, { recursive: true, force: true });
  };
  try {
    const cluster = await runtime.start({ runDir, target, nodeIds });
    if (target.prepare) await target.prepare(cluster);
    client = target.client(cluster, { now: testNow, operationTimeoutMs: opts.operationTimeoutMs ?? 3_000 });
    sampler = target.sampler(cluster);
    return { runtime, cluster, client, sampler, runDir, close };
  } catch (e) {
    await close();
    throw e;
  }
}

/** Samples until `cond` holds (returns that view) or `timeoutMs` passes (throws, naming `what` and the last view). */
export async function sampleUntil(sampler: OwnershipSampler, cond: (v: OwnershipView) => boolean, timeoutMs: number, what: string): Promise<OwnershipView> {
  const deadline = Date.now() + timeoutMs;
  let last: OwnershipView | null = null;
  for (;;) {
    last = await sampler.sample();
    if (cond(last)) return last;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last view ${JSON.stringify(last.rows[0])}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Is a process with this pid alive? A zombie (dead, waiting for its new parent to reap it) is not. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}
