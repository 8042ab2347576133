/**
 * Batch-get fan-out with one long-tail retry (seed 004; DESIGN.md §2 "Multi-key long-tail
 * retry"). Transport-free: the caller supplies routing, the per-target fetch and the timers.
 */

/** Server fallback cap on distinct keys when no positive store batchGetLimit is set (seed 004). */
export const DEFAULT_KEY_CAP = 500;

/** Where one key's request goes: its active owner, and the replica a long-tail retry uses. */
export interface KeyRoute {
  /** Target (node id) the first attempt goes to. */
  readonly primary: string;
  /** Target of the long-tail retry; null (or equal to primary) when there is none, e.g. RF1. */
  readonly alternate: string | null;
}

/** Timer functions; the real ones by default, virtual ones in tests. Delays in ms. */
export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The process's own timers. */
export const REAL_TIMERS: Timers = Object.freeze({
  setTimeout: (callback: () => void, ms: number): unknown => setTimeout(callback, ms),
  clearTimeout: (handle: unknown): void => clearTimeout(handle as ReturnType<typeof setTimeout>),
});

/** Per-request settings. */
export interface LongTailRetryOptions {
  /** The store's batchGetLimit (distinct keys); unset, 0 or negative means 500 (seed 004). */
  readonly batchGetLimit?: number;
  /**
   * The effective retry delay in ms for a whole request of `distinctKeyCount` keys (e.g. the
   * batch-get precedence over the currently published server policy), or null for no retry (no
   * timer is scheduled). Called at most once per request, before fan-out, never for an empty
   * request.
   */
  readonly delayMsFor: (distinctKeyCount: number) => number | null;
}

/** What the helper needs from the client. */
export interface LongTailRetryDeps<V> {
  /** Route of one key (from the client's partition and runtime maps). */
  readonly routeKey: (key: string) => KeyRoute;
  /**
   * Sends `keys` to `target`; resolves with the answers it got, by key. A requested key missing
   * from the map counts as not answered by that target. A rejection is a failed attempt.
   */
  readonly fetch: (target: string, keys: readonly string[]) => Promise<ReadonlyMap<string, V>>;
  /** Timers; REAL_TIMERS when absent. */
  readonly timers?: Timers;
}

/** The answer kept for one key: the first one that arrived. */
export interface KeyAnswer<V> {
  readonly value: V;
  /** Target whose answer won. */
  readonly target: string;
  /** True when the winning answer came from the long-tail retry. */
  readonly viaRetry: boolean;
}

/** Outcome of a completed batch-get. */
export interface LongTailRetryResult<V> {
  /** One answer per distinct key, in first-occurrence order of the request. */
  readonly answers: ReadonlyMap<string, KeyAnswer<V>>;
  /** The delay captured for this request, ms; null for an empty request (no lookup made). */
  readonly delayMs: number | null;
  /** True when the retry timer fired and sent at least one key to an alternate. */
  readonly retryFired: boolean;
  /** Keys sent to an alternate by the retry (each at most once). */
  readonly retriedKeys: readonly string[];
}

/** A request over the key cap, refused before any lookup or fan-out (seed 004). */
export class KeyCapExceededError extends Error {
  override name = 'KeyCapExceededError';
  constructor(
    /** Distinct keys in the request. */
    readonly distinctKeys: number,
    /** The cap that applied. */
    readonly cap: number,
  ) {
    super(`batch-get of ${distinctKeys} distinct keys exceeds the cap of ${cap}`);
  }
}

/** Some keys got no answer from any attempt (every attempt covering them failed or omitted them). */
export class BatchGetIncompleteError<V> extends Error {
  override name = 'BatchGetIncompleteError';
  constructor(
    /** Keys without an answer, in request order. */
    readonly missingKeys: readonly string[],
    /** The answers that did arrive. */
    readonly partial: LongTailRetryResult<V>,
    /** Rejection reasons of failed attempts, in arrival order. */
    readonly causes: readonly unknown[],
  ) {
    const first = causes.length > 0 ? `; first failure: ${String(causes[0] instanceof Error ? causes[0].message : causes[0]).split('\n')[0]}` : '';
    super(`batch-get left ${missingKeys.length} key(s) unanswered${first}`);
  }
}

/** The key cap for a store's batchGetLimit (seed 004: 500 unless a positive limit is set). */
export function keyCapFor(batchGetLimit: number | undefined): number {
  return batchGetLimit !== undefined && Number.isSafeInteger(batchGetLimit) && batchGetLimit > 0 ? batchGetLimit : DEFAULT_KEY_CAP;
}

function groupBy(keys: readonly string[], targetOf: (key: string) => string): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const k of keys) {
    const t = targetOf(k);
    const g = groups.get(t);
    if (g === undefined) groups.set(t, [k]);
    else g.push(k);
  }
  return groups;
}

/**
 * Batch-get with one long-tail retry (seed 004):
 * 1. dedupe `keys` (first occurrence order);
 * 2. more distinct keys than the cap (batchGetLimit, else 500): reject with KeyCapExceededError
 *    before any delay lookup, routing or fetch;
 * 3. no keys: resolve empty at once, without a delay lookup or timer (the empty request is
 *    delegated as is: there is no target to ask);
 * 4. capture the delay once from the whole distinct key count (later policy changes do not
 *    retime it; null: no retry timer at all); route every key; send one fetch per primary target;
 * 5. when the delay elapses, send every key still unanswered that has an alternate (other than its
 *    primary) once to that alternate, one fetch per alternate target; a failed first attempt does
 *    not advance the retry (error handling is not changed by this policy);
 * 6. the first answer per key wins; later ones are ignored.
 *
 * @returns a promise of per-key answers with the answering target, the captured delay and
 *   whether the retry fired. It rejects with KeyCapExceededError (step 2); RangeError when
 *   delayMsFor returns a non-positive or non-finite delay; whatever routeKey or delayMsFor throw
 *   (all three before any fetch); BatchGetIncompleteError when some key ends without an answer.
 */
export async function getManyWithLongTailRetry<V>(
  keys: Iterable<string>,
  opts: LongTailRetryOptions,
  deps: LongTailRetryDeps<V>,
): Promise<LongTailRetryResult<V>> {
  const distinct = [...new Set(keys)];
  const cap = keyCapFor(opts.batchGetLimit);
  if (distinct.length > cap) throw new KeyCapExceededError(distinct.length, cap);
  if (distinct.length === 0) return { answers: new Map(), delayMs: null, retryFired: false, retriedKeys: [] };

  const delayMs = opts.delayMsFor(distinct.length);
  if (delayMs !== null && (!Number.isFinite(delayMs) || delayMs <= 0)) throw new RangeError(`long-tail retry delay must be a positive number of ms, got ${delayMs}`);
  const routes = new Map<string, KeyRoute>();
  for (const k of distinct) routes.set(k, deps.routeKey(k));
  const hasAlternate = (k: string): boolean => {
    const r = routes.get(k)!;
    return r.alternate !== null && r.alternate !== r.primary;
  };
  const timers = deps.timers ?? REAL_TIMERS;

  return new Promise<LongTailRetryResult<V>>((resolve, reject) => {
    const answers = new Map<string, KeyAnswer<V>>();
    const inFlight = new Map<string, number>(distinct.map((k) => [k, 0]));
    const causes: unknown[] = [];
    const retriedKeys: string[] = [];
    let timer: unknown = null;
    let timerPending = false;
    let done = false;

    const result = (): LongTailRetryResult<V> => {
      const ordered = new Map<string, KeyAnswer<V>>();
      for (const k of distinct) {
        const a = answers.get(k);
        if (a !== undefined) ordered.set(k, a);
      }
      return { answers: ordered, delayMs, retryFired: retriedKeys.length > 0, retriedKeys: [...retriedKeys] };
    };

    const finish = (): void => {
      done = true;
      if (timerPending) {
        timers.clearTimeout(timer);
        timerPending = false;
      }
      const missing = distinct.filter((k) => !answers.has(k));
      if (missing.length === 0) resolve(result());
      else reject(new BatchGetIncompleteError<V>(missing, result(), [...causes]));
    };

    const check = (): void => {
      if (done) return;
      if (answers.size === distinct.length) return finish();
      const open = distinct.some((k) => !answers.has(k) && (inFlight.get(k)! > 0 || (timerPending && hasAlternate(k))));
      if (!open) finish();
    };

    const send = (target: string, group: readonly string[], viaRetry: boolean): void => {
      for (const k of group) inFlight.set(k, inFlight.get(k)! + 1);
      let attempt: Promise<ReadonlyMap<string, V>>;
      try {
        attempt = deps.fetch(target, group);
      } catch (e) {
        attempt = Promise.reject(e);
      }
      const settle = (got: ReadonlyMap<string, V> | null, error?: unknown): void => {
        if (done) return;
        if (got === null) causes.push(error);
        for (const k of group) {
          inFlight.set(k, inFlight.get(k)! - 1);
          if (got !== null && !answers.has(k) && got.has(k)) answers.set(k, { value: got.get(k) as V, target, viaRetry });
        }
        check();
      };
      Promise.resolve(attempt).then(
        (got) => settle(got),
        (e: unknown) => settle(null, e),
      );
    };

    for (const [target, group] of groupBy(distinct, (k) => routes.get(k)!.primary)) send(target, group, false);

    if (delayMs !== null && distinct.some(hasAlternate)) {
      timerPending = true;
      timer = timers.setTimeout(() => {
        if (!timerPending) return;
        timerPending = false;
        if (done) return;
        const pending = distinct.filter((k) => !answers.has(k) && hasAlternate(k));
        retriedKeys.push(...pending);
        for (const [target, group] of groupBy(pending, (k) => routes.get(k)!.alternate!)) send(target, group, true);
        check();
      }, delayMs);
    }
  });
}
