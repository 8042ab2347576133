import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { createServer } from 'node:net';
import { distPath } from '../dist-path.js';
import { startTestCluster, waitFor, type TestCluster } from '../test-support/process-cluster.js';
import { ZarisClient } from '../../nodes/client/zaris-client.js';
import { setPolicyCommand } from '../../nodes/node-admin.js';
import { KvStatus } from '../../nodes/kv-status.js';
import { columns, parseSeeds, type ClusterStatus } from './admin.js';
import { UsageError } from '../usage-error.js';

const cli = distPath(import.meta.url, 'harness/cli.js');

/** Runs the built CLI; never rejects (the exit code is asserted). */
async function run(args: string[]): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  const r = await execa('node', [cli, ...args], { reject: false, timeout: 30_000 });
  return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
}

/** A local port nothing listens on (bound, then closed). */
async function deadPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe('admin arguments (no cluster)', () => {
  it('parses --seeds, and refuses a malformed one in one line', () => {
    expect(parseSeeds('127.0.0.1:7101,localhost:80')).toEqual([
      { host: '127.0.0.1', port: 7101 },
      { host: 'localhost', port: 80 },
    ]);
    expect(() => parseSeeds('127.0.0.1')).toThrow(UsageError);
    expect(() => parseSeeds('h:0')).toThrow('--seeds: "h:0" is not host:port (e.g. 127.0.0.1:7101)');
    expect(() => parseSeeds('')).toThrow(UsageError);
  });

  it('lays out columns padded to the widest cell', () => {
    expect(columns([['a', 'bb', 'c'], ['ccc', 'd', 'e']])).toBe('a    bb  c\nccc  d   e');
  });

  it('exit codes: bad arguments 64, an unreachable cluster 3; one line on stderr, no stack', async () => {
    const port = await deadPort();
    const cases: Array<[string[], number, string]> = [
      [['admin', 'status', '--run', '/nonexistent/run'], 64, 'zaris-certify: no --seeds and no readable /nonexistent/run/cluster.json: give --seeds host:port,... or --run <a running run\'s directory>'],
      [['admin', 'status', '--seeds', 'nohost'], 64, 'zaris-certify: --seeds: "nohost" is not host:port (e.g. 127.0.0.1:7101)'],
      [['admin', 'frobnicate', '--seeds', `127.0.0.1:${port}`], 64, 'zaris-certify: unknown admin verb "frobnicate" (known: status, handoff, regenerate, set-policy, join, leave, rebalance)'],
      [['admin', 'handoff', 'sync3/0', '--seeds', `127.0.0.1:${port}`], 64, 'zaris-certify: usage: zaris-certify admin handoff <store>/<partition> <node> --seeds host:port,...'],
      [['admin', 'join', 'n4', '--seeds', `127.0.0.1:${port}`, '--timeout', '500ms'], 3, `zaris-certify: cluster unreachable: no node answered a metadata request (127.0.0.1:${port})`],
      [['admin', 'status', '--seeds', `127.0.0.1:${port}`, '--timeout', '500ms'], 3, `zaris-certify: cluster unreachable: no node answered a metadata request (127.0.0.1:${port})`],
    ];
    for (const [args, code, line] of cases) {
      const r = await run(args);
      expect({ args, code: r.exitCode, stderr: r.stderr.trim() }).toEqual({ args, code, stderr: line });
    }
  }, 60_000);
});

/**
 * `zaris-certify admin` against real node processes (issue 14, operator surface): status as a
 * table and as JSON with the cluster's real maps, a handoff, set-policy (valid, invalid, withdrawn)
 * seen by a client's next refresh.
 */
describe('admin against a running cluster (real node processes)', () => {
  let c: TestCluster;
  let seeds: string;
  beforeAll(async () => {
    c = await startTestCluster();
    seeds = c.config.nodes.map((n) => `${n.host}:${n.clientPort}`).join(',');
  }, 60_000);
  afterAll(async () => {
    await c?.close();
  });

  it('status --json holds the partition map, runtime map, health and every node\'s epochs; the table shows the same', async () => {
    const view = await c.client.fetchView();
    const r = await run(['admin', 'status', '--json', '--seeds', seeds]);
    expect(r.exitCode).toBe(0);
    const s = JSON.parse(r.stdout) as ClusterStatus;
    expect(s.cluster).toBe('test');
    expect(s.leader).toBe(view.leader);
    expect(s.nodes.map((n) => [n.id, n.answered, n.isLeader])).toEqual(['n1', 'n2', 'n3'].map((id) => [id, true, id === view.leader]));
    // issue 14: the member set the leader reports (no spare here: every node a member, none outside)
    expect(s.members?.members).toEqual(['n1', 'n2', 'n3'].map((id) => ({ id, state: 'member' })));
    expect(s.members?.outside).toEqual([]);
    expect(s.stores.map((x) => [x.name, x.replicationFactor, x.ackMode, x.policy, x.policyVersion])).toEqual([
      ['sync3', 3, 'sync', '', 0],
      ['async3', 3, 'async', '', 0],
      ['rf1', 1, 'sync', '', 0],
    ]);
    expect(s.partitions.map((p) => `${p.store}/${p.partition}`)).toEqual(['async3/0', 'async3/1', 'async3/2', 'rf1/0', 'rf1/1', 'rf1/2', 'sync3/0', 'sync3/1', 'sync3/2']);
    for (const p of s.partitions) {
      const v = view.runtime.get(`${p.store}/${p.partition}`)!;
      expect(p.health).toBe('Healthy');
      expect(p.active).toBe(p.replicas[0]);
      expect(p.replicas).toEqual(v.replicas);
      expect(p.replicas).toHaveLength(p.store === 'rf1' ? 1 : 3);
      expect(p.mapVersion).toBe(1);
      expect(p.epoch).toBeGreaterThanOrEqual(v.epoch);
      expect(Object.keys(p.epochs).sort()).toEqual(['n1', 'n2', 'n3']);
      expect(Math.max(...Object.values(p.epochs))).toBe(p.epoch);
      expect([...p.inSync].sort()).toEqual([...p.replicas].sort());
    }
    // without --seeds: the nodes of a run's cluster.json (certify writes it; here the test cluster's)
    const t = await run(['admin', 'status', '--run', c.runDir]);
    expect(t.exitCode).toBe(0);
    const lines = t.stdout.split('\n');
    expect(lines[0]).toBe(`cluster test, leader ${view.leader}`);
    expect(lines[1]).toBe(`members (version ${s.members!.version}): n1, n2, n3; outside: none`);
    const row = lines.find((l) => l.startsWith('sync3/1 '))!;
    const p = s.partitions.find((x) => x.store === 'sync3' && x.partition === 1)!;
    expect(row.split(/\s+/).slice(0, 8)).toEqual(['sync3/1', p.replicas.join(','), '1', p.active, expect.any(String), 'Healthy', p.inSync.join(','), '-']);
    expect(lines.some((l) => /^sync3\s+3\s+sync\s+3\s+\(none\) \[configured\]$/.test(l))).toBe(true);
  }, 60_000);

  it('set-policy commits a store policy every node advertises and a client publishes on refresh; an invalid value is refused in one line (64)', async () => {
    const bad = await run(['admin', 'set-policy', 'async3', '1-10:5', '--seeds', seeds]);
    expect(bad.exitCode).toBe(64);
    expect(bad.stderr.trim()).toMatch(/^zaris-certify: admin set-policy refused by n\d \(InvalidInput\): invalid retry range table "1-10:5": no open-ended range: the last range 1-10 must be followed by 11-:ms$/);
    const ok = await run(['admin', 'set-policy', 'async3', '1-3:40,4-:90', '--seeds', seeds]);
    expect(ok.stderr).toBe('');
    expect(ok.exitCode).toBe(0);
    expect(ok.stdout).toMatch(/^policy version 1 of async3 proposed for 3 partitions: 1-3:40,4-:90 \(epoch \d+, by leader n\d\)$/);
    await waitFor(async () => {
      const { docs } = await c.client.fetchViewAndDocs();
      return docs.length === 3 && docs.every((d) => d.stores.find((x) => x.name === 'async3')!.multiKeyLongTailRetryThresholdsMs === '1-3:40,4-:90');
    }, 10_000, 'every node to advertise the new async3 policy');
    // the client published it (parsed once); the other stores keep the configured (empty) policy
    expect(c.client.policyState('async3').serverPolicy()?.delayMsFor(2)).toBe(40);
    expect(c.client.policyState('async3').serverPolicy()?.delayMsFor(4)).toBe(90);
    expect(c.client.policyState('sync3').serverPolicy()).toBeNull();
    const s = JSON.parse((await run(['admin', 'status', '--json', '--seeds', seeds])).stdout) as ClusterStatus;
    expect(s.stores.find((x) => x.name === 'async3')).toMatchObject({ policy: '1-3:40,4-:90', policyVersion: 1 });
    // ownership untouched: every partition still Healthy with its preferred primary
    expect(s.partitions.every((p) => p.health === 'Healthy' && p.active === p.replicas[0])).toBe(true);
    // "" withdraws it (version 2)
    const off = await run(['admin', 'set-policy', 'async3', '', '--seeds', seeds]);
    expect(off.exitCode).toBe(0);
    await waitFor(async () => {
      await c.client.fetchView();
      return c.client.policyState('async3').serverPolicy() === null;
    }, 10_000, 'the policy to be withdrawn');
    const s2 = JSON.parse((await run(['admin', 'status', '--json', '--seeds', seeds])).stdout) as ClusterStatus;
    expect(s2.stores.find((x) => x.name === 'async3')).toMatchObject({ policy: '', policyVersion: 2 });
  }, 60_000);

  it('handoff through the CLI moves the active owner; a refusal is one line with exit 64 or 3', async () => {
    const unknown = await run(['admin', 'handoff', 'sync3/2', 'n9', '--seeds', seeds]);
    expect([unknown.exitCode, unknown.stderr.trim()]).toEqual([64, expect.stringMatching(/^zaris-certify: admin handoff refused by n\d \(InvalidInput\): unknown node "n9"$/)]);
    const before = (await c.client.fetchView()).runtime.get('sync3/2')!;
    const self = await run(['admin', 'handoff', 'sync3/2', before.active!, '--seeds', seeds]);
    expect([self.exitCode, self.stderr.trim()]).toEqual([3, `zaris-certify: admin handoff refused by ${(await c.client.fetchView()).leader} (Unavailable): ${before.active} is already the active owner of sync3/2`]);
    const to = before.replicas.find((n) => n !== before.active)!;
    const r = await run(['admin', 'handoff', 'sync3/2', to, '--seeds', seeds]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain(`handoff of sync3/2 from ${before.active} to ${to} proposed`);
    await waitFor(async () => (await c.client.fetchView()).runtime.get('sync3/2')!.active === to, 10_000, `${to} to own sync3/2`);
  }, 60_000);

  it('a client refreshes its metadata periodically (seed 004), so it follows a set-policy without any error; with the interval off it does not', async () => {
    const seedsEp = c.config.nodes.map((n) => ({ host: n.host, port: n.clientPort }));
    const periodic = await new ZarisClient({ seeds: seedsEp, metadataRefreshIntervalMs: 200, warn: () => undefined }).connect();
    const never = await new ZarisClient({ seeds: seedsEp, metadataRefreshIntervalMs: 0, warn: () => undefined }).connect();
    try {
      expect(periodic.policyState('rf1').serverPolicy()).toBeNull();
      expect(never.policyState('rf1').serverPolicy()).toBeNull();
      expect((await c.client.admin(setPolicyCommand('rf1', '1-2:11,3-:22'))).status).toBe(KvStatus.Ok);
      // no operation on either client: only the periodic refresh can bring the new policy
      await waitFor(() => periodic.policyState('rf1').serverPolicy()?.toString() === '1-2:11,3-:22', 10_000, 'the periodic refresh to publish the policy');
      expect(periodic.periodicRefreshes).toBeGreaterThan(0);
      expect(periodic.policyState('rf1').serverPolicy()!.delayMsFor(8)).toBe(22);
      expect(never.periodicRefreshes).toBe(0);
      expect(never.fetches).toBe(1);
      expect(never.policyState('rf1').serverPolicy()).toBeNull();
    } finally {
      periodic.close();
      never.close();
    }
  }, 60_000);
});
