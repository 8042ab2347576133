import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_TIMING } from '../cluster-config.js';
import { PeerTable } from './peer-table.js';

function table(term = 3): { t: PeerTable; logs: Array<[string, Record<string, unknown> | undefined]>; clock: { now: number } } {
  const logs: Array<[string, Record<string, unknown> | undefined]> = [];
  const clock = { now: 0 };
  const t = new PeerTable({ node: 'n1', inc: 'i1' }, ['n2', 'n3'], 2, { ...DEFAULT_TIMING, suspectAfterMs: 1_000, escalationTimeoutMs: 10_000, heartbeatMs: 100 }, { now: () => clock.now, log: (e, f) => logs.push([e, f]), term: () => term });
  return { t, logs, clock };
}

describe('PeerTable: failure detection (nodes/core/peer-table.ts, seed 002 step 1)', () => {
  it('a silent peer is suspected after suspectAfterMs, confirmed down only after the escalation timeout more, cleared when it answers', () => {
    const { t, logs } = table();
    const p = t.peers.get('n2')!;
    t.noteIncarnation('n2', 'a');
    p.lastReply = 0;
    const m = { node: 'n2', inc: 'a' };
    expect(t.live(m, 999)).toBe(true);
    expect(t.suspected('n2', 999)).toBe(false);
    t.updateSuspicion(1_000);
    expect(t.suspected('n2', 1_000)).toBe(true);
    expect(t.live(m, 1_000)).toBe(false);
    expect(t.confirmedDown(m)).toBe(false);
    t.updateSuspicion(10_999);
    expect(t.confirmedDown(m)).toBe(false);
    t.updateSuspicion(11_000);
    expect(t.confirmedDown(m)).toBe(true);
    expect(p.downAt).toBe(11_000);
    expect(logs.filter(([e]) => e === 'suspect' || e === 'confirm-down').map(([e, f]) => [e, f?.node])).toEqual([
      ['suspect', 'n2'],
      ['suspect', 'n3'],
      ['confirm-down', 'n2'],
      ['confirm-down', 'n3'],
    ]);
    p.lastReply = 11_500;
    t.updateSuspicion(11_600);
    expect(t.confirmedDown(m)).toBe(false);
    expect(t.live(m, 11_600)).toBe(true);
    // this node itself is never suspected, and live under its own incarnation only
    expect(t.suspected('n1', 1e9)).toBe(false);
    expect(t.gone({ node: 'n1', inc: 'i1' })).toBe(false);
    expect(t.gone({ node: 'n1', inc: 'old' })).toBe(true);
  });

  it('a newer incarnation makes the old one gone for good, dated and logged; an unknown node is gone', () => {
    const { t, logs, clock } = table();
    t.noteIncarnation('n3', 'a');
    clock.now = 42;
    t.noteIncarnation('n3', 'b');
    expect(t.gone({ node: 'n3', inc: 'a' })).toBe(true);
    expect(t.gone({ node: 'n3', inc: 'b' })).toBe(false);
    expect(t.confirmedDown({ node: 'n3', inc: 'a' })).toBe(true);
    expect(t.peers.get('n3')!.downAt).toBe(42);
    expect(logs).toContainEqual(['incarnation', { node: 'n3', old: 'a', inc: 'b' }]);
    expect(t.incOf('n3')).toBe('b');
    expect(t.incOf('n1')).toBe('i1');
    expect(t.gone({ node: 'n9', inc: 'x' })).toBe(true);
  });

  it('freshly heard: a reply of this term to a heartbeat sent within the fresh view, no probe pending; a majority of them (this node counted)', () => {
    const { t } = table(3);
    expect(t.freshViewMs).toBe(800);
    for (const n of ['n2', 'n3']) t.noteIncarnation(n, 'a');
    const p2 = t.peers.get('n2')!;
    Object.assign(p2, { hbrTerm: 3, hbrInc: 'a', hbrEcho: 1_000, lastReply: 1_000 });
    expect(t.freshlyHeard('n2', 1_799)).toBe(true);
    expect(t.freshlyHeard('n2', 1_800)).toBe(false);
    expect(t.freshMajority(1_500)).toBe(true);
    expect(t.confirmable({ node: 'n2', inc: 'a' }, 1_500)).toBe(true);
    t.probing.set('n2', 'a');
    expect(t.freshlyHeard('n2', 1_500)).toBe(false);
    expect(t.freshMajority(1_500)).toBe(false);
    expect(t.confirmable({ node: 'n1', inc: 'i1' }, 1_500)).toBe(true);
    t.probing.clear();
    p2.hbrTerm = 2;
    expect(t.freshlyHeard('n2', 1_500)).toBe(false);
  });

  it('property: confirmed down implies not live, and gone implies confirmed down, whatever the evidence', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom('n2', 'n3'), fc.constantFrom('reply', 'inc-a', 'inc-b', 'tick', 'dead'), fc.nat(3_000)), { maxLength: 30 }), (steps) => {
        const { t, clock } = table();
        for (const [n, what, dt] of steps) {
          clock.now += dt;
          const p = t.peers.get(n)!;
          if (what === 'reply') p.lastReply = clock.now;
          else if (what === 'inc-a' || what === 'inc-b') t.noteIncarnation(n, what.slice(4));
          else if (what === 'dead' && p.inc) p.deadIncs.add(p.inc);
          else t.updateSuspicion(clock.now);
          for (const node of ['n2', 'n3'])
            for (const inc of ['a', 'b']) {
              const m = { node, inc };
              if (t.confirmedDown(m)) expect(t.live(m, clock.now)).toBe(false);
              if (t.gone(m)) expect(t.confirmedDown(m)).toBe(true);
            }
        }
      }),
      { seed: 20261201, numRuns: 2_000 },
    );
  });
});
