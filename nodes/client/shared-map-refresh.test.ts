import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KvStatus } from '../kv-status.js';
import { runWithRetry, type RetryDeps } from './retry-loop.js';
import {
  MAX_TIMER_DELAY_MS,
  parseRefreshWaitBudget,
  refreshWaitBudgetFromEnv,
  SharedMapRefresher,
  type MapRefreshOutcome,
} from './shared-map-refresh.js';
import { TransportError } from './transport-error.js';
import { flushMicrotasks, scheduledTimers, VirtualClock, VirtualTimers } from './test-support/virtual-time.js';

/** A fetch the test settles by hand. */
function manualFetch() {
  const pending: { resolve: () => void; reject: (e: unknown) => void }[] = [];
  const fetchMap = () =>
    new Promise<void>((resolve, reject) => {
      pending.push({ resolve, reject });
    });
  return { fetchMap, pending };
}

describe('SharedMapRefresher on virtual time (seed 000)', () => {
  it('lets a caller whose budget runs out go while the fetch goes on for the others', async () => {
    const clock = new VirtualClock();
    const timers = new VirtualTimers(clock);
    const { fetchMap, pending } = manualFetch();
    const r = new SharedMapRefresher(fetchMap, { clock, timers, waitBudgetMs: 15_000, debounceMs: 500 });
    const seen: Record<string, MapRefreshOutcome | undefined> = {};
    const track = (name: string) => void r.refresh().then((o) => (seen[name] = o));

    track('a'); // t=0, starts the fetch
    await timers.advance(1_000);
    track('b'); // t=1000, rides
    await timers.advance(14_000); // t=15000: a's budget is spent
    expect(seen).toEqual({ a: 'waitBudgetExpired' });
    expect(r.isRefreshing).toBe(true);
    await timers.advance(1_000); // t=16000: b's budget is spent
    expect(seen).toEqual({ a: 'waitBudgetExpired', b: 'waitBudgetExpired' });
    track('c'); // rides the same fetch: no second one
    expect(pending.length).toBe(1);
    await timers.advance(1_000); // t=17000
    pending[0]!.resolve();
    await flushMicrotasks();
    expect(seen.c).toBe('ridden');
    expect(r.isRefreshing).toBe(false);
    expect(r.lastRefreshedAtMs).toBe(17_000);
    expect(timers.count).toBe(0);

    await timers.advance(499); // t=17499: still inside the debounce window
    expect(await r.refresh()).toBe('debounced');
    await timers.advance(1); // t=17500: window over
    const next = r.refresh();
    expect(pending.length).toBe(2);
    pending[1]!.resolve();
    expect(await next).toBe('refreshed');
    expect(r.counters()).toEqual({
      refreshesStarted: 2,
      refreshesSucceeded: 2,
      refreshesFailed: 0,
      ridden: 2,
      debounced: 1,
      waitBudgetExpired: 2,
    });
  });

  it('answers failed, frees the slot and does not debounce after a failed fetch', async () => {
    const clock = new VirtualClock();
    const timers = new VirtualTimers(clock);
    const { fetchMap, pending } = manualFetch();
    const errors: unknown[] = [];
    const r = new SharedMapRefresher(fetchMap, { clock, timers, onError: (e) => errors.push(e) });
    const first = r.refresh();
    const rider = r.refresh();
    const boom = new Error('no metadata');
    pending[0]!.reject(boom);
    expect([await first, await rider]).toEqual(['failed', 'failed']);
    expect(errors).toEqual([boom]);
    expect(r.isRefreshing).toBe(false);
    const again = r.refresh();
    expect(pending.length).toBe(2);
    pending[1]!.resolve();
    expect(await again).toBe('refreshed');
    expect(r.counters()).toMatchObject({ refreshesStarted: 2, refreshesFailed: 1, refreshesSucceeded: 1, ridden: 1 });
  });

  it('survives a fetch that throws synchronously and an onError that throws', async () => {
    let calls = 0;
    const r = new SharedMapRefresher(
      () => {
        calls++;
        throw new Error('sync throw');
      },
      { timers: new VirtualTimers(new VirtualClock()), clock: new VirtualClock(), onError: () => { throw new Error('observer'); } },
    );
    expect(await r.refresh()).toBe('failed');
    expect(r.isRefreshing).toBe(false);
    expect(await r.refresh()).toBe('failed');
    expect(calls).toBe(2);
  });

  it('with a zero budget returns at once and with an infinite one sets no timer', async () => {
    const clock = new VirtualClock();
    const timers = new VirtualTimers(clock);
    const a = manualFetch();
    const zero = new SharedMapRefresher(a.fetchMap, { clock, timers, waitBudgetMs: 0 });
    expect(await zero.refresh()).toBe('waitBudgetExpired');
    expect(zero.isRefreshing).toBe(true);
    a.pending[0]!.resolve();
    await flushMicrotasks();
    expect(zero.isRefreshing).toBe(false);

    const b = manualFetch();
    const forever = new SharedMapRefresher(b.fetchMap, { clock, timers, waitBudgetMs: Number.POSITIVE_INFINITY });
    const p = forever.refresh();
    expect(timers.count).toBe(0);
    b.pending[0]!.resolve();
    expect(await p).toBe('refreshed');
  });

  it('rejects bad options', () => {
    const f = async () => {};
    expect(() => new SharedMapRefresher(f, { waitBudgetMs: -1 })).toThrow(RangeError);
    expect(() => new SharedMapRefresher(f, { waitBudgetMs: MAX_TIMER_DELAY_MS + 1 })).toThrow(RangeError);
    expect(() => new SharedMapRefresher(f, { debounceMs: Number.NaN })).toThrow(RangeError);
  });
});

describe('SharedMapRefresher under a fast-check scheduler (seed 000)', () => {
  it('many operations failing with Moved at once start exactly one fetch, and none more within the debounce window', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.array(fc.constantFrom(KvStatus.Moved, KvStatus.OwnershipChanging, KvStatus.ReplicaWriteRejected, 'Transport' as const), {
          minLength: 2,
          maxLength: 40,
        }),
        fc.integer({ min: 0, max: 300 }),
        async (s, firstFailures, latency) => {
          const clock = new VirtualClock();
          const timers = new VirtualTimers(clock);
          let fetches = 0;
          let completedAt = -1;
          const refresher = new SharedMapRefresher(
            () => {
              fetches++;
              const started = clock.now();
              return s.schedule(Promise.resolve(), 'fetch').then(() => {
                clock.advanceTo(started + latency);
                completedAt = clock.now();
              });
            },
            // the clock stays far below the 15 s budget here, so no budget timer is due
            { clock, timers },
          );
          // All operations fail within the same few hundred ms: the backoff sleeps are released
          // in any order but take no virtual time, so only the fetch latency moves the clock.
          const deps: RetryDeps = {
            clock,
            sleep: (ms) => s.schedule(Promise.resolve(), `sleep ${ms}`),
            refreshMap: () => refresher.refresh(),
          };
          const runs = firstFailures.map((failure, i) =>
            runWithRetry(
              (attempt) =>
                s.schedule(Promise.resolve(), `op ${i}.${attempt}`).then(() => {
                  if (attempt > 1) return { status: KvStatus.Ok };
                  if (failure === 'Transport') throw new TransportError('Transport');
                  return { status: failure };
                }),
              { maxAttempts: 3, backoffMillis: 100, timeoutMs: 60_000, disableRetries: false },
              deps,
            ),
          );
          await s.waitIdle();
          const outcomes = await Promise.all(runs);
          for (const o of outcomes) {
            expect([o.result?.status, o.attempts.length, o.refreshes]).toEqual([KvStatus.Ok, 2, 1]);
          }
          const c = refresher.counters();
          expect(fetches).toBe(1);
          expect(c.refreshesStarted).toBe(1);
          expect(c.ridden + c.debounced).toBe(firstFailures.length - 1);
          expect(c.waitBudgetExpired).toBe(0);
          expect(timers.count).toBe(0);
          expect(clock.now()).toBeLessThan(completedAt + 500);
          // one more failure just inside the window is a no-op; at the window's end a new fetch starts
          clock.advanceTo(completedAt + 499);
          expect(await refresher.refresh()).toBe('debounced');
          expect(fetches).toBe(1);
          clock.advanceTo(completedAt + 500);
          const next = refresher.refresh();
          expect(fetches).toBe(2);
          await s.waitIdle();
          expect(await next).toBe('refreshed');
        },
      ),
      { numRuns: 150 },
    );
  });

  it('a caller whose wait budget runs out gets control back while the shared fetch completes for the others', async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.integer({ min: 1, max: 20 }), fc.integer({ min: 0, max: 30_000 }), async (s, callers, latency) => {
        const clock = new VirtualClock();
        let fetches = 0;
        let fetched = false;
        const refresher = new SharedMapRefresher(
          () => {
            fetches++;
            const started = clock.now();
            return s.schedule(Promise.resolve(), 'fetch').then(() => {
              clock.advanceTo(started + latency);
              fetched = true;
            });
          },
          { clock, timers: scheduledTimers(s, clock), waitBudgetMs: 15_000 },
        );
        interface Seen {
          outcome: MapRefreshOutcome;
          fetchedThen: boolean;
          refreshingThen: boolean;
        }
        const seen: Seen[] = [];
        const retried: Promise<MapRefreshOutcome>[] = [];
        const calls = Array.from({ length: callers }, () =>
          refresher.refresh().then((outcome) => {
            seen.push({ outcome, fetchedThen: fetched, refreshingThen: refresher.isRefreshing });
            // a caller that gave up waiting tries again, as the retry loop's next failure would
            if (outcome === 'waitBudgetExpired') retried.push(refresher.refresh());
          }),
        );
        await s.waitIdle();
        await Promise.all(calls);
        const again = await Promise.all(retried);

        expect(fetches).toBe(1);
        expect(fetched).toBe(true);
        expect(refresher.isRefreshing).toBe(false);
        expect(seen.length).toBe(callers);
        for (const x of seen) {
          if (x.outcome === 'waitBudgetExpired') {
            // control came back before the fetch ended, and the fetch was still in flight
            expect([x.fetchedThen, x.refreshingThen]).toEqual([false, true]);
          } else {
            expect(['refreshed', 'ridden']).toContain(x.outcome);
            expect(x.fetchedThen).toBe(true);
          }
        }
        const expired = seen.filter((x) => x.outcome === 'waitBudgetExpired').length;
        // every second try rode the one fetch (it was still in flight when they asked) or timed out again
        for (const o of again) expect(['ridden', 'waitBudgetExpired']).toContain(o);
        const c = refresher.counters();
        expect(c).toEqual({
          refreshesStarted: 1,
          refreshesSucceeded: 1,
          refreshesFailed: 0,
          ridden: callers - 1 + again.length,
          debounced: 0,
          waitBudgetExpired: expired + again.filter((o) => o === 'waitBudgetExpired').length,
        });
      }),
      { numRuns: 150 },
    );
  });
});

describe('ZARIS_CLIENT_MAP_REFRESH_WAIT_MS (seed 000)', () => {
  it('defaults to 15,000 ms', () => {
    expect(refreshWaitBudgetFromEnv({})).toBe(15_000);
    expect(parseRefreshWaitBudget(' ')).toBe(15_000);
  });

  it('reads any whole number of ms up to the timer limit', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: MAX_TIMER_DELAY_MS }), fc.constantFrom('', ' ', '\t'), (n, pad) => {
        expect(refreshWaitBudgetFromEnv({ ZARIS_CLIENT_MAP_REFRESH_WAIT_MS: `${pad}${n}${pad}` })).toBe(n);
      }),
    );
  });

  it('rejects anything else with a one-line error', () => {
    const bad = fc.oneof(
      fc.integer({ min: MAX_TIMER_DELAY_MS + 1, max: Number.MAX_SAFE_INTEGER }).map(String),
      fc.integer({ min: -1_000_000, max: -1 }).map(String),
      fc.string().filter((t) => t.trim() !== '' && !/^\d+$/.test(t.trim())),
      fc.constantFrom('1.5', '1e3', '0x10', '15s', '1\n2'),
    );
    fc.assert(
      fc.property(bad, (text) => {
        expect(() => parseRefreshWaitBudget(text)).toThrow(/^ZARIS_CLIENT_MAP_REFRESH_WAIT_MS=.* must be a whole number of ms from 0 to 2147483647$/);
      }),
    );
  });
});
