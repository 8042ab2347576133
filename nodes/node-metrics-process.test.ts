import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KvStatus } from './kv-status.js';
import { EXPOSITION_CONTENT_TYPE, parseExposition, renderExposition, sampleValue } from './metrics-text.js';
import { METRIC, nodeMetricFamilies } from './node-metrics.js';
import { setPolicyCommand } from './node-admin.js';
import { startTestCluster, waitFor, type TestCluster } from '../harness/test-support/process-cluster.js';
import { execa } from 'execa';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { distPath } from '../harness/dist-path.js';

describe('node metric families (fake core)', () => {
  it('hold every counter the issue names, with the node label, and the lag of active partitions only', () => {
    const counters = {
      writesAcked: 7,
      writesRefused: 0,
      indeterminate: 0,
      promotions: 2,
      syncsServed: 0,
      snapshotsInstalled: 0,
      failovers: 1,
      staleEpochRefusals: { proposal: 4, replication: 5 },
      migratingAnswers: 0,
      migrations: 0,
      invalidPolicyValues: new Map([['sync3', 3]]),
    };
    const fams = parseExposition(renderExposition(nodeMetricFamilies({ id: 'n2', counters, replicationLagMs: () => [{ store: 'sync3', partition: 1, lagMs: 12.4 }] }, ['sync3', 'rf1'])));
    expect(sampleValue(fams, METRIC.failovers, { node: 'n2' })).toBe(1);
    expect(sampleValue(fams, METRIC.promotions, { node: 'n2' })).toBe(2);
    expect(sampleValue(fams, METRIC.staleEpochRefusals, { node: 'n2', kind: 'proposal' })).toBe(4);
    expect(sampleValue(fams, METRIC.staleEpochRefusals, { node: 'n2', kind: 'replication' })).toBe(5);
    expect(sampleValue(fams, METRIC.migratingAnswers, { node: 'n2' })).toBe(0);
    expect(sampleValue(fams, METRIC.invalidPolicy, { node: 'n2', store: 'sync3' })).toBe(3);
    expect(sampleValue(fams, METRIC.invalidPolicy, { node: 'n2', store: 'rf1' })).toBe(0);
    expect(fams.get(METRIC.replicationLag)!.samples).toEqual([{ labels: { node: 'n2', store: 'sync3', partition: '1' }, value: 12 }]);
    expect(fams.get(METRIC.replicationLag)!.type).toBe('gauge');
    expect(fams.get(METRIC.failovers)!.type).toBe('counter');
  });
});

/**
 * Each real node serves its counters in the Prometheus text format on its metrics port; a test
 * parses the answer strictly and sees the counters move after known events (a refused policy,
 * a handoff = a promotion).
 */
describe('metrics endpoint on real node processes', () => {
  let c: TestCluster;
  beforeAll(async () => {
    c = await startTestCluster();
  }, 60_000);
  afterAll(async () => {
    await c?.close();
  });

  async function scrape(node: string): Promise<ReturnType<typeof parseExposition>> {
    const n = c.config.nodes.find((x) => x.id === node)!;
    expect(n.metricsPort).toBeGreaterThan(0);
    const res = await fetch(`http://${n.host}:${n.metricsPort}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(EXPOSITION_CONTENT_TYPE);
    return parseExposition(await res.text());
  }

  it('answers GET /metrics on every node (404 elsewhere), and the counters move after known events', async () => {
    const n1 = c.config.nodes[0];
    expect((await fetch(`http://${n1.host}:${n1.metricsPort}/other`)).status).toBe(404);
    const view = await c.client.fetchView();
    const leader = view.leader!;
    for (const n of ['n1', 'n2', 'n3']) {
      const f = await scrape(n);
      expect(sampleValue(f, METRIC.migratingAnswers, { node: n })).toBe(0);
      expect(sampleValue(f, METRIC.invalidPolicy, { node: n, store: 'sync3' })).toBe(0);
      // the lag gauge: one sample per partition this node is the active of
      const actives = [...view.runtime.values()].filter((e) => e.active === n).map((e) => `${e.store}/${e.partition}`).sort();
      expect(f.get(METRIC.replicationLag)!.samples.map((s) => `${s.labels.store}/${s.labels.partition}`).sort()).toEqual(actives);
      for (const s of f.get(METRIC.replicationLag)!.samples) expect(s.value).toBeGreaterThanOrEqual(0);
    }
    const before = await scrape(leader);
    const promotions0 = sampleValue(before, METRIC.promotions, { node: leader })!;
    // a refused policy value counts on the leader that refused it
    expect((await c.client.admin(setPolicyCommand('sync3', '1-5:10'))).status).toBe(KvStatus.InvalidInput);
    expect((await c.client.admin(setPolicyCommand('sync3', ' '))).status).toBe(KvStatus.InvalidInput);
    const after = await scrape(leader);
    expect(sampleValue(after, METRIC.invalidPolicy, { node: leader, store: 'sync3' })).toBe(2);
    expect(sampleValue(after, METRIC.invalidPolicy, { node: leader, store: 'async3' })).toBe(0);
    // a handoff commits a new active: one promotion on the leader
    const e = view.runtime.get('async3/1')!;
    const to = e.replicas.find((n) => n !== e.active)!;
    expect((await c.client.admin(`handoff async3/1 to ${to}`)).status).toBe(KvStatus.Ok);
    await waitFor(async () => (await c.client.fetchView()).runtime.get('async3/1')!.active === to, 10_000, `${to} to own async3/1`);
    await waitFor(async () => sampleValue(await scrape(leader), METRIC.promotions, { node: leader })! >= promotions0 + 1, 5_000, 'the promotion to be counted');
    // writes count on the active that acknowledged them: exactly 5 more over the cluster
    const acked = async (): Promise<number> => (await Promise.all(['n1', 'n2', 'n3'].map(async (n) => sampleValue(await scrape(n), METRIC.writesAcked, { node: n })!))).reduce((a, b) => a + b, 0);
    const w0 = await acked();
    for (let i = 0; i < 5; i++) expect((await c.client.put('sync3', `m${i}`, Buffer.from('v'))).ledgerOutcome).toBe('ok');
    expect(await acked()).toBe(w0 + 5);
  }, 60_000);
});

/** Free local ports (bound, then closed). */
async function freePorts(n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const s = createServer();
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
    out.push((s.address() as { port: number }).port);
    await new Promise<void>((r) => s.close(() => r()));
  }
  return out;
}

describe('node-main --metrics-port', () => {
  it('serves the endpoint on the port given at start (over the config), and refuses a bad one in one line (64)', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'zaris-certify-metrics-'));
    const [client, cluster, metrics] = await freePorts(3);
    const config = path.join(dir, 'cluster.json');
    writeFileSync(config, JSON.stringify({ cluster: 'm', nodes: [{ id: 'n1', host: '127.0.0.1', clientPort: client, clusterPort: cluster }], stores: [{ name: 's', replicationFactor: 1, ackMode: 'sync', segments: 4 }], multiKeyLongTailRetryThresholdsMs: '' }));
    const main = distPath(import.meta.url, 'nodes/node-main.js');
    try {
      const bad = await execa('node', [main, '--config', config, '--id', 'n1', '--metrics-port', 'x9'], { reject: false, timeout: 10_000 });
      expect([bad.exitCode, String(bad.stderr).trim()]).toEqual([64, 'zaris-certify node: --metrics-port must be a port number or 0 (off), got "x9"']);
      const proc = execa('node', [main, '--config', config, '--id', 'n1', '--metrics-port', String(metrics)], { reject: false });
      try {
        let text = '';
        await waitFor(async () => {
          try {
            const res = await fetch(`http://127.0.0.1:${metrics}/metrics`);
            text = await res.text();
            return res.status === 200;
          } catch {
            return false;
          }
        }, 10_000, 'the metrics endpoint to answer');
        const f = parseExposition(text);
        expect(sampleValue(f, METRIC.failovers, { node: 'n1' })).toBe(0);
        expect(sampleValue(f, METRIC.invalidPolicy, { node: 'n1', store: 's' })).toBe(0);
      } finally {
        proc.kill('SIGTERM');
        await proc;
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);
});

