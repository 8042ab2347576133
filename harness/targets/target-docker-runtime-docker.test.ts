/**
 * Container test of the docker runtime for targets: one etcd member in a container of the offline
 * node image (which carries Debian's etcd-server), started through node-launcher.ts; the version is
 * asked of the image's binary; a write acknowledged before a SIGKILL of the container is read back
 * after the restart (the data folder is a host folder mounted in, kept across kill and restart);
 * a paused member leaves a write indeterminate; close removes the containers and the data folder.
 * Needs a Docker engine and the node image's base (present or makeable); without them NOT run.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { needs } from '../../test-support/capabilities.js';
import { EtcdTarget } from './etcd/etcd-target.js';
import type { TargetClient, TargetCluster } from './target.js';
import { testNow } from './test-support/target-cluster.js';
import { CONTAINER_DATA_DIR, TargetDockerRuntime } from './target-docker-runtime.js';

const containers = needs('docker');

describe.skipIf(containers.skip)(containers.title('target runtime in containers (etcd, one member)'), () => {
  const target = new EtcdTarget();
  const runTag = `t${randomBytes(4).toString('hex')}`;
  let runtime: TargetDockerRuntime;
  let runDir: string;
  let cluster: TargetCluster;
  let client: TargetClient;
  let dataDir: string;

  beforeAll(async () => {
    runDir = mkdtempSync(join(tmpdir(), 'zaris-certify-target-docker-test-'));
    runtime = new TargetDockerRuntime({ readyTimeoutMs: 60_000, stopGraceMs: 1_000, runTag });
    cluster = await runtime.start({ runDir, target, nodeIds: ['n1'] });
    dataDir = runtime.dataDirOf('n1');
    client = target.client(cluster, { now: testNow, operationTimeoutMs: 3_000 });
  }, 180_000);

  afterAll(async () => {
    await client?.close();
    await runtime?.close();
    if (runDir) rmSync(runDir, { recursive: true, force: true });
    // nothing left: the data folder and every container of the run
    if (dataDir) expect(existsSync(dataDir)).toBe(false);
    const left = execFileSync('docker', ['ps', '-aq', '--filter', `label=zaris-certify.run=${runTag}`], { encoding: 'utf8' }).trim();
    expect(left).toBe('');
  }, 60_000);

  /** A write, retried while the restarted member is not yet reachable (only definite failures). */
  const writeWhenUp = async (key: string, valueId: string): Promise<string> => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const w = await client.write({ store: target.store, key, op: 'put', valueId });
      if (w.outcome !== 'fail' || Date.now() > deadline) return w.outcome;
      await new Promise((r) => setTimeout(r, 200));
    }
  };

  it('the member runs in the node image, its version asked of the image, its data in the mounted host folder', async () => {
    expect(cluster.nodes).toHaveLength(1);
    expect(cluster.nodes[0].host).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    expect(cluster.ports).toEqual({ client: 2379, peer: 2380 });
    expect(await target.version(runtime.binaryRunner)).toMatch(/^etcd 3\.4\.\d+$/);
    expect(runtime.launchSpec('n1')).toMatchObject({ node: 'n1', cwd: CONTAINER_DATA_DIR, processes: [{ name: 'etcd', command: '/usr/bin/etcd', port: 2379 }] });
    expect(await writeWhenUp('a', 'w1.1')).toBe('ok');
    // etcd wrote its WAL into the data folder on the host
    expect(readdirSync(join(dataDir, 'etcd'))).toContain('member');
  }, 60_000);

  it('a write acknowledged before a SIGKILL of the container is read back after the restart', async () => {
    expect(await writeWhenUp('b', 'w2.1')).toBe('ok');
    await runtime.kill('n1');
    expect(runtime.isUp('n1')).toBe(false);
    const down = await client.write({ store: target.store, key: 'c', op: 'put', valueId: 'w3.1' });
    expect(down.outcome).not.toBe('ok');
    await runtime.restart('n1');
    expect(runtime.isUp('n1')).toBe(true);
    expect(await writeWhenUp('c', 'w3.2')).toBe('ok');
    const reads = await client.readMany(target.store, ['a', 'b', 'c']);
    expect(reads.map((r) => [r.outcome, r.value])).toEqual([
      ['ok', 'w1.1'],
      ['ok', 'w2.1'],
      ['ok', 'w3.2'],
    ]);
  }, 120_000);

  it('a heal or partition arriving while a kill is under way skips the dying node (no exec into a stopped container); the node restarts', async () => {
    // a 90 s certify run on docker died of an unhandled 409 ("container stopped/paused") when a
    // partition was installed 250 ms into the kill of the node it touched
    const killing = runtime.kill('n1');
    expect(runtime.isUp('n1')).toBe(false);
    await Promise.all([killing, runtime.heal(), runtime.partition({ n1: [] })]);
    await runtime.heal();
    await runtime.restart('n1');
    expect(await writeWhenUp('e', 'w5.1')).toBe('ok');
  }, 120_000);

  it('a paused member leaves a write indeterminate (info), and answers again once resumed', async () => {
    await runtime.pause('n1');
    const w = await client.write({ store: target.store, key: 'd', op: 'put', valueId: 'w4.1' });
    expect(w.outcome).toBe('info');
    await runtime.resume('n1');
    expect(await writeWhenUp('d', 'w4.2')).toBe('ok');
    expect((await client.read(target.store, 'd')).value).toBe('w4.2');
  }, 60_000);
});
