import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyMembershipChange, copyHolders, MembershipError, type MemberSet, type MembershipChange } from './members.js';

const node = (i: number) => ({ id: `n${i}`, host: '127.0.0.1', clientPort: 7000 + i, peerPort: 7100 + i });

function three(): MemberSet {
  return { version: 1, members: [1, 2, 3].map((i) => ({ ...node(i), state: 'member' as const })) };
}

describe('the member set (nodes/membership/members.ts): single-node changes', () => {
  it('a node joins, is admitted once caught up, leaves drained, and is removed; each change one version up', () => {
    let s = three();
    s = applyMembershipChange(s, { kind: 'join', node: node(4) });
    expect(s.version).toBe(2);
    expect(copyHolders(s)).toEqual(['n1', 'n2', 'n3']);
    s = applyMembershipChange(s, { kind: 'admit', id: 'n4' });
    expect(copyHolders(s)).toEqual(['n1', 'n2', 'n3', 'n4']);
    s = applyMembershipChange(s, { kind: 'leave', id: 'n1' });
    expect(copyHolders(s)).toEqual(['n2', 'n3', 'n4']);
    s = applyMembershipChange(s, { kind: 'remove', id: 'n1' });
    expect(s).toEqual({ version: 5, members: [2, 3, 4].map((i) => ({ ...node(i), state: 'member' })) });
  });

  it('refuses, in one line each: a change while one is pending, a second join, a clashing address, out-of-order steps, the last holder or node', () => {
    const s = three();
    const refuse = (set: MemberSet, c: MembershipChange, pending = false): string => {
      try {
        applyMembershipChange(set, c, pending);
      } catch (e) {
        expect(e).toBeInstanceOf(MembershipError);
        expect((e as Error).message).not.toContain('\n');
        return (e as Error).message;
      }
      throw new Error('accepted');
    };
    expect(refuse(s, { kind: 'join', node: node(4) }, true)).toMatch(/still pending/);
    expect(refuse(s, { kind: 'join', node: node(2) })).toMatch(/n2 is already in the member set \(member\)/);
    expect(refuse(s, { kind: 'join', node: { ...node(4), peerPort: 7002 } })).toMatch(/is n2's/);
    expect(refuse(s, { kind: 'admit', id: 'n2' })).toMatch(/not joining \(member\)/);
    expect(refuse(s, { kind: 'remove', id: 'n2' })).toMatch(/not leaving \(member\): a member leaves first/);
    const one: MemberSet = { version: 1, members: [{ ...node(1), state: 'member' }] };
    expect(refuse(one, { kind: 'leave', id: 'n1' })).toMatch(/last member holding copies/);
    expect(refuse({ version: 1, members: [{ ...node(1), state: 'leaving' }] }, { kind: 'remove', id: 'n1' })).toMatch(/last node of the set/);
  });

  it('property: over any sequence of accepted changes, each moves one node one step, never removes a node that was not leaving, and keeps a copy holder', () => {
    const change = fc.oneof(
      fc.integer({ min: 1, max: 7 }).map((i): MembershipChange => ({ kind: 'join', node: node(i) })),
      fc.integer({ min: 1, max: 7 }).map((i): MembershipChange => ({ kind: 'admit', id: `n${i}` })),
      fc.integer({ min: 1, max: 7 }).map((i): MembershipChange => ({ kind: 'leave', id: `n${i}` })),
      fc.integer({ min: 1, max: 7 }).map((i): MembershipChange => ({ kind: 'remove', id: `n${i}` })),
    );
    const step: Record<string, string[]> = { '': ['joining'], joining: ['member'], member: ['leaving'], leaving: [''] };
    fc.assert(
      fc.property(fc.array(change, { maxLength: 25 }), (changes) => {
        let s = three();
        for (const c of changes) {
          let n: MemberSet;
          try {
            n = applyMembershipChange(s, c);
          } catch (e) {
            expect(e).toBeInstanceOf(MembershipError);
            continue;
          }
          expect(n.version).toBe(s.version + 1);
          expect(copyHolders(n).length).toBeGreaterThanOrEqual(1);
          const stateIn = (set: MemberSet, id: string): string => set.members.find((m) => m.id === id)?.state ?? '';
          const ids = [...new Set([...s.members, ...n.members].map((m) => m.id))];
          const moved = ids.filter((id) => stateIn(s, id) !== stateIn(n, id));
          expect(moved.length).toBe(1);
          expect(step[stateIn(s, moved[0])]).toContain(stateIn(n, moved[0]));
          s = n;
        }
      }),
      { seed: 20261201, numRuns: 400 },
    );
  });
});
