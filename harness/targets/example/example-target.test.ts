import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { needs } from '../../../test-support/capabilities.js';
import { certify } from '../../certify.js';
import type { CertifyOptions } from '../../certify/options.js';
import { UsageError } from '../../usage-error.js';
import { EtcdTarget } from '../etcd/etcd-target.js';
import { RedisSentinelTarget } from '../redis/redis-target.js';
import { ExampleKvTarget } from './example-target.js';

/**
 * The example target of docs/targets.md, certified for real: its single-node store (a Node
 * process of this repository) on the process runtime, killed, stopped and paused, comes out
 * CERTIFIED by the contract it declares (no loss at all). Needs setpriv (util-linux) only.
 */
const rt = needs('targetRuntime');

describe('the example target', () => {
  const runsDir = mkdtempSync(path.join(os.tmpdir(), 'zaris-certify-example-'));
  afterAll(() => rmSync(runsDir, { recursive: true, force: true }));
  const base: CertifyOptions = {
    target: 'example-kv',
    durationMs: 20_000,
    seed: 7,
    runtime: 'process',
    faults: ['kill', 'stop', 'pause'],
    faultsExplicit: true,
    beyondBudget: false,
    runsDir,
    rate: 500,
    writersPerStore: 8,
    keysPerWriter: 4,
    escalationTimeoutMs: 10_000,
  };

  it('launches its one node with this Node.js, on its own address and data folder', () => {
    const t = new ExampleKvTarget();
    const l = t.launch('n1', { cluster: { nodes: [{ id: 'n1', host: '127.7.7.11' }], ports: t.ports }, dataDir: '/data/n1', runtime: 'process', runTag: 'r1' });
    expect(l.processes).toHaveLength(1);
    expect(l.processes[0]).toMatchObject({ name: 'kv', command: process.execPath, readyPort: 'http' });
    expect(l.processes[0].args.slice(1)).toEqual(['127.7.7.11', '7790', '/data/n1']);
    expect(l.processes[0].args[0]).toMatch(/dist\/harness\/targets\/example\/example-kv-server\.js$/);
  });

  it.skipIf(rt.skip)(rt.title('certify TARGET=example-kv: kills, stops and pauses, nothing acknowledged lost: CERTIFIED by its contract'), async () => {
    const out = await certify(base);
    const r = out.results!;
    expect(r.verdict).toBe('CERTIFIED');
    expect(r.summary).toEqual({ violation: 0, rf1: 0, 'async-ack': 0, 'beyond-budget': 0, info: r.summary.info });
    expect(r.faults.kill + r.faults.stop + r.faults.pause).toBeGreaterThanOrEqual(2);
    expect(r.counts.acknowledged).toBeGreaterThan(1_000);
    expect(r.target?.name).toBe('example-kv');
    expect(r.contract?.origin).toBe('ledger');
    expect(r.contract?.declaration.claims).toEqual([]);
  }, 180_000);

  it('refuses, in one line, a fault kind it cannot express and a runtime it cannot run on', async () => {
    const refused = (o: Partial<CertifyOptions>): Promise<unknown> => certify({ ...base, ...o }).then(() => null, (e: unknown) => e);
    const p = await refused({ faults: ['partition'] });
    expect(p).toBeInstanceOf(UsageError);
    expect((p as Error).message).toBe('FAULTS asks for partition, but TARGET=example-kv: one node: there is nothing to cut it off from');
    const c = await refused({ faults: ['clock'] });
    expect((c as Error).message).toMatch(/^FAULTS asks for clock, but TARGET=example-kv: clock faults are only available for TARGET=zaris/);
    expect((await refused({ asyncLagMaxMs: 500 }) as Error).message).toBe("ASYNC_LAG= is the Zaris store's async lag bound; TARGET=example-kv declares its own contract (docs/targets.md)");
    expect(await new ExampleKvTarget().unavailableReason('docker')).toMatch(/^the example target runs on the process runtime only \(RUNTIME=process\)/);
  });

  it('a target whose binaries are missing says in one line what to install', async () => {
    expect(await new EtcdTarget({ binary: '/nonexistent/etcd' }).unavailableReason('process')).toBe('etcd is not installed: no executable /nonexistent/etcd (apt-get install etcd-server)');
    expect(await new RedisSentinelTarget({ serverBinary: '/nonexistent/redis-server' }).unavailableReason('process')).toBe('redis-server is not installed: no executable /nonexistent/redis-server (apt-get install redis-server)');
    expect(await new RedisSentinelTarget({ sentinelBinary: '/nonexistent/redis-sentinel' }).unavailableReason('process')).toBe('redis-sentinel is not installed: no executable /nonexistent/redis-sentinel (apt-get install redis-sentinel)');
  });
});
