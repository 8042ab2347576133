import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { PlannedFault } from './schedule.js';
import { drive, FakeCluster, nemesisOn, node, sched, t } from './test-support/fake-cluster.js';

/**
 * Membership changes in the executor (issue 14): join / leave / rebalance sent through the
 * probe's admin request, recorded as ledger events `admin` (never as faults), targets `outside`
 * and `member` resolved from the leader's member set, a leave never taking the member set below
 * the voters' count, refusals retried then skipped with the store's reason. Virtual time, as
 * nemesis.test.ts; the fake cluster keeps a member set (test-support/fake-cluster.ts).
 */
describe('Nemesis executor: membership changes', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'performance', 'Date'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });
  const KINDS = ['kill', 'join', 'leave', 'rebalance'] as const;
  const ms = (faults: PlannedFault[], extra = {}) => sched(faults, { kinds: [...KINDS], nodeCount: 3, ...extra });
  const skips = (c: FakeCluster) => c.events.filter((e) => e.kind === 'fault-skipped').map((e) => e.detail.reason);

  it('joins the spare, drains a member, joins it back, rebalances: admin events only, never below three members', async () => {
    const c = new FakeCluster(['n1', 'n2', 'n3', 'n4']);
    c.members = ['n1', 'n2', 'n3'].map((id) => ({ id, state: 'member' as const }));
    const sizes: number[] = [];
    const admin = c.admin.bind(c);
    c.admin = async (cmd) => {
      const r = await admin(cmd);
      sizes.push(c.members!.length);
      return r;
    };
    const n = nemesisOn(c, ms([
      { kind: 'join', target: { role: 'outside' }, atMs: 0, durationMs: 0 },
      { kind: 'leave', target: { role: 'member' }, atMs: 50, durationMs: 0 },
      { kind: 'join', target: { role: 'outside' }, atMs: 100, durationMs: 0 },
      { kind: 'leave', target: { role: 'member' }, atMs: 150, durationMs: 0 },
      { kind: 'rebalance', target: { role: 'leader' }, atMs: 200, durationMs: 0 },
    ]));
    await drive(n.run(new AbortController().signal));
    const asked = c.log.filter((l) => l.startsWith('admin '));
    expect(asked).toHaveLength(5);
    expect(asked[0]).toBe('admin join n4');
    const left = /^admin leave (n\d)$/.exec(asked[1])![1];
    // the one node outside after the leave is the one that left: it joins back
    expect(asked[2]).toBe(`admin join ${left}`);
    expect(asked[3]).toMatch(/^admin leave n[1-4]$/);
    expect(asked[4]).toBe('admin rebalance');
    expect(sizes).toEqual([4, 3, 4, 3, 3]);
    expect(Math.min(...sizes)).toBeGreaterThanOrEqual(3);
    // events, not faults: the verifier excuses nothing because of a move
    expect(c.starts).toEqual([]);
    const events = c.events.filter((e) => e.kind === 'admin').map((e) => e.detail);
    expect(events.map((e) => [e.kind, e.command, e.status])).toEqual(asked.map((a) => [a.slice(6).split(' ')[0], a.slice(6), 'Ok']));
    expect(events[0]).toMatchObject({ index: 0, node: 'n4', membersBefore: { version: 1, members: [{ id: 'n1', state: 'member' }, { id: 'n2', state: 'member' }, { id: 'n3', state: 'member' }] } });
    expect(events[4]).not.toHaveProperty('node');
    expect(n.counts()).toMatchObject({ join: 2, leave: 2, rebalance: 1, kill: 0 });
    expect(skips(c)).toEqual([]);
  });

  it('a planned crash after a join hits the old owner of a partition the joining node replicates (active-over), once the join went through', async () => {
    const c = new FakeCluster(['n1', 'n2', 'n3', 'n4']);
    c.members = ['n1', 'n2', 'n3'].map((id) => ({ id, state: 'member' as const }));
    c.refuseAdmin = 1;
    const n = nemesisOn(c, ms([
      { kind: 'join', target: { role: 'outside' }, atMs: 0, durationMs: 0 },
      { kind: 'kill', target: { role: 'active-over', fault: 0 }, atMs: 0, durationMs: 30, after: { event: 'started', fault: 0, delayMs: 20, waitMs: 1_000, onMiss: 'skip' } },
    ]));
    await drive(n.run(new AbortController().signal));
    expect(c.log.filter((l) => /^(admin|kill) /.test(l))).toEqual(['admin join n4', 'admin join n4', expect.stringMatching(/^kill n[1-3]$/)]);
    const killed = c.log.find((l) => l.startsWith('kill '))!.slice(5);
    // n4 replicates partitions 1, 2, 3 of the fake (replicas i, i+1, i+2), owned by n2, n3, n4
    expect(['n2', 'n3']).toContain(killed);
    expect(c.starts.map((f) => [f.kind, f.target])).toEqual([['kill', 'active-over:#0']]);
    expect(c.detailOf(c.starts[0].id)).toMatchObject({ after: { event: 'started', fault: 0 } });
  });

  it('with a spare, the budget counts a majority of the voters: a voter crash beside the spare down is allowed (counted over every node it waits)', async () => {
    const faults: PlannedFault[] = [
      { kind: 'kill', target: node('n4'), atMs: 0, durationMs: 200 },
      { kind: 'kill', target: node('n1'), atMs: 20, durationMs: 20 },
    ];
    const c = new FakeCluster(['n1', 'n2', 'n3', 'n4']);
    await drive(nemesisOn(c, ms(faults), { voters: ['n1', 'n2', 'n3'] }).run(new AbortController().signal));
    expect(t(c, /^kill n1/)).toBeLessThan(t(c, /^restart n4/));
    expect(t(c, /^kill n1/)).toBeLessThan(100);
    const d = new FakeCluster(['n1', 'n2', 'n3', 'n4']);
    await drive(nemesisOn(d, ms(faults)).run(new AbortController().signal));
    expect(d.log.indexOf('kill n1')).toBeGreaterThan(d.log.indexOf('restart n4'));
    expect(t(d, /^kill n1/)).toBeGreaterThanOrEqual(200);
    // halves of 4 put the spare alone on the minority side: it is the one isolated (grudge.test.ts has the 2|2 split)
    const e = new FakeCluster(['n1', 'n2', 'n3', 'n4']);
    await drive(nemesisOn(e, ms([{ kind: 'partition', topology: 'halves', target: node('n4'), atMs: 0, durationMs: 20 }]), { voters: ['n1', 'n2', 'n3'] }).run(new AbortController().signal));
    const p = e.starts.find((f) => f.kind === 'partition')!;
    expect(p.isolated).toEqual(['n4']);
  });

  it('a leave mostly drains a member that owns partitions (its leave moves ownership by the fenced handoff); one that owns none is left far less often', async () => {
    let ownerless = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const c = new FakeCluster(['n1', 'n2', 'n3', 'n4']);
      c.members = ['n1', 'n2', 'n3', 'n4'].map((id) => ({ id, state: 'member' as const }));
      // n4 owns nothing: its partition sync3/3 is handed to n1 (one of its replicas)
      await c.admin('handoff sync3/3 to n1');
      const n = nemesisOn(c, ms([{ kind: 'leave', target: { role: 'member' }, atMs: 0, durationMs: 0 }], { seed }));
      await drive(n.run(new AbortController().signal));
      const asked = c.log.filter((l) => l.startsWith('admin leave '));
      expect(asked).toHaveLength(1);
      if (asked[0] === 'admin leave n4') ownerless++;
    }
    // an even pick would take n4 in ~10 of 40; owners first, in ~2
    expect(ownerless).toBeLessThanOrEqual(6);
  });

  it('a leave that would leave fewer members than voters, or a join with nobody outside, waits and is skipped with the reason', async () => {
    const c = new FakeCluster(['n1', 'n2', 'n3']);
    c.members = ['n1', 'n2', 'n3'].map((id) => ({ id, state: 'member' as const }));
    const n = nemesisOn(c, ms([
      { kind: 'leave', target: { role: 'member' }, atMs: 0, durationMs: 0 },
      { kind: 'join', target: { role: 'outside' }, atMs: 0, durationMs: 0 },
    ]));
    await drive(n.run(new AbortController().signal));
    expect(c.log.filter((l) => l.startsWith('admin '))).toEqual([]);
    expect(skips(c).sort()).toEqual([
      'not possible for 2000 ms: 3 members: a leave would leave fewer than 3',
      'not possible for 2000 ms: no running node outside the member set (n1, n2, n3): nobody to join',
    ]);
    expect(c.members!.map((m) => m.id)).toEqual(['n1', 'n2', 'n3']);
  });

  it('a pending change holds a leave back; a killed spare is not joined', async () => {
    const c = new FakeCluster(['n1', 'n2', 'n3', 'n4']);
    c.members = [{ id: 'n1', state: 'member' }, { id: 'n2', state: 'member' }, { id: 'n3', state: 'member' }, { id: 'n4', state: 'joining' }];
    const n = nemesisOn(c, ms([{ kind: 'leave', target: { role: 'member' }, atMs: 0, durationMs: 0 }]));
    await drive(n.run(new AbortController().signal));
    expect(skips(c)).toEqual(['not possible for 2000 ms: a membership change is pending (n4 joining)']);

    const d = new FakeCluster(['n1', 'n2', 'n3', 'n4']);
    d.members = ['n1', 'n2', 'n3'].map((id) => ({ id, state: 'member' as const }));
    const m = nemesisOn(d, ms([
      { kind: 'kill', target: node('n4'), atMs: 0, durationMs: 100 },
      { kind: 'join', target: { role: 'outside' }, atMs: 10, durationMs: 0 },
    ]));
    await drive(m.run(new AbortController().signal));
    // n4 is down while the join looks for a node: it waits, and joins n4 once it is back
    const joinAt = d.times.find((x) => x.what === 'admin join n4')!.t;
    const restartAt = d.times.find((x) => x.what === 'restart n4')!.t;
    expect(joinAt).toBeGreaterThanOrEqual(restartAt);
    expect(d.events.filter((e) => e.kind === 'fault-waited').map((e) => e.detail.reason)).toEqual(['no running node outside the member set (n1, n2, n3): nobody to join']);
  });

  it('named nodes (scenarios): a store refusal is retried, then the change goes through; no member set at all skips with the reason', async () => {
    const c = new FakeCluster(['n1', 'n2', 'n3', 'n4']);
    c.members = ['n1', 'n2', 'n3'].map((id) => ({ id, state: 'member' as const }));
    c.refuseAdmin = 2;
    const n = nemesisOn(c, ms([
      { kind: 'join', target: node('n4'), atMs: 0, durationMs: 0, name: 'join-spare' },
      { kind: 'leave', target: node('n1'), atMs: 0, durationMs: 0, name: 'drain-n1', after: { event: 'ended', fault: 0, delayMs: 0, waitMs: 1000, onMiss: 'skip' } },
    ], { scenario: 'test' }));
    await drive(n.run(new AbortController().signal));
    expect(c.log.filter((l) => l.startsWith('admin '))).toEqual(['admin join n4', 'admin join n4', 'admin join n4', 'admin leave n1']);
    expect(c.members!.map((m) => m.id)).toEqual(['n2', 'n3', 'n4']);
    expect(c.events.filter((e) => e.kind === 'admin').map((e) => [e.detail.step, e.detail.command])).toEqual([['join-spare', 'join n4'], ['drain-n1', 'leave n1']]);
    expect(c.events.find((e) => e.kind === 'fault-waited')!.detail.reason).toBe('join n4: Unavailable: another change is in flight');

    const d = new FakeCluster(['n1', 'n2', 'n3', 'n4']);
    const m = nemesisOn(d, ms([{ kind: 'join', target: { role: 'outside' }, atMs: 0, durationMs: 0 }]));
    await drive(m.run(new AbortController().signal));
    expect(d.log.filter((l) => l.startsWith('admin '))).toEqual([]);
    expect(skips(d)).toEqual(['not possible for 2000 ms: the cluster reports no member set (metadata members)']);
  });
});
