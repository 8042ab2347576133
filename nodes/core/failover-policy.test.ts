import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { tenureTag, type Member, type PartitionReport, type RuntimeEntry } from '../cluster-messages.js';
import { decideFailover, HANDOFF_TIMEOUT_MS, type FailoverView } from './failover-policy.js';
import { runtimeEntry } from '../test-support/runtime-entry.js';

/** One node as the leader sees it in a table-driven view. */
interface NodeRow {
  inc: string;
  /** answers within the suspicion window */
  live?: boolean;
  /** this incarnation is gone (refused probe / new incarnation) */
  gone?: boolean;
  /** silent past the escalation timeout */
  down?: boolean;
  /** its report of the partition (fresh), if any */
  report?: Partial<PartitionReport>;
  /** its report predates the owner's death */
  stale?: boolean;
}

const PKEY = 'async3/0';

function view(rows: Record<string, NodeRow>, o: Partial<Pick<FailoverView, 'selfTestBug'>> & { lastTransition?: number; unavailableSince?: number; handoffSince?: number } = {}): FailoverView {
  const row = (n: string): NodeRow | undefined => rows[n];
  const gone = (m: Member): boolean => !row(m.node) || row(m.node)!.inc !== m.inc || row(m.node)!.gone === true;
  const nodeLive = (n: string): boolean => row(n)?.live === true && !row(n)!.gone && !row(n)!.down;
  return {
    self: 'n1',
    timing: { recoveryCooldownMs: 1_000, evictionTimeoutMs: 60_000 },
    nodeIds: ['n1', 'n2', 'n3', 'n4'],
    ...(o.selfTestBug ? { selfTestBug: o.selfTestBug } : {}),
    replicationFactor: () => 3,
    incOf: (n) => row(n)?.inc ?? null,
    nodeLive,
    gone,
    live: (m) => !gone(m) && nodeLive(m.node),
    confirmedDown: (m) => gone(m) || row(m.node)?.down === true,
    suspected: (n) => n !== 'n1' && row(n)?.live !== true,
    confirmable: (m) => !gone(m) && nodeLive(m.node),
    freshReport: (m, pkey) => {
      const r = row(m.node);
      if (!r || r.inc !== m.inc || !r.report) return null;
      return { pkey, rev: 0, heldKeys: 0, syncedSegments: 4, tag: '', accepted: -1, ...r.report };
    },
    peerReports: (pkey) =>
      Object.entries(rows)
        .filter(([n, r]) => n !== 'n1' && r.report)
        .map(([, r]) => ({ pkey, rev: 0, heldKeys: 0, syncedSegments: 4, tag: '', accepted: -1, ...r.report })),
    reportPredatesDeath: (n) => row(n)?.stale === true,
    lastTransitionAt: () => o.lastTransition,
    unavailableSince: () => o.unavailableSince,
    handoffSince: () => o.handoffSince,
  };
}

const m = (node: string, inc = `${node}a`): Member => ({ node, inc });

function entry(over: Partial<RuntimeEntry> = {}): RuntimeEntry {
  return runtimeEntry({ store: 'async3', epoch: 7, term: 2, activeSince: 5, inSync: [m('n1'), m('n2'), m('n3')], active: m('n1'), ...over }, (n) => `${n}a`);
}

const T = tenureTag(m('n3'), 5);
const NOW = 100_000;

describe('failover policy (nodes/core/failover-policy.ts, seed 002 steps 1-8)', () => {
  it('step 1: the confirmed-down owner is replaced by the live in-sync member holding most of its log, Degraded', () => {
    const e = entry({ active: m('n3'), inSync: [m('n3'), m('n1'), m('n2')] });
    const d = decideFailover(e, view({ n1: { inc: 'n1a', live: true, report: { rev: 90, tag: T } }, n2: { inc: 'n2a', live: true, report: { rev: 92, tag: T } }, n3: { inc: 'n3a', down: true } }), NOW);
    expect(d.failover).toBe(true);
    expect(d.logs[0]).toEqual(['failover', { pkey: PKEY, from: 'n3', epoch: 7 }]);
    expect(d.proposal?.newTenure).toBe(true);
    expect(d.proposal?.entry).toMatchObject({ active: m('n2'), health: 'Degraded', inSync: [m('n1'), m('n2')], syncFrom: null });
  });

  it('step 1 waits (counted, nothing proposed) while another in-sync member is only suspected, or a report predates the death', () => {
    const e = entry({ active: m('n3'), inSync: [m('n3'), m('n1'), m('n2')] });
    const suspectedOnly = decideFailover(e, view({ n1: { inc: 'n1a', live: true, report: { rev: 82, tag: T } }, n2: { inc: 'n2a' }, n3: { inc: 'n3a', down: true } }), NOW);
    expect(suspectedOnly).toMatchObject({ failover: true, proposal: null });
    const stale = decideFailover(e, view({ n1: { inc: 'n1a', live: true, report: { rev: 82, tag: T } }, n2: { inc: 'n2a', live: true, stale: true, report: { rev: 92, tag: T } }, n3: { inc: 'n3a', down: true } }), NOW);
    expect(stale).toMatchObject({ failover: true, proposal: null });
    // once n2 is confirmed down, n1 is promoted
    const n2Down = decideFailover(e, view({ n1: { inc: 'n1a', live: true, report: { rev: 82, tag: T } }, n2: { inc: 'n2a', down: true }, n3: { inc: 'n3a', down: true } }), NOW);
    expect(n2Down.proposal?.entry.active).toEqual(m('n1'));
  });

  it('possession proof: a live assigned replica outside the in-sync set with a longer prefix of the same log makes the candidate Recovering from it', () => {
    const e = entry({ active: m('n3'), inSync: [m('n3'), m('n1')] });
    const d = decideFailover(e, view({ n1: { inc: 'n1a', live: true, report: { rev: 50, tag: T } }, n2: { inc: 'n2a', live: true, report: { rev: 70, tag: T } }, n3: { inc: 'n3a', gone: true } }), NOW);
    expect(d.proposal?.entry).toMatchObject({ active: m('n1'), health: 'Recovering', syncFrom: m('n2'), syncTag: T });
    expect(d.logs.map((l) => l[0])).toEqual(['failover', 'possession-holder']);
    // a longer copy of ANOTHER log is not comparable: no recovery from it
    const other = decideFailover(e, view({ n1: { inc: 'n1a', live: true, report: { rev: 50, tag: T } }, n2: { inc: 'n2a', live: true, report: { rev: 70, tag: 'n2:n2a:1' } }, n3: { inc: 'n3a', gone: true } }), NOW);
    expect(other.proposal?.entry).toMatchObject({ active: m('n1'), health: 'Degraded', syncFrom: null });
  });

  it('possession proof: an in-sync candidate that never followed the deposed tenure is Recovering from a live replica that did', () => {
    // n2 owned the partition (tenure T19) and died with n3 behind; n1 took over (T) holding more; n3
    // stayed in-sync but its catch-up from n1 was lost to a cut, so it still reports T19; the
    // restarted n2 synced from n1 (T, revision 6306); n1 is confirmed down: the only candidate, n3,
    // lacks everything n1 held past 6239, which the live n2 holds
    const T19 = tenureTag(m('n2', 'n2old'), 3);
    const e = entry({ active: m('n1'), inSync: [m('n1'), m('n3')], replicas: ['n2', 'n3', 'n1'] });
    const rows = { n1: { inc: 'n1a', down: true }, n2: { inc: 'n2a', live: true, report: { rev: 6306, tag: tenureTag(m('n1'), 5) } }, n3: { inc: 'n3a', live: true, report: { rev: 6239, tag: T19 } } };
    const d = decideFailover(e, view(rows), NOW);
    expect(d.failover).toBe(true);
    expect(d.proposal?.entry).toMatchObject({ active: m('n3'), health: 'Recovering', inSync: [m('n3')], syncFrom: m('n2'), syncTag: tenureTag(m('n1'), 5) });
    expect(d.logs.map((l) => l[0])).toEqual(['failover', 'possession-holder']);
    // a holder of the deposed tenure no longer than the candidate's copy adds nothing: Degraded
    const shorter = decideFailover(e, view({ ...rows, n2: { inc: 'n2a', live: true, report: { rev: 6200, tag: tenureTag(m('n1'), 5) } } }), NOW);
    expect(shorter.proposal?.entry).toMatchObject({ active: m('n3'), health: 'Degraded', syncFrom: null });
  });

  it('the self-test bug no-possession-proof promotes by synced segments and map order, straight to Degraded', () => {
    const e = entry({ active: m('n3'), inSync: [m('n3'), m('n1'), m('n2')], replicas: ['n3', 'n1', 'n2'] });
    const rows = { n1: { inc: 'n1a', live: true, report: { rev: 10, tag: T } }, n2: { inc: 'n2a', live: true, report: { rev: 99, tag: T } }, n3: { inc: 'n3a', down: true } };
    expect(decideFailover(e, view(rows), NOW).proposal?.entry.active).toEqual(m('n2'));
    const bug = decideFailover(e, view(rows, { selfTestBug: 'no-possession-proof' }), NOW);
    expect(bug.proposal?.entry).toMatchObject({ active: m('n1'), health: 'Degraded' });
    expect(bug.logs.map((l) => l[0])).toEqual(['failover', 'self-test-bug']);
  });

  it('every in-sync copy gone: the heir is the live assigned replica with the longest prefix of the deposed log, else Unavailable keeping the members not gone', () => {
    const e = entry({ active: m('n3'), inSync: [m('n3'), m('n1', 'old')] });
    const heir = decideFailover(e, view({ n1: { inc: 'n1a', live: true }, n2: { inc: 'n2a', live: true, report: { rev: 40, tag: T } }, n3: { inc: 'n3a', gone: true } }), NOW);
    expect(heir.proposal?.entry).toMatchObject({ active: m('n2'), inSync: [m('n2')], health: 'Degraded' });
    const none = decideFailover(entry({ active: m('n3'), inSync: [m('n3'), m('n2')] }), view({ n1: { inc: 'n1a', live: true }, n2: { inc: 'n2a', down: true }, n3: { inc: 'n3a', gone: true } }), NOW);
    expect(none.proposal?.entry).toMatchObject({ active: null, health: 'Unavailable', inSync: [m('n2')] });
  });

  it('step 2: no active: a live in-sync member is promoted; else the partition is regenerated after the eviction timeout (or at once when every copy is gone)', () => {
    const un = entry({ active: null, health: 'Unavailable', inSync: [m('n2')] });
    expect(decideFailover(un, view({ n1: { inc: 'n1a', live: true }, n2: { inc: 'n2a', down: true } }, { unavailableSince: NOW - 59_999 }), NOW).proposal).toBeNull();
    const due = decideFailover(un, view({ n1: { inc: 'n1a', live: true }, n2: { inc: 'n2a', down: true }, n4: { inc: 'n4a', live: true } }, { unavailableSince: NOW - 60_000 }), NOW);
    expect(due.proposal?.entry).toMatchObject({ active: m('n1'), inSync: [m('n1')], replicas: ['n1', 'n4'], mapVersion: 2, keepCopies: false });
    expect(due.logs).toEqual([['regenerate', { pkey: PKEY, replicas: ['n1', 'n4'], lost: ['n2'] }]]);
    const gone = decideFailover(un, view({ n1: { inc: 'n1a', live: true }, n2: { inc: 'n2b', live: true } }, { unavailableSince: NOW }), NOW);
    expect(gone.proposal?.entry.replicas).toEqual(['n1', 'n2']);
    const back = decideFailover(un, view({ n2: { inc: 'n2a', live: true, report: { rev: 3 } } }), NOW);
    expect(back.proposal?.entry).toMatchObject({ active: m('n2') });
  });

  it('steps 3-8: reaffirm, recovery source lost, shrink (never to unconfirmable members), handoff cancel, recovery sweep, failback', () => {
    const live = { n1: { inc: 'n1a', live: true }, n2: { inc: 'n2a', live: true }, n3: { inc: 'n3a', live: true } };
    // 3. an entry accepted above the committed one is committed again
    const r3 = decideFailover(entry(), view({ ...live, n2: { inc: 'n2a', live: true, report: { accepted: 9 } } }), NOW);
    expect(r3.logs[0]).toEqual(['reaffirm', { pkey: PKEY, epoch: 7, accepted: 9 }]);
    expect(r3.proposal?.entry).toEqual(entry());
    // 4. Recovering from a holder that went away: Degraded
    const r4 = decideFailover(entry({ health: 'Recovering', syncFrom: m('n2'), inSync: [m('n1')] }), view({ ...live, n2: { inc: 'n2a' } }), NOW);
    expect(r4.proposal?.entry).toMatchObject({ health: 'Degraded', syncFrom: null });
    // 5. a suspected replica is dropped; but not when only an unconfirmable member would be left
    const r5 = decideFailover(entry(), view({ ...live, n3: { inc: 'n3a' } }), NOW);
    expect(r5.proposal?.entry).toMatchObject({ inSync: [m('n1'), m('n2')], health: 'Degraded' });
    const r5b = decideFailover(entry({ active: m('n2'), inSync: [m('n2'), m('n3')] }), view({ n1: live.n1, n2: { inc: 'n2a', live: true, down: false }, n3: { inc: 'n3a' } }), NOW);
    expect(r5b.proposal?.entry.inSync).toEqual([m('n2')]);
    // 6. a handoff running too long is cancelled
    const r6 = decideFailover(entry({ handoffTo: m('n2') }), view(live, { handoffSince: NOW - HANDOFF_TIMEOUT_MS - 1 }), NOW);
    expect(r6.logs[0][0]).toBe('handoff-cancel');
    expect(r6.proposal?.entry.handoffTo).toBeNull();
    expect(decideFailover(entry({ handoffTo: m('n2') }), view(live, { handoffSince: NOW - 10 }), NOW).proposal).toBeNull();
    // 7. Degraded with every assigned replica in sync: Healthy after the cooldown
    expect(decideFailover(entry({ health: 'Degraded' }), view(live, { lastTransition: NOW - 999 }), NOW).proposal).toBeNull();
    expect(decideFailover(entry({ health: 'Degraded' }), view(live, { lastTransition: NOW - 1_000 }), NOW).proposal?.entry.health).toBe('Healthy');
    // 8. the preferred primary back in sync gets ownership back
    expect(decideFailover(entry({ active: m('n2') }), view(live), NOW).proposal?.entry.handoffTo).toEqual(m('n1'));
    expect(decideFailover(entry(), view(live), NOW)).toEqual({ proposal: null, logs: [], failover: false });
  });

  it('property: a proposal never makes a gone or silent member the owner, never adds members, and the decision is a pure function of its inputs', () => {
    const nodes = ['n1', 'n2', 'n3'];
    const rowArb = fc.record({
      inc: fc.constantFrom('a', 'b'),
      live: fc.boolean(),
      gone: fc.boolean(),
      down: fc.boolean(),
      stale: fc.boolean(),
      report: fc.option(fc.record({ rev: fc.nat(100), heldKeys: fc.nat(50), syncedSegments: fc.nat(4), tag: fc.constantFrom('', 'n1:a:5', 'n2:a:5', 'n3:a:5'), accepted: fc.integer({ min: -1, max: 9 }) }), { nil: undefined }),
    });
    fc.assert(
      fc.property(
        fc.tuple(rowArb, rowArb, rowArb),
        fc.option(fc.constantFrom(...nodes), { nil: null }),
        fc.subarray(nodes, { minLength: 1 }),
        fc.constantFrom('Healthy', 'Degraded', 'Recovering', 'Unavailable') as fc.Arbitrary<RuntimeEntry['health']>,
        (rs, active, inSyncNodes, health) => {
          const rows: Record<string, NodeRow> = {};
          nodes.forEach((n, i) => (rows[n] = { ...rs[i], report: rs[i].report }));
          // the leader itself is live, its incarnation current
          rows.n1 = { ...rows.n1, live: true, gone: false, down: false };
          const mem = (n: string): Member => ({ node: n, inc: 'a' });
          const e = entry({ active: active ? mem(active) : null, inSync: inSyncNodes.map(mem), health: active ? health : 'Unavailable', activeSince: 5 });
          const v = view(rows);
          const d = decideFailover(e, v, NOW);
          expect(decideFailover(e, v, NOW)).toEqual(d);
          if (!d.proposal) return;
          const p = d.proposal.entry;
          if (p.mapVersion === e.mapVersion) {
            // no new member joins the in-sync set by a failover decision (req-add does that)
            for (const x of p.inSync) expect(e.inSync.some((y) => y.node === x.node && y.inc === x.inc) || (p.active !== null && x.node === p.active.node)).toBe(true);
          }
          if (p.active && (!e.active || p.active.node !== e.active.node || p.active.inc !== e.active.inc)) {
            expect(v.live(p.active, NOW)).toBe(true);
            expect(d.proposal.newTenure).toBe(true);
          }
        },
      ),
      { seed: 20261201, numRuns: 3_000 },
    );
  });
});
