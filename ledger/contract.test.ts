import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkContract, CONTRACT_FORMAT, ContractError, contractRules, letterContract, LETTER_SOURCE, parseContract, type Contract } from './contract.js';
import { contractArb, type StoreShape } from './test-support/random-contract.js';

const STORES: StoreShape[] = [
  { name: 'sync3', replicationFactor: 3, ackMode: 'sync' },
  { name: 'async3', replicationFactor: 3, ackMode: 'async' },
  { name: 'rf1', replicationFactor: 1, ackMode: 'sync' },
];

function redisLike(): Contract {
  return {
    format: CONTRACT_FORMAT,
    target: 'redis-sentinel',
    stores: [{ name: 'redis', replicationFactor: 3, ackMode: 'async', ackDurableOn: 'one-node', source: 'asynchronous replication' }],
    claims: [{ class: 'async-ack', source: 'Sentinel failovers' }],
    asyncLagMs: { value: null, source: 'no bound' },
    leaseMs: { value: 4000, source: 'min-replicas-max-lag 1' },
    fencing: { value: false, source: 'no fencing token' },
    linearizableReads: { value: false, source: 'reads from the master' },
    duplicates: { value: false, source: 'one script per write' },
  };
}

describe('contract declaration (zaris-contract/1)', () => {
  it('property: a valid contract survives JSON and the parser unchanged; extra fields are dropped', () => {
    fc.assert(
      fc.property(contractArb(STORES), (c) => {
        expect(parseContract(JSON.parse(JSON.stringify({ ...c, extra: 1 })))).toEqual(c);
      }),
      { seed: 23, numRuns: 300 },
    );
  });

  type Mutation = [string, (c: any) => void, string];
  const MUTATIONS: Mutation[] = [
    ['format', (c) => (c.format = 'zaris-contract/2'), 'contract.format must be "zaris-contract/1"'],
    ['target', (c) => (c.target = ''), 'contract.target must be a non-empty string'],
    ['stores', (c) => (c.stores = {}), 'contract.stores must be an array'],
    ['no store', (c) => (c.stores = []), 'contract.stores must list at least one store'],
    ['store rf', (c) => (c.stores[0].replicationFactor = 0), 'contract.stores[0].replicationFactor must be an integer >= 1'],
    ['store mode', (c) => (c.stores[0].ackMode = 'lazy'), 'contract.stores[0].ackMode must be sync or async'],
    ['durable', (c) => (c.stores[0].ackDurableOn = 'disk'), 'contract.stores[0].ackDurableOn must be majority or one-node'],
    ['async on a majority', (c) => (c.stores[0].ackDurableOn = 'majority'), 'contract.stores[0] (redis) acknowledges on one node (async): ackDurableOn must be one-node'],
    ['store source', (c) => delete c.stores[0].source, 'contract.stores[0].source must be a non-empty string'],
    ['claim class', (c) => (c.claims[0].class = 'eventual'), 'contract.claims[0].class must be rf1, async-ack, beyond-budget'],
    ['claim twice', (c) => c.claims.push({ class: 'async-ack', source: 'again' }), 'contract.claims[1] claims async-ack twice'],
    ['rf1 without an RF1 store', (c) => c.claims.push({ class: 'rf1', source: 'x' }), 'contract.claims[1] claims rf1, but no store has replication factor 1'],
    ['lease', (c) => (c.leaseMs.value = -1), 'contract.leaseMs.value must be a number of milliseconds >= 0, or null'],
    ['lag source', (c) => (c.asyncLagMs.source = ' '), 'contract.asyncLagMs.source must be a non-empty string'],
    ['fencing', (c) => (c.fencing = true), 'contract.fencing must be an object'],
    ['reads', (c) => (c.linearizableReads.value = 'yes'), 'contract.linearizableReads.value must be true or false'],
    ['duplicates', (c) => delete c.duplicates, 'contract.duplicates must be an object'],
  ];
  it.each(MUTATIONS)('refuses a bad %s in one line naming the field', (_n, mutate, message) => {
    const c = JSON.parse(JSON.stringify(redisLike()));
    mutate(c);
    let err: unknown;
    try {
      parseContract(c);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ContractError);
    expect((err as Error).message).toBe(message);
  });

  it('names the field where it sits (run.contract in a history)', () => {
    expect(() => parseContract({ ...redisLike(), target: 3 }, 'run.contract')).toThrow('run.contract.target must be a non-empty string');
    expect(() => checkContract({ ...redisLike(), stores: [] }, 'redis contract')).toThrow('redis contract.stores must list at least one store');
  });

  it("the letter: every class its stores can use, the run's lag and lease, fencing and linearizable reads", () => {
    const c = letterContract({ asyncLagMaxMs: 1000, leaseMs: 2500 }, STORES);
    expect(c.claims.map((k) => k.class)).toEqual(['rf1', 'async-ack', 'beyond-budget']);
    expect(c.stores.map((s) => [s.name, s.ackDurableOn])).toEqual([['sync3', 'majority'], ['async3', 'one-node'], ['rf1', 'one-node']]);
    expect([c.asyncLagMs.value, c.leaseMs.value, c.fencing.value, c.linearizableReads.value, c.duplicates.value]).toEqual([1000, 2500, true, true, false]);
    expect(c.fencing.source).toBe(LETTER_SOURCE);
    expect(letterContract({ asyncLagMaxMs: 0 }, [STORES[0]]).claims.map((k) => k.class)).toEqual(['beyond-budget']);
    expect(letterContract({ asyncLagMaxMs: 0 }, [STORES[0]]).leaseMs.value).toBeNull();
    expect(() => parseContract(JSON.parse(JSON.stringify(c)))).not.toThrow();
  });

  it('the rules a contract gates: the claims, the parameters, majority acks per store', () => {
    const r = contractRules(redisLike());
    expect([r.rf1, r.asyncAck, r.beyondBudget, r.asyncLagMs, r.leaseMs, r.fencing, r.staleReads, r.replicationLag]).toEqual([false, true, false, null, 4000, false, false, false]);
    const z = contractRules(letterContract({ asyncLagMaxMs: 1000 }, STORES));
    expect([z.rf1, z.asyncAck, z.beyondBudget, z.replicationLag, z.staleReads, z.fencing]).toEqual([true, true, true, true, true, true]);
    expect(STORES.map((s) => z.majorityAck(s))).toEqual([true, false, false]);
    // a store the contract does not list: sync with RF > 1 acknowledges on a majority (the letter)
    expect(r.majorityAck({ name: 'other', replicationFactor: 3, ackMode: 'sync' })).toBe(true);
    expect(r.majorityAck({ name: 'redis', replicationFactor: 3, ackMode: 'async' })).toBe(false);
  });
});
