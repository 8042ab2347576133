/**
 * Every case of shared/cases/client-retry.json (seed 000) through the real runWithRetry on
 * virtual time. Operations take no time; sleeps move the virtual clock.
 */
import { describe, expect, it } from 'vitest';
import { sharedCases } from '../../test-support/shared-cases.js';
import { KvStatus, kvStatusName, parseKvStatus } from '../kv-status.js';
import { runWithRetry, type RetryDeps } from './retry-loop.js';
import { TransportError } from './transport-error.js';
import { instantSleep, VirtualClock } from './test-support/virtual-time.js';

type CaseResponse = string | { throw: string };

interface RetryCase {
  name: string;
  why: string;
  config: { maxAttempts: number; backoffMillis: number; timeoutMs: number | null; disableRetries?: boolean };
  responses: CaseResponse[];
  expected: {
    result: string | { throws: string };
    attempts: number;
    refreshes: number;
    delaysMs: number[];
    ledgerOutcome: 'ok' | 'fail' | 'info';
  };
}

// $ZARIS_CASES_DIR or ../shared/cases; where neither exists the suite is NOT run, and says why
const shared = sharedCases();
const file = shared.json<{ cases: RetryCase[] }>('client-retry.json', { cases: [] });

/** The case vocabulary for a thrown error: TransportError / TimeoutError / ConnectRefused / name. */
function thrownName(e: unknown): string {
  if (e instanceof TransportError) {
    if (e.kind === 'Timeout') return 'TimeoutError';
    if (e.kind === 'ConnectRefused') return 'ConnectRefused';
    if (e.kind === 'Transport') return 'TransportError';
    return e.kind;
  }
  return e instanceof Error ? e.name : String(e);
}

function errorFor(name: string): Error {
  switch (name) {
    case 'TransportError':
      return new TransportError('Transport', { mayHaveBeenSent: true });
    case 'TimeoutError':
      return new TransportError('Timeout');
    case 'ConnectRefused':
      return new TransportError('ConnectRefused', { mayHaveBeenSent: false });
    default: {
      const e = new Error(`case error ${name}`);
      e.name = name;
      return e;
    }
  }
}

function responseOf(r: CaseResponse): { status: KvStatus } | Error {
  if (typeof r === 'string') return { status: parseKvStatus(r) };
  const keys = Object.keys(r);
  if (keys.length !== 1 || keys[0] !== 'throw' || typeof r.throw !== 'string') {
    throw new Error(`unsupported response shape in case: ${JSON.stringify(r)}`);
  }
  return errorFor(r.throw);
}

describe.skipIf(shared.skip)(shared.title('client-retry cases (seed 000)'), () => {
  it('loads the cases', () => {
    expect(file.cases.length).toBeGreaterThanOrEqual(17);
    expect(new Set(file.cases.map((c) => c.name)).size).toBe(file.cases.length);
  });

  for (const c of file.cases) {
    it(c.name, async () => {
      const clock = new VirtualClock(1_000);
      const calls: number[] = [];
      const sleeps: number[] = [];
      let refreshCalls = 0;
      const sleep = instantSleep(clock);
      const deps: RetryDeps = {
        clock,
        sleep: (ms) => {
          sleeps.push(ms);
          return sleep(ms);
        },
        refreshMap: async () => {
          refreshCalls++;
        },
      };
      const responses = c.responses.map(responseOf);
      const outcome = await runWithRetry(
        async (attempt) => {
          calls.push(attempt);
          const r = responses[attempt - 1];
          if (r === undefined) throw new Error(`case ${c.name} has no response for attempt ${attempt}`);
          if (r instanceof Error) throw r;
          return r;
        },
        {
          maxAttempts: c.config.maxAttempts,
          backoffMillis: c.config.backoffMillis,
          timeoutMs: c.config.timeoutMs,
          disableRetries: c.config.disableRetries ?? false,
        },
        deps,
      );

      if (typeof c.expected.result === 'string') {
        expect(outcome.error).toBeUndefined();
        expect(outcome.result === undefined ? undefined : kvStatusName(outcome.result.status)).toBe(c.expected.result);
      } else {
        expect(outcome.result).toBeUndefined();
        expect(thrownName(outcome.error)).toBe(c.expected.result.throws);
        expect(outcome.error).toBe(responses[c.expected.attempts - 1]);
      }
      expect(outcome.attempts.length).toBe(c.expected.attempts);
      expect(outcome.attempts.map((a) => a.n)).toEqual(calls);
      expect(calls).toEqual(Array.from({ length: c.expected.attempts }, (_, i) => i + 1));
      expect(outcome.refreshes).toBe(c.expected.refreshes);
      expect(refreshCalls).toBe(c.expected.refreshes);
      expect(outcome.delaysMs).toEqual(c.expected.delaysMs);
      expect(sleeps).toEqual(c.expected.delaysMs.filter((d) => d > 0));
      expect(clock.now() - 1_000).toBe(c.expected.delaysMs.reduce((a, b) => a + b, 0));
      expect(outcome.ledgerOutcome).toBe(c.expected.ledgerOutcome);
      // each attempt's trace names what that attempt got
      outcome.attempts.forEach((a, i) => {
        const r = responses[i]!;
        if (r instanceof Error) {
          expect(a.status).toBeUndefined();
          expect(a.errorKind).toBe(r instanceof TransportError ? r.kind : r.name);
        } else {
          expect(a.status).toBe(r.status);
          expect(a.errorKind).toBeUndefined();
        }
      });
    });
  }
});
