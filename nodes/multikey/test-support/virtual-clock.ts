import type { Timers } from '../long-tail-retry.js';

/** Lets every pending promise callback run (one macrotask turn drains the microtask queue). */
export function settle(): Promise<void> {
  return new Promise<void>((resolve) => setImmediate(resolve));
}

/**
 * Virtual time for tests: timers fire only when the test advances the clock, in (time, creation)
 * order, with pending promise callbacks drained before each one. Times in ms from 0.
 */
export class VirtualClock implements Timers {
  #now = 0;
  #seq = 0;
  readonly #timers = new Map<number, { at: number; callback: () => void }>();

  /** Current virtual time, ms. */
  get now(): number {
    return this.#now;
  }

  /** Timers scheduled and not yet fired or cleared. */
  get pending(): number {
    return this.#timers.size;
  }

  setTimeout = (callback: () => void, ms: number): unknown => {
    const id = ++this.#seq;
    this.#timers.set(id, { at: this.#now + Math.max(0, ms), callback });
    return id;
  };

  clearTimeout = (handle: unknown): void => {
    this.#timers.delete(handle as number);
  };

  /** Resolves when virtual time reaches now + ms. */
  sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => this.setTimeout(resolve, ms));
  }

  /** Fires every timer due up to `t` (ms), then sets the clock to `t`. */
  async runUntil(t: number): Promise<void> {
    for (;;) {
      await settle();
      let nextId = -1;
      let nextAt = Number.POSITIVE_INFINITY;
      for (const [id, timer] of this.#timers) {
        if (timer.at <= t && timer.at < nextAt) {
          nextAt = timer.at;
          nextId = id;
        }
      }
      if (nextId < 0) break;
      const timer = this.#timers.get(nextId)!;
      this.#timers.delete(nextId);
      this.#now = timer.at;
      timer.callback();
    }
    this.#now = Math.max(this.#now, t);
    await settle();
  }

  /** Fires timers until none is left (at most `maxTimers`, to stay bounded). */
  async runAll(maxTimers = 100_000): Promise<void> {
    for (let i = 0; i < maxTimers && this.#timers.size > 0; i++) {
      const at = Math.min(...[...this.#timers.values()].map((x) => x.at));
      await this.runUntil(at);
    }
    await settle();
    if (this.#timers.size > 0) throw new Error(`virtual clock: still ${this.#timers.size} timers after ${maxTimers}`);
  }
}
