import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CONTRACT_RULES, contractJudged, describeContract, judgedRules } from './contract-judged.js';
import { contractRules, letterContract } from './contract.js';
import { contractArb } from './test-support/random-contract.js';

const STORES = [
  { name: 'sync3', replicationFactor: 3, ackMode: 'sync' as const },
  { name: 'async3', replicationFactor: 3, ackMode: 'async' as const },
  { name: 'rf1', replicationFactor: 1, ackMode: 'sync' as const },
];

describe('contract judged', () => {
  it('the letter, within the budget: every rule judged but beyond-budget (not past the budget) and duplicates', () => {
    const rules = judgedRules(letterContract({ asyncLagMaxMs: 1000, leaseMs: 2500 }, STORES), { beyondBudget: false });
    expect(rules.map((r) => r.rule)).toEqual([...CONTRACT_RULES]);
    expect(Object.fromEntries(rules.map((r) => [r.rule, [r.judged, r.value]]))).toEqual({
      rf1: [true, null],
      'async-ack': [true, null],
      'async-lag-bound': [true, 1000],
      'owner-lease': [true, 2500],
      fencing: [true, true],
      'beyond-budget': [false, false],
      'replication-lag': [true, 1000],
      'stale-read': [true, true],
      'under-replicated-ack': [true, ['sync3']],
      duplicates: [false, false],
    });
    expect(rules.find((r) => r.rule === 'beyond-budget')?.meaning).toMatch(/claimed, but the run stayed within the fault budget/);
  });

  it('property: a rule is judged only where the contract gives it (claims, parameters, stores)', () => {
    fc.assert(
      fc.property(contractArb(STORES), fc.boolean(), (c, beyondBudget) => {
        const r = contractRules(c);
        const j = Object.fromEntries(judgedRules(c, { beyondBudget }).map((x) => [x.rule, x]));
        expect(j.rf1.judged).toBe(r.rf1);
        expect(j['async-ack'].judged).toBe(r.asyncAck);
        expect(j['beyond-budget'].judged).toBe(r.beyondBudget && beyondBudget);
        expect(j['replication-lag'].judged).toBe(c.asyncLagMs.value !== null);
        expect(j['stale-read'].judged).toBe(c.linearizableReads.value);
        expect(j['owner-lease'].judged).toBe(r.asyncAck && c.leaseMs.value !== null);
        expect(j.fencing.judged).toBe(r.asyncAck && c.fencing.value);
        expect(j['under-replicated-ack'].value).toEqual(c.stores.filter((s) => s.ackDurableOn === 'majority').map((s) => s.name));
        expect(j.duplicates.judged).toBe(false);
        for (const x of Object.values(j)) expect(x.source.trim()).not.toBe('');
        const whole = contractJudged(c, 'ledger', { beyondBudget });
        expect(whole.declaration).toBe(c);
        expect(whole.target).toBe(c.target);
      }),
      { seed: 7, numRuns: 300 },
    );
  });

  it('one console line', () => {
    expect(describeContract(letterContract({ asyncLagMaxMs: 1000 }, STORES))).toBe(
      'contract (history-format.md): claims rf1, async-ack, beyond-budget; async lag bound 1000 ms; owner lease none; fencing yes; linearizable reads yes',
    );
  });
});
