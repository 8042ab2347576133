/**
 * The workload client's options, as a run records them (issue 10 "an honest client"): the client
 * under test runs with the library's own defaults (seed 000: 3 attempts, 100 ms linear backoff,
 * the deadline from ZARIS_REQUEST_TIMEOUT, 60 s by default, ZARIS_DISABLE_RETRIES, the refresh
 * wait budget from ZARIS_CLIENT_MAP_REFRESH_WAIT_MS, 15 s by default) unless the user sets those
 * variables; the run meta `clientOptions` says which values ran and which variables set them.
 */
import type { ResolvedClientOptions } from '../nodes/client/zaris-client.js';
import { ENV_DISABLE_RETRIES, ENV_REQUEST_TIMEOUT, retryOptionsFromEnv } from '../nodes/client/retry-policy.js';
import { ENV_MAP_REFRESH_WAIT_MS, refreshWaitBudgetFromEnv } from '../nodes/client/shared-map-refresh.js';
import { UsageError } from './usage-error.js';

/** The environment variables the client library reads (seed 000), in a fixed order. */
export const CLIENT_ENV_VARS: readonly string[] = [ENV_REQUEST_TIMEOUT, ENV_DISABLE_RETRIES, ENV_MAP_REFRESH_WAIT_MS];

/**
 * The run meta `clientOptions` (CONTRACT.md): the workload client's options as it runs with them.
 * - `maxAttempts`, `backoffMillis` (ms), `timeoutMs` (the operation deadline, ms; null = none),
 *   `disableRetries`: the retry bounds (seed 000).
 * - `mapRefreshWaitMs`: how long a caller waits for the shared map refresh, ms.
 * - `attemptTimeoutMs`, `metadataTimeoutMs`: the library's per-request timeouts, ms.
 * - `env`: each of {@link CLIENT_ENV_VARS} that was set (non-blank) in the harness's environment,
 *   name -> the text given; `{}` when the library defaults ran.
 */
export type ClientOptionsRecord = {
  maxAttempts: number;
  backoffMillis: number;
  timeoutMs: number | null;
  disableRetries: boolean;
  mapRefreshWaitMs: number;
  attemptTimeoutMs: number;
  metadataTimeoutMs: number;
  env: Record<string, string>;
};

/**
 * Checks the client variables of `env` the way the client library will read them, before
 * anything starts (a bad value is the user's mistake, not a harness error).
 * @throws UsageError (one line, naming the variable) on an invalid value.
 */
export function checkClientEnv(env: Readonly<Record<string, string | undefined>> = process.env): void {
  try {
    retryOptionsFromEnv(env);
    refreshWaitBudgetFromEnv(env);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

/**
 * The record of what a client runs with: its resolved options plus the client variables set in
 * `env` (the ones the library read to get there).
 */
export function clientOptionsRecord(resolved: ResolvedClientOptions, env: Readonly<Record<string, string | undefined>> = process.env): ClientOptionsRecord {
  const set: Record<string, string> = {};
  for (const name of CLIENT_ENV_VARS) {
    const v = env[name];
    if (v !== undefined && v.trim() !== '') set[name] = v;
  }
  return {
    maxAttempts: resolved.retry.maxAttempts,
    backoffMillis: resolved.retry.backoffMillis,
    timeoutMs: resolved.retry.timeoutMs,
    disableRetries: resolved.retry.disableRetries,
    mapRefreshWaitMs: resolved.refreshWaitBudgetMs,
    attemptTimeoutMs: resolved.attemptTimeoutMs,
    metadataTimeoutMs: resolved.metadataTimeoutMs,
    env: set,
  };
}
