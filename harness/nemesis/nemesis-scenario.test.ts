import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { PlannedFault } from './schedule.js';
import { drive, FakeCluster, nemesisOn, node, sched, t } from './test-support/fake-cluster.js';

/**
 * What scenarios add to the executor (issue 13): names bound by targets and excluded later,
 * strict roles (no random stand-in), the events started / caught-up / promoted / handoff-started
 * / suspected, a missed event skipping its step, admin steps (handoff) through the probe, a
 * one-way cut's other end, halves with a node in the minority. Virtual time, as nemesis.test.ts.
 */
describe('Nemesis executor: scenario steps', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'performance', 'Date'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });
  const active0 = { role: 'active' as const, store: 'sync3', partition: 0 };
  const scen = (faults: PlannedFault[]) => sched(faults, { scenario: 'test' });

  it('binds the node a target found and keeps a later target off it (the new owner, not the old one)', async () => {
    const c = new FakeCluster();
    const n = nemesisOn(c, scen([
      { kind: 'partition', topology: 'isolate', target: active0, bind: 'A', atMs: 0, durationMs: 60, name: 'cut' },
      { kind: 'kill', target: active0, except: ['A'], bind: 'B', atMs: 0, durationMs: 20, name: 'kill', after: { event: 'started', fault: 0, delayMs: 20, waitMs: 1000, onMiss: 'skip' } },
    ]));
    await drive(n.run(new AbortController().signal));
    expect(n.bound()).toEqual({ A: 'n1', B: 'n2' });
    expect(c.log.filter((l) => l.startsWith('kill'))).toEqual(['kill n2']);
    expect(c.starts.map((s) => JSON.parse(s.detail!).step)).toEqual(['cut', 'kill']);
  });

  it('a strict role that only names an excluded node waits, then skips the step (never a random node)', async () => {
    const c = new FakeCluster();
    const n = nemesisOn(c, scen([
      { kind: 'client-cut', target: node('n1'), bind: 'A', atMs: 0, durationMs: 50, name: 'cut' },
      { kind: 'kill', target: active0, except: ['A'], atMs: 10, durationMs: 20, name: 'kill-other' },
    ]), { gateWaitMs: 300 });
    await drive(n.run(new AbortController().signal));
    expect(c.log.some((l) => l.startsWith('kill'))).toBe(false);
    const skip = c.events.find((e) => e.kind === 'fault-skipped')!;
    expect(skip.detail.step).toBe('kill-other');
    expect(skip.detail.reason).toBe('not within the fault budget for 300 ms: active:sync3/0 is n1, which it must not be (A)');
  });

  it('fires promoted when the partition has another active, caught-up when a restarted node is back in sync', async () => {
    const c = new FakeCluster();
    c.catchUpMs = 200;
    const n = nemesisOn(c, scen([
      { kind: 'kill', target: active0, bind: 'A', atMs: 20, durationMs: 100, name: 'kill' },
      { kind: 'pause', target: node('n4'), atMs: 0, durationMs: 10, name: 'on-promotion', after: { event: 'promoted', store: 'sync3', partition: 0, delayMs: 0, waitMs: 2000, onMiss: 'skip' } },
      { kind: 'pause', target: node('n5'), atMs: 0, durationMs: 10, name: 'on-caught-up', after: { event: 'node-caught-up', name: 'A', delayMs: 0, waitMs: 2000, onMiss: 'skip' } },
    ]));
    await drive(n.run(new AbortController().signal));
    const kill = t(c, /^kill n1/);
    const restart = t(c, /^restart n1/);
    expect(t(c, /^pause n4/)).toBeGreaterThanOrEqual(kill);
    expect(t(c, /^pause n4/)).toBeLessThan(kill + 50);
    expect(t(c, /^pause n5/)).toBeGreaterThanOrEqual(restart + 200);
    expect(t(c, /^pause n5/)).toBeLessThan(restart + 260);
  });

  it('fires suspected and handoff-started from the snapshot; a step whose event never comes is skipped', async () => {
    const c = new FakeCluster();
    setTimeout(() => (c.suspects = ['n3']), 100);
    setTimeout(() => c.handoffs.set(0, 'n1'), 200);
    const n = nemesisOn(c, scen([
      { kind: 'pause', target: node('n4'), atMs: 0, durationMs: 10, name: 'on-suspect', after: { event: 'suspected', node: 'n3', delayMs: 0, waitMs: 2000, onMiss: 'skip' } },
      { kind: 'pause', target: node('n5'), atMs: 0, durationMs: 10, name: 'on-handoff', after: { event: 'handoff-started', store: 'sync3', partition: 0, node: 'n1', delayMs: 0, waitMs: 2000, onMiss: 'skip' } },
      { kind: 'pause', target: node('n2'), atMs: 0, durationMs: 10, name: 'never', after: { event: 'handoff-started', store: 'sync3', partition: 1, delayMs: 0, waitMs: 500, onMiss: 'skip' } },
    ]));
    await drive(n.run(new AbortController().signal));
    expect(t(c, /^pause n4/)).toBeGreaterThanOrEqual(100);
    expect(t(c, /^pause n4/)).toBeLessThan(200);
    expect(t(c, /^pause n5/)).toBeGreaterThanOrEqual(200);
    expect(c.log.some((l) => l === 'pause n2')).toBe(false);
    expect(c.events.find((e) => e.kind === 'fault-skipped')!.detail).toMatchObject({ step: 'never', reason: 'handoff-started sync3/1 did not happen within 500 ms' });
  });

  it('fires handoff-started on a handoff committed between two polls, never on a failover', async () => {
    const c = new FakeCluster(['n1', 'n2', 'n3']);
    setTimeout(() => c.state.set('n1', 'down'), 100); // a failover of sync3/0: n1 leaves the in-sync set
    setTimeout(() => c.state.set('n1', 'up'), 200);
    setTimeout(() => void c.admin('handoff sync3/0 to n3'), 600); // moves the active at once
    const n = nemesisOn(c, scen([
      { kind: 'pause', target: node('n2'), atMs: 0, durationMs: 10, name: 'on-handoff', after: { event: 'handoff-started', store: 'sync3', partition: 0, delayMs: 0, waitMs: 2000, onMiss: 'skip' } },
    ]));
    await drive(n.run(new AbortController().signal));
    expect(t(c, /^pause n2/)).toBeGreaterThanOrEqual(600);
    expect(t(c, /^pause n2/)).toBeLessThan(1000);
    expect(JSON.parse(c.starts[0].detail!).after).toMatchObject({ event: 'handoff-started', handoff: 'committed' });
  });

  it('a handoff step asks the leader through the probe (refusals retried), is an event not a fault, and ends at once', async () => {
    const c = new FakeCluster();
    c.refuseAdmin = 2;
    const n = nemesisOn(c, scen([
      { kind: 'kill', target: { role: 'replica', store: 'sync3', partition: 0 }, bind: 'R', atMs: 0, durationMs: 30, name: 'kill' },
      { kind: 'handoff', target: { role: 'replica', store: 'sync3', partition: 0 }, except: ['R'], admin: { store: 'sync3', partition: 0 }, atMs: 0, durationMs: 0, name: 'handoff', after: { event: 'ended', fault: 0, delayMs: 0, waitMs: 1000, onMiss: 'skip' } },
      { kind: 'pause', target: node('n5'), atMs: 0, durationMs: 10, name: 'after-handoff', after: { event: 'ended', fault: 1, delayMs: 0, waitMs: 1000, onMiss: 'skip' } },
    ]));
    await drive(n.run(new AbortController().signal));
    const killed = c.log.find((l) => l.startsWith('kill '))!.slice(5);
    const other = ['n2', 'n3'].find((x) => x !== killed)!;
    expect(c.log.filter((l) => l.startsWith('admin'))).toEqual([`admin handoff sync3/0 to ${other}`, `admin handoff sync3/0 to ${other}`, `admin handoff sync3/0 to ${other}`]);
    expect(c.activeOf(0)).toBe(other);
    expect(c.starts.map((s) => s.kind)).toEqual(['kill', 'pause']);
    expect(c.events.find((e) => e.kind === 'admin')!.detail).toMatchObject({ step: 'handoff', command: `handoff sync3/0 to ${other}`, status: 'Ok' });
    expect(n.counts().handoff).toBe(1);
    expect(t(c, /^pause n5/)).toBeGreaterThan(t(c, /^admin/));
  });

  it('cuts one direction to a named peer, and puts the target of halves in the minority', async () => {
    const c = new FakeCluster(['n1', 'n2', 'n3']);
    const n = nemesisOn(c, scen([
      { kind: 'partition', topology: 'one-way', direction: 'out', target: node('n1'), peer: { target: node('n3'), bind: 'P' }, atMs: 0, durationMs: 20, name: 'one-way' },
      { kind: 'partition', topology: 'halves', target: { role: 'leader' }, atMs: 50, durationMs: 20, name: 'halves' },
    ]), { beyondBudget: true });
    await drive(n.run(new AbortController().signal));
    expect(c.log.filter((l) => l.startsWith('partition {"'))).toEqual(['partition {"n3":["n1"]}', 'partition {"n1":["n2","n3"],"n2":["n1"],"n3":["n1"]}']);
    expect(n.bound()).toEqual({ P: 'n3' });
  });
});
