import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { docker, dockerEngineVersion } from '../docker/docker-cli.js';
import { DockerRuntime } from './docker-runtime.js';
import { CONTAINER_CLOCK_DIR } from './faketime.js';
import { standInRequest } from './test-support/stand-in-client.js';
import { standInTemplate } from './test-support/stand-in-template.js';

// Container tests of the issue-13 fault kinds on the docker runtime: a client cut (the host's
// traffic dropped inside one container), a one-way grudge, and clock faults through the image's
// libfaketime. They need a Docker engine; when none answers they are NOT run, and say so.
const engine = await dockerEngineVersion();
const NOT_RUN = 'CONTAINER TESTS NOT RUN: no Docker engine answers (start dockerd, or run .ci/run)';
if (engine === undefined) console.warn(`\n*** ${NOT_RUN} ***\n`);

const STAND_IN = fileURLToPath(new URL('./test-support/stand-in-node.mjs', import.meta.url));
const STAND_IN_IN_IMAGE = '/opt/zaris-certify/test-support/stand-in-node.mjs';

const template = standInTemplate('docker-faults-test');

describe.skipIf(engine === undefined)(engine === undefined ? `docker runtime fault kinds [NOT RUN: no Docker engine answers (start dockerd, or run .ci/run)]` : `docker runtime fault kinds (engine ${engine})`, () => {
  let runtime: DockerRuntime;
  let runDir: string;
  let clockDir = '';
  const ask = (id: string, line: string, timeoutMs = 1_000) => standInRequest(runtime.clientEndpoint(id), line, timeoutMs);
  const times = async (id: string): Promise<[number, number, number]> => {
    const a = await ask(id, 'TIME', 2_000);
    if (a === undefined) throw new Error(`${id} did not answer TIME`);
    const [, wall, mono, real] = a.split(' ').map(Number);
    return [wall, mono, real];
  };

  beforeAll(async () => {
    runDir = mkdtempSync(join(tmpdir(), 'zaris-certify-docker-test-'));
    runtime = new DockerRuntime({
      files: [{ source: STAND_IN, target: STAND_IN_IN_IMAGE }],
      nodeCommand: (id, configPath) => ['node', STAND_IN_IN_IMAGE, '--config', configPath, '--id', id],
      stopGraceMs: 3_000,
      readyTimeoutMs: 20_000,
    });
    await runtime.start({ runDir, nodeIds: ['n1', 'n2', 'n3'], template, clockModes: { n1: 'monotonic', n2: 'wall', n3: 'monotonic' } });
    const [info] = JSON.parse(await docker(['inspect', `zaris-certify-${runtime.runTag}-n1`])) as Array<{ Mounts: Array<{ Source: string; Destination: string }> }>;
    clockDir = info.Mounts.find((m) => m.Destination === CONTAINER_CLOCK_DIR)?.Source ?? '';
  });

  afterAll(async () => {
    await runtime?.close();
    if (runDir) rmSync(runDir, { recursive: true, force: true });
  });

  it('mounts the run\'s clock folder (a zaris-certify temp folder of this process) read-only', () => {
    expect(clockDir).toMatch(new RegExp(`/zaris-certify-clock-p${process.pid}-[A-Za-z0-9]{6}$`));
    expect(existsSync(join(clockDir, 'n1.rc'))).toBe(true);
  });

  it('cuts the host (the harness) from one container while the containers still reach it, across a restart', async () => {
    await runtime.cutClient(['n2']);
    expect(await ask('n2', 'PING', 800)).toBeUndefined();
    expect(await ask('n1', 'PING')).toMatch(/^PONG n1 /);
    expect(await ask('n1', 'DIAL n2', 3_000)).toBe('REACHED n2');
    expect(await ask('n3', 'DIAL n2', 3_000)).toBe('REACHED n2');
    await runtime.partition({ n1: ['n3'] }); // a grudge beside the cut keeps both
    expect(await ask('n2', 'PING', 800)).toBeUndefined();
    expect(await ask('n1', 'DIAL n3', 3_000)).toBe('UNREACHABLE n3 timeout');
    await runtime.kill('n2');
    await runtime.restart('n2'); // ready before the cut comes back
    expect(await ask('n2', 'PING', 800)).toBeUndefined();
    expect(await ask('n3', 'DIAL n2', 3_000)).toBe('REACHED n2');
    await runtime.cutClient([]);
    expect(await ask('n2', 'PING')).toMatch(/^PONG n2 /);
    expect(await ask('n1', 'DIAL n3', 3_000)).toBe('UNREACHABLE n3 timeout');
    await runtime.heal();
    expect(await ask('n1', 'DIAL n3', 3_000)).toBe('REACHED n3');
  });

  it('a one-way grudge is one rule in the dropping container', async () => {
    await runtime.partition({ n3: ['n1'] });
    const n1 = runtime.clientEndpoint('n1').host;
    expect(await docker(['exec', `zaris-certify-${runtime.runTag}-n3`, 'iptables', '-S', 'zaris-certify'])).toBe(`-N zaris-certify\n-A zaris-certify -s ${n1}/32 -j DROP`);
    expect(await docker(['exec', `zaris-certify-${runtime.runTag}-n1`, 'iptables', '-S', 'zaris-certify'])).toBe('-N zaris-certify');
    expect(await ask('n2', 'DIAL n3', 3_000)).toBe('REACHED n3');
    await runtime.heal();
  });

  it('jumps a wall-mode container\'s wall clock back 30 s, its monotonic clock untouched', async () => {
    const [w0, m0, r0] = await times('n2');
    await runtime.setClock('n2', { offsetMs: -30_000, rate: 1 });
    const [w1, m1, r1] = await times('n2');
    const real = r1 - r0;
    expect(w1 - w0 - real).toBeGreaterThan(-30_000 - 300);
    expect(w1 - w0 - real).toBeLessThan(-30_000 + 300);
    expect(Math.abs(m1 - m0 - real)).toBeLessThan(300);
    await runtime.setClock('n2', { offsetMs: 0, rate: 1 });
  }, 20_000);

  it('runs a monotonic-mode container\'s clocks at twice the speed, and back', async () => {
    await runtime.setClock('n3', { offsetMs: 0, rate: 2 });
    const [, m0, r0] = await times('n3');
    await new Promise((r) => setTimeout(r, 2_000));
    const [, m1, r1] = await times('n3');
    const ratio = (m1 - m0) / (r1 - r0);
    expect(ratio).toBeGreaterThan(1.7);
    expect(ratio).toBeLessThan(2.3);
    await runtime.setClock('n3', { offsetMs: 0, rate: 1 });
    const [, m2] = await times('n3');
    expect(m2).toBeGreaterThanOrEqual(m1);
  }, 20_000);

  it('close removes the containers, the network and the clock folder', async () => {
    await runtime.cutClient(['n1']);
    await runtime.close();
    expect(await docker(['ps', '-a', '-q', '--filter', `label=zaris-certify.run=${runtime.runTag}`])).toBe('');
    expect(await docker(['network', 'ls', '-q', '--filter', `name=${runtime.networkName}`])).toBe('');
    expect(existsSync(clockDir)).toBe(false);
  });
});
