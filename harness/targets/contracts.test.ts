import { describe, expect, it } from 'vitest';
import { contractRules, letterContract, parseContract } from '../../ledger/contract.js';
import { contractFromRunConfig } from './contracts.js';
import { declarationOf } from './target.js';
import { EtcdTarget } from './etcd/etcd-target.js';
import { RedisSentinelTarget } from './redis/redis-target.js';
import { NatsJetStreamTarget } from './nats/nats-target.js';
import { zarisContract } from './zaris-contract.js';

const ZARIS_STORES = [
  { name: 'sync3', replicationFactor: 3, ackMode: 'sync' as const },
  { name: 'async3', replicationFactor: 3, ackMode: 'async' as const },
  { name: 'rf1', replicationFactor: 1, ackMode: 'sync' as const },
];

describe("the targets' declarations", () => {
  it("Zaris's contract gates exactly as the letter does, with the run's lag bound and the nodes' lease", () => {
    const z = zarisContract({ stores: ZARIS_STORES, asyncLagMs: 750, asyncLagFromOption: true, leaseMs: 2100 });
    expect(parseContract(JSON.parse(JSON.stringify(z)))).toEqual(z);
    const { majorityAck: zm, ...zr } = contractRules(z);
    const { majorityAck: lm, ...lr } = contractRules(letterContract({ asyncLagMaxMs: 750, leaseMs: 2100 }, ZARIS_STORES));
    expect(zr).toEqual(lr);
    expect(ZARIS_STORES.map(zm)).toEqual(ZARIS_STORES.map(lm));
    expect(z.asyncLagMs.source).toMatch(/^ASYNC_LAG= 750 ms/);
    expect(z.leaseMs.source).toMatch(/ownerLeaseMs 2100 ms/);
    expect(zarisContract({ stores: ZARIS_STORES, asyncLagMs: 1000, leaseMs: null }).asyncLagMs.source).toMatch(/^ASYNC_LAG default 1000 ms/);
    // a scenario's stores without an RF1 or async store claim only what they can use
    expect(zarisContract({ stores: [ZARIS_STORES[0]], asyncLagMs: 1000, leaseMs: null }).claims.map((c) => c.class)).toEqual(['beyond-budget']);
  });

  it('a ledger from before contracts: judged by its target\'s declaration, from its run config', () => {
    const redis = contractFromRunConfig({ target: 'redis-sentinel', asyncLagMaxMs: 1000, leaseMs: 4000, clientOptions: { minReplicasToWrite: 1, minReplicasMaxLagS: 1 } }, [{ name: 'redis', replicationFactor: 3, ackMode: 'async' }], false);
    expect(redis).toEqual(declarationOf(new RedisSentinelTarget().contract));
    const unsafe = contractFromRunConfig({ target: 'redis-sentinel', clientOptions: { minReplicasToWrite: 0, minReplicasMaxLagS: 1 } }, [{ name: 'redis', replicationFactor: 3, ackMode: 'async' }], false);
    expect(unsafe.leaseMs.value).toBeNull();
    expect(contractFromRunConfig({ target: 'nats-jetstream' }, [{ name: 'nats', replicationFactor: 3, ackMode: 'sync' }], false)).toEqual(declarationOf(new NatsJetStreamTarget().contract));
    expect(contractFromRunConfig({ target: 'nats-jetstream', clientOptions: { reads: true } }, [{ name: 'nats', replicationFactor: 3, ackMode: 'sync' }], false)).toEqual(declarationOf(new NatsJetStreamTarget({ reads: true }).contract));
    expect(contractFromRunConfig({ target: 'etcd' }, [{ name: 'etcd', replicationFactor: 3, ackMode: 'sync' }], false)).toEqual(declarationOf(new EtcdTarget().contract));
    // no target in the run config: a Zaris run from before targets
    expect(contractFromRunConfig({ asyncLagMaxMs: 500, leaseMs: 2500 }, ZARIS_STORES, false)).toEqual(zarisContract({ stores: ZARIS_STORES, asyncLagMs: 500, leaseMs: 2500 }));
    // an imported history: the letter
    expect(contractFromRunConfig({ asyncLagMaxMs: 500 }, ZARIS_STORES, true)).toEqual(letterContract({ asyncLagMaxMs: 500, leaseMs: null }, ZARIS_STORES));
    expect(contractFromRunConfig({ target: 'cassandra' }, ZARIS_STORES, false).target).toBe('cassandra');
  });
});
