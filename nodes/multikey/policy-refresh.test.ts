import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MultiKeyRetryPolicyState, type MetadataRefreshOutcome } from './policy-refresh.js';
import { DEFAULT_BATCH_GET_TABLE, parseRetryRangeTableOrThrow } from './retry-range-table.js';

function newState(now: () => number = () => 0, warnIntervalMs?: number) {
  const warnings: string[] = [];
  const state = new MultiKeyRetryPolicyState({ store: 'sync3', logger: { warn: (m) => warnings.push(m) }, now, warnIntervalMs });
  return { state, warnings };
}

const ok = (cluster: string, policy?: string, schemaVersion = 5): MetadataRefreshOutcome =>
  policy === undefined ? { kind: 'success', cluster, schemaVersion } : { kind: 'success', cluster, schemaVersion, policy };
const failure = (cluster: string): MetadataRefreshOutcome => ({ kind: 'failure', cluster, reason: 'connect ECONNREFUSED' });

describe('MultiKeyRetryPolicyState: rules', () => {
  it('publishes a valid policy and clears on an empty, absent or old-schema one', () => {
    const { state } = newState();
    expect(state.serverPolicy()).toBeNull();
    expect(state.onRefresh(ok('A', '1-:30'))).toBe('published');
    expect(state.published?.cluster).toBe('A');
    expect(state.serverPolicy()?.delayMsFor(10)).toBe(30);
    expect(state.onRefresh(ok('A'))).toBe('cleared');
    expect(state.serverPolicy()).toBeNull();
    state.onRefresh(ok('A', '1-:30'));
    // an old-schema response withdraws the policy even if a field were present
    expect(state.onRefresh(ok('A', '1-:40', 4))).toBe('cleared');
    expect(state.serverPolicy()).toBeNull();
  });

  it('publication swaps one frozen reference; a reader keeps what it captured', () => {
    const { state } = newState();
    state.onRefresh(ok('A', '1-:30'));
    const before = state.published!;
    expect(Object.isFrozen(before)).toBe(true);
    state.onRefresh(ok('A', '1-:45'));
    expect(state.published).not.toBe(before);
    expect(before.table.delayMsFor(3)).toBe(30);
    expect(state.serverPolicy()?.delayMsFor(3)).toBe(45);
  });

  it('never exposes the previous cluster after discovery moves, whatever the new cluster answers', () => {
    for (const next of [failure('B'), ok('B', '1-10:8'), ok('B', ''), ok('B', undefined, 4)]) {
      const { state } = newState();
      state.onRefresh(ok('A', '1-:30'));
      expect(state.onRefresh(next)).toBe('cleared');
      expect(state.serverPolicy()).toBeNull();
      // coming back to A does not resurrect A's old policy
      expect(state.onRefresh(failure('A'))).toBe('cleared');
      expect(state.serverPolicy()).toBeNull();
    }
    const { state } = newState();
    state.onRefresh(ok('A', '1-:30'));
    state.onClusterDiscovered('A');
    expect(state.serverPolicy()?.delayMsFor(1)).toBe(30);
    state.onClusterDiscovered('B');
    expect(state.published).toBeNull();
  });

  it('invalid non-empty policies: counted, warned rate-limited with the suppressed count, last valid kept', () => {
    let t = 0;
    const { state, warnings } = newState(() => t, 1000);
    state.onRefresh(ok('A', DEFAULT_BATCH_GET_TABLE));
    for (const at of [10, 500, 1009, 1010, 1500]) {
      t = at;
      expect(state.onRefresh(ok('A', ' '))).toBe('retained');
    }
    expect(state.invalidPolicyCount).toBe(5);
    expect(state.serverPolicy()?.toString()).toBe(DEFAULT_BATCH_GET_TABLE);
    expect(warnings).toEqual([
      'store "sync3": ignoring multi-key retry policy from cluster "A": invalid retry range table " ": entry 1 " " is not lower-upper:ms or lower-:ms; keeping the last valid policy of cluster "A"',
      'store "sync3": ignoring multi-key retry policy from cluster "A": invalid retry range table " ": entry 1 " " is not lower-upper:ms or lower-:ms; keeping the last valid policy of cluster "A" (2 similar warnings suppressed)',
    ]);
  });

  it('an invalid policy with nothing retained says so', () => {
    const { state, warnings } = newState();
    expect(state.onRefresh(ok('A', '1-:0'))).toBe('cleared');
    expect(state.invalidPolicyCount).toBe(1);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/; no server policy in effect$/);
  });

  it('refuses a bad warning interval', () => {
    expect(() => newState(() => 0, -1)).toThrow(RangeError);
  });
});

// ---- property: random refresh sequences against a simple reference model ----

type Event =
  | { e: 'valid'; cluster: string; policy: string }
  | { e: 'empty'; cluster: string }
  | { e: 'old'; cluster: string }
  | { e: 'invalid'; cluster: string; policy: string }
  | { e: 'failure'; cluster: string }
  | { e: 'discover'; cluster: string };

const clusterArb = fc.constantFrom('A', 'B', 'C');
const validPolicies = ['1-:30', DEFAULT_BATCH_GET_TABLE, '6-:40,1-5:15', '1-:2147483'];
const invalidPolicies = [' ', '1-10:8', '1-:0', '2-:8', '1-10:8,10-:9', '1-2147483647:8', '1-:8,'];
const eventArb: fc.Arbitrary<Event> = fc.oneof(
  fc.record({ e: fc.constant('valid' as const), cluster: clusterArb, policy: fc.constantFrom(...validPolicies) }),
  fc.record({ e: fc.constant('empty' as const), cluster: clusterArb }),
  fc.record({ e: fc.constant('old' as const), cluster: clusterArb }),
  fc.record({ e: fc.constant('invalid' as const), cluster: clusterArb, policy: fc.constantFrom(...invalidPolicies) }),
  fc.record({ e: fc.constant('failure' as const), cluster: clusterArb }),
  fc.record({ e: fc.constant('discover' as const), cluster: clusterArb }),
);

/** The reference: the published (cluster, text) pair, or null, and the invalid counter. */
interface Model {
  pub: { cluster: string; text: string } | null;
  invalid: number;
}

function step(m: Model, ev: Event): Model {
  const keepSame = m.pub !== null && m.pub.cluster === ev.cluster ? m.pub : null;
  switch (ev.e) {
    case 'valid':
      return { ...m, pub: { cluster: ev.cluster, text: ev.policy } };
    case 'empty':
    case 'old':
      return { ...m, pub: null };
    case 'invalid':
      return { pub: keepSame, invalid: m.invalid + 1 };
    case 'failure':
    case 'discover':
      return { ...m, pub: keepSame };
  }
}

describe('MultiKeyRetryPolicyState: random refresh sequences', () => {
  it('match the reference model and never expose another cluster', () => {
    fc.assert(
      fc.property(fc.array(eventArb, { maxLength: 40 }), (events) => {
        const { state, warnings } = newState();
        let model: Model = { pub: null, invalid: 0 };
        for (const ev of events) {
          model = step(model, ev);
          switch (ev.e) {
            case 'valid':
              state.onRefresh(ok(ev.cluster, ev.policy));
              break;
            case 'empty':
              state.onRefresh(ok(ev.cluster, ''));
              break;
            case 'old':
              state.onRefresh(ok(ev.cluster, undefined, 4));
              break;
            case 'invalid':
              state.onRefresh(ok(ev.cluster, ev.policy));
              break;
            case 'failure':
              state.onRefresh(failure(ev.cluster));
              break;
            case 'discover':
              state.onClusterDiscovered(ev.cluster);
              break;
          }
          const pub = state.published;
          // the cluster of the latest event is the only one whose policy may be visible
          expect(pub === null || pub.cluster === ev.cluster).toBe(true);
          expect(pub === null ? null : { cluster: pub.cluster, text: pub.table.toString() }).toEqual(
            model.pub === null ? null : { cluster: model.pub.cluster, text: parseRetryRangeTableOrThrow(model.pub.text).toString() },
          );
          expect(state.invalidPolicyCount).toBe(model.invalid);
        }
        // the clock never moves here, so at most one warning is ever emitted
        expect(warnings).toHaveLength(Math.min(model.invalid, 1));
      }),
    );
  });
});
