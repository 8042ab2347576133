/**
 * A runtime whose calls either succeed or fail with a {@link WorldError} (issue 22): the one place
 * where a run meets the errors of the world outside the harness (a `docker exec` racing runc, the
 * engine's socket reset, an iptables call that timed out, a node that will not start).
 *
 * It wraps any {@link FaultRuntime} (the Zaris nodes' process and docker runtimes, every target
 * runtime) and returns the same type:
 * - the calls that change the cluster ({@link RETRIED_CALLS}: kill, stop, restart, pause, resume,
 *   partition, cutClient, heal, setClock) are retried when their error is transient
 *   (runtime-errors.ts {@link isTransientError}), at most `retries` more times, with exponential
 *   backoff and jitter (cockatiel); what still fails is rethrown as a WorldError naming the call,
 *   its attempts and the last error. Every such call of a runtime may be made again after it
 *   failed (runtime.ts: FaultRuntime);
 * - `start` is not retried (a half-started cluster is the runtime's to remove, at close), but its
 *   failure is a WorldError too: a node that will not start ends the run INCONCLUSIVE;
 * - a harness bug (TypeError, RangeError, ...) is never retried and passes through as it is;
 * - everything else (isUp, nodeIds, config, clientEndpoint, close, ...) passes through untouched.
 */
import { ExponentialBackoff, handleWhen, retry } from 'cockatiel';
import { firstLine, isTransientError, isWorldError, worldErrorOf, type WorldError, type WorldSource } from './runtime-errors.js';
import type { FaultRuntime } from './runtime.js';

/** The calls retried when their error is transient (each may be made again after it failed). */
export const RETRIED_CALLS = ['kill', 'stop', 'restart', 'pause', 'resume', 'partition', 'cutClient', 'heal', 'setClock'] as const;
/** The calls whose failure is a world error but which are not retried. */
export const UNRETRIED_CALLS = ['start'] as const;

/** One retry about to happen (after `delayMs`). */
export interface RuntimeRetry {
  /** The call: `partition`, `restart n2`. */
  op: string;
  /** The attempt that failed, from 1. */
  attempt: number;
  /** The backoff before the next attempt, ms. */
  delayMs: number;
  /** The failed attempt's error, one line. */
  error: string;
}

/** Options of {@link faultTolerantRuntime}. */
export interface FaultTolerantOptions {
  /** Retries after the first attempt of a transient failure (default 3: at most 4 attempts). */
  retries?: number;
  /** The first backoff, ms (default 250); each later one about doubles, with jitter. */
  initialDelayMs?: number;
  /** The longest backoff, ms (default 2,000). */
  maxDelayMs?: number;
  /** Who the wrapped runtime's errors are blamed on (default `runtime`; engine answers become `engine`). */
  source?: WorldSource;
  /** Told before every retry (the run records it in the ledger and prints it). */
  onRetry?(r: RuntimeRetry): void;
  /** Told when a call failed for good, with the WorldError about to be thrown. */
  onGiveUp?(e: WorldError): void;
}

const RETRIED = new Set<string>(RETRIED_CALLS);
const UNRETRIED = new Set<string>(UNRETRIED_CALLS);

/** The call as a phrase: the method, and its node when the first argument names one. */
function opName(method: string, args: readonly unknown[]): string {
  return typeof args[0] === 'string' ? `${method} ${args[0]}` : method;
}

/**
 * Wraps `rt` (see the module comment); the result is `rt`'s own type, so the harness uses it
 * wherever it used `rt`.
 * @throws RangeError when `retries` is not an integer >= 0 or a delay is negative.
 */
export function faultTolerantRuntime<T extends FaultRuntime>(rt: T, o: FaultTolerantOptions = {}): T {
  const retries = o.retries ?? 3;
  const initialDelay = o.initialDelayMs ?? 250;
  const maxDelay = o.maxDelayMs ?? 2_000;
  if (!(Number.isSafeInteger(retries) && retries >= 0)) throw new RangeError(`fault-tolerant runtime: retries must be an integer >= 0, got ${retries}`);
  if (!(initialDelay >= 0 && maxDelay >= initialDelay)) throw new RangeError(`fault-tolerant runtime: delays must satisfy 0 <= initialDelayMs <= maxDelayMs, got ${initialDelay}, ${maxDelay}`);
  const source = o.source ?? 'runtime';

  const giveUp = (e: unknown, op: string, attempts: number): unknown => {
    const w = worldErrorOf(e, { source, op, attempts });
    if (isWorldError(w)) o.onGiveUp?.(w);
    return w;
  };

  const retried = (method: string, fn: (...a: unknown[]) => Promise<unknown>) =>
    async (...args: unknown[]): Promise<unknown> => {
      const op = opName(method, args);
      const policy = retry(handleWhen((e) => isTransientError(e)), { maxAttempts: retries, backoff: new ExponentialBackoff({ initialDelay, maxDelay }) });
      const sub = policy.onRetry((r) => {
        if ('error' in r) o.onRetry?.({ op, attempt: r.attempt, delayMs: Math.round(r.delay), error: firstLine(r.error) });
      });
      let attempts = 0;
      try {
        return await policy.execute(() => {
          attempts++;
          return fn.apply(rt, args);
        });
      } catch (e) {
        throw giveUp(e, op, attempts);
      } finally {
        sub.dispose();
      }
    };

  const classified = (method: string, fn: (...a: unknown[]) => Promise<unknown>) =>
    async (...args: unknown[]): Promise<unknown> => {
      try {
        return await fn.apply(rt, args);
      } catch (e) {
        throw giveUp(e, method === 'start' ? 'cluster start' : opName(method, args), 1);
      }
    };

  const made = new Map<PropertyKey, unknown>();
  return new Proxy(rt, {
    get(target, prop) {
      const v: unknown = Reflect.get(target, prop, target);
      if (typeof v !== 'function') return v;
      let f = made.get(prop);
      if (f === undefined) {
        const fn = v as (...a: unknown[]) => Promise<unknown>;
        f = typeof prop === 'string' && RETRIED.has(prop) ? retried(prop, fn) : typeof prop === 'string' && UNRETRIED.has(prop) ? classified(prop, fn) : fn.bind(target);
        made.set(prop, f);
      }
      return f;
    },
  });
}
