import { describe, expect, it } from 'vitest';
import { checkTargetContract, declarationOf, endpointOf, faultRefusals, nodeOfHost, ZARIS_ONLY_FAULTS, type TargetContract } from './target.js';
import { etcdContract } from './etcd/etcd-contract.js';
import { redisContract } from './redis/redis-contract.js';

const etcd = (): TargetContract => etcdContract();

describe('target contract', () => {
  it('the declaration the ledger stores is the contract without the stores\' partitioning', () => {
    const d = declarationOf(etcd());
    expect(d.stores).toEqual([{ name: 'etcd', replicationFactor: 3, ackMode: 'sync', ackDurableOn: 'majority', source: etcd().stores[0].source }]);
    expect({ ...d, stores: [] }).toEqual({ ...etcd(), stores: [] });
  });

  it('refuses bad partitioning and what the declaration check refuses, in one line naming the target', () => {
    expect(() => checkTargetContract(etcd())).not.toThrow();
    expect(() => checkTargetContract(redisContract({ store: 'r', nodes: 3, minReplicasToWrite: 1, minReplicasMaxLagS: 1 }))).not.toThrow();
    const c = etcd();
    expect(() => checkTargetContract({ ...c, stores: [{ ...c.stores[0], partitions: 2, segments: 1 }] })).toThrow(/^etcd contract: store etcd needs 1 <= partitions <= segments$/);
    expect(() => checkTargetContract({ ...c, claims: [{ class: 'async-ack', source: 'x' }] })).toThrow(/^etcd contract\.claims\[0\] claims async-ack, but no store is async$/);
    expect(() => checkTargetContract({ ...c, stores: [] })).toThrow(/at least one store/);
  });

  it('every target refuses the Zaris-only fault kinds, and its own, each with a one-line reason', () => {
    const plain = faultRefusals({ name: 'etcd' });
    expect(plain.map(([k]) => k).sort()).toEqual(Object.keys(ZARIS_ONLY_FAULTS).sort());
    expect(plain.find(([k]) => k === 'clock')?.[1]).toMatch(/^TARGET=etcd: clock faults are only available for TARGET=zaris/);
    const single = faultRefusals({ name: 'etcd', unsupportedFaults: { partition: 'one node: nothing to cut it from' } });
    expect(single.find(([k]) => k === 'partition')?.[1]).toBe('TARGET=etcd: one node: nothing to cut it from');
    for (const [, why] of single) expect(why).not.toMatch(/\n/);
  });

  it('addresses: a node named port, the node of an address', () => {
    const cluster = { nodes: [{ id: 'n1', host: '127.1.1.11' }, { id: 'n2', host: '127.1.1.12' }], ports: { client: 2379 } };
    expect(endpointOf(cluster, 'n2', 'client')).toEqual({ host: '127.1.1.12', port: 2379 });
    expect(() => endpointOf(cluster, 'n3', 'client')).toThrow(/unknown node/);
    expect(() => endpointOf(cluster, 'n1', 'peer')).toThrow(/unknown port/);
    expect(nodeOfHost(cluster, '127.1.1.11')).toBe('n1');
    expect(nodeOfHost(cluster, '127.0.0.1')).toBeNull();
  });
});
