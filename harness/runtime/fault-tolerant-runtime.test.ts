import assert from 'node:assert';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { faultTolerantRuntime, type RuntimeRetry } from './fault-tolerant-runtime.js';
import { INJECTABLE_CALLS, injectRuntimeErrors, injectedFails, type Injection } from './injected-runtime-errors.js';
import { isWorldError, type WorldError } from './runtime-errors.js';
import type { ClockMode, FaultRuntime, Grudge } from './runtime.js';

/** A runtime of three nodes that only records what reached it (a true private field checks `this`). */
class RecordingRuntime implements FaultRuntime {
  readonly kind = 'process' as const;
  readonly calls: string[] = [];
  #up = new Set(['n1', 'n2', 'n3']);
  /** Errors the next calls throw (shifted one per call), before anything is recorded. */
  readonly throwNext: Error[] = [];
  private hit(what: string): void {
    const e = this.throwNext.shift();
    if (e) throw e;
    this.calls.push(what);
  }
  async start(): Promise<void> {
    this.hit('start');
  }
  async kill(n: string): Promise<void> {
    this.hit(`kill ${n}`);
    this.#up.delete(n);
  }
  async stop(n: string): Promise<void> {
    this.hit(`stop ${n}`);
    this.#up.delete(n);
  }
  async restart(n: string): Promise<void> {
    this.hit(`restart ${n}`);
    this.#up.add(n);
  }
  async pause(n: string): Promise<void> {
    this.hit(`pause ${n}`);
  }
  async resume(n: string): Promise<void> {
    this.hit(`resume ${n}`);
  }
  async partition(g: Grudge): Promise<void> {
    this.hit(`partition ${JSON.stringify(g)}`);
  }
  async cutClient(ns: readonly string[]): Promise<void> {
    this.hit(`cutClient ${ns.join(',')}`);
  }
  async heal(): Promise<void> {
    this.hit('heal');
  }
  async setClock(n: string): Promise<void> {
    this.hit(`setClock ${n}`);
  }
  clockModes(): Readonly<Record<string, ClockMode>> | null {
    return null;
  }
  isUp(n: string): boolean {
    return this.#up.has(n);
  }
  nodeIds(): string[] {
    return ['n1', 'n2', 'n3'];
  }
  async close(): Promise<void> {
    this.calls.push('close');
  }
}

const fast = { initialDelayMs: 1, maxDelayMs: 2 };

async function outcome(p: Promise<unknown>): Promise<{ ok: true } | { ok: false; error: unknown }> {
  try {
    await p;
    return { ok: true };
  } catch (error) {
    return { ok: false, error };
  }
}

describe('fault-tolerant runtime', () => {
  it('retries a transient failure with backoff and reports each retry; the call then reaches the runtime once', async () => {
    const inner = new RecordingRuntime();
    const retries: RuntimeRetry[] = [];
    const rt = faultTolerantRuntime(injectRuntimeErrors(inner, [{ call: 'partition', nth: 1, how: 'transient', times: 2 }]), { initialDelayMs: 20, maxDelayMs: 40, onRetry: (r) => retries.push(r) });
    const t0 = performance.now();
    await rt.partition({ n1: ['n2'] });
    const took = performance.now() - t0;
    expect(inner.calls).toEqual(['partition {"n1":["n2"]}']);
    expect(retries.map((r) => [r.op, r.attempt])).toEqual([['partition', 1], ['partition', 2]]);
    expect(retries[0].error).toMatch(/^process runtime: partition failed \(exit 126\): OCI runtime exec failed: .*read init-p: connection reset by peer \(injected\)$/);
    for (const r of retries) expect(r.delayMs).toBeLessThanOrEqual(40);
    // two backoffs of at least a few ms each happened (decorrelated jitter starts near the initial delay)
    expect(took).toBeGreaterThanOrEqual(2);
  });

  it('gives up after the retries with a WorldError naming the call, its node and its attempts', async () => {
    const inner = new RecordingRuntime();
    const gaveUp: WorldError[] = [];
    const rt = faultTolerantRuntime(injectRuntimeErrors(inner, [{ call: 'restart', nth: 1, how: 'transient', times: 10 }]), { ...fast, retries: 3, onGiveUp: (e) => gaveUp.push(e) });
    const r = await outcome(rt.restart('n2'));
    assert(!r.ok && isWorldError(r.error));
    expect(r.error.message).toBe(`restart n2: process runtime: restart in n2 failed (exit 126): OCI runtime exec failed: exec failed: unable to start container process: read init-p: connection reset by peer (injected) (4 attempts)`);
    expect(r.error.attempts).toBe(4);
    expect(r.error.transient).toBe(true);
    expect(gaveUp).toEqual([r.error]);
    expect(inner.calls).toEqual([]);
  });

  it('does not retry a permanent failure, and passes a harness bug through untouched', async () => {
    const inner = new RecordingRuntime();
    const rt = faultTolerantRuntime(inner, fast);
    inner.throwNext.push(Object.assign(new Error('(HTTP code 404) no such container - 1f2e'), { statusCode: 404 }));
    const r = await outcome(rt.kill('n1'));
    assert(!r.ok && isWorldError(r.error));
    expect([r.error.attempts, r.error.transient, r.error.source]).toEqual([1, false, 'engine']);
    const bug = new TypeError("Cannot read properties of undefined (reading 'host')");
    inner.throwNext.push(bug);
    const b = await outcome(rt.heal());
    assert(!b.ok);
    expect(b.error).toBe(bug);
    expect(inner.calls).toEqual([]);
  });

  it('does not retry start, but a start that fails is the world\'s; other members pass through', async () => {
    const inner = new RecordingRuntime();
    const rt = faultTolerantRuntime(inner, fast);
    inner.throwNext.push(new Error('docker runtime: start failed: (HTTP code 500) server error - oops'));
    const r = await outcome(rt.start());
    assert(!r.ok && isWorldError(r.error));
    expect(r.error.op).toBe('cluster start');
    expect(r.error.attempts).toBe(1);
    expect(rt.kind).toBe('process');
    expect(rt.nodeIds()).toEqual(['n1', 'n2', 'n3']);
    await rt.kill('n1');
    expect(rt.isUp('n1')).toBe(false); // the true private field is reached: calls are bound to the runtime
    await rt.close();
    expect(inner.calls).toEqual(['kill n1', 'close']);
  });

  it('refuses nonsense options', () => {
    expect(() => faultTolerantRuntime(new RecordingRuntime(), { retries: -1 })).toThrow(RangeError);
    expect(() => faultTolerantRuntime(new RecordingRuntime(), { initialDelayMs: 10, maxDelayMs: 5 })).toThrow(RangeError);
  });

  // The state machine: every call's outcome and what reached the runtime follow from the
  // injections, whatever they are and whatever the harness calls.
  it('property: each call succeeds, fails as the world\'s after its attempts, or is a bug, exactly as a model of the injections says', async () => {
    const methods = ['kill', 'restart', 'pause', 'resume', 'partition', 'heal', 'cutClient'] as const;
    const nameOf: Record<(typeof methods)[number], string> = { kill: 'kill', restart: 'restart', pause: 'pause', resume: 'resume', partition: 'partition', heal: 'heal', cutClient: 'cut-client' };
    const injection = fc.record({
      call: fc.constantFrom(...INJECTABLE_CALLS.filter((c) => c !== 'start' && c !== 'set-clock' && c !== 'stop')),
      nth: fc.integer({ min: 1, max: 6 }),
      how: fc.constantFrom<Injection['how']>('transient', 'permanent', 'bug'),
      times: fc.integer({ min: 1, max: 6 }),
    }).map((i): Injection => ({ ...i, times: i.how === 'transient' ? i.times : 1 }));
    await fc.assert(
      fc.asyncProperty(fc.array(injection, { maxLength: 2 }), fc.array(fc.constantFrom(...methods), { minLength: 1, maxLength: 12 }), fc.integer({ min: 0, max: 3 }), async (injections, calls, retries) => {
        const inner = new RecordingRuntime();
        const rt = faultTolerantRuntime(injectRuntimeErrors(inner, injections), { ...fast, retries });
        // the model: attempt counters per injection; an attempt fails with the first injection that names it
        const counts = injections.map(() => 0);
        let reached = 0;
        for (const m of calls) {
          let expected: 'ok' | 'bug' | { attempts: number; transient: boolean } = 'ok';
          for (let attempt = 1; ; attempt++) {
            let fail: Injection['how'] | null = null;
            injections.forEach((inj, k) => {
              if (inj.call !== 'any' && inj.call !== nameOf[m]) return;
              counts[k]++;
              if (fail === null && injectedFails(inj, counts[k])) fail = inj.how;
            });
            if (fail === null) {
              reached++;
              break;
            }
            if (fail === 'bug') {
              expected = 'bug';
              break;
            }
            if (fail === 'permanent' || attempt > retries) {
              expected = { attempts: attempt, transient: fail === 'transient' };
              break;
            }
          }
          const arg = m === 'partition' ? {} : m === 'cutClient' ? [] : m === 'heal' ? undefined : 'n1';
          const got = await outcome((rt[m] as (a: unknown) => Promise<void>)(arg));
          if (expected === 'ok') expect(got.ok).toBe(true);
          else if (expected === 'bug') expect(!got.ok && got.error instanceof TypeError).toBe(true);
          else {
            assert(!got.ok && isWorldError(got.error));
            expect({ attempts: got.error.attempts, transient: got.error.transient }).toEqual(expected);
            expect(got.error.message.includes('\n')).toBe(false);
          }
        }
        expect(inner.calls.length).toBe(reached);
      }),
      { numRuns: 200 },
    );
  });
});
