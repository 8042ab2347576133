/**
 * What this machine can run, decided ONCE per `vitest run` (in test-support/global-setup.ts) and
 * handed to every test file through vitest's provide/inject, so that every test that needs
 * iptables, a Docker engine, a Debian package, root or the shared cases skips with the same words
 * (HELPERS.md: a skipped test says why; never an early return that counts as passed).
 *
 * In a test file:
 * ```ts
 * const net = needs('iptables');
 * describe.skipIf(net.skip)(net.title('iptables partitions on loopback'), () => { ... });
 * it.skipIf(net.skip)(net.title('a grudge cuts one link'), async () => { ... });
 * ```
 * A skipped test's title ends in `[NOT RUN: <reason>]`; test-support/not-run-reporter.ts lists
 * them at the end of every run, grouped by reason.
 */
import { inject } from 'vitest';
import type { CapabilityName, Capabilities } from './capability-probes.js';

export type { CapabilityName, Capabilities } from './capability-probes.js';

/** The key under which global-setup provides {@link Capabilities}. */
export const PROVIDE_KEY = 'zarisCapabilities';

/** What a test file is told about one capability. */
export interface Need {
  /** true when the capability is missing: pass to `describe.skipIf` / `it.skipIf`. */
  skip: boolean;
  /** Why it is missing (one line), or null. */
  reason: string | null;
  /** `name`, with ` [NOT RUN: <reason>]` appended when skipped (the reporter groups by it). */
  title(name: string): string;
}

/** The marker a skipped test's title carries; the reporter parses it. */
export const NOT_RUN_MARK = '[NOT RUN: ';

/**
 * The capabilities decided by global-setup for this run.
 * @throws Error (one line) when the file runs without vitest.config.ts's globalSetup.
 */
export function capabilities(): Capabilities {
  const c = inject(PROVIDE_KEY);
  if (!c) throw new Error('test-support/capabilities: no capabilities provided; run through vitest.config.ts (its globalSetup decides them)');
  return c;
}

/** One capability for `skipIf` and the test's title (see the module comment). */
export function needs(name: CapabilityName): Need {
  const reason = capabilities()[name];
  return { skip: reason !== null, reason, title: (t: string) => (reason === null ? t : `${t} ${NOT_RUN_MARK}${reason}]`) };
}
