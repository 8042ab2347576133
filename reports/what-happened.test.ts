import { afterEach, describe, expect, it } from 'vitest';
import { verifyLedger } from '../harness/verifier/verifier.js';
import { buildResults, type Results } from './results.js';
import { closeLedgers, ledger } from './test-support/report-ledger.js';
import { whatHappened } from './what-happened.js';

afterEach(() => closeLedgers());

function results(): Results {
  const db = ledger();
  return buildResults(db, verifyLedger(db));
}

describe('whatHappened', () => {
  it('tells the run, the faults by kind, the failovers, the writes, the findings and the first violation', () => {
    const w = whatHappened(results());
    expect(w.text).toBe(
      'The fault phase ran 1:10.1 on the process runtime (seed 42). The nemesis injected 3 faults: 1 kill, 1 pause, 1 partition. ' +
        '1 failover was measured (a killed or stopped owner to the first acknowledged write on its partition): p50 950 ms, max 950 ms. ' +
        '3 writes were acknowledged, 0 failed and 1 ended indeterminate. The verifier found 2 findings in 2 incidents: 1 violation, 1 info finding (no loss).',
    );
    expect(w.firstViolation).toEqual({
      incident: 1,
      sentence: 'First violation (incident #1): 1 violation (1 lost acknowledged write) of sync3/0 at 0:00.2, missing after the ownership change to n2 at epoch 2 (0:01.2); the runtime map went n1@e1 → n2@e2 at 0:01.2.',
    });
  });

  it('names the target (not the self-test bug: the banner has its own line), counts in thousands, says when no failover was measured or no fault injected', () => {
    const r = results();
    const bigger: Results = {
      ...r,
      target: { name: 'zaris', version: 'zaris 0.1.0', clientLibrary: 'zaris client' },
      selfTestBug: 'stale-owner-acks',
      faults: { kill: 2, stop: 0, pause: 0, partition: 5, 'client-cut': 1, clock: 2 },
      failover: { count: 0, p50Ms: 0, p95Ms: 0, maxMs: 0 },
      counts: { attempted: 160_000, acknowledged: 150_125, failed: 14_089, indeterminate: 1 },
      summary: { violation: 0, rf1: 1_200, 'async-ack': 0, 'beyond-budget': 0, info: 0 },
      incidents: [],
    };
    expect(whatHappened(bigger)).toEqual({
      text:
        'The fault phase ran 1:10.1 against zaris 0.1.0 on the process runtime (seed 42). ' +
        'The nemesis injected 10 faults: 2 kills, 5 partitions, 1 client cut, 2 clock faults. No failover was measured. ' +
        '150,125 writes were acknowledged, 14,089 failed and 1 ended indeterminate. The verifier found 1,200 findings: 1,200 rf1 losses (allowed).',
      firstViolation: null,
    });
    const quiet: Results = { ...r, durationMs: null, runtime: null, seed: null, faults: { kill: 0, stop: 0, pause: 0, partition: 0 }, failover: { count: 0, p50Ms: 0, p95Ms: 0, maxMs: 0 }, summary: { violation: 0, rf1: 0, 'async-ack': 0, 'beyond-budget': 0, info: 0 }, incidents: [] };
    expect(whatHappened(quiet).text).toBe('No fault was injected. 3 writes were acknowledged, 0 failed and 1 ended indeterminate. The verifier found nothing to report.');
  });
});
