import { describe, expect, it } from 'vitest';
import { sharedCases } from '../../test-support/shared-cases.js';
import { MultiKeyRetryPolicyState, type MetadataRefreshOutcome } from './policy-refresh.js';
import { NO_LOCAL_SETTINGS, resolveBatchGetRetryDelay, type LocalMultiKeyRetrySettings } from './retry-policy-precedence.js';
import { parseRetryRangeTable, parseRetryRangeTableOrThrow } from './retry-range-table.js';

interface ParseCase {
  input: string;
  valid: boolean;
  delayMsByKeyCount?: Record<string, number>;
}
interface PrecedenceCase {
  fixedMicros: number;
  localRange: string | null;
  localRangeExplicit: boolean;
  server: string | null;
  keys: number;
  expectedDelayMs: number;
}
interface RefreshResponse {
  schema?: number;
  cluster: string;
  policy?: string;
  transportFailure?: boolean;
}
interface RefreshCase {
  why: string;
  steps: { response: RefreshResponse; expectedDelayMsFor10Keys: number; invalidCount: number }[];
}
interface Cases {
  parse: ParseCase[];
  precedence: PrecedenceCase[];
  refresh: RefreshCase[];
}

// $ZARIS_CASES_DIR or ../shared/cases; where neither exists the suite is NOT run, and says why
const shared = sharedCases();
const cases = shared.json<Cases>('multikey-retry-policy.json', { parse: [], precedence: [], refresh: [] });

function toOutcome(r: RefreshResponse): MetadataRefreshOutcome {
  if (r.transportFailure === true) return { kind: 'failure', cluster: r.cluster, reason: 'transport failure' };
  if (typeof r.schema !== 'number') throw new Error(`refresh case response without schema: ${JSON.stringify(r)}`);
  return r.policy === undefined
    ? { kind: 'success', cluster: r.cluster, schemaVersion: r.schema }
    : { kind: 'success', cluster: r.cluster, schemaVersion: r.schema, policy: r.policy };
}

describe.skipIf(shared.skip)(shared.title('multikey-retry-policy.json cases (seed 004)'), () => {
  it('has cases of every kind', () => {
    expect(cases.parse.length).toBeGreaterThan(0);
    expect(cases.precedence.length).toBeGreaterThan(0);
    expect(cases.refresh.length).toBeGreaterThan(0);
  });

  describe('parse', () => {
    it.each(cases.parse.map((c) => [JSON.stringify(c.input), c] as const))('%s', (_name, c) => {
      const p = parseRetryRangeTable(c.input);
      if (c.valid) {
        expect(p.kind).toBe('table');
        if (p.kind !== 'table') return;
        const entries = Object.entries(c.delayMsByKeyCount ?? {});
        expect(entries.length).toBeGreaterThan(0);
        for (const [count, delay] of entries) expect([count, p.table.delayMsFor(Number(count))]).toEqual([count, delay]);
      } else {
        // "" is not a table; it is the distinct "no policy" value, never an error
        expect(p.kind).toBe(c.input === '' ? 'empty' : 'invalid');
        if (p.kind === 'invalid') expect(p.error.message).not.toMatch(/\n/);
      }
    });
  });

  describe('precedence (batch-get)', () => {
    it.each(cases.precedence.map((c, i) => [i, c] as const))('case %i', (_i, c) => {
      const local: LocalMultiKeyRetrySettings =
        c.localRangeExplicit && c.localRange !== null
          ? { batchGetFixedThresholdMicros: c.fixedMicros, batchGetRange: parseRetryRangeTableOrThrow(c.localRange) }
          : { ...NO_LOCAL_SETTINGS, batchGetFixedThresholdMicros: c.fixedMicros };
      const server = c.server === null ? null : parseRetryRangeTableOrThrow(c.server);
      expect(resolveBatchGetRetryDelay(local, server, c.keys).delayMs).toBe(c.expectedDelayMs);
    });
  });

  describe('refresh', () => {
    it.each(cases.refresh.map((c) => [c.why, c] as const))('%s', (_why, c) => {
      const warnings: string[] = [];
      const state = new MultiKeyRetryPolicyState({ store: 's', logger: { warn: (m) => warnings.push(m) }, now: () => 0 });
      for (const step of c.steps) {
        state.onRefresh(toOutcome(step.response));
        expect(resolveBatchGetRetryDelay(NO_LOCAL_SETTINGS, state.serverPolicy(), 10).delayMs).toBe(step.expectedDelayMsFor10Keys);
        expect(state.invalidPolicyCount).toBe(step.invalidCount);
      }
      expect(warnings.length).toBe(state.invalidPolicyCount > 0 ? 1 : 0);
    });
  });
});
