/**
 * One shared partition map refresh in flight (seed 000, "One refresh, not a thundering herd").
 *
 * Under churn many operations fail at the same instant and each wants a fresh map. The
 * {@link SharedMapRefresher} turns them into one fetch: the first caller starts it, callers
 * arriving while it runs ride it, and a caller arriving within the debounce window after a
 * successful refresh gets a no-op. Every caller waits at most a bounded budget and then gets
 * control back without cancelling the fetch the others still need. The shared slot is
 * cleared by compare-and-set (only the flight that is still in the slot clears it), never under
 * a lock (seed 000: the lock-based clear once convoyed the refresh path).
 *
 * The refresh never rejects to its callers: a failed fetch is counted, reported to `onError`,
 * and answered as `'failed'`; the retry loop then tries again on the map it has.
 */
import type { RetryClock } from './retry-loop.js';
import { MONOTONIC_CLOCK } from './retry-loop.js';

/** Default debounce window after a successful refresh, ms (seed 000: 500 ms). */
export const DEFAULT_REFRESH_DEBOUNCE_MS = 500;

/** Default wait budget of one caller, ms (seed 000: 15 s, ZARIS_CLIENT_MAP_REFRESH_WAIT_MS). */
export const DEFAULT_REFRESH_WAIT_BUDGET_MS = 15_000;

/** Environment variable holding the wait budget in ms (seed 000). */
export const ENV_MAP_REFRESH_WAIT_MS = 'ZARIS_CLIENT_MAP_REFRESH_WAIT_MS';

/** Largest delay a Node timer honours (2^31 - 1 ms); larger values fire after 1 ms. */
export const MAX_TIMER_DELAY_MS = 2_147_483_647;

/**
 * What one {@link SharedMapRefresher.refresh} call saw:
 * - `refreshed`: this caller started the fetch and it succeeded.
 * - `ridden`: a fetch was already in flight; this caller rode it and it succeeded.
 * - `debounced`: the map was refreshed successfully less than debounceMs ago; nothing fetched.
 * - `waitBudgetExpired`: the caller stopped waiting after waitBudgetMs; the fetch goes on.
 * - `failed`: the fetch this caller started or rode rejected.
 */
export type MapRefreshOutcome = 'refreshed' | 'ridden' | 'debounced' | 'waitBudgetExpired' | 'failed';

/** Timer functions (injectable for tests). Real default: Node's setTimeout / clearTimeout. */
export interface RefreshTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** Node's own timers. */
export const NODE_TIMERS: RefreshTimers = Object.freeze({
  setTimeout: (fn: () => void, ms: number): unknown => setTimeout(fn, ms),
  clearTimeout: (handle: unknown): void => clearTimeout(handle as ReturnType<typeof setTimeout>),
});

/**
 * Options of {@link SharedMapRefresher}.
 * - `debounceMs`: no-op window after a successful refresh, ms, finite >= 0 (default 500).
 * - `waitBudgetMs`: how long one caller waits, ms, 0..{@link MAX_TIMER_DELAY_MS} or Infinity
 *   (default 15,000; see {@link refreshWaitBudgetFromEnv}).
 * - `clock`: monotonic ms (default performance.now()).
 * - `timers`: setTimeout / clearTimeout (default Node's).
 * - `onError`: told about each failed fetch (default: nothing; the counter still counts).
 */
export interface SharedMapRefresherOptions {
  readonly debounceMs?: number;
  readonly waitBudgetMs?: number;
  readonly clock?: RetryClock;
  readonly timers?: RefreshTimers;
  readonly onError?: (error: unknown) => void;
}

/**
 * Counters of a {@link SharedMapRefresher} since it was made (each a count of calls or fetches).
 * `refreshesStarted` = fetches started; `refreshesSucceeded` / `refreshesFailed` = fetches
 * settled; `ridden` = calls that joined a fetch in flight; `debounced` = calls answered as a
 * no-op; `waitBudgetExpired` = calls that stopped waiting before their fetch settled.
 */
export interface SharedMapRefreshCounters {
  readonly refreshesStarted: number;
  readonly refreshesSucceeded: number;
  readonly refreshesFailed: number;
  readonly ridden: number;
  readonly debounced: number;
  readonly waitBudgetExpired: number;
}

/** One fetch: `done` resolves true (succeeded) or false (failed), never rejects. */
interface Flight {
  readonly done: Promise<boolean>;
}

/**
 * Parses ZARIS_CLIENT_MAP_REFRESH_WAIT_MS (seed 000): unset, empty or blank gives 15,000; else
 * a whole number of ms, 0..{@link MAX_TIMER_DELAY_MS} (surrounding blanks ignored).
 * @throws Error with a one-line message naming the variable and the (quoted) bad value.
 */
export function parseRefreshWaitBudget(value: string | undefined): number {
  if (value === undefined) return DEFAULT_REFRESH_WAIT_BUDGET_MS;
  const text = value.trim();
  if (text === '') return DEFAULT_REFRESH_WAIT_BUDGET_MS;
  const n = /^\d{1,10}$/.test(text) ? Number(text) : Number.NaN;
  if (!(n <= MAX_TIMER_DELAY_MS)) {
    throw new Error(
      `${ENV_MAP_REFRESH_WAIT_MS}=${JSON.stringify(value)} must be a whole number of ms from 0 to ${MAX_TIMER_DELAY_MS}`,
    );
  }
  return n;
}

/**
 * The wait budget from the environment ({@link parseRefreshWaitBudget} of
 * ZARIS_CLIENT_MAP_REFRESH_WAIT_MS in `env`, default process.env).
 * @throws Error (one line) on an invalid value.
 */
export function refreshWaitBudgetFromEnv(env: Readonly<Record<string, string | undefined>> = process.env): number {
  return parseRefreshWaitBudget(env[ENV_MAP_REFRESH_WAIT_MS]);
}

/**
 * Coalesces partition map refreshes (seed 000, TryRefreshClusterMapSafe). Use its
 * {@link SharedMapRefresher.refresh} as the retry loop's `refreshMap`.
 *
 * @throws RangeError from the constructor on an invalid debounceMs or waitBudgetMs.
 */
export class SharedMapRefresher {
  private readonly fetchMap: () => Promise<unknown>;
  private readonly debounceMs: number;
  private readonly waitBudgetMs: number;
  private readonly clock: RetryClock;
  private readonly timers: RefreshTimers;
  private readonly onError: ((error: unknown) => void) | undefined;
  /** The fetch in flight, if any; cleared by compare-and-set when that fetch settles. */
  private inFlight: Flight | undefined = undefined;
  private lastSucceededAt: number | undefined = undefined;
  private started = 0;
  private succeeded = 0;
  private failedCount = 0;
  private riddenCount = 0;
  private debouncedCount = 0;
  private expiredCount = 0;

  /**
   * @param fetchMap fetches and installs a fresh partition / runtime map; its rejection marks
   *   the refresh failed (and does not start the debounce window).
   * @param options see {@link SharedMapRefresherOptions}.
   */
  constructor(fetchMap: () => Promise<unknown>, options: SharedMapRefresherOptions = {}) {
    const debounceMs = options.debounceMs ?? DEFAULT_REFRESH_DEBOUNCE_MS;
    const waitBudgetMs = options.waitBudgetMs ?? DEFAULT_REFRESH_WAIT_BUDGET_MS;
    if (!Number.isFinite(debounceMs) || debounceMs < 0) {
      throw new RangeError(`map refresh debounceMs must be a finite number >= 0, got ${debounceMs}`);
    }
    if (!(waitBudgetMs === Number.POSITIVE_INFINITY || (waitBudgetMs >= 0 && waitBudgetMs <= MAX_TIMER_DELAY_MS))) {
      throw new RangeError(
        `map refresh waitBudgetMs must be 0..${MAX_TIMER_DELAY_MS} or Infinity, got ${waitBudgetMs}`,
      );
    }
    this.fetchMap = fetchMap;
    this.debounceMs = debounceMs;
    this.waitBudgetMs = waitBudgetMs;
    this.clock = options.clock ?? MONOTONIC_CLOCK;
    this.timers = options.timers ?? NODE_TIMERS;
    this.onError = options.onError;
  }

  /**
   * Makes sure the map is fresh, sharing one fetch among concurrent callers (seed 000):
   * rides the fetch in flight if there is one; else a no-op within debounceMs of the last
   * successful fetch; else starts one fetch. Then waits for that fetch at most waitBudgetMs.
   * Never rejects.
   * @returns what this call saw ({@link MapRefreshOutcome}).
   */
  refresh(): Promise<MapRefreshOutcome> {
    const existing = this.inFlight;
    if (existing !== undefined) {
      this.riddenCount++;
      return this.waitFor(existing, 'ridden');
    }
    if (this.lastSucceededAt !== undefined && this.clock.now() - this.lastSucceededAt < this.debounceMs) {
      this.debouncedCount++;
      return Promise.resolve('debounced');
    }
    return this.waitFor(this.start(), 'refreshed');
  }

  /** True while a fetch is in flight (the shared slot is taken). */
  get isRefreshing(): boolean {
    return this.inFlight !== undefined;
  }

  /** Clock reading (ms) when the last successful fetch settled; undefined before the first. */
  get lastRefreshedAtMs(): number | undefined {
    return this.lastSucceededAt;
  }

  /** A snapshot of the counters ({@link SharedMapRefreshCounters}). */
  counters(): SharedMapRefreshCounters {
    return {
      refreshesStarted: this.started,
      refreshesSucceeded: this.succeeded,
      refreshesFailed: this.failedCount,
      ridden: this.riddenCount,
      debounced: this.debouncedCount,
      waitBudgetExpired: this.expiredCount,
    };
  }

  private start(): Flight {
    this.started++;
    let fetched: Promise<unknown>;
    try {
      fetched = Promise.resolve(this.fetchMap());
    } catch (e) {
      fetched = Promise.reject(e);
    }
    // The handlers run in a later microtask, so `this.inFlight = flight` below always happens
    // first and the compare-and-set sees this flight (unless a later one replaced it).
    const flight: Flight = {
      done: fetched.then(
        () => {
          this.succeeded++;
          this.lastSucceededAt = this.clock.now();
          if (this.inFlight === flight) this.inFlight = undefined;
          return true;
        },
        (error: unknown) => {
          this.failedCount++;
          if (this.inFlight === flight) this.inFlight = undefined;
          if (this.onError !== undefined) {
            try {
              this.onError(error);
            } catch {
              // a throwing observer must not break the refresh path
            }
          }
          return false;
        },
      ),
    };
    this.inFlight = flight;
    return flight;
  }

  private waitFor(flight: Flight, onSuccess: 'refreshed' | 'ridden'): Promise<MapRefreshOutcome> {
    const settled = (ok: boolean): MapRefreshOutcome => (ok ? onSuccess : 'failed');
    if (this.waitBudgetMs === Number.POSITIVE_INFINITY) return flight.done.then(settled);
    if (this.waitBudgetMs === 0) {
      this.expiredCount++;
      return Promise.resolve('waitBudgetExpired');
    }
    return new Promise<MapRefreshOutcome>((resolve) => {
      let finished = false;
      const timer = this.timers.setTimeout(() => {
        if (finished) return;
        finished = true;
        this.expiredCount++;
        resolve('waitBudgetExpired');
      }, this.waitBudgetMs);
      void flight.done.then((ok) => {
        if (finished) return;
        finished = true;
        this.timers.clearTimeout(timer);
        resolve(settled(ok));
      });
    });
  }
}
