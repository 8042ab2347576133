/**
 * Waiting within a run: a sleep that a signal cuts short, and a bounded wait for the cluster.
 */
import { WorldError } from '../runtime/runtime-errors.js';

/** Sleeps `ms`, or less when `signal` aborts (at once when it already has). */
export async function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return;
  await new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(t);
      resolve();
    }, { once: true });
  });
}

/**
 * Asks `cond` every 100 ms until it holds.
 * @throws WorldError (`cluster start: timed out after N s waiting for <what>`) past `timeoutMs`:
 *   the store's nodes did not come up, so the run ends INCONCLUSIVE.
 */
export async function waitUntil(cond: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    // the store's nodes did not come up as they should: the world's failure, not the harness's
    if (Date.now() > deadline) throw new WorldError(`cluster start: timed out after ${timeoutMs / 1000} s waiting for ${what}`, { source: 'target', op: 'cluster start', attempts: 1, transient: false });
    await new Promise((r) => setTimeout(r, 100));
  }
}
