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
  it("claims async-ack for its one async store; Redis's knobs, not Zaris's lag bound, are its parameters", () => {
    const t = new RedisSentinelTarget();
    const c = t.contract;
    expect(c.stores).toEqual([{ name: 'redis', replicationFactor: 3, ackMode: 'async', ackDurableOn: 'one-node', partitions: 1, segments: 1, source: expect.stringMatching(/asynchronous replication/) }]);
    expect(c.claims.map((k) => k.class)).toEqual(['async-ack']);
    expect(c.claims[0].source).toMatch(/failover at a higher config epoch/);
    // no async lag bound: Redis promises none (no replication-lag check)
    expect(c.asyncLagMs.value).toBeNull();
    // min-replicas-max-lag 1 s (this target's setting) as Redis defines it: 1 + 3 s
    expect(c.leaseMs.value).toBe(4_000);
    expect(c.leaseMs.source).toMatch(/min-replicas-to-write 1, min-replicas-max-lag 1 \(set by this target; Redis's defaults 0 and 10\).*at most 4 s after a cut/);
    expect([c.fencing.value, c.linearizableReads.value, c.duplicates.value]).toEqual([false, false, false]);
    expect(new RedisSentinelTarget({ minReplicasMaxLagS: 10 }).contract.leaseMs.value).toBe(13_000);
    // Redis's own default (min-replicas-to-write 0) declares no lease
    const unsafe = new RedisSentinelTarget({ minReplicasToWrite: 0 });
    expect(unsafe.contract.leaseMs.value).toBeNull();
    expect(unsafe.contract.leaseMs.source).toMatch(/for as long as the cut lasts/);
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
