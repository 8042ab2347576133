/**
 * Virtual time for the client's tests: a clock that moves only when told, and timers that
 * fire when the clock passes them. Test support only (excluded from the build).
 */
import type { RetryClock } from '../retry-loop.js';
import type { RefreshTimers } from '../shared-map-refresh.js';

/** A clock reading virtual ms; starts at `startMs` (default 0) and never goes back. */
export class VirtualClock implements RetryClock {
  private t: number;
  constructor(startMs = 0) {
    this.t = startMs;
  }
  now(): number {
    return this.t;
  }
  /** Moves the clock to `ms` if that is later than now. */
  advanceTo(ms: number): void {
    if (ms > this.t) this.t = ms;
  }
}

/**
 * A sleep that takes no real time: it moves the clock forward by `ms` and resolves. For a
 * single operation at a time (the cases); concurrent sleepers need a scheduler instead.
 */
export function instantSleep(clock: VirtualClock): (ms: number) => Promise<void> {
  return (ms: number) => {
    clock.advanceTo(clock.now() + ms);
    return Promise.resolve();
  };
}

interface PendingTimer {
  readonly id: number;
  readonly at: number;
  readonly fn: () => void;
}

/**
 * Timers on a {@link VirtualClock}: `advance(ms)` moves the clock and fires due timers in
 * time order, letting promise callbacks run after each.
 */
export class VirtualTimers implements RefreshTimers {
  private nextId = 1;
  private pending: PendingTimer[] = [];
  constructor(readonly clock: VirtualClock) {}

  setTimeout(fn: () => void, ms: number): unknown {
    const timer = { id: this.nextId++, at: this.clock.now() + ms, fn };
    this.pending.push(timer);
    return timer.id;
  }

  clearTimeout(handle: unknown): void {
    this.pending = this.pending.filter((t) => t.id !== handle);
  }

  /** How many timers are set and not yet fired or cleared. */
  get count(): number {
    return this.pending.length;
  }

  /** Moves the clock `ms` forward, firing each due timer at its own time. */
  async advance(ms: number): Promise<void> {
    const target = this.clock.now() + ms;
    for (;;) {
      const due = this.pending.filter((t) => t.at <= target).sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (due === undefined) break;
      this.pending = this.pending.filter((t) => t !== due);
      this.clock.advanceTo(due.at);
      due.fn();
      await flushMicrotasks();
    }
    this.clock.advanceTo(target);
    await flushMicrotasks();
  }
}

/** Lets every queued promise callback run (a few macrotask turns). */
export async function flushMicrotasks(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** The part of fast-check's Scheduler these helpers use. */
export interface TaskScheduler {
  schedule<T>(task: Promise<T>, label?: string): Promise<T>;
}

/**
 * A sleep for concurrent operations under a fast-check scheduler: the wake-up is a scheduled
 * task (released in an order fast-check chooses), and it moves the clock to at least
 * (clock when the sleep started) + ms.
 */
export function scheduledSleep(s: TaskScheduler, clock: VirtualClock): (ms: number) => Promise<void> {
  return (ms: number) => {
    const wake = clock.now() + ms;
    return s.schedule(Promise.resolve(), `sleep ${ms}`).then(() => clock.advanceTo(wake));
  };
}

/**
 * Timers under a fast-check scheduler: each timer is a scheduled task, so it may fire before or
 * after any other task; firing moves the clock to at least its due time. A cleared timer's task
 * still runs but does nothing.
 */
export function scheduledTimers(s: TaskScheduler, clock: VirtualClock): RefreshTimers {
  return {
    setTimeout(fn: () => void, ms: number): unknown {
      const handle = { cleared: false };
      const due = clock.now() + ms;
      void s.schedule(Promise.resolve(), `timer ${ms}`).then(() => {
        if (handle.cleared) return;
        clock.advanceTo(due);
        fn();
      });
      return handle;
    },
    clearTimeout(handle: unknown): void {
      (handle as { cleared: boolean }).cleared = true;
    },
  };
}
