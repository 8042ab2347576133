import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KvStatus } from '../kv-status.js';
import {
  RetryAbortedError,
  runWithRetry,
  unwrapRetryOutcome,
  type RetryDeps,
  type RetryOutcome,
} from './retry-loop.js';
import { DEFAULT_RETRY_OPTIONS, shouldRetry, type RetryOptions } from './retry-policy.js';
import { SharedMapRefresher } from './shared-map-refresh.js';
import { TransportError, type TransportErrorKind } from './transport-error.js';
import { instantSleep, scheduledSleep, scheduledTimers, VirtualClock } from './test-support/virtual-time.js';

interface Reply {
  status: KvStatus;
  node?: string;
  epoch?: number;
}

/** A scripted attempt: a reply or an error, taking `takesMs` of virtual time. */
type Step = { reply: Reply; takesMs?: number } | { error: unknown; takesMs?: number };

function scripted(clock: VirtualClock, steps: Step[]) {
  const calls: number[] = [];
  const operation = async (attempt: number): Promise<Reply> => {
    calls.push(attempt);
    const step = steps[attempt - 1];
    if (step === undefined) throw new Error(`no step for attempt ${attempt}`);
    clock.advanceTo(clock.now() + (step.takesMs ?? 0));
    if ('error' in step) throw step.error;
    return step.reply;
  };
  return { operation, calls };
}

function virtualDeps(clock: VirtualClock, refreshMs = 0, refreshFails = false) {
  const sleeps: number[] = [];
  let refreshes = 0;
  const sleep = instantSleep(clock);
  const deps: RetryDeps = {
    clock,
    sleep: (ms) => {
      sleeps.push(ms);
      return sleep(ms);
    },
    refreshMap: async () => {
      refreshes++;
      clock.advanceTo(clock.now() + refreshMs);
      if (refreshFails) throw new Error('metadata fetch failed');
    },
  };
  return { deps, sleeps, refreshCount: () => refreshes };
}

const opts = (o: Partial<RetryOptions> = {}): RetryOptions => ({ ...DEFAULT_RETRY_OPTIONS, ...o });
const ok = (node = 'n1', epoch = 1): Step => ({ reply: { status: KvStatus.Ok, node, epoch } });
const st = (status: KvStatus, node = 'n1', epoch = 1): Step => ({ reply: { status, node, epoch } });
const boom = (kind: TransportErrorKind, mayHaveBeenSent?: boolean): Step => ({
  error: new TransportError(kind, mayHaveBeenSent === undefined ? {} : { mayHaveBeenSent }),
});

describe('runWithRetry attempt trace', () => {
  it('records status, node, epoch and virtual times of each attempt', async () => {
    const clock = new VirtualClock(500);
    const { operation } = scripted(clock, [
      { reply: { status: KvStatus.Moved, node: 'n1', epoch: 3 }, takesMs: 7 },
      { ...boom('Timeout'), takesMs: 30 },
      { reply: { status: KvStatus.Ok, node: 'n2', epoch: 4 }, takesMs: 2 },
    ]);
    const { deps } = virtualDeps(clock, 5);
    const out = await runWithRetry(operation, opts(), deps);
    expect(out.attempts).toEqual([
      { n: 1, status: KvStatus.Moved, errorKind: undefined, node: 'n1', epoch: 3, startMs: 500, endMs: 507, mayHaveApplied: false },
      // refresh 5 ms, sleep 100 ms
      { n: 2, status: undefined, errorKind: 'Timeout', node: undefined, epoch: undefined, startMs: 612, endMs: 642, mayHaveApplied: true },
      // refresh 5 ms, sleep 200 ms
      { n: 3, status: KvStatus.Ok, errorKind: undefined, node: 'n2', epoch: 4, startMs: 847, endMs: 849, mayHaveApplied: true },
    ]);
    expect(out.delaysMs).toEqual([100, 200]);
    expect(out.refreshes).toBe(2);
    expect(out.ledgerOutcome).toBe('ok');
    expect(unwrapRetryOutcome(out)).toEqual({ status: KvStatus.Ok, node: 'n2', epoch: 4 });
  });

  it('names a thrown non-Error by its type', async () => {
    const clock = new VirtualClock();
    const { operation } = scripted(clock, [{ error: 'just a string' }]);
    const out = await runWithRetry(operation, opts(), virtualDeps(clock).deps);
    expect(out.attempts[0]!.errorKind).toBe('string');
    expect(out.error).toBe('just a string');
    expect(out.result).toBeUndefined();
  });
});

describe('runWithRetry ledger outcome (DESIGN.md §2 "Client")', () => {
  const run = async (steps: Step[], o: Partial<RetryOptions> = {}) => {
    const clock = new VirtualClock();
    return runWithRetry(scripted(clock, steps).operation, opts(o), virtualDeps(clock).deps);
  };

  it('is info when the loop is exhausted after an attempt that may have been applied', async () => {
    const out = await run([boom('Timeout'), st(KvStatus.Moved), st(KvStatus.Moved)]);
    expect([out.attempts.length, kvOf(out), out.ledgerOutcome]).toEqual([3, KvStatus.Moved, 'info']);
  });

  it('is fail when every attempt was refused before sending', async () => {
    const out = await run([boom('ConnectRefused'), boom('NodeUnavailable'), boom('PartitionUnavailable')]);
    expect(out.result).toBeUndefined();
    expect(out.error).toBeInstanceOf(TransportError);
    expect((out.error as TransportError).kind).toBe('PartitionUnavailable');
    expect(out.refreshes).toBe(2);
    expect(out.ledgerOutcome).toBe('fail');
  });

  it('is info for a NodeUnavailable raised after the request was written', async () => {
    const out = await run([boom('NodeUnavailable', true)], { disableRetries: true });
    expect([out.attempts.length, out.refreshes, out.ledgerOutcome]).toEqual([1, 0, 'info']);
  });

  it('is info when a non-retryable error follows a transport failure after sending', async () => {
    const bad = new TypeError('codec bug');
    const out = await run([boom('Socket'), { error: bad }, ok()]);
    expect(out.error).toBe(bad);
    expect(out.attempts.map((a) => a.errorKind)).toEqual(['Socket', 'TypeError']);
    expect(out.ledgerOutcome).toBe('info');
    expect(() => unwrapRetryOutcome(out)).toThrow(RetryAbortedError);
    try {
      unwrapRetryOutcome(out);
    } catch (e) {
      expect((e as RetryAbortedError).cause).toBe(bad);
      expect((e as RetryAbortedError).outcome).toBe(out);
      expect((e as Error).message).toBe('operation failed after 2 attempt(s) (TypeError): codec bug');
    }
  });

  it('is ok when an Ok follows a timeout, and fail for an answer after refusals', async () => {
    expect((await run([boom('Timeout'), ok()])).ledgerOutcome).toBe('ok');
    const out = await run([boom('ConnectRefused'), st(KvStatus.Conflict)]);
    expect([kvOf(out), out.ledgerOutcome]).toEqual([KvStatus.Conflict, 'fail']);
  });

  it('returns an InvalidInput answer at once', async () => {
    const out = await run([st(KvStatus.InvalidInput), ok()]);
    expect([out.attempts.length, kvOf(out), out.ledgerOutcome]).toEqual([1, KvStatus.InvalidInput, 'fail']);
  });
});

describe('runWithRetry bounds (seed 000, "Two bounds")', () => {
  it('stops after a refresh that used up the deadline, without sleeping', async () => {
    const clock = new VirtualClock();
    const { operation, calls } = scripted(clock, [st(KvStatus.Moved), ok()]);
    const v = virtualDeps(clock, 300);
    const out = await runWithRetry(operation, opts({ timeoutMs: 250 }), v.deps);
    expect(calls).toEqual([1]);
    expect(out.refreshes).toBe(1);
    expect(out.delaysMs).toEqual([]);
    expect(v.sleeps).toEqual([]);
    expect(kvOf(out)).toBe(KvStatus.Moved);
  });

  it('does not refresh or sleep when the attempt itself ran past the deadline', async () => {
    const clock = new VirtualClock();
    const { operation } = scripted(clock, [{ ...boom('Timeout'), takesMs: 1_000 }, ok()]);
    const v = virtualDeps(clock);
    const out = await runWithRetry(operation, opts({ timeoutMs: 1_000 }), v.deps);
    expect([out.attempts.length, out.refreshes, v.refreshCount(), v.sleeps.length]).toEqual([1, 0, 0, 0]);
    expect(out.ledgerOutcome).toBe('info');
  });

  it('retries without a deadline until the attempts run out', async () => {
    const clock = new VirtualClock();
    const steps = Array.from({ length: 8 }, () => st(KvStatus.Unavailable));
    const out = await runWithRetry(scripted(clock, steps).operation, opts({ timeoutMs: null, maxAttempts: 6, backoffMillis: 500 }), virtualDeps(clock).deps);
    expect(out.attempts.length).toBe(6);
    expect(out.delaysMs).toEqual([500, 1_000, 1_500, 2_000, 2_000]);
  });

  it('sets no timer when the delay is 0 and keeps going on a failed refresh', async () => {
    const clock = new VirtualClock();
    const v = virtualDeps(clock, 0, true);
    const out = await runWithRetry(
      scripted(clock, [st(KvStatus.OwnershipChanging), st(KvStatus.Moved), ok()]).operation,
      opts({ backoffMillis: 0 }),
      v.deps,
    );
    expect([kvOf(out), out.refreshes, v.refreshCount()]).toEqual([KvStatus.Ok, 2, 2]);
    expect(out.delaysMs).toEqual([0, 0]);
    expect(v.sleeps).toEqual([]);
  });

  it('makes one attempt and no refresh with retries disabled', async () => {
    const clock = new VirtualClock();
    const v = virtualDeps(clock);
    const out = await runWithRetry(scripted(clock, [boom('Transport'), ok()]).operation, opts({ disableRetries: true, maxAttempts: 9 }), v.deps);
    expect([out.attempts.length, out.refreshes, out.delaysMs.length]).toEqual([1, 0, 0]);
    expect((out.error as TransportError).kind).toBe('Transport');
    expect(out.ledgerOutcome).toBe('info');
  });

  it('rejects invalid options before the first attempt', async () => {
    const clock = new VirtualClock();
    const { operation, calls } = scripted(clock, [ok()]);
    await expect(runWithRetry(operation, opts({ maxAttempts: 0 }), virtualDeps(clock).deps)).rejects.toThrow(RangeError);
    await expect(runWithRetry(operation, opts({ timeoutMs: -1 }), virtualDeps(clock).deps)).rejects.toThrow(/timeoutMs/);
    expect(calls).toEqual([]);
  });
});

function kvOf(out: RetryOutcome<Reply>): KvStatus | undefined {
  return out.result?.status;
}

// ---- churn under a fast-check scheduler ------------------------------------------------------

type ChurnStep = KvStatus | TransportErrorKind | 'Other';

const churnStepArb: fc.Arbitrary<ChurnStep> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(KvStatus.Moved, KvStatus.OwnershipChanging, KvStatus.ReplicaWriteRejected, KvStatus.Migrating, KvStatus.Unavailable) },
  { weight: 2, arbitrary: fc.constantFrom(KvStatus.Ok, KvStatus.NotFound, KvStatus.Conflict) },
  { weight: 2, arbitrary: fc.constantFrom<ChurnStep>('Timeout', 'Transport', 'Socket', 'ConnectRefused', 'NodeUnavailable', 'PartitionUnavailable') },
  { weight: 1, arbitrary: fc.constant<ChurnStep>('Other') },
);

function retryable(step: ChurnStep): boolean {
  if (typeof step === 'number') return shouldRetry(step);
  return step !== 'Other';
}

describe('runWithRetry under churn (fast-check scheduler)', () => {
  it('with a 60 s deadline and maxAttempts 3, no operation makes more than 3 attempts', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.array(fc.array(churnStepArb, { minLength: 6, maxLength: 6 }), { minLength: 1, maxLength: 12 }),
        fc.array(fc.integer({ min: 0, max: 40_000 }), { minLength: 1, maxLength: 8 }),
        async (s, scripts, latencies) => {
          const clock = new VirtualClock();
          let fetches = 0;
          let fetching = 0;
          let maxFetching = 0;
          const refresher = new SharedMapRefresher(
            () => {
              const latency = latencies[fetches++ % latencies.length]!;
              const started = clock.now();
              fetching++;
              maxFetching = Math.max(maxFetching, fetching);
              return s.schedule(Promise.resolve(), `fetch ${latency}`).then(() => {
                clock.advanceTo(started + latency);
                fetching--;
              });
            },
            { clock, timers: scheduledTimers(s, clock) },
          );
          const sleep = scheduledSleep(s, clock);
          const runs = scripts.map((script, i) => {
            const calls: number[] = [];
            let lastWakeMs = 0;
            const deps: RetryDeps = {
              clock,
              sleep: (ms) => sleep(ms).then(() => void (lastWakeMs = clock.now())),
              refreshMap: () => refresher.refresh().then(() => void (lastWakeMs = clock.now())),
            };
            const operation = (attempt: number): Promise<Reply> => {
              calls.push(attempt);
              const step = script[attempt - 1]!;
              return s.schedule(Promise.resolve(), `op ${i} attempt ${attempt}`).then(() => {
                if (step === 'Other') throw new Error('not retryable');
                if (typeof step === 'string') throw new TransportError(step);
                return { status: step, node: `n${i % 3}`, epoch: attempt };
              });
            };
            const outcome = runWithRetry(operation, { maxAttempts: 3, backoffMillis: 100, timeoutMs: 60_000, disableRetries: false }, deps);
            return outcome.then((out) => ({ out, calls, script, lastWakeMs }));
          });
          await s.waitIdle();
          const done = await Promise.all(runs);

          expect(maxFetching).toBeLessThanOrEqual(1);
          for (const { out, calls, script, lastWakeMs } of done) {
            expect(out.attempts.length).toBeLessThanOrEqual(3);
            expect(calls).toEqual(out.attempts.map((a) => a.n));
            const firstAnswer = script.findIndex((step) => !retryable(step));
            const unbounded = firstAnswer === -1 ? Number.POSITIVE_INFINITY : firstAnswer + 1;
            const expected = Math.min(unbounded, 3);
            const last = out.attempts[out.attempts.length - 1]!;
            if (out.attempts.length < expected) {
              // only the deadline may cut the loop short: it had passed when the last attempt,
              // refresh or sleep ended
              expect(Math.max(lastWakeMs, last.endMs)).toBeGreaterThanOrEqual(out.attempts[0]!.startMs + 60_000);
            } else {
              expect(out.attempts.length).toBe(expected);
            }
            expect(out.refreshes).toBeLessThanOrEqual(out.attempts.length - 1 + (out.attempts.length < expected ? 1 : 0));
            expect(out.delaysMs.length).toBeLessThanOrEqual(out.attempts.length);
            for (const d of out.delaysMs) expect(d).toBeLessThanOrEqual(2_000);
            const expectedLedger = last.status === KvStatus.Ok ? 'ok' : out.attempts.some((a) => a.mayHaveApplied) ? 'info' : 'fail';
            expect(out.ledgerOutcome).toBe(expectedLedger);
          }
          const c = refresher.counters();
          expect(c.refreshesStarted).toBe(fetches);
          expect(c.refreshesSucceeded).toBe(fetches);
          expect(refresher.isRefreshing).toBe(false);
        },
      ),
      { numRuns: 150 },
    );
  });
});
