/**
 * The process runtime's issue-13 fault kinds on real processes (stand-in nodes started exactly as
 * store nodes are): clock faults through the host's libfaketime, the client cut and a one-way
 * grudge through iptables. Each part skips visibly without what it needs.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostClockFaultsUnavailable } from './faketime.js';
import { checkNetAdmin } from './iptables.js';
import { ProcessRuntime } from './process-runtime.js';
import { standInRequest } from './test-support/stand-in-client.js';
import { standInTemplate } from './test-support/stand-in-template.js';

const STAND_IN = fileURLToPath(new URL('./test-support/stand-in-node.mjs', import.meta.url));
const noClock = hostClockFaultsUnavailable();
const noNetAdmin = await checkNetAdmin();
if (noClock) console.warn(`\n*** CLOCK-FAULT TESTS (process runtime) NOT RUN: ${noClock} ***\n`);
if (noNetAdmin) console.warn(`\n*** CLIENT-CUT TESTS (process runtime) NOT RUN: ${noNetAdmin} ***\n`);

const template = standInTemplate('process-faults-test');

/** TIME answer of a stand-in: [Date.now(), performance.now(), real ms (/proc/uptime)]. */
async function times(rt: ProcessRuntime, id: string): Promise<[number, number, number]> {
  const a = await standInRequest(rt.clientEndpoint(id), 'TIME', 2_000);
  if (a === undefined) throw new Error(`${id} did not answer TIME`);
  const [, wall, mono, real] = a.split(' ').map(Number);
  return [wall, mono, real];
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

describe.skipIf(noClock !== null)(noClock ? `process runtime clock faults [NOT RUN: ${noClock}]` : 'process runtime clock faults (libfaketime)', () => {
  let rt: ProcessRuntime;
  let runDir: string;
  beforeAll(async () => {
    runDir = mkdtempSync(join(tmpdir(), 'zaris-certify-clock-test-'));
    rt = new ProcessRuntime({ runTag: `c${process.pid}`, nodeEntry: STAND_IN });
    await rt.start({ runDir, nodeIds: ['n1', 'n2', 'n3'], template, clockModes: { n1: 'monotonic', n2: 'wall', n3: 'monotonic' } });
  }, 30_000);
  afterAll(async () => {
    await rt?.close();
    if (runDir) rmSync(runDir, { recursive: true, force: true });
  });

  it('jumps a wall-mode node\'s wall clock back 30 s and forward again, its monotonic clock untouched', async () => {
    const [w0, m0, r0] = await times(rt, 'n2');
    await rt.setClock('n2', { offsetMs: -30_000, rate: 1 });
    const [w1, m1, r1] = await times(rt, 'n2');
    const real = r1 - r0;
    expect(w1 - w0 - real).toBeGreaterThan(-30_000 - 200);
    expect(w1 - w0 - real).toBeLessThan(-30_000 + 200);
    expect(Math.abs(m1 - m0 - real)).toBeLessThan(200);
    await rt.setClock('n2', { offsetMs: 0, rate: 1 });
    const [w2, , r2] = await times(rt, 'n2');
    expect(Math.abs(w2 - w0 - (r2 - r0))).toBeLessThan(200);
  }, 20_000);

  it('runs a monotonic-mode node\'s clocks at half speed and back, without a jump', async () => {
    await rt.setClock('n1', { offsetMs: 0, rate: 0.5 });
    const [, m0, r0] = await times(rt, 'n1');
    await sleep(2_000);
    const [, m1, r1] = await times(rt, 'n1');
    const ratio = (m1 - m0) / (r1 - r0);
    expect(ratio).toBeGreaterThan(0.4);
    expect(ratio).toBeLessThan(0.6);
    await rt.setClock('n1', { offsetMs: 0, rate: 1 });
    const [, m2, r2] = await times(rt, 'n1');
    // the clock never went back, and it runs at speed again (no retroactive rescaling)
    expect(m2).toBeGreaterThanOrEqual(m1);
    await sleep(1_000);
    const [, m3, r3] = await times(rt, 'n1');
    const ratio2 = (m3 - m2) / (r3 - r2);
    expect(ratio2).toBeGreaterThan(0.85);
    expect(ratio2).toBeLessThan(1.15);
  }, 20_000);

  it('refuses a setting that does not fit the node\'s mode', async () => {
    await expect(rt.setClock('n1', { offsetMs: 30_000, rate: 1 })).rejects.toThrow(/monotonic-mode node only changes rate/);
    await expect(rt.setClock('n2', { offsetMs: 0, rate: 2 })).rejects.toThrow(/wall-mode node only jumps/);
  });

  it('restarts a node with its current setting, and removes the clock files at close', async () => {
    await rt.setClock('n2', { offsetMs: 60_000, rate: 1 });
    await rt.kill('n2');
    await rt.restart('n2');
    const [w, , r] = await times(rt, 'n2');
    const [w1, , r1] = await times(rt, 'n1');
    // n1's wall clock is true (its rate is 1 again; the half-speed lag stays), n2's is 60 s ahead
    expect(w - w1 - (r - r1)).toBeGreaterThan(55_000);
    const modes = rt.clockModes();
    expect(modes).toEqual({ n1: 'monotonic', n2: 'wall', n3: 'monotonic' });
    const dirs = (await execa('sh', ['-c', `ls -d ${tmpdir()}/zaris-certify-clock-p${process.pid}-* 2>/dev/null || true`])).stdout.split('\n').filter(Boolean);
    expect(dirs.length).toBe(1);
    await rt.close();
    expect(existsSync(dirs[0])).toBe(false);
  }, 30_000);
});

describe.skipIf(noNetAdmin !== null)(noNetAdmin ? `process runtime client cut [NOT RUN: ${noNetAdmin}]` : 'process runtime client cut and one-way grudge (iptables)', () => {
  let rt: ProcessRuntime;
  let runDir: string;
  beforeAll(async () => {
    runDir = mkdtempSync(join(tmpdir(), 'zaris-certify-cut-test-'));
    rt = new ProcessRuntime({ runTag: `k${process.pid}`, nodeEntry: STAND_IN, partitions: true });
    await rt.start({ runDir, nodeIds: ['n1', 'n2', 'n3'], template });
  }, 30_000);
  afterAll(async () => {
    await rt?.close();
    if (runDir) rmSync(runDir, { recursive: true, force: true });
  });
  const ping = (id: string) => standInRequest(rt.clientEndpoint(id), 'PING', 600);
  const dial = (from: string, to: string) => standInRequest(rt.clientEndpoint(from), `DIAL ${to}`, 3_000);

  it('finds the harness\'s own source address (not a node\'s)', () => {
    expect(rt.harnessAddress).toBe('127.0.0.1');
    expect(rt.config.nodes.map((n) => n.host)).not.toContain(rt.harnessAddress);
  });

  it('cuts the harness from one node while the nodes still reach it, and heals', async () => {
    await rt.cutClient(['n2']);
    expect(await ping('n2')).toBeUndefined();
    expect(await ping('n1')).toMatch(/^PONG n1 /);
    expect(await dial('n1', 'n2')).toBe('REACHED n2');
    expect(await dial('n3', 'n2')).toBe('REACHED n2');
    await rt.heal();
    expect(await ping('n2')).toMatch(/^PONG n2 /);
  }, 20_000);

  it('keeps a client cut across a partition change and a restart of the cut node', async () => {
    await rt.cutClient(['n3']);
    await rt.partition({ n1: ['n2'], n2: ['n1'] });
    expect(await ping('n3')).toBeUndefined();
    expect(await dial('n1', 'n2')).toMatch(/^UNREACHABLE n2/);
    await rt.kill('n3');
    await rt.restart('n3'); // waits for the port from n3's own address: the cut does not stop it
    expect(await ping('n3')).toBeUndefined();
    expect(await dial('n1', 'n3')).toBe('REACHED n3');
    await rt.cutClient([]);
    expect(await ping('n3')).toMatch(/^PONG n3 /);
    expect(await dial('n1', 'n2')).toMatch(/^UNREACHABLE n2/);
    await rt.heal();
    expect(await dial('n1', 'n2')).toBe('REACHED n2');
  }, 40_000);

  it('installs a one-way grudge as one rule: n1 drops what n2 sends, nothing else', async () => {
    await rt.partition({ n1: ['n2'] });
    const chain = (await execa('iptables', ['-w', '10', '-S'])).stdout
      .split('\n')
      .filter((l) => l.startsWith('-A zaris-certify-') && l.includes(' -j DROP'));
    const hosts = Object.fromEntries(rt.config.nodes.map((n) => [n.id, n.host]));
    expect(chain.filter((l) => l.includes(hosts.n1) || l.includes(hosts.n2) || l.includes(hosts.n3))).toEqual([
      expect.stringContaining(`-s ${hosts.n2}/32 -d ${hosts.n1}/32 -j DROP`),
    ]);
    expect(await dial('n3', 'n1')).toBe('REACHED n1');
    await rt.heal();
  }, 20_000);

  it('leaves no chain behind at close', async () => {
    await rt.cutClient(['n1']);
    await rt.close();
    const left = (await execa('iptables', ['-w', '10', '-S'])).stdout.split('\n').filter((l) => l.includes(`zaris-certify-p${process.pid}-`));
    expect(left).toEqual([]);
  });
});
