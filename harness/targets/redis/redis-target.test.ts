import { describe, expect, it } from 'vitest';
import type { LaunchContext } from '../target.js';
import { RedisSentinelTarget } from './redis-target.js';

const ctx: LaunchContext = {
  cluster: { nodes: [{ id: 'n1', host: '127.9.8.11' }, { id: 'n2', host: '127.9.8.12' }, { id: 'n3', host: '127.9.8.13' }], ports: { redis: 6379, sentinel: 26379 } },
  dataDir: '/data/n2',
  runtime: 'process',
  runTag: 'r1a2b3c',
};

describe('Redis with Sentinel target', () => {
  it('claims async-ack for its one async store, with the lease of min-replicas-max-lag', () => {
    const t = new RedisSentinelTarget();
    expect(t.contract.stores).toEqual([{ name: 'redis', replicationFactor: 3, ackMode: 'async', partitions: 1, segments: 1 }]);
    expect(t.contract.claims).toEqual(['async-ack']);
    expect(t.contract.leaseMs).toBe(4_000);
    expect(t.contract.explain[0]).toMatch(/higher config epoch.*within 4 s/);
    expect(new RedisSentinelTarget({ minReplicasMaxLagS: 3 }).contract.leaseMs).toBe(6_000);
    // Redis's own default (min-replicas-to-write 0) declares no lease
    const unsafe = new RedisSentinelTarget({ minReplicasToWrite: 0 });
    expect(unsafe.contract.leaseMs).toBeNull();
    expect(unsafe.contract.explain[0]).toMatch(/for as long as the partition lasts/);
  });

  it('launches redis-server then its Sentinel on the node address; n1 starts as the master', () => {
    const t = new RedisSentinelTarget({ downAfterMs: 5_000 });
    const l = t.launch('n2', ctx);
    expect(l.processes.map((p) => [p.name, p.command, p.args, p.readyPort])).toEqual([
      ['redis', '/usr/bin/redis-server', ['/data/n2/redis.conf'], 'redis'],
      ['sentinel', '/usr/bin/redis-sentinel', ['/data/n2/sentinel.conf'], 'sentinel'],
    ]);
    const redis = l.files!.find((f) => f.path === 'redis.conf')!.content.split('\n');
    expect(redis).toEqual(expect.arrayContaining(['bind 127.9.8.12', 'port 6379', 'dir /data/n2', 'appendonly yes', 'bind-source-addr 127.9.8.12', 'replica-announce-ip 127.9.8.12', 'min-replicas-to-write 1', 'min-replicas-max-lag 1', 'replicaof 127.9.8.11 6379']));
    const sentinel = l.files!.find((f) => f.path === 'sentinel.conf')!.content.split('\n');
    expect(sentinel).toEqual(expect.arrayContaining(['bind 127.9.8.12', 'port 26379', 'sentinel announce-ip 127.9.8.12', 'sentinel monitor zaris 127.9.8.11 6379 2', 'sentinel down-after-milliseconds zaris 5000']));
    expect(t.launch('n1', ctx).files!.find((f) => f.path === 'redis.conf')!.content).not.toMatch(/replicaof/);
  });
});
