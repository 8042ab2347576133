import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { needs } from '../../test-support/capabilities.js';
import type { ClusterConfig } from '../../nodes/cluster-config.js';
import { docker } from '../docker/docker-cli.js';
import { DockerRuntime } from './docker-runtime.js';
import { standInRequest } from './test-support/stand-in-client.js';
import { standInTemplate } from './test-support/stand-in-template.js';

// Container tests: a real 3-node cluster of stand-in nodes (test-support/stand-in-node.mjs, started
// exactly as the store node is) in containers of the node image. They need a Docker engine and the
// node image's base (present or makeable); without them they are NOT run, and say why.
const containers = needs('docker');

const STAND_IN = fileURLToPath(new URL('./test-support/stand-in-node.mjs', import.meta.url));
const STAND_IN_IN_IMAGE = '/opt/zaris-certify/test-support/stand-in-node.mjs';

const template = standInTemplate('docker-test');

describe.skipIf(containers.skip)(containers.title('docker runtime'), () => {
  let runtime: DockerRuntime;
  let runDir: string;
  let config: ClusterConfig;
  const ask = (id: string, line: string, timeoutMs = 1_000) => standInRequest(runtime.clientEndpoint(id), line, timeoutMs);
  const bootOf = async (id: string): Promise<string | undefined> => (await ask(id, 'PING'))?.split(' ')[2];
  const nodeLog = (id: string): string => readFileSync(join(runDir, 'nodes', `${id}.log`), 'utf8');

  beforeAll(async () => {
    runDir = mkdtempSync(join(tmpdir(), 'zaris-certify-docker-test-'));
    runtime = new DockerRuntime({
      files: [{ source: STAND_IN, target: STAND_IN_IN_IMAGE }],
      nodeCommand: (id, configPath) => ['node', STAND_IN_IN_IMAGE, '--config', configPath, '--id', id],
      stopGraceMs: 3_000,
      readyTimeoutMs: 20_000,
    });
    config = await runtime.start({ runDir, nodeIds: ['n1', 'n2', 'n3'], template: { ...template, preferredPrimaries: ['n1', 'n2'] } });
  });

  afterAll(async () => {
    await runtime?.close();
    if (runDir) rmSync(runDir, { recursive: true, force: true });
  });

  it('starts three nodes at fixed addresses of the run subnet, each answering from the host', async () => {
    const prefix = runtime.subnet!.replace(/\.0\/24$/, '');
    expect(runtime.subnet).toMatch(/^172\.29\.\d{1,3}\.0\/24$/);
    expect(config.nodes.map((n) => [n.id, n.host, n.clientPort, n.clusterPort, n.preferredPrimary])).toEqual([
      ['n1', `${prefix}.11`, 7000, 7001, true],
      ['n2', `${prefix}.12`, 7000, 7001, true],
      ['n3', `${prefix}.13`, 7000, 7001, false],
    ]);
    expect(runtime.nodeIds()).toEqual(['n1', 'n2', 'n3']);
    expect(runtime.clientEndpoint('n2')).toEqual({ host: `${prefix}.12`, port: 7000 });
    for (const id of ['n1', 'n2', 'n3']) expect(await ask(id, 'PING')).toMatch(new RegExp(`^PONG ${id} [0-9a-f]{12}$`));
    expect(() => runtime.clientEndpoint('n9')).toThrow(/unknown node "n9"/);
  });

  it('labels each container, adds NET_ADMIN only, and attaches it to the run network at its address', async () => {
    const raw = await docker(['inspect', `zaris-certify-${runtime.runTag}-n1`]);
    const [info] = JSON.parse(raw) as Array<{
      Config: { Labels: Record<string, string> };
      HostConfig: { CapAdd: string[] | null; Privileged: boolean; Init: boolean };
      NetworkSettings: { Networks: Record<string, { IPAddress: string }> };
    }>;
    expect(info.Config.Labels['zaris-certify']).toBe('1');
    expect(info.Config.Labels['zaris-certify.run']).toBe(runtime.runTag);
    expect(info.Config.Labels['zaris-certify.node']).toBe('n1');
    expect(info.HostConfig.CapAdd).toEqual(['NET_ADMIN']);
    expect(info.HostConfig.Privileged).toBe(false);
    expect(info.HostConfig.Init).toBe(true);
    expect(Object.keys(info.NetworkSettings.Networks)).toEqual([runtime.networkName]);
    expect(info.NetworkSettings.Networks[runtime.networkName].IPAddress).toBe(config.nodes[0].host);
  });

  it('kill then restart: same address, a fresh process with empty memory, the old log kept', async () => {
    expect(await ask('n2', 'SET apple')).toBe('OK');
    expect(await ask('n2', 'GET')).toBe('VALUE apple');
    const before = await bootOf('n2');
    await runtime.kill('n2');
    expect(runtime.isUp('n2')).toBe(false);
    expect(await ask('n2', 'PING', 500)).toBeUndefined();
    await expect(runtime.kill('n2')).rejects.toThrow(/kill n2: the node is not running/);
    await runtime.restart('n2');
    expect(runtime.isUp('n2')).toBe(true);
    expect(runtime.clientEndpoint('n2').host).toBe(config.nodes[1].host);
    const after = await bootOf('n2');
    expect(after).toMatch(/^[0-9a-f]{12}$/);
    expect(after).not.toBe(before);
    expect(await ask('n2', 'GET')).toBe('VALUE -');
    const log = nodeLog('n2');
    expect(log).toContain(`incarnation 1: killed (SIGKILL) ---`);
    expect(log).toContain(`stand-in n2 boot ${before} listening on ${config.nodes[1].host}:7000`);
    await expect(runtime.restart('n2')).rejects.toThrow(/restart n2: the node is running/);
  });

  it('stop delivers SIGTERM to the node, then restart brings it back', async () => {
    const before = await bootOf('n3');
    await runtime.stop('n3');
    expect(runtime.isUp('n3')).toBe(false);
    expect(nodeLog('n3')).toContain(`stand-in n3 boot ${before} got SIGTERM, exiting`);
    expect(nodeLog('n3')).toContain('incarnation 1: stopped (SIGTERM, 3 s grace) ---');
    await runtime.restart('n3');
    expect(await bootOf('n3')).not.toBe(before);
  });

  it('pause freezes a node (its port does not answer) and resume brings the same process back', async () => {
    expect(await ask('n1', 'SET pear')).toBe('OK');
    const before = await bootOf('n1');
    await runtime.pause('n1');
    expect(runtime.isUp('n1')).toBe(true);
    expect(await ask('n1', 'PING', 1_000)).toBeUndefined();
    await runtime.resume('n1');
    expect(await ask('n1', 'PING')).toBe(`PONG n1 ${before}`);
    expect(await ask('n1', 'GET')).toBe('VALUE pear');
  });

  it('partition cuts n1 from n2 while n2 still reaches n3, and heal restores it', async () => {
    expect(await ask('n1', 'DIAL n2', 3_000)).toBe('REACHED n2');
    await runtime.partition({ n1: ['n2'] });
    const rules = await docker(['exec', `zaris-certify-${runtime.runTag}-n1`, 'iptables', '-S', 'zaris-certify']);
    expect(rules).toContain(`-A zaris-certify -s ${config.nodes[1].host}/32 -j DROP`);
    expect(await ask('n1', 'DIAL n2', 3_000)).toBe('UNREACHABLE n2 timeout');
    expect(await ask('n2', 'DIAL n1', 3_000)).toBe('UNREACHABLE n1 timeout');
    expect(await ask('n2', 'DIAL n3', 3_000)).toBe('REACHED n3');
    expect(await ask('n1', 'DIAL n3', 3_000)).toBe('REACHED n3');
    expect(await ask('n1', 'PING')).toMatch(/^PONG n1 /); // the host is not part of any grudge
    await runtime.heal();
    expect(await ask('n1', 'DIAL n2', 3_000)).toBe('REACHED n2');
    expect(await docker(['exec', `zaris-certify-${runtime.runTag}-n1`, 'iptables', '-S', 'zaris-certify'])).toBe('-N zaris-certify');
  });

  it('a grudge reaches a paused node and survives its restart', async () => {
    await runtime.pause('n3');
    await runtime.partition({ n3: ['n1'] });
    await runtime.resume('n3');
    expect(await ask('n3', 'DIAL n1', 3_000)).toBe('UNREACHABLE n1 timeout');
    await runtime.kill('n3');
    await runtime.restart('n3');
    expect(await ask('n3', 'DIAL n1', 3_000)).toBe('UNREACHABLE n1 timeout');
    expect(await ask('n3', 'DIAL n2', 3_000)).toBe('REACHED n2');
    await runtime.heal();
    expect(await ask('n3', 'DIAL n1', 3_000)).toBe('REACHED n1');
  });

  it('refuses a grudge naming an unknown node, changing nothing', async () => {
    await expect(runtime.partition({ n9: ['n1'] })).rejects.toThrow(/unknown node "n9"/);
    await expect(runtime.partition({ n1: ['n1'] })).rejects.toThrow(/cannot drop its own traffic/);
    expect(await ask('n1', 'DIAL n2', 3_000)).toBe('REACHED n2');
  });

  it('close removes every container and the network, keeping the node logs', async () => {
    await runtime.pause('n2'); // a paused node is removed too
    await runtime.close();
    await runtime.close(); // twice is fine
    expect(await docker(['ps', '-a', '-q', '--filter', `label=zaris-certify.run=${runtime.runTag}`])).toBe('');
    expect(await docker(['network', 'ls', '-q', '--filter', `name=${runtime.networkName}`])).toBe('');
    for (const id of ['n1', 'n2', 'n3']) {
      expect(existsSync(join(runDir, 'nodes', `${id}.log`))).toBe(true);
      expect(nodeLog(id)).toMatch(/: removed at close ---\n/);
    }
  });
});

describe.skipIf(containers.skip)(containers.title('docker runtime start failure'), () => {
  it('a node that exits at start fails start() with its exit code, keeps its log, and leaves nothing behind', async () => {
    const runDir = mkdtempSync(join(tmpdir(), 'zaris-certify-docker-test-'));
    const runtime = new DockerRuntime({
      nodeCommand: (id) => ['node', '-e', "console.log('node ' + process.argv[1] + ' refuses to start'); process.exit(3)", id],
      readyTimeoutMs: 20_000,
    });
    try {
      const rf1 = { ...template, stores: [{ name: 'rf1', replicationFactor: 1, ackMode: 'sync' as const, segments: 4 }] };
      await expect(runtime.start({ runDir, nodeIds: ['n1'], template: rf1 })).rejects.toThrow(
        `docker runtime: start failed: node n1 exited during start-up (exit code 3); see ${join(runDir, 'nodes', 'n1.log')}`,
      );
      expect(readFileSync(join(runDir, 'nodes', 'n1.log'), 'utf8')).toContain('node n1 refuses to start');
      expect(await docker(['ps', '-a', '-q', '--filter', `label=zaris-certify.run=${runtime.runTag}`])).toBe('');
      expect(await docker(['network', 'ls', '-q', '--filter', `name=${runtime.networkName}`])).toBe('');
    } finally {
      await runtime.close();
      rmSync(runDir, { recursive: true, force: true });
    }
  });
});

describe.skipIf(containers.skip)(containers.title('docker runtime side by side'), () => {
  it('two runs started at once get distinct networks and subnets and do not disturb each other', async () => {
    const dirs = [0, 1].map(() => mkdtempSync(join(tmpdir(), 'zaris-certify-docker-test-')));
    const rts = [0, 1].map(
      () =>
        new DockerRuntime({
          files: [{ source: STAND_IN, target: STAND_IN_IN_IMAGE }],
          nodeCommand: (id, configPath) => ['node', STAND_IN_IN_IMAGE, '--config', configPath, '--id', id],
        }),
    );
    const rf1 = { ...template, stores: [{ name: 'rf1', replicationFactor: 1, ackMode: 'sync' as const, segments: 4 }] };
    try {
      await Promise.all(rts.map((rt, i) => rt.start({ runDir: dirs[i], nodeIds: ['n1'], template: rf1 })));
      expect(rts[0].subnet).not.toBe(rts[1].subnet);
      expect(rts[0].networkName).not.toBe(rts[1].networkName);
      for (const rt of rts) expect(await standInRequest(rt.clientEndpoint('n1'), 'PING')).toMatch(/^PONG n1 /);
      await rts[0].close();
      expect(await standInRequest(rts[1].clientEndpoint('n1'), 'PING')).toMatch(/^PONG n1 /);
    } finally {
      for (const rt of rts) await rt.close();
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    }
  });
});
