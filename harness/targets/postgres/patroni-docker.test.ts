/**
 * `make certify TARGET=postgres-patroni RUNTIME=docker`: PostgreSQL 15 with Patroni 3 and etcd in
 * containers of the offline node image (which carries postgresql-15 and patroni), Patroni running
 * as the image's postgres user (node-launcher.ts gives it the node's data folder), the nodes on the
 * run's network. synchronous_mode_strict with kills of nodes: CERTIFIED, no acknowledged commit
 * lost, and no container, network or data folder left. Needs a Docker engine and the node image's
 * base; without them NOT run, and says why.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { needs } from '../../../test-support/capabilities.js';
import { certify } from '../../certify.js';
import { leftovers, runTagOf } from '../../test-support/run-leftovers.js';

const engine = needs('docker');

describe.skipIf(engine.skip)(engine.title('postgres-patroni on the docker runtime'), () => {
  const runsDir = mkdtempSync(path.join(os.tmpdir(), 'zaris-certify-patroni-docker-'));
  afterAll(() => rmSync(runsDir, { recursive: true, force: true }));

  it('synchronous_mode_strict under kills: CERTIFIED with acknowledged commits, no violation, nothing left behind', async () => {
    const lines: string[] = [];
    const out = await certify({
      target: 'postgres-patroni',
      patroniSync: 'strict',
      durationMs: 60_000,
      seed: 5,
      runtime: 'docker',
      faults: ['kill'],
      faultsExplicit: true,
      beyondBudget: false,
      runsDir,
      rate: 200,
      writersPerStore: 2,
      keysPerWriter: 8,
      escalationTimeoutMs: 10_000,
      log: (l) => lines.push(l),
    });
    const r = out.results!;
    expect(out.exitCode, `${lines.join('\n')}\n${r?.verdict} ${JSON.stringify(r?.summary)} ${r?.inconclusiveReason ?? ''}`).toBe(0);
    expect(r.verdict).toBe('CERTIFIED');
    expect(r.runtime).toBe('docker');
    expect(r.target?.version).toMatch(/^postgresql 15\.\d+ \(patroni 3\.\d+\.\d+\)$/);
    expect(r.counts.acknowledged).toBeGreaterThan(100);
    expect(r.faults.kill).toBeGreaterThan(0);
    expect(r.summary.violation).toBe(0);
    console.log(`postgres-patroni on docker (strict, kill, 60 s, seed 5): ${r.counts.acknowledged} acked, faults ${JSON.stringify(r.faults)}, failovers ${JSON.stringify(r.failover)}, ${JSON.stringify(r.summary)}`);
    expect(lines.join('\n')).toMatch(/nodes run as containers/);
    expect(await leftovers({ runTag: runTagOf(out.runDir), harnessPid: process.pid, docker: true })).toEqual({ processes: [], chains: [], containers: [], networks: [] });
    const dataDirs = execFileSync('sh', ['-c', `ls -d ${os.tmpdir()}/zaris-certify-target-data-p${process.pid}-* 2>/dev/null || true`], { encoding: 'utf8' }).trim();
    expect(dataDirs).toBe('');
  }, 600_000);
});
