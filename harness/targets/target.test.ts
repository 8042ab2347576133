import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkContract, endpointOf, impliedClaims, nodeOfHost, type TargetContract, type TargetStore } from './target.js';

const store = (over: Partial<TargetStore> = {}): TargetStore => ({ name: 's', replicationFactor: 3, ackMode: 'sync', partitions: 1, segments: 1, ...over });
const contract = (over: Partial<TargetContract> = {}): TargetContract => ({ stores: [store()], claims: [], leaseMs: null, explain: [], ...over });

describe('target contract', () => {
  it('claims follow from the stores: rf1 for an RF1 store, async-ack for an async one', () => {
    expect(impliedClaims([store()])).toEqual([]);
    expect(impliedClaims([store({ ackMode: 'async' })])).toEqual(['async-ack']);
    expect(impliedClaims([store({ name: 'a', replicationFactor: 1 }), store({ name: 'b', ackMode: 'async' })])).toEqual(['rf1', 'async-ack']);
  });

  it('refuses a contract whose claims the stores do not imply, or that misses one they do', () => {
    expect(() => checkContract(contract())).not.toThrow();
    expect(() => checkContract(contract({ claims: ['async-ack'], explain: ['x'] }))).toThrow(/imply claims \[\] but the contract claims \[async-ack\]/);
    expect(() => checkContract(contract({ stores: [store({ ackMode: 'async' })] }))).toThrow(/imply claims \[async-ack\]/);
    expect(() => checkContract(contract({ stores: [store({ ackMode: 'async' })], claims: ['async-ack'] }))).toThrow(/explanation/);
  });

  it('refuses bad stores and leases', () => {
    expect(() => checkContract(contract({ stores: [] }))).toThrow(/no store/);
    expect(() => checkContract(contract({ stores: [store(), store()] }))).toThrow(/twice/);
    expect(() => checkContract(contract({ stores: [store({ name: 'Bad Name' })] }))).toThrow(/store name/);
    expect(() => checkContract(contract({ stores: [store({ replicationFactor: 0 })] }))).toThrow(/replication factor/);
    expect(() => checkContract(contract({ stores: [store({ partitions: 2, segments: 1 })] }))).toThrow(/partitions/);
    expect(() => checkContract(contract({ leaseMs: 0 }))).toThrow(/leaseMs/);
  });

  it('property: any store set with its implied claims and explanations is accepted', () => {
    const arbStore = fc.record({ replicationFactor: fc.integer({ min: 1, max: 5 }), ackMode: fc.constantFrom('sync' as const, 'async' as const) });
    fc.assert(
      fc.property(fc.array(arbStore, { minLength: 1, maxLength: 4 }), (raw) => {
        const stores = raw.map((s, i) => store({ ...s, name: `s${i}` }));
        const claims = impliedClaims(stores);
        expect(() => checkContract({ stores, claims, leaseMs: null, explain: claims.map((c) => c) })).not.toThrow();
      }),
      { seed: 15, numRuns: 300 },
    );
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
