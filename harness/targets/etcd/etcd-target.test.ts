import { describe, expect, it } from 'vitest';
import type { LaunchContext } from '../target.js';
import { EtcdTarget } from './etcd-target.js';

const ctx: LaunchContext = {
  cluster: { nodes: [{ id: 'n1', host: '127.9.8.11' }, { id: 'n2', host: '127.9.8.12' }, { id: 'n3', host: '127.9.8.13' }], ports: { client: 2379, peer: 2380 } },
  dataDir: '/data/n2',
  runtime: 'process',
  runTag: 'r1a2b3c',
};

describe('etcd target', () => {
  const t = new EtcdTarget({ electionMs: 800 });

  it('claims no loss: one store replicated on all three members, acknowledged on a majority, reads linearizable', () => {
    const c = t.contract;
    expect(c.target).toBe('etcd');
    expect(c.stores).toEqual([{ name: 'etcd', replicationFactor: 3, ackMode: 'sync', ackDurableOn: 'majority', partitions: 1, segments: 1, source: expect.stringMatching(/Raft on all 3 members/) }]);
    expect(c.claims).toEqual([]);
    expect([c.asyncLagMs.value, c.leaseMs.value, c.fencing.value, c.linearizableReads.value, c.duplicates.value]).toEqual([null, null, true, true, false]);
    // every parameter says where it comes from
    for (const d of [c.asyncLagMs, c.leaseMs, c.fencing, c.linearizableReads, c.duplicates]) expect(d.source.length).toBeGreaterThan(20);
    expect(t.partitionOf('etcd')).toBe(0);
    expect(() => t.partitionOf('other')).toThrow(/no store other/);
  });

  it('launches one etcd per node on its own address, naming every peer, its data in the node folder', () => {
    const l = t.launch('n2', ctx);
    expect(l.files).toBeUndefined();
    expect(l.processes).toHaveLength(1);
    const p = l.processes[0];
    expect(p).toMatchObject({ name: 'etcd', command: '/usr/bin/etcd', readyPort: 'client' });
    const arg = (flag: string): string => p.args[p.args.indexOf(flag) + 1];
    expect(arg('--name')).toBe('n2');
    expect(arg('--data-dir')).toBe('/data/n2/etcd');
    expect(arg('--listen-client-urls')).toBe('http://127.9.8.12:2379');
    expect(arg('--listen-peer-urls')).toBe('http://127.9.8.12:2380');
    expect(arg('--initial-cluster')).toBe('n1=http://127.9.8.11:2380,n2=http://127.9.8.12:2380,n3=http://127.9.8.13:2380');
    expect(arg('--initial-cluster-token')).toBe('zaris-certify-r1a2b3c');
    expect(arg('--election-timeout')).toBe('800');
    expect(() => t.launch('n9', ctx)).toThrow(/unknown node/);
  });
});
