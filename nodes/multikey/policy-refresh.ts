/**
 * The client's view of one store's server-advertised multi-key retry policy across metadata
 * refreshes (seed 004, "Precedence and refresh"). Pure state, no I/O: the client feeds it each
 * refresh outcome; requests read the published policy.
 */
import { parseRetryRangeTable, type RetryRangeTable } from './retry-range-table.js';

/** First metadata response schema version that carries the policy field (seed 004: v5). */
export const POLICY_SCHEMA_VERSION = 5;

/** Name of the per-store counter of invalid non-empty policies (seed 004). */
export const INVALID_POLICY_METRIC = 'invalid_multi_key_retry_policy';

/** Default minimum spacing of invalid-policy warnings, ms. */
export const DEFAULT_WARN_INTERVAL_MS = 60_000;

/**
 * What one metadata refresh produced:
 * - `success`: a metadata response from `cluster`, written with schema `schemaVersion`. `policy` is
 *   the advertised table text (absent before v5; a v5 reader defaults it to "").
 * - `failure`: the refresh against `cluster` failed (transport, schema lookup, anything else).
 */
export type MetadataRefreshOutcome =
  | { readonly kind: 'success'; readonly cluster: string; readonly schemaVersion: number; readonly policy?: string }
  | { readonly kind: 'failure'; readonly cluster: string; readonly reason: string };

/** A published server policy: the table and the cluster it came from (immutable). */
export interface PublishedRetryPolicy {
  /** Cluster whose metadata advertised it. */
  readonly cluster: string;
  readonly table: RetryRangeTable;
}

/**
 * What a refresh did to the published policy:
 * - `published`: a valid policy is now published;
 * - `cleared`: nothing is published (empty policy, old schema, or another cluster's policy dropped);
 * - `retained`: the previous policy of the same cluster stays (failure, or invalid policy).
 */
export type RefreshEffect = 'published' | 'cleared' | 'retained';

/** Where warnings go; one line each. */
export interface WarnLogger {
  warn(message: string): void;
}

/** Construction parameters of {@link MultiKeyRetryPolicyState}. */
export interface PolicyStateOptions {
  /** Store name, used in warnings (the counter is per store: one state per store). */
  readonly store: string;
  /** Receives the rate-limited invalid-policy warnings. */
  readonly logger: WarnLogger;
  /** Monotonic clock, ms. */
  readonly now: () => number;
  /** Minimum spacing of warnings, ms (default 60,000). Suppressed ones are counted in the next. */
  readonly warnIntervalMs?: number;
}

/**
 * One store's server policy state. Invariant: the published policy, if any, belongs to the
 * cluster last seen by discovery or a refresh; publication swaps one immutable reference.
 * No TTL: a policy stays until a refresh or a cluster change removes it (seed 004).
 */
export class MultiKeyRetryPolicyState {
  #published: PublishedRetryPolicy | null = null;
  #invalidCount = 0;
  #lastWarnAt: number | null = null;
  #suppressedWarnings = 0;
  readonly #opts: PolicyStateOptions;
  readonly #warnIntervalMs: number;

  /** @throws RangeError when warnIntervalMs is negative or not finite. */
  constructor(opts: PolicyStateOptions) {
    const interval = opts.warnIntervalMs ?? DEFAULT_WARN_INTERVAL_MS;
    if (!Number.isFinite(interval) || interval < 0) throw new RangeError(`warnIntervalMs must be a finite number >= 0, got ${interval}`);
    this.#opts = opts;
    this.#warnIntervalMs = interval;
  }

  /** The published policy with its cluster, or null. */
  get published(): PublishedRetryPolicy | null {
    return this.#published;
  }

  /** The published server table to feed the precedence rules, or null when none applies. */
  serverPolicy(): RetryRangeTable | null {
    return this.#published?.table ?? null;
  }

  /** Value of the per-store `invalid_multi_key_retry_policy` counter. */
  get invalidPolicyCount(): number {
    return this.#invalidCount;
  }

  /**
   * Discovery placed the store in `cluster`. A different cluster drops the published policy at
   * once, before any fetch from the new cluster (seed 004).
   */
  onClusterDiscovered(cluster: string): void {
    if (this.#published !== null && this.#published.cluster !== cluster) this.#published = null;
  }

  /**
   * Applies one refresh outcome (seed 004):
   * - success with schema < 5, or with an empty/absent policy: clear;
   * - success with a valid policy: publish it (parsed once, here);
   * - success with an invalid non-empty policy: count it, warn (rate-limited), keep the last valid
   *   policy if it is from the same cluster, else clear;
   * - failure: keep the policy if it is from the same cluster, else clear.
   * @returns the effect on the published policy.
   */
  onRefresh(outcome: MetadataRefreshOutcome): RefreshEffect {
    const current = this.#published;
    const sameCluster = current !== null && current.cluster === outcome.cluster;
    if (outcome.kind === 'failure') return this.#keepIfSameCluster(sameCluster);
    if (outcome.schemaVersion < POLICY_SCHEMA_VERSION) return this.#publish(null);
    const text = outcome.policy ?? '';
    const parsed = parseRetryRangeTable(text);
    switch (parsed.kind) {
      case 'empty':
        return this.#publish(null);
      case 'table':
        return this.#publish(Object.freeze({ cluster: outcome.cluster, table: parsed.table }));
      case 'invalid': {
        this.#invalidCount++;
        const effect = this.#keepIfSameCluster(sameCluster);
        const kept = effect === 'retained' ? `keeping the last valid policy of cluster ${JSON.stringify(outcome.cluster)}` : 'no server policy in effect';
        this.#warn(`store ${JSON.stringify(this.#opts.store)}: ignoring multi-key retry policy from cluster ${JSON.stringify(outcome.cluster)}: ${parsed.error.message}; ${kept}`);
        return effect;
      }
    }
  }

  #keepIfSameCluster(sameCluster: boolean): RefreshEffect {
    return sameCluster ? 'retained' : this.#publish(null);
  }

  #publish(next: PublishedRetryPolicy | null): RefreshEffect {
    this.#published = next;
    return next === null ? 'cleared' : 'published';
  }

  #warn(message: string): void {
    const now = this.#opts.now();
    if (this.#lastWarnAt !== null && now - this.#lastWarnAt < this.#warnIntervalMs) {
      this.#suppressedWarnings++;
      return;
    }
    const suppressed = this.#suppressedWarnings;
    this.#lastWarnAt = now;
    this.#suppressedWarnings = 0;
    this.#opts.logger.warn(suppressed > 0 ? `${message} (${suppressed} similar warnings suppressed)` : message);
  }
}
