import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LaunchContext, TargetCluster } from '../target.js';
import { ownershipOf } from './patroni-ownership.js';
import { leaderOf, parsePatroniView, revisionOf } from './patroni-nodes.js';
import { PATRONI_DEFAULT_MAXIMUM_LAG_ON_FAILOVER } from './patroni-contract.js';
import { PATRONI_SUPERVISOR, PostgresPatroniTarget } from './patroni-target.js';

const nodes = [{ id: 'n1', host: '127.9.7.11' }, { id: 'n2', host: '127.9.7.12' }, { id: 'n3', host: '127.9.7.13' }];
const ports = { etcd: 2379, etcdPeer: 2380, patroni: 8008, postgres: 5432 };
const ctx: LaunchContext = { cluster: { nodes, ports }, dataDir: '/data/n2', runtime: 'process', runTag: 'r9' };
const cluster = { nodes, ports } as unknown as TargetCluster;

describe('PostgreSQL + Patroni target', () => {
  it('async (the default) claims async-ack bounded by maximum_lag_on_failover; strict claims no loss; the lease is ttl + loop_wait', () => {
    const a = new PostgresPatroniTarget();
    expect(a.sync).toBe('off');
    expect(a.contract.claims.map((c) => c.class)).toEqual(['async-ack']);
    expect(a.contract.claims[0].source).toContain(`maximum_lag_on_failover ${PATRONI_DEFAULT_MAXIMUM_LAG_ON_FAILOVER} bytes`);
    expect(a.contract.stores[0]).toMatchObject({ name: 'postgres', replicationFactor: 3, ackMode: 'async', ackDurableOn: 'one-node', partitions: 1 });
    expect([a.contract.asyncLagMs.value, a.contract.leaseMs.value, a.contract.fencing.value]).toEqual([null, 22_000, false]);
    const s = new PostgresPatroniTarget({ sync: 'strict', ttlS: 10, loopWaitS: 1 });
    expect(s.contract.claims).toEqual([]);
    expect(s.contract.stores[0]).toMatchObject({ ackMode: 'sync', ackDurableOn: 'majority' });
    expect(s.contract.leaseMs.value).toBe(11_000);
    expect(s.options).toMatchObject({ synchronousMode: true, synchronousModeStrict: true });
  });

  it("writes each node's Patroni configuration: its own addresses, the three etcd members, the sync mode asked for", () => {
    const conf = JSON.parse(new PostgresPatroniTarget({ sync: 'strict' }).patroniConfig('n2', ctx));
    expect(conf.name).toBe('n2');
    expect(conf.scope).toBe('zaris-r9');
    expect(conf.restapi.listen).toBe('127.9.7.12:8008');
    expect(conf.postgresql.listen).toBe('127.9.7.12:5432');
    expect(conf.postgresql.data_dir).toBe('/data/n2/pg');
    expect(conf.etcd3.hosts).toEqual(['127.9.7.11:2379', '127.9.7.12:2379', '127.9.7.13:2379']);
    expect(conf.bootstrap.dcs).toMatchObject({ ttl: 20, loop_wait: 2, synchronous_mode: true, synchronous_mode_strict: true, maximum_lag_on_failover: 1_048_576 });
    expect(conf.bootstrap.dcs.ttl).toBeGreaterThanOrEqual(conf.bootstrap.dcs.loop_wait + 2 * conf.bootstrap.dcs.retry_timeout);
    const off = JSON.parse(new PostgresPatroniTarget().patroniConfig('n1', ctx));
    expect(off.bootstrap.dcs).toMatchObject({ synchronous_mode: false, synchronous_mode_strict: false });
  });

  it('launches per node an etcd member then Patroni as postgres, Patroni given time for crash recovery', () => {
    const l = new PostgresPatroniTarget().launch('n3', ctx);
    expect(l.wholeNode).toBe(true);
    expect(l.processes.map((p) => [p.name, p.command, p.readyPort, p.user])).toEqual([
      ['etcd', '/usr/bin/etcd', 'etcd', undefined],
      ['patroni', '/bin/sh', 'patroni', 'postgres'],
    ]);
    // Patroni under a restart-on-failure loop, as Debian's service unit runs it
    expect(l.processes[1].args).toEqual(['-c', PATRONI_SUPERVISOR, 'patroni', '/usr/bin/patroni', '/data/n2/patroni.yml']);
    const etcd = l.processes[0].args;
    expect(etcd[etcd.indexOf('--initial-cluster') + 1]).toBe('n1=http://127.9.7.11:2380,n2=http://127.9.7.12:2380,n3=http://127.9.7.13:2380');
    expect(etcd[etcd.indexOf('--listen-client-urls') + 1]).toBe('http://127.9.7.13:2379');
    expect(l.processes[1].readyTimeoutMs).toBe(90_000);
    expect(() => new PostgresPatroniTarget().launch('n7', ctx)).toThrow(/unknown node n7/);
  });

  it('the restart loop starts the command again after a failure and stops at a clean exit', async () => {
    const { execa } = await import('execa');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'zaris-certify-patroni-loop-'));
    try {
      // fails twice (exit 1), then exits 0: three runs, then the loop ends with 0
      const script = path.join(dir, 'flaky');
      writeFileSync(script, `#!/bin/sh\necho run >> "$1.count"\n[ "$(wc -l < "$1.count")" -ge 3 ]\n`, { mode: 0o755 });
      const r = await execa('/bin/sh', ['-c', PATRONI_SUPERVISOR, 'patroni', script, path.join(dir, 'c')], { timeout: 20_000 });
      expect(r.exitCode).toBe(0);
      expect(readFileSync(path.join(dir, 'c.count'), 'utf8').trim().split('\n')).toHaveLength(3);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('runs on the docker runtime (the node image carries its packages); a missing binary names what to install', async () => {
    const t = new PostgresPatroniTarget();
    expect(await t.unavailableReason('docker')).toBeNull();
    expect(() => t.partitionOf('other')).toThrow(/no store other/);
    expect(t.partitionOf('postgres')).toBe(0);
  });

  it("reads Patroni's answers: the running primary on the highest timeline leads; a replaced primary on an old timeline does not", () => {
    const n1 = parsePatroniView('n1', { role: 'master', state: 'running', timeline: 3, xlog: { location: 5000 }, replication: [{ application_name: 'n2', state: 'streaming', sync_state: 'sync' }, { client_addr: '127.9.7.13', state: 'catchup', sync_state: 'async' }] }, cluster);
    expect(n1).toEqual({ node: 'n1', role: 'primary', state: 'running', timeline: 3, lsn: 5000, streaming: ['n2'], sync: ['n2'] });
    const n2 = parsePatroniView('n2', { role: 'replica', state: 'running', timeline: 3, xlog: { replayed_location: 4900 } }, cluster);
    const old = parsePatroniView('n3', { role: 'primary', state: 'running', timeline: 2, xlog: { location: 9000 } }, cluster);
    expect(leaderOf([old, n1, n2])?.node).toBe('n1');
    expect(leaderOf([old, null, n2])?.node).toBe('n3');
    expect(leaderOf([n2, null])).toBeNull();
    expect(() => parsePatroniView('n1', 'nope', cluster)).toThrow(/unexpected/);
    const v = ownershipOf([n1, n2, old], 'postgres', ['n1', 'n2', 'n3']);
    expect(v.leader).toBe('n1');
    expect(v.rows[0]).toMatchObject({ active: 'n1', epoch: 3, health: 'Degraded', inSync: ['n1', 'n2'], replicatedRevision: revisionOf(3, 4900) });
    // each node that believes itself primary has its own row: two owners on different timelines
    expect(v.rows.slice(1).map((r) => [r.node, r.epoch])).toEqual([['n1', 3], ['n3', 2]]);
    expect(ownershipOf([null, null, null], 'postgres', ['n1', 'n2', 'n3']).rows[0]).toMatchObject({ active: null, health: 'Unavailable' });
  });
});
