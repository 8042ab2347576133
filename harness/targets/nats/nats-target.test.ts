import { describe, expect, it } from 'vitest';
import type { LaunchContext } from '../target.js';
import { natsContract } from './nats-contract.js';
import { NATS_NO_DOCKER, NatsJetStreamTarget } from './nats-target.js';

const ctx: LaunchContext = {
  cluster: { nodes: [{ id: 'n1', host: '127.9.8.11' }, { id: 'n2', host: '127.9.8.12' }, { id: 'n3', host: '127.9.8.13' }], ports: { client: 4222, cluster: 6222, monitor: 8222 } },
  dataDir: '/data/n2',
  runtime: 'process',
  runTag: 'r1a2b3c',
};

describe('NATS JetStream target', () => {
  const t = new NatsJetStreamTarget();

  it('claims no loss: one store, the R3 stream, acknowledged by its Raft majority; each key written once', () => {
    expect(t.contract).toEqual(natsContract());
    expect(t.contract).toMatchObject({ target: 'nats-jetstream', claims: [], stores: [{ name: 'nats', replicationFactor: 3, ackMode: 'sync', ackDurableOn: 'majority', partitions: 1, segments: 1 }] });
    expect([t.contract.asyncLagMs.value, t.contract.leaseMs.value, t.contract.linearizableReads.value, t.contract.duplicates.value]).toEqual([null, null, false, true]);
    expect(t.workload).toEqual({ writesPerKey: { min: 1, max: 1 }, readFraction: 0, batchReadFraction: 0 });
    expect(t.stream).toEqual({ stream: 'zaris-certify', prefix: 'zc', replicas: 3, duplicateWindowMs: 120_000 });
    expect(t.partitionOf('nats')).toBe(0);
    expect(() => t.partitionOf('other')).toThrow(/no store other/);
    expect(t.clientLibrary).toBe('nats 2.29.3');
    expect(t.scope.tested.length).toBeGreaterThan(0);
    expect(t.scope.notTested.some((x) => /page cache/.test(x))).toBe(true);
  });

  it('reads during the run only when asked (NATS_READS=1), and the scope says which', () => {
    expect(t.scope.tested.some((x) => x.startsWith('reads of a key'))).toBe(false);
    expect(t.scope.notTested).toContain('reads during the run (NATS_READS=1 turns them on, judged as linearizable)');
    const r = new NatsJetStreamTarget({ reads: true });
    expect(r.workload).toEqual({ writesPerKey: { min: 1, max: 1 } });
    expect(r.scope.tested.some((x) => x.startsWith('reads of a key'))).toBe(true);
    expect(r.options).toMatchObject({ reads: true });
    expect(r.contract.linearizableReads.value).toBe(true);
  });

  it('launches one nats-server per node from a config file written at its first start', () => {
    const l = t.launch('n2', ctx);
    expect(l.processes).toEqual([{ name: 'nats', command: '/usr/sbin/nats-server', args: ['-c', '/data/n2/nats.conf'], readyPort: 'client' }]);
    expect(l.files).toHaveLength(1);
    expect(l.files![0].path).toBe('nats.conf');
    const conf = l.files![0].content;
    expect(conf).toContain('server_name: n2\n');
    expect(conf).toContain('listen: "127.9.8.12:4222"');
    expect(conf).toContain('http: "127.9.8.12:8222"');
    expect(conf).toContain('jetstream { store_dir: "/data/n2" }');
    expect(conf).toContain('name: "zaris-certify-r1a2b3c"');
    expect(conf).toContain('listen: "127.9.8.12:6222"');
    expect(conf).toContain('routes: [ "nats-route://127.9.8.11:6222", "nats-route://127.9.8.12:6222", "nats-route://127.9.8.13:6222" ]');
    expect(conf).toContain('ping_interval: "2s"');
    expect(() => t.launch('n9', ctx)).toThrow(/unknown node/);
  });

  it('refuses the docker runtime in one line; a missing binary names the package to install', async () => {
    expect(await t.unavailableReason('docker')).toBe(NATS_NO_DOCKER);
    expect(NATS_NO_DOCKER).not.toContain('\n');
    const missing = new NatsJetStreamTarget({ binary: '/nonexistent/nats-server' });
    expect(await missing.unavailableReason('process')).toBe('nats-server is not installed: no executable /nonexistent/nats-server (apt-get install nats-server)');
  });

  it('refuses a stream name or subject prefix NATS would not take', () => {
    expect(() => new NatsJetStreamTarget({ stream: { stream: 'a.b' } })).toThrow(/stream name/);
    expect(() => new NatsJetStreamTarget({ stream: { prefix: 'a.b' } })).toThrow(/subject prefix/);
  });
});
