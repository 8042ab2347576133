import fc from 'fast-check';
import { CONTRACT_FORMAT, type Contract, type ContractClaim } from '../contract.js';

/** The stores a generated contract describes (their modes decide which claims are possible). */
export type StoreShape = { name: string; replicationFactor: number; ackMode: 'sync' | 'async' };

/**
 * Valid contracts over the given stores: any subset of the claims the stores can use, lag bound
 * and lease null or a time, any fencing, linearizable reads and duplicates, each store durable
 * on a majority only where its mode allows (sync, RF > 1) and at random there.
 */
export function contractArb(stores: readonly StoreShape[]): fc.Arbitrary<Contract> {
  const possible: ContractClaim['class'][] = [
    ...(stores.some((s) => s.replicationFactor === 1) ? (['rf1'] as const) : []),
    ...(stores.some((s) => s.ackMode === 'async') ? (['async-ack'] as const) : []),
    'beyond-budget',
  ];
  const src = fc.constantFrom('redis.conf min-replicas-max-lag 1', 'etcd.io API guarantees', 'ASYNC_LAG default 1000 ms');
  const declared = <T>(v: fc.Arbitrary<T>) => fc.record({ value: v, source: src });
  return fc.record({
    format: fc.constant(CONTRACT_FORMAT),
    target: fc.constantFrom('zaris', 'etcd', 'redis-sentinel', 'example-kv'),
    stores: fc.tuple(...stores.map((s) => fc.record({ majority: fc.boolean(), source: src }).map(({ majority, source }) => ({ ...s, ackDurableOn: s.ackMode === 'sync' && s.replicationFactor > 1 && majority ? ('majority' as const) : ('one-node' as const), source })))),
    claims: fc.subarray(possible).chain((cls) => fc.tuple(...cls.map((c) => src.map((source) => ({ class: c, source }))))),
    asyncLagMs: declared(fc.option(fc.constantFrom(0, 300, 1000), { nil: null })),
    leaseMs: declared(fc.option(fc.constantFrom(400, 1500), { nil: null })),
    fencing: declared(fc.boolean()),
    linearizableReads: declared(fc.boolean()),
    duplicates: declared(fc.boolean()),
  });
}
