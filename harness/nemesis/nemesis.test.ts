import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Grudge } from '../runtime/runtime.js';
import { canReach } from './grudge.js';
import type { ClusterSnapshot } from './budget.js';
import { catchingUpNodes, nodeCaughtUp, unhealthyPartitions } from './cluster-queries.js';
import { planSchedule, scheduleDigest, scheduleFromJson, scheduleToJson, type Schedule } from './schedule.js';
import { drive, FakeCluster, nemesisOn, node, sched, t } from './test-support/fake-cluster.js';
describe('Nemesis executor', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'performance', 'Date'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('records each start before applying it and each end before undoing it, for every kind', async () => {
    const c = new FakeCluster();
    c.modes = { n1: 'monotonic', n2: 'wall', n3: 'monotonic', n4: 'wall', n5: 'monotonic' };
    const s = sched([
      { kind: 'kill', target: node('n2'), atMs: 0, durationMs: 20 },
      { kind: 'pause', target: node('n3'), atMs: 40, durationMs: 20 },
      { kind: 'partition', topology: 'isolate', target: node('n1'), atMs: 80, durationMs: 20 },
      { kind: 'stop', target: { role: 'leader' }, atMs: 120, durationMs: 20 },
      { kind: 'clock', target: node('n4'), atMs: 160, durationMs: 20, clock: { rate: 0.5, jumpMs: -30_000 } },
      { kind: 'clock', target: node('n5'), atMs: 200, durationMs: 20, clock: { rate: 0.5, jumpMs: -30_000 } },
      { kind: 'client-cut', target: node('n3'), atMs: 240, durationMs: 20 },
    ]);
    const n = nemesisOn(c, s);
    await drive(n.run(new AbortController().signal));
    expect(c.log).toEqual([
      'start#1 kill n2',
      'kill n2',
      'end#1',
      'restart n2',
      'caughtUp#1',
      'start#2 pause n3',
      'pause n3',
      'end#2',
      'resume n3',
      'start#3 partition n1',
      `partition ${JSON.stringify({ n1: ['n2', 'n3', 'n4', 'n5'], n2: ['n1'], n3: ['n1'], n4: ['n1'], n5: ['n1'] })}`,
      'end#3',
      'partition {}',
      'start#4 stop n1',
      'stop n1',
      'end#4',
      'restart n1',
      'caughtUp#4',
      // n4 is a wall-mode node: its wall clock jumps; n5 is monotonic-mode: its clocks run slow
      'start#5 clock n4',
      'clock n4 -30000 x1',
      'end#5',
      'clock n4 0 x1',
      'start#6 clock n5',
      'clock n5 0 x0.5',
      'end#6',
      'clock n5 0 x1',
      'start#7 client-cut n3',
      'cut n3',
      'end#7',
      'cut ',
    ]);
    expect(n.counts()).toEqual({ kill: 1, stop: 1, pause: 1, partition: 1, power: 0, clock: 2, 'client-cut': 1, handoff: 0, regenerate: 0, join: 0, leave: 0, rebalance: 0 });
    expect(c.starts.map((f) => f.target)).toEqual(['node:n2', 'node:n3', 'node:n1', 'leader', 'node:n4', 'node:n5', 'node:n3']);
    expect(c.starts[2].isolated).toEqual(['n1']);
    expect(c.detailOf(5)).toMatchObject({ node: 'n4', mode: 'wall', offsetMs: -30_000 });
    expect(c.detailOf(6)).toMatchObject({ node: 'n5', mode: 'monotonic', rate: 0.5 });
  });

  it('a power failure records one kill per node, kills them together, restarts them together', async () => {
    const c = new FakeCluster();
    const s = sched([{ kind: 'power', count: 2, target: node('n4'), atMs: 0, durationMs: 20 }]);
    const n = nemesisOn(c, s);
    await drive(n.run(new AbortController().signal));
    const victims = c.starts.map((f) => f.nodes[0]);
    expect(victims[0]).toBe('n4');
    expect(victims).toHaveLength(2);
    expect(c.log.slice(0, 4)).toEqual([`start#1 kill ${victims[0]}`, `start#2 kill ${victims[1]}`, `kill ${victims[0]}`, `kill ${victims[1]}`]);
    expect(c.log.slice(4, 8)).toEqual(['end#1', 'end#2', `restart ${victims[0]}`, `restart ${victims[1]}`]);
    expect(c.detailOf(1)).toMatchObject({ power: 0, group: victims });
    expect(t(c, /^kill .*/) - t(c, /^start#1/)).toBeLessThan(100);
    expect(n.counts().power).toBe(1);
  });

  it('within budget, a fault that would leave no majority waits until the earlier one ends', async () => {
    const c = new FakeCluster(['n1', 'n2', 'n3']);
    const s = sched(
      [
        { kind: 'pause', target: node('n2'), atMs: 0, durationMs: 150 },
        { kind: 'kill', target: node('n3'), atMs: 10, durationMs: 10 },
      ],
      { nodeCount: 3 },
    );
    await drive(nemesisOn(c, s).run(new AbortController().signal));
    expect(t(c, /^start#2/)).toBeGreaterThanOrEqual(t(c, /^resume n2/));
    const waited = c.events.find((e) => e.kind === 'fault-waited');
    expect(waited?.detail).toMatchObject({ index: 1, kind: 'kill' });
    expect(String(waited?.detail.reason)).toMatch(/^no majority of 2 up, unpaused, connected nodes that remember the cluster/);
    expect(c.maxActive).toBe(1);
  });

  it('within budget, a second fault hits the active owner while the restarted replica still catches up (another copy is in sync)', async () => {
    const c = new FakeCluster(['n1', 'n2', 'n3']);
    c.catchUpMs = 30;
    c.staggerMs = 1_000; // n3 is in sync in its first partition after 30 ms, in the last after 2,030 ms
    const s = sched(
      [
        { kind: 'kill', target: node('n3'), atMs: 0, durationMs: 10 },
        { kind: 'kill', target: { role: 'active-over', fault: 0 }, atMs: 10, durationMs: 10, after: { event: 'catching-up', fault: 0, delayMs: 0, waitMs: 1_000 } },
      ],
      { nodeCount: 3 },
    );
    await drive(nemesisOn(c, s).run(new AbortController().signal));
    expect(c.starts).toHaveLength(2);
    const second = c.detailOf(2);
    expect(second.after).toMatchObject({ event: 'catching-up', fault: 0 });
    // it waited for n3 to rejoin (in sync somewhere), not for n3 to catch up everywhere
    expect(t(c, /^start#2/)).toBeGreaterThanOrEqual(t(c, /^restart n3/) + 30);
    expect(t(c, /^start#2/)).toBeLessThan(t(c, /^restart n3/) + 1_030);
    // the partition chosen is one where n3 is still behind, and its active is not n3
    expect(second.behind).toBe('n3');
    expect(c.starts[1].nodes[0]).not.toBe('n3');
    expect(Object.values(second.inSync as Record<string, string[]>).some((m) => !m.includes('n3'))).toBe(true);
  });

  it('a crash right after a restarted node caught up, and a failback follow-up, fire on their events', async () => {
    const c = new FakeCluster();
    c.catchUpMs = 40;
    const s = sched([
      { kind: 'kill', target: node('n2'), atMs: 0, durationMs: 10 },
      { kind: 'kill', target: { role: 'active-over', fault: 0 }, atMs: 10, durationMs: 10, after: { event: 'caught-up', fault: 0, delayMs: 0, waitMs: 2_000 } },
      { kind: 'pause', target: { role: 'same', fault: 0 }, atMs: 10, durationMs: 10, after: { event: 'failback', fault: 0, delayMs: 0, waitMs: 2_000 } },
    ]);
    setTimeout(() => c.handoffs.set(1, 'n2'), 200);
    await drive(nemesisOn(c, s).run(new AbortController().signal));
    const caught = c.caughtUpRecorded.get(1)!;
    expect(t(c, /^start#2/)).toBeGreaterThanOrEqual(caught);
    expect(c.starts[2].nodes).toEqual(['n2']);
    expect(t(c, /^start#3/)).toBeGreaterThanOrEqual(195);
    expect(c.detailOf(3).after).toMatchObject({ event: 'failback', fault: 0 });
  });

  it("an episode's bound node is reserved for it: another episode's fault does not resolve to it until the episode's faults have started", async () => {
    const c = new FakeCluster();
    c.catchUpMs = 40;
    const s = sched([
      // an episode: n2 paused and bound as z; n3 killed once z is back in sync
      { kind: 'pause', target: node('n2'), atMs: 0, durationMs: 200, bind: 'z' },
      { kind: 'kill', target: node('n3'), atMs: 0, durationMs: 10, after: { event: 'node-caught-up', name: 'z', delayMs: 0, waitMs: 2_000 } },
      // another episode aimed at n2 meanwhile: it takes another node
      { kind: 'partition', topology: 'isolate', target: node('n2'), atMs: 20, durationMs: 5 },
      // after the episode's last fault started, n2 is free again
      { kind: 'partition', topology: 'isolate', target: node('n2'), atMs: 600, durationMs: 5 },
    ]);
    await drive(nemesisOn(c, s).run(new AbortController().signal));
    expect(c.starts.map((f) => `${f.kind} ${f.nodes.join(',')}`)[0]).toBe('pause n2');
    const cut = c.starts.filter((f) => f.kind === 'partition');
    expect(cut[0].nodes).not.toContain('n2');
    expect(JSON.parse(cut[0].detail!).fallback).toBe('node n2: random node');
    // in start order: the pause, the other episode's cut elsewhere, the kill (the episode's last fault), then n2 cut
    expect(c.starts.map((f) => f.kind)).toEqual(['pause', 'partition', 'kill', 'partition']);
    expect(cut[1].nodes).toEqual(['n2']);
  });

  it('a trigger that never fires starts the fault anyway when its wait ends, and says so', async () => {
    const c = new FakeCluster();
    const s = sched([
      { kind: 'pause', target: node('n2'), atMs: 0, durationMs: 10 },
      { kind: 'kill', target: node('n3'), atMs: 0, durationMs: 10, after: { event: 'failback', delayMs: 0, waitMs: 60 } },
    ]);
    await drive(nemesisOn(c, s).run(new AbortController().signal));
    const k = c.starts.find((f) => f.kind === 'kill')!;
    expect(JSON.parse(k.detail!).after).toEqual({ event: 'failback', trigger: 'missed', waitedMs: 60 });
  });

  it('within budget, skips a fault that the budget never allows, with the reason', async () => {
    const c = new FakeCluster(['n1', 'n2', 'n3']);
    const s = sched(
      [
        { kind: 'partition', topology: 'isolate', target: node('n1'), atMs: 0, durationMs: 400 },
        { kind: 'kill', target: node('n2'), atMs: 10, durationMs: 10 },
      ],
      { nodeCount: 3 },
    );
    const n = nemesisOn(c, s, { gateWaitMs: 60 });
    await drive(n.run(new AbortController().signal));
    expect(c.starts.map((f) => f.kind)).toEqual(['partition']);
    const skipped = c.events.find((e) => e.kind === 'fault-skipped')!;
    expect(skipped.detail).toMatchObject({ index: 1, kind: 'kill', target: 'node:n2' });
    expect(String(skipped.detail.reason)).toMatch(/^not within the fault budget for 60 ms: no majority/);
    expect(n.counts().kill).toBe(0);
  });

  it('a slow clock and a cut of the same node never overlap within budget', async () => {
    const c = new FakeCluster();
    c.modes = { n1: 'monotonic', n2: 'wall', n3: 'monotonic', n4: 'wall', n5: 'monotonic' };
    const s = sched([
      { kind: 'clock', target: node('n1'), atMs: 0, durationMs: 100, clock: { rate: 0.5, jumpMs: 5_000 } },
      { kind: 'partition', topology: 'isolate', target: node('n1'), atMs: 10, durationMs: 10 },
    ]);
    await drive(nemesisOn(c, s).run(new AbortController().signal));
    expect(t(c, /^start#2 partition/)).toBeGreaterThanOrEqual(t(c, /^clock n1 0 x1/));
    expect(String(c.events.find((e) => e.kind === 'fault-waited')?.detail.reason)).toMatch(/^n1's clock runs slow/);
  });

  it('an RF1 holder is never kept paused or cut off past the eviction timeout less 10 s, counting overlapping faults', async () => {
    const c = new FakeCluster();
    c.rf1 = true;
    // eviction timeout 20 s: the limit is 10 s
    const s = sched(
      [
        { kind: 'partition', topology: 'isolate', target: node('n2'), atMs: 0, durationMs: 6_000 },
        // would keep n2 out from 0 to 5 s + 6 s = 11 s > 10 s: waits for the isolation to end
        { kind: 'pause', target: node('n2'), atMs: 5_000, durationMs: 6_000 },
        // a crash of any length is fine
        { kind: 'kill', target: node('n4'), atMs: 0, durationMs: 30_000 },
      ],
      { evictionTimeoutMs: 20_000 },
    );
    await drive(nemesisOn(c, s, { gateWaitMs: 10_000 }).run(new AbortController().signal));
    expect(c.starts.map((f) => `${f.kind} ${f.nodes.join()}`).sort()).toEqual(['kill n4', 'partition n2', 'pause n2']);
    expect(t(c, /^start#\d+ pause n2/)).toBeGreaterThanOrEqual(t(c, /^end#1/));
    expect(String(c.events.find((e) => e.kind === 'fault-waited' && e.detail.kind === 'pause')?.detail.reason)).toBe(
      'n2 (an RF1 holder) would stay paused or cut off for 11 s, past the eviction timeout less 10 s (10 s)',
    );
  });

  it('a flapping partition cuts and heals over and over, one ledger row per cut, without waiting for anything', async () => {
    const c = new FakeCluster();
    const s = sched([{ kind: 'partition', topology: 'isolate', target: node('n2'), atMs: 0, durationMs: 600, flap: { onMs: 50, offMs: 50 } }]);
    await drive(nemesisOn(c, s).run(new AbortController().signal));
    const rows = c.starts.filter((f) => f.kind === 'partition');
    // six cycles fit; a loaded machine may run fewer, never more
    expect(rows.length).toBeGreaterThanOrEqual(2);
    expect(rows.length).toBeLessThanOrEqual(6);
    expect(rows.every((r) => r.nodes.join() === 'n2' && c.ended.has(r.id))).toBe(true);
    expect(JSON.parse(rows[1].detail!).flap).toMatchObject({ onMs: 50, offMs: 50, cycle: 1, of: rows[0].id });
    const installs = c.log.filter((l) => l.startsWith('partition '));
    expect(installs.filter((l) => l === 'partition {}').length).toBe(rows.length);
    expect(c.grudge).toEqual({});
  });

  it('a client cut and a partition compose: healing one keeps the other', async () => {
    const c = new FakeCluster();
    const s = sched([
      { kind: 'client-cut', target: node('n3'), atMs: 0, durationMs: 100 },
      { kind: 'partition', topology: 'isolate', target: node('n5'), atMs: 10, durationMs: 20 },
    ]);
    await drive(nemesisOn(c, s).run(new AbortController().signal));
    // the partition's heal installs an empty grudge, never runtime.heal() (which would end the cut)
    expect(c.log).not.toContain('heal');
    expect(c.log.indexOf('partition {}')).toBeLessThan(c.log.indexOf('cut '));
  });

  it('one-way partitions cut one direction of one link; isolated is empty', async () => {
    const c = new FakeCluster();
    const s = sched([
      { kind: 'partition', topology: 'one-way', direction: 'in', target: node('n1'), atMs: 0, durationMs: 10 },
      { kind: 'partition', topology: 'one-way', direction: 'out', target: node('n1'), atMs: 20, durationMs: 10 },
    ]);
    await drive(nemesisOn(c, s).run(new AbortController().signal));
    const [a, b] = c.starts;
    const ga = JSON.parse(a.detail!).grudge as Grudge;
    const gb = JSON.parse(b.detail!).grudge as Grudge;
    expect(Object.keys(ga)).toEqual(['n1']); // n1 drops the other's traffic
    expect(Object.values(gb)[0]).toEqual(['n1']); // the other drops n1's
    expect(a.isolated).toEqual([]);
    expect(a.nodes).toContain('n1');
    expect(a.nodes).toHaveLength(2);
  });

  it('the stop signal ends the fault phase promptly and undoes every fault in effect', async () => {
    const c = new FakeCluster();
    const s = sched(
      [
        { kind: 'kill', target: node('n2'), atMs: 0, durationMs: 30_000 },
        { kind: 'pause', target: node('n3'), atMs: 5, durationMs: 30_000 },
        { kind: 'partition', topology: 'halves', target: { role: 'random' }, atMs: 10, durationMs: 30_000 },
        { kind: 'kill', target: { role: 'random' }, atMs: 40_000, durationMs: 1_000 },
      ],
      { beyondBudget: true },
    );
    const ac = new AbortController();
    const n = nemesisOn(c, s);
    const t0 = c.now();
    setTimeout(() => ac.abort(), 100);
    await drive(n.run(ac.signal));
    expect(c.now() - t0).toBeLessThan(1_000);
    expect(c.maxActive).toBe(3);
    expect(n.activeCount()).toBe(0);
    expect([...c.state.values()].every((v) => v === 'up')).toBe(true);
    expect(c.grudge).toEqual({});
    for (const [id, undo] of [
      [1, 'restart n2'],
      [2, 'resume n3'],
      [3, 'partition {}'],
    ] as const) {
      expect(c.log.indexOf(`end#${id}`)).toBeGreaterThanOrEqual(0);
      expect(c.log.indexOf(`end#${id}`)).toBeLessThan(c.log.indexOf(undo));
    }
    expect(c.log.filter((l) => l.startsWith('start#')).length).toBe(3);
    expect(await drive(n.healAll())).toEqual({ healed: true });
    expect(c.log).toContain('caughtUp#1'); // caught up after the abort: recorded by healAll
  });

  it('beyond budget, faults overlap past the budget, never share a crashed or paused node, and partitions compose', async () => {
    const c = new FakeCluster(['n1', 'n2', 'n3']);
    const s = sched(
      [
        { kind: 'kill', target: { role: 'leader' }, atMs: 0, durationMs: 300 },
        { kind: 'pause', target: { role: 'random' }, atMs: 20, durationMs: 300 },
        { kind: 'kill', target: { role: 'random' }, atMs: 40, durationMs: 300 },
        { kind: 'partition', topology: 'isolate', target: node('n3'), atMs: 60, durationMs: 100 },
        { kind: 'partition', topology: 'isolate', target: node('n2'), atMs: 80, durationMs: 300 },
      ],
      { beyondBudget: true, nodeCount: 3 },
    );
    const n = nemesisOn(c, s);
    await drive(n.run(new AbortController().signal));
    expect(c.maxActive).toBeGreaterThanOrEqual(4);
    const crashOrPause = c.starts.filter((f) => f.kind !== 'partition').map((f) => f.nodes[0]);
    expect(crashOrPause[0]).toBe('n1');
    expect(new Set(crashOrPause).size).toBe(3);
    const both = c.log.find((l) => l.startsWith('partition ') && l.includes('"n2":[') && l.includes('"n3":['));
    const union = JSON.parse(both!.slice('partition '.length)) as Grudge;
    expect(canReach(union, 'n2', 'n3')).toBe(false);
    expect(c.grudge).toEqual({});
  });

  it('a lag-crash (issue 12): the heir drops its active\'s traffic, and the active is killed LAG ms after the cut took effect', async () => {
    const c = new FakeCluster();
    const s = sched([
      { kind: 'partition', topology: 'one-way', direction: 'in', target: { role: 'heir', store: 'sync3', partition: 1 }, peer: { target: { role: 'active', store: 'sync3', partition: 1 } }, atMs: 0, durationMs: 80 },
      { kind: 'kill', target: { role: 'active-of', fault: 0 }, atMs: 0, durationMs: 5, after: { event: 'started', fault: 0, delayMs: 30, waitMs: 1_000 } },
    ]);
    await drive(nemesisOn(c, s).run(new AbortController().signal));
    // partition 1 is n2 (active), n3, n4: the heir is n3, the first in-sync member after the active in map order
    const [cut, kill] = c.starts;
    expect(JSON.parse(cut.detail!).grudge as Grudge).toEqual({ n3: ['n2'] });
    expect(kill.kind).toBe('kill');
    expect(kill.nodes).toEqual(['n2']);
    expect(JSON.parse(kill.detail!).after).toMatchObject({ event: 'started', fault: 0 });
    // the kill comes while the heir is still cut off
    expect(c.log.indexOf(`start#${kill.id} kill n2`)).toBeLessThan(c.log.indexOf(`end#${cut.id}`));
  });

  it('an aimed heir target waits for an in-sync heir (no random stand-in): applied once one is in sync, skipped if none comes', async () => {
    const c = new FakeCluster();
    c.catchUpMs = 200;
    const s = sched([
      // n3 and n4, partition 1's replicas after its active n2, restart and catch up for 200 ms
      { kind: 'kill', target: node('n3'), atMs: 0, durationMs: 5 },
      { kind: 'kill', target: node('n4'), atMs: 0, durationMs: 5 },
      { kind: 'pause', target: { role: 'heir', store: 'sync3', partition: 1 }, atMs: 20, durationMs: 5 },
    ]);
    await drive(nemesisOn(c, s).run(new AbortController().signal));
    const heirHit = c.starts.find((x) => x.kind === 'pause')!;
    expect(heirHit.nodes).toEqual(['n3']);
    expect(JSON.parse(heirHit.detail!).fallback).toBeUndefined();
    // it waited for n3 to catch up (restarted at ~5 ms, in sync 200 ms later), not 20 ms as planned
    expect(t(c, new RegExp(`^start#${heirHit.id} pause`))).toBeGreaterThanOrEqual(200);
    // no heir ever (every replica but the active stays down): skipped with the reason, no stand-in
    const d = new FakeCluster();
    const never = sched([
      { kind: 'kill', target: node('n3'), atMs: 0, durationMs: 5_000 },
      { kind: 'kill', target: node('n4'), atMs: 0, durationMs: 5_000 },
      { kind: 'pause', target: { role: 'heir', store: 'sync3', partition: 1 }, atMs: 20, durationMs: 5 },
    ]);
    await drive(nemesisOn(d, never, { gateWaitMs: 1_000 }).run(new AbortController().signal));
    expect(d.starts.some((x) => x.kind === 'pause')).toBe(false);
    expect(d.events.find((e) => e.kind === 'fault-skipped')?.detail).toMatchObject({ index: 2, reason: expect.stringContaining('no in-sync replica of sync3/1 but its owner') });
  });

  it('resolves the leader, active owners, in-sync replicas and nodes catching up through the probe, else a random node', async () => {
    const c = new FakeCluster();
    c.leaderId = 'n3';
    const s = sched([
      { kind: 'kill', target: { role: 'leader' }, atMs: 0, durationMs: 5 },
      { kind: 'pause', target: { role: 'active', store: 'sync3', partition: 3 }, atMs: 20, durationMs: 5 },
      { kind: 'partition', topology: 'isolate', target: { role: 'replica', store: 'sync3', partition: 1 }, atMs: 40, durationMs: 5 },
      { kind: 'pause', target: { role: 'catching-up' }, atMs: 60, durationMs: 5 },
      { kind: 'pause', target: { role: 'failback' }, atMs: 80, durationMs: 5 },
    ]);
    await drive(nemesisOn(c, s).run(new AbortController().signal));
    expect(c.starts[0].nodes).toEqual(['n3']);
    expect(c.starts[1].nodes).toEqual(['n4']);
    expect(['n3', 'n4']).toContain(c.starts[2].nodes[0]); // partition 1 is n2 (active), n3, n4
    expect(c.detailOf(4).fallback).toBe('no replica catching up: random node');
    expect(c.detailOf(5).fallback).toBe('no failback under way: random node');
  });

  it('live choices are a function of the schedule: a replayed schedule gives the same digest and the same faults', async () => {
    const PARTS = [0, 1, 2, 3, 4].map((partition) => ({ store: 'sync3', partition }));
    const planned = planSchedule({ seed: 1234, durationMs: 60_000, kinds: ['kill', 'stop', 'pause', 'partition'], escalationTimeoutMs: 1000, nodeCount: 5, partitions: PARTS, beyondBudget: true });
    const replayed = scheduleFromJson(scheduleToJson(planned));
    expect(scheduleDigest(replayed)).toBe(scheduleDigest(planned));
    // compress time (and drop triggers) so that the test is fast; the live choices do not depend on times
    const fast = (s: Schedule): Schedule => ({ ...s, faults: s.faults.slice(0, 8).map((f, i) => ({ ...f, atMs: i * 30, durationMs: 10, after: undefined, flap: undefined })) });
    const a = new FakeCluster();
    const b = new FakeCluster();
    await drive(nemesisOn(a, fast(planned)).run(new AbortController().signal));
    await drive(nemesisOn(b, fast(replayed)).run(new AbortController().signal));
    expect(a.starts.length).toBeGreaterThan(4);
    expect(b.starts.map(({ kind, nodes, target }) => ({ kind, nodes, target }))).toEqual(a.starts.map(({ kind, nodes, target }) => ({ kind, nodes, target })));
  });

  it('healAll restarts down nodes, heals, and waits for Healthy (bounded)', async () => {
    const c = new FakeCluster();
    await c.kill('n2'); // down for a reason the nemesis did not cause
    await c.partition({ n1: ['n2'] });
    const n = nemesisOn(c, sched([]));
    await drive(n.run(new AbortController().signal));
    expect(await drive(n.healAll())).toEqual({ healed: true });
    expect(c.log.slice(-2)).toEqual(['heal', 'restart n2']);
    expect(c.events.some((e) => e.kind === 'restart' && e.detail.node === 'n2')).toBe(true);

    const d = new FakeCluster(['n1', 'n2', 'n3']);
    d.stuck = true;
    const m = nemesisOn(d, sched([]), { healTimeoutMs: 80 });
    await drive(m.run(new AbortController().signal));
    expect(await drive(m.healAll())).toEqual({ healed: false, reason: 'cluster did not heal within 80 ms: sync3/0 Unavailable, sync3/1 Unavailable, sync3/2 Unavailable' });

    const e = new FakeCluster();
    await e.kill('n2');
    await e.kill('n4');
    e.failRestart.add('n2');
    const k = nemesisOn(e, sched([]));
    await drive(k.run(new AbortController().signal));
    expect(await drive(k.healAll())).toEqual({ healed: false, reason: 'heal failed: restart n2: restart n2: port in use' });
    expect(e.state.get('n4')).toBe('up');
  });

  it('a probe that throws refuses the budget; a runtime error ends the run after undoing the fault', async () => {
    const c = new FakeCluster();
    c.probeThrows = true;
    const s = sched([{ kind: 'kill', target: { role: 'random' }, atMs: 0, durationMs: 5 }]);
    await drive(nemesisOn(c, s, { gateWaitMs: 40 }).run(new AbortController().signal));
    expect(String(c.events.find((e) => e.kind === 'fault-skipped')?.detail.reason)).toContain('the cluster state is unknown');

    const d = new FakeCluster();
    d.failKill = true;
    const n = nemesisOn(d, s);
    await expect(drive(n.run(new AbortController().signal))).rejects.toThrow('kill n');
    expect(d.log.filter((l) => l.startsWith('start#') || l.startsWith('end#'))).toEqual([expect.stringMatching(/^start#1 kill n\d$/), 'end#1']);
    expect(n.counts().kill).toBe(0);
  });

  it('snapshot helpers: unhealthy partitions, caught up, catching up', () => {
    const snap: ClusterSnapshot = {
      leader: 'n1',
      answered: ['n1', 'n2', 'n3'],
      partitions: [
        { store: 's', partition: 0, replicationFactor: 3, replicas: ['n1', 'n2', 'n3'], active: 'n1', health: 'Healthy', inSync: ['n1', 'n2', 'n3'], handoffTo: null },
        { store: 's', partition: 1, replicationFactor: 3, replicas: ['n1', 'n2', 'n3'], active: 'n2', health: 'Degraded', inSync: ['n2', 'n1'], handoffTo: null },
      ],
    };
    expect(unhealthyPartitions(snap)).toEqual(['s/1 Degraded']);
    expect(nodeCaughtUp(snap, 'n1')).toBe(true);
    expect(nodeCaughtUp(snap, 'n3')).toBe(false);
    expect(catchingUpNodes(snap)).toEqual(['n3']);
  });
});
