import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BatchGetIncompleteError,
  KeyCapExceededError,
  getManyWithLongTailRetry,
  keyCapFor,
  type KeyRoute,
  type LongTailRetryResult,
  type Timers,
} from './long-tail-retry.js';
import { MultiKeyRetryPolicyState } from './policy-refresh.js';
import { NO_LOCAL_SETTINGS, resolveBatchGetRetryDelay } from './retry-policy-precedence.js';
import { VirtualClock } from './test-support/virtual-clock.js';

/** How a target behaves: answer after `ms`, fail after `ms`, or answer without some keys. */
type Behaviour = { ms: number; fail?: boolean; omit?: readonly string[] };

interface Call {
  at: number;
  target: string;
  keys: readonly string[];
}

/** A fake cluster on virtual time: each target answers `${target}:${key}` after its latency. */
function fakeCluster(clock: VirtualClock, routes: Record<string, KeyRoute>, behaviour: Record<string, Behaviour>) {
  const calls: Call[] = [];
  const timerDelays: number[] = [];
  const timers: Timers = {
    setTimeout: (cb, ms) => {
      timerDelays.push(ms);
      return clock.setTimeout(cb, ms);
    },
    clearTimeout: (h) => clock.clearTimeout(h),
  };
  const deps = {
    routeKey: (key: string): KeyRoute => {
      const r = routes[key];
      if (r === undefined) throw new Error(`no route for ${key}`);
      return r;
    },
    fetch: async (target: string, keys: readonly string[]): Promise<ReadonlyMap<string, string>> => {
      calls.push({ at: clock.now, target, keys: [...keys] });
      const b = behaviour[target];
      await clock.sleep(b.ms);
      if (b.fail === true) throw new Error(`${target} connection reset`);
      return new Map(keys.filter((k) => !(b.omit ?? []).includes(k)).map((k) => [k, `${target}:${k}`]));
    },
    timers,
  };
  return { calls, timerDelays, deps };
}

/** Starts a request and records when (virtual ms) and how it settled. */
function track<T>(clock: VirtualClock, p: Promise<T>) {
  const out: { at: number | null; value?: T; error?: unknown } = { at: null };
  p.then(
    (value) => Object.assign(out, { at: clock.now, value }),
    (error: unknown) => Object.assign(out, { at: clock.now, error }),
  );
  return out;
}

const answersOf = (r: LongTailRetryResult<string>) =>
  Object.fromEntries([...r.answers].map(([k, a]) => [k, `${a.value}${a.viaRetry ? ' (retry)' : ''}`]));

const route = (primary: string, alternate: string | null): KeyRoute => ({ primary, alternate });

describe('getManyWithLongTailRetry on virtual time', () => {
  it('retries once, after the delay, only the keys still pending, to their alternate', async () => {
    const clock = new VirtualClock();
    const routes = { a: route('n1', 'n3'), b: route('n1', 'n3'), c: route('n2', 'n3'), d: route('n2', 'n1'), e: route('n1', 'n2') };
    const { calls, timerDelays, deps } = fakeCluster(clock, routes, { n1: { ms: 2, omit: ['e'] }, n2: { ms: 100 }, n3: { ms: 1 } });
    const lookups: number[] = [];
    const req = track(clock, getManyWithLongTailRetry(['a', 'b', 'c', 'd', 'e', 'a'], { delayMsFor: (n) => (lookups.push(n), 10) }, deps));
    await clock.runAll();

    expect(lookups).toEqual([5]);
    expect(timerDelays).toEqual([10]);
    expect(calls).toEqual([
      { at: 0, target: 'n1', keys: ['a', 'b', 'e'] },
      { at: 0, target: 'n2', keys: ['c', 'd'] },
      // at 10 ms: c (n2 still silent) and e (n1 answered without it); a, b were answered
      { at: 10, target: 'n3', keys: ['c'] },
      { at: 10, target: 'n1', keys: ['d'] },
      { at: 10, target: 'n2', keys: ['e'] },
    ]);
    expect(req.error).toBeUndefined();
    // d retried to n1 answers at 12; e retried to n2 answers at 110 (n2 is slow for everyone)
    expect(req.at).toBe(110);
    const r = req.value!;
    expect(answersOf(r)).toEqual({ a: 'n1:a', b: 'n1:b', c: 'n3:c (retry)', d: 'n1:d (retry)', e: 'n2:e (retry)' });
    expect([...r.answers.keys()]).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(r).toMatchObject({ delayMs: 10, retryFired: true, retriedKeys: ['c', 'd', 'e'] });
  });

  it('fires the retry at most once even when the alternate is slow too', async () => {
    const clock = new VirtualClock();
    const { calls, deps } = fakeCluster(clock, { x: route('n1', 'n2'), y: route('n1', 'n2') }, { n1: { ms: 300 }, n2: { ms: 250 } });
    const req = track(clock, getManyWithLongTailRetry(['x', 'y'], { delayMsFor: () => 20 }, deps));
    await clock.runAll();
    expect(calls.map((c) => [c.at, c.target])).toEqual([
      [0, 'n1'],
      [20, 'n2'],
    ]);
    expect(req.at).toBe(270);
    expect(answersOf(req.value!)).toEqual({ x: 'n2:x (retry)', y: 'n2:y (retry)' });
  });

  it('the first answer per key wins, even from the original target after the retry fired', async () => {
    const clock = new VirtualClock();
    const { deps } = fakeCluster(clock, { x: route('n1', 'n2') }, { n1: { ms: 12 }, n2: { ms: 5 } });
    const req = track(clock, getManyWithLongTailRetry(['x'], { delayMsFor: () => 10 }, deps));
    await clock.runAll();
    expect(req.at).toBe(12);
    expect(answersOf(req.value!)).toEqual({ x: 'n1:x' });
    expect(req.value!.retryFired).toBe(true);
  });

  it('cancels the timer when every key answers before the delay', async () => {
    const clock = new VirtualClock();
    const { calls, timerDelays, deps } = fakeCluster(clock, { x: route('n1', 'n2'), y: route('n2', 'n1') }, { n1: { ms: 3 }, n2: { ms: 4 } });
    const req = track(clock, getManyWithLongTailRetry(['x', 'y'], { delayMsFor: () => 10 }, deps));
    await clock.runUntil(4);
    expect(req.at).toBe(4);
    expect(clock.pending).toBe(0);
    expect(timerDelays).toEqual([10]);
    expect(calls).toHaveLength(2);
    expect(req.value).toMatchObject({ retryFired: false, retriedKeys: [] });
  });

  it('an empty request looks up no range, schedules no timer and fetches nothing', async () => {
    const clock = new VirtualClock();
    const { calls, timerDelays, deps } = fakeCluster(clock, {}, {});
    const delayMsFor = (): number => {
      throw new Error('looked up a range for an empty request');
    };
    const r = await getManyWithLongTailRetry<string>([], { delayMsFor }, deps);
    expect(r).toEqual({ answers: new Map(), delayMs: null, retryFired: false, retriedKeys: [] });
    expect(calls).toEqual([]);
    expect(timerDelays).toEqual([]);
  });

  it('captures the delay once: a policy refresh during the request does not retime it', async () => {
    const clock = new VirtualClock();
    const state = new MultiKeyRetryPolicyState({ store: 's', logger: { warn: () => undefined }, now: () => clock.now });
    state.onRefresh({ kind: 'success', cluster: 'A', schemaVersion: 5, policy: '1-:30' });
    const opts = { delayMsFor: (n: number) => resolveBatchGetRetryDelay(NO_LOCAL_SETTINGS, state.serverPolicy(), n).delayMs };
    const { calls, deps } = fakeCluster(clock, { x: route('n1', 'n2') }, { n1: { ms: 1000 }, n2: { ms: 1 } });

    const first = track(clock, getManyWithLongTailRetry(['x'], opts, deps));
    await clock.runUntil(5);
    expect(state.onRefresh({ kind: 'success', cluster: 'A', schemaVersion: 5, policy: '1-:5' })).toBe('published');
    await clock.runUntil(29);
    expect(calls.map((c) => c.target)).toEqual(['n1']);
    await clock.runUntil(31);
    expect(first.at).toBe(31);
    expect(first.value).toMatchObject({ delayMs: 30, retriedKeys: ['x'] });
    expect(calls.map((c) => [c.at, c.target])).toEqual([
      [0, 'n1'],
      [30, 'n2'],
    ]);

    // a request that starts after the refresh uses the new policy
    const second = track(clock, getManyWithLongTailRetry(['x'], opts, deps));
    await clock.runUntil(clock.now + 6);
    expect(second.value).toMatchObject({ delayMs: 5, retriedKeys: ['x'] });
    await clock.runAll();
  });

  it('refuses 501 distinct keys before anything else, and allows 500 with duplicates beyond', async () => {
    const clock = new VirtualClock();
    const keys = Array.from({ length: 501 }, (_, i) => `k${i}`);
    const routes = Object.fromEntries(keys.map((k) => [k, route('n1', 'n2')]));
    const { calls, timerDelays, deps } = fakeCluster(clock, routes, { n1: { ms: 1 }, n2: { ms: 1 } });
    let lookups = 0;
    let routed = 0;
    const counting = { ...deps, routeKey: (k: string) => (routed++, deps.routeKey(k)) };
    const opts = { delayMsFor: () => (lookups++, 10) };

    const refused = getManyWithLongTailRetry(keys, opts, counting);
    await expect(refused).rejects.toThrow(KeyCapExceededError);
    await expect(refused).rejects.toMatchObject({ distinctKeys: 501, cap: 500, message: 'batch-get of 501 distinct keys exceeds the cap of 500' });
    expect([calls.length, timerDelays.length, lookups, routed]).toEqual([0, 0, 0, 0]);

    const fiveHundred = keys.slice(0, 500);
    const req = track(clock, getManyWithLongTailRetry([...fiveHundred, ...fiveHundred.slice(0, 300), 'k0'], opts, counting));
    await clock.runAll();
    expect(req.value!.answers.size).toBe(500);
    expect(calls).toHaveLength(1);
    expect(calls[0].keys).toEqual(fiveHundred);
    expect(lookups).toBe(1);

    await expect(getManyWithLongTailRetry(keys.slice(0, 11), { ...opts, batchGetLimit: 10 }, counting)).rejects.toMatchObject({ distinctKeys: 11, cap: 10 });
    expect([keyCapFor(undefined), keyCapFor(0), keyCapFor(-3), keyCapFor(2.5), keyCapFor(5000)]).toEqual([500, 500, 500, 500, 5000]);
  });

  it('a failed first attempt is retried at the delay; a key with no alternate fails the request with its cause', async () => {
    const clock = new VirtualClock();
    const routes = { x: route('n1', 'n2'), y: route('n1', null), z: route('n3', 'n3') };
    const { calls, timerDelays, deps } = fakeCluster(clock, routes, { n1: { ms: 1, fail: true }, n2: { ms: 1 }, n3: { ms: 2, fail: true } });
    const req = track(clock, getManyWithLongTailRetry(['x', 'y', 'z'], { delayMsFor: () => 10 }, deps));
    await clock.runAll();
    expect(timerDelays).toEqual([10]);
    expect(calls.map((c) => [c.at, c.target, c.keys])).toEqual([
      [0, 'n1', ['x', 'y']],
      [0, 'n3', ['z']],
      [10, 'n2', ['x']],
    ]);
    expect(req.at).toBe(11);
    const err = req.error as BatchGetIncompleteError<string>;
    expect(err).toBeInstanceOf(BatchGetIncompleteError);
    expect(err.missingKeys).toEqual(['y', 'z']);
    expect(answersOf(err.partial)).toEqual({ x: 'n2:x (retry)' });
    expect(err.causes.map((c) => (c as Error).message)).toEqual(['n1 connection reset', 'n3 connection reset']);
    expect(err.message).toBe('batch-get left 2 key(s) unanswered; first failure: n1 connection reset');
  });

  it('schedules no timer when no key has an alternate (RF1), and fails as soon as nothing is left', async () => {
    const clock = new VirtualClock();
    const { timerDelays, deps } = fakeCluster(clock, { x: route('n1', null) }, { n1: { ms: 3, fail: true } });
    const req = track(clock, getManyWithLongTailRetry(['x'], { delayMsFor: () => 10 }, deps));
    await clock.runAll();
    expect(timerDelays).toEqual([]);
    expect(req.at).toBe(3);
    expect((req.error as BatchGetIncompleteError<string>).missingKeys).toEqual(['x']);
  });

  it('refuses a delay that is not a positive number', async () => {
    const clock = new VirtualClock();
    const { calls, deps } = fakeCluster(clock, { x: route('n1', 'n2') }, { n1: { ms: 1 }, n2: { ms: 1 } });
    for (const bad of [0, -1, Number.NaN]) await expect(getManyWithLongTailRetry(['x'], { delayMsFor: () => bad }, deps)).rejects.toThrow(RangeError);
    expect(calls).toEqual([]);
  });

  it('matches a per-key reference for random routes and latencies', async () => {
    // times never tie: delay = 0 mod 4, primary latency = 1 mod 4, alternate latency = 2 mod 4
    const targets = ['n1', 'n2', 'n3', 'n4'];
    const scenario = fc.record({
      delay: fc.integer({ min: 1, max: 50 }).map((x) => 4 * x),
      lat: fc.array(fc.integer({ min: 0, max: 60 }), { minLength: 4, maxLength: 4 }),
      keys: fc.array(
        fc.record({ p: fc.nat({ max: 3 }), a: fc.option(fc.nat({ max: 3 }), { nil: null }) }),
        { minLength: 1, maxLength: 30 },
      ),
    });
    await fc.assert(
      fc.asyncProperty(scenario, async ({ delay, lat, keys }) => {
        const clock = new VirtualClock();
        const primaryLat = (t: string) => 4 * lat[targets.indexOf(t)] + 1;
        const altLat = (t: string) => 4 * lat[targets.indexOf(t)] + 2;
        const routes: Record<string, KeyRoute> = {};
        keys.forEach((k, i) => (routes[`k${i}`] = route(targets[k.p], k.a === null ? null : targets[k.a])));
        const calls: Call[] = [];
        const deps = {
          routeKey: (key: string) => routes[key],
          fetch: async (target: string, ks: readonly string[]) => {
            // a key's first attempt goes to its primary; anything else is the retry
            const retry = ks.some((k) => routes[k].primary !== target || calls.some((c) => c.keys.includes(k)));
            calls.push({ at: clock.now, target, keys: [...ks] });
            await clock.sleep(retry ? altLat(target) : primaryLat(target));
            return new Map(ks.map((k) => [k, target]));
          },
          timers: clock,
        };
        const req = track(clock, getManyWithLongTailRetry(Object.keys(routes), { delayMsFor: () => delay }, deps));
        await clock.runAll();

        let end = 0;
        const expected: Record<string, string> = {};
        const expectedRetried: string[] = [];
        for (const [k, r] of Object.entries(routes)) {
          const tp = primaryLat(r.primary);
          const retried = r.alternate !== null && r.alternate !== r.primary && tp > delay;
          if (retried) expectedRetried.push(k);
          const ta = retried ? delay + altLat(r.alternate!) : Number.POSITIVE_INFINITY;
          expected[k] = ta < tp ? `${r.alternate} (retry)` : r.primary;
          end = Math.max(end, Math.min(tp, ta));
        }
        expect(req.error).toBeUndefined();
        expect(Object.fromEntries([...req.value!.answers].map(([k, a]) => [k, `${a.target}${a.viaRetry ? ' (retry)' : ''}`]))).toEqual(expected);
        expect(req.value!.retriedKeys).toEqual(expectedRetried);
        expect(req.value!.retryFired).toBe(expectedRetried.length > 0);
        expect(req.at).toBe(end);
        // every key went at most once to its primary and at most once to its alternate
        for (const k of Object.keys(routes)) expect(calls.filter((c) => c.keys.includes(k)).length).toBe(expectedRetried.includes(k) ? 2 : 1);
      }),
      { numRuns: 60 },
    );
  });
});
