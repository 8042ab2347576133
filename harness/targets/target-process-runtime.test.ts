/**
 * The process runtime for targets, with stand-in node processes (two per node): addresses, data
 * folders across restarts, kill / stop / pause, nothing left behind, and (as root) the nat rule
 * that makes a node's outgoing connections leave from its own address, so grudges cut them. The
 * crash test kills a harness with SIGKILL: its nodes die with it (setpriv --pdeathsig) and the
 * sweeps remove its folders and chains.
 */
import { existsSync, readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { distPath } from '../dist-path.js';
import { isolate } from '../nemesis/grudge.js';
import { sweepIptables } from '../runtime/iptables.js';
import { needs } from '../../test-support/capabilities.js';
import { makeTempDir, sweepLeftovers, tempDirSweeper } from '../sweep.js';
import { nodeGid, NODE_GID_BASE, snatRule, sweepSourceNat } from './loopback-snat.js';
import { TargetProcessRuntime, waitStopped } from './target-process-runtime.js';
import { endpointOf } from './target.js';
import { alive } from './test-support/target-cluster.js';
import { ask, StandInTarget } from './test-support/stand-in-target.js';
import { fileURLToPath } from 'node:url';
import { rmSync } from 'node:fs';
import path from 'node:path';

// setpriv (util-linux) starts the nodes; their addresses and grudges need iptables: without them NOT run
const runtime = needs('targetRuntime');
const net = needs('iptables');

describe('waitStopped', () => {
  it('returns once the kernel shows the process stopped, at once for a gone pid', async () => {
    const child = execa('sleep', ['30']);
    child.catch(() => {});
    const pid = child.pid!;
    const state = (): string => {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    };
    try {
      child.kill('SIGSTOP');
      await waitStopped(pid, 5_000);
      expect(state()).toBe('T');
      child.kill('SIGCONT');
    } finally {
      child.kill('SIGKILL');
    }
    const t0 = Date.now();
    await waitStopped(2 ** 22 + 12_345, 5_000);
    expect(Date.now() - t0).toBeLessThan(1_000);
  });
});

describe('node group ids and nat rules', () => {
  it('a node group id encodes its loopback address; other addresses are refused', () => {
    expect(nodeGid('127.1.2.11')).toBe(NODE_GID_BASE + 65536 + 2 * 256 + 11);
    expect(nodeGid('127.250.250.13')).toBe(NODE_GID_BASE + 250 * 65536 + 250 * 256 + 13);
    expect(nodeGid('127.250.250.13')).toBeLessThan(2 ** 31);
    expect(() => nodeGid('10.0.0.1')).toThrow(RangeError);
    expect(() => nodeGid('127.0.0.256')).toThrow(RangeError);
    expect(snatRule(7, '127.1.2.11')).toEqual(['-o', 'lo', '-m', 'owner', '--gid-owner', '7', '-j', 'SNAT', '--to-source', '127.1.2.11']);
  });
});

describe.skipIf(runtime.skip)(runtime.title('target process runtime (stand-in nodes)'), () => {
  const target = new StandInTarget();
  let rt: TargetProcessRuntime;
  let runDir: string;
  const at = (node: string, port: 'main' | 'side'): { host: string; port: number } => endpointOf(rt.cluster, node, port);

  beforeAll(async () => {
    runDir = await makeTempDir('target-test');
    rt = new TargetProcessRuntime({ runTag: `t${randomBytes(4).toString('hex')}`, partitions: !net.skip });
    await rt.start({ runDir, target, nodeIds: target.nodeIds });
  });
  afterAll(async () => {
    if (!rt) return;
    const pids = target.nodeIds.flatMap((n) => rt.pidsOf(n));
    const dataRoot = path.dirname(rt.dataDirOf('n1'));
    const chains = rt.iptablesChains();
    await rt.close();
    rmSync(runDir, { recursive: true, force: true });
    for (const p of pids) expect(alive(p)).toBe(false);
    expect(existsSync(dataRoot)).toBe(false);
    if (chains.nat) expect((await execa('iptables', ['-w', '10', '-t', 'nat', '-S'])).stdout).not.toContain(chains.nat);
    if (chains.filter) expect((await execa('iptables', ['-w', '10', '-S'])).stdout).not.toContain(chains.filter);
  });

  it('every node has its own loopback address, both processes listening, logs and a config file written once', async () => {
    const hosts = rt.cluster.nodes.map((n) => n.host);
    expect(new Set(hosts).size).toBe(3);
    for (const h of hosts) expect(h).toMatch(/^127\.\d+\.\d+\.1[123]$/);
    for (const n of target.nodeIds) {
      expect(rt.isUp(n)).toBe(true);
      expect(rt.pidsOf(n)).toHaveLength(2);
      for (const p of ['main', 'side'] as const) expect(await ask(at(n, p).host, at(n, p).port, 'who')).toMatch(/ 1 \d+$/);
      expect(readFileSync(path.join(rt.dataDirOf(n), 'config.txt'), 'utf8')).toBe(`${n} first config\n`);
      expect(existsSync(path.join(runDir, 'nodes', `${n}.log`))).toBe(true);
      expect(existsSync(path.join(runDir, 'nodes', `${n}.side.log`))).toBe(true);
    }
    // node processes run under the node's own group (the nat rule matches on it)
    const [pid] = rt.pidsOf('n1');
    const gid = /^Gid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1];
    expect(Number(gid)).toBe(nodeGid(at('n1', 'main').host));
  });

  it('kill takes every process of the node; a restart keeps its data folder and its rewritten config', async () => {
    const before = rt.pidsOf('n2');
    await rt.kill('n2');
    expect(rt.isUp('n2')).toBe(false);
    for (const p of before) expect(alive(p)).toBe(false);
    expect(await ask(at('n2', 'main').host, at('n2', 'main').port, 'who')).toBe('refused');
    await expect(rt.pause('n2')).rejects.toThrow(/not running/);
    // the store rewrote its config meanwhile; a restart must not put the first one back
    const { writeFileSync } = await import('node:fs');
    writeFileSync(path.join(rt.dataDirOf('n2'), 'config.txt'), 'rewritten\n');
    await rt.restart('n2');
    expect(await ask(at('n2', 'main').host, at('n2', 'main').port, 'who')).toMatch(/ 2 \d+$/);
    expect(readFileSync(path.join(rt.dataDirOf('n2'), 'config.txt'), 'utf8')).toBe('rewritten\n');
    await expect(rt.restart('n2')).rejects.toThrow(/running/);
  });

  it('pause freezes every process of the node; resume thaws them; stop ends them gracefully', async () => {
    await rt.pause('n3');
    expect(await ask(at('n3', 'side').host, at('n3', 'side').port, 'who', 500)).toBe('timeout');
    expect(rt.isUp('n3')).toBe(true);
    await rt.resume('n3');
    expect(await ask(at('n3', 'side').host, at('n3', 'side').port, 'who')).toMatch(/ 1 \d+$/);
    await rt.pause('n3');
    await rt.stop('n3');
    expect(rt.isUp('n3')).toBe(false);
    await rt.restart('n3');
    expect(await ask(at('n3', 'main').host, at('n3', 'main').port, 'who')).toMatch(/ 2 \d+$/);
  });

  it.skipIf(net.skip)(net.title('outgoing connections leave from the node address, and a grudge cuts exactly the isolated node off'), async () => {
    const n1 = at('n1', 'main');
    const n2 = at('n2', 'main');
    const n3 = at('n3', 'main');
    // n1 dials n2: n2 sees n1's address (Linux alone would give 127.0.0.1)
    expect(await ask(n1.host, n1.port, `dial ${n2.host} ${n2.port}`)).toMatch(new RegExp(`^${n1.host.replace(/\./g, '\\.')} `));
    // the harness's own connections are untouched
    expect(await ask(n2.host, n2.port, 'who')).toMatch(/^127\.0\.0\.1 /);
    await rt.partition(isolate(target.nodeIds, 'n1').grudge);
    try {
      expect(await ask(n1.host, n1.port, `dial ${n2.host} ${n2.port}`)).toBe('timeout');
      expect(await ask(n2.host, n2.port, `dial ${n1.host} ${n1.port}`)).toBe('timeout');
      expect(await ask(n3.host, n3.port, `dial ${n2.host} ${n2.port}`)).toMatch(new RegExp(`^${n3.host.replace(/\./g, '\\.')} `));
      // the harness still reaches the isolated node (clients are on every side)
      expect(await ask(n1.host, n1.port, 'who')).toMatch(/^127\.0\.0\.1 /);
    } finally {
      await rt.heal();
    }
    expect(await ask(n1.host, n1.port, `dial ${n2.host} ${n2.port}`)).toMatch(new RegExp(`^${n1.host.replace(/\./g, '\\.')} `));
  });
});

describe.skipIf(runtime.skip)(runtime.title('target runtime: a harness killed with SIGKILL'), () => {
  it('its node processes die with it; the sweeps remove its data folders and chains', async () => {
    const runDir = await makeTempDir('target-test');
    const script = fileURLToPath(new URL('./test-support/crashing-harness.mjs', import.meta.url));
    const child = execa(process.execPath, [script, distPath(import.meta.url, 'harness/targets/target-process-runtime.js'), runDir, !net.skip ? '1' : '0'], { reject: false, stdin: 'ignore' });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout!.on('data', (d: Buffer) => {
          out += d;
          if (out.includes('\n')) resolve(out.split('\n')[0]);
        });
        void child.then((r) => reject(new Error(`harness exited: ${String(r.stderr).split('\n')[0]}`)));
      });
      const made = JSON.parse(line) as { pids: number[]; dataDir: string; chains: { nat: string | null; filter: string | null } };
      expect(made.pids).toHaveLength(4);
      for (const p of made.pids) expect(alive(p)).toBe(true);
      child.kill('SIGKILL');
      await child;
      // within a second every node process is gone (parent-death signal)
      const deadline = Date.now() + 1_000;
      while (made.pids.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      for (const p of made.pids) expect(alive(p)).toBe(false);
      // what the harness could not remove, the next run's sweeps do (another test's sweep may
      // have been first: what counts is that nothing is left)
      await sweepLeftovers({ sweepers: [tempDirSweeper] });
      expect(existsSync(made.dataDir)).toBe(false);
      if (made.chains.nat) {
        await sweepSourceNat();
        await sweepIptables();
        expect((await execa('iptables', ['-w', '10', '-t', 'nat', '-S'])).stdout).not.toContain(made.chains.nat);
        expect((await execa('iptables', ['-w', '10', '-S'])).stdout).not.toContain(made.chains.filter!);
      }
    } finally {
      child.kill('SIGKILL');
      rmSync(runDir, { recursive: true, force: true });
    }
  });
});
