import { describe, expect, it, vi } from 'vitest';
import type { ClusterConfig } from '../../nodes/cluster-config.js';
import type { ClusterStartOptions, Grudge, NodeEndpoint, Runtime } from '../runtime/runtime.js';
import { canReach } from './grudge.js';
import { Nemesis, type ClusterProbe, type FaultRecorder, type FaultStartRecord, type NemesisOptions } from './nemesis.js';
import { planSchedule, scheduleDigest, scheduleFromJson, scheduleToJson, SCHEDULE_FORMAT, type PlannedFault, type Schedule } from './schedule.js';

/**
 * An in-memory cluster: a Runtime and a ClusterProbe over the same state, plus a recorder, all
 * writing to one log so that the order of records and effects can be asserted.
 */
class FakeCluster implements Runtime, ClusterProbe {
  readonly kind = 'process' as const;
  readonly log: string[] = [];
  readonly times: Array<{ what: string; t: number }> = [];
  readonly events: Array<{ kind: string; detail: Record<string, unknown> }> = [];
  readonly starts: Array<FaultStartRecord & { id: number }> = [];
  readonly state = new Map<string, 'up' | 'down' | 'paused'>();
  grudge: Grudge = {};
  /** the cluster stays unhealthy this long after any change */
  recoveryMs = 0;
  /** a restarted node is caught up this long after its restart */
  catchUpMs = 0;
  /** extra unhealthy partitions reported whatever happens */
  stuck: string[] = [];
  leaderId: string | null = 'n1';
  probeThrows = false;
  failKill = false;
  failRestart = new Set<string>();
  leaderDelayMs = 0;
  private lastChange = -Infinity;
  private readonly restartedAt = new Map<string, number>();
  private nextId = 1;
  // the global performance (not node:perf_hooks'): vi.useFakeTimers can make it virtual
  private readonly t0 = performance.now();
  /** most faults active at once (start recorded, end not yet) */
  maxActive = 0;
  private activeNow = 0;

  constructor(readonly ids: string[] = ['n1', 'n2', 'n3', 'n4', 'n5']) {
    for (const n of ids) this.state.set(n, 'up');
  }
  now(): number {
    return performance.now() - this.t0;
  }
  private note(what: string): void {
    this.log.push(what);
    this.times.push({ what, t: this.now() });
  }
  private change(): void {
    this.lastChange = this.now();
  }
  private expectState(n: string, s: 'up' | 'down' | 'paused', op: string): void {
    if (this.state.get(n) !== s) throw new Error(`fake: ${op} ${n} while ${this.state.get(n)}`);
  }

  // Runtime
  get config(): ClusterConfig {
    throw new Error('fake: no config');
  }
  start(_o: ClusterStartOptions): Promise<ClusterConfig> {
    throw new Error('fake: no start');
  }
  clientEndpoint(_n: string): NodeEndpoint {
    return { host: '127.0.0.1', port: 1 };
  }
  async kill(n: string): Promise<void> {
    if (this.failKill) throw new Error(`kill ${n}: no such process`);
    this.expectState(n, 'up', 'kill');
    this.note(`kill ${n}`);
    this.state.set(n, 'down');
    this.change();
  }
  async stop(n: string): Promise<void> {
    this.expectState(n, 'up', 'stop');
    this.note(`stop ${n}`);
    this.state.set(n, 'down');
    this.change();
  }
  async restart(n: string): Promise<void> {
    if (this.failRestart.has(n)) throw new Error(`restart ${n}: port in use`);
    this.expectState(n, 'down', 'restart');
    this.note(`restart ${n}`);
    this.state.set(n, 'up');
    this.restartedAt.set(n, this.now());
    this.change();
  }
  async pause(n: string): Promise<void> {
    this.expectState(n, 'up', 'pause');
    this.note(`pause ${n}`);
    this.state.set(n, 'paused');
    this.change();
  }
  async resume(n: string): Promise<void> {
    this.expectState(n, 'paused', 'resume');
    this.note(`resume ${n}`);
    this.state.set(n, 'up');
    this.change();
  }
  async partition(g: Grudge): Promise<void> {
    this.note(`partition ${JSON.stringify(g)}`);
    this.grudge = g;
    this.change();
  }
  async heal(): Promise<void> {
    this.note('heal');
    this.grudge = {};
    this.change();
  }
  isUp(n: string): boolean {
    return this.state.get(n) !== 'down';
  }
  nodeIds(): string[] {
    return [...this.ids];
  }
  async close(): Promise<void> {}

  // ClusterProbe
  async leader(): Promise<string | null> {
    if (this.probeThrows) throw new Error('probe down');
    if (this.leaderDelayMs > 0) await new Promise((r) => setTimeout(r, this.leaderDelayMs));
    return this.leaderId !== null && this.state.get(this.leaderId) === 'up' ? this.leaderId : null;
  }
  async activeOf(_store: string, partition: number): Promise<string | null> {
    if (this.probeThrows) throw new Error('probe down');
    const n = this.ids[partition % this.ids.length];
    return this.state.get(n) === 'up' ? n : null;
  }
  async partitions(): Promise<Array<{ store: string; partition: number }>> {
    return this.ids.map((_, partition) => ({ store: 'sync3', partition }));
  }
  async unhealthy(): Promise<string[]> {
    if (this.probeThrows) throw new Error('probe down');
    const out = [...this.stuck];
    for (const [n, s] of this.state) if (s !== 'up') out.push(`sync3/${this.ids.indexOf(n)} Degraded (${n} ${s})`);
    if (Object.keys(this.grudge).length > 0) out.push('sync3/0 Degraded (partitioned)');
    if (this.now() < this.lastChange + this.recoveryMs) out.push('sync3/0 Recovering');
    return out;
  }
  async caughtUp(n: string): Promise<boolean> {
    const t = this.restartedAt.get(n);
    return this.state.get(n) === 'up' && t !== undefined && this.now() >= t + this.catchUpMs;
  }

  // the recorder side (see recorderOf)
  faultStart(f: FaultStartRecord): number {
    const id = this.nextId++;
    this.starts.push({ ...f, id });
    this.note(`start#${id} ${f.kind} ${f.nodes.join(',')}`);
    this.activeNow++;
    this.maxActive = Math.max(this.maxActive, this.activeNow);
    return id;
  }
  faultEnd(id: number): void {
    this.note(`end#${id}`);
    this.activeNow--;
  }
  caughtUpRecorded = new Map<number, number>();
  caughtUp_(id: number, ms: number): void {
    this.caughtUpRecorded.set(id, ms);
  }
  event(kind: string, detail: string): void {
    this.events.push({ kind, detail: JSON.parse(detail) as Record<string, unknown> });
  }
}

/** The recorder side of a FakeCluster (its caughtUp name is taken by the probe). */
function recorderOf(c: FakeCluster): FaultRecorder {
  return {
    faultStart: (f) => c.faultStart(f),
    faultEnd: (id) => c.faultEnd(id),
    caughtUp: (id, ms) => {
      c.log.push(`caughtUp#${id}`);
      c.caughtUp_(id, ms);
    },
    event: (k, d) => c.event(k, d),
  };
}

function sched(faults: PlannedFault[], extra: Partial<Schedule> = {}): Schedule {
  const end = Math.max(0, ...faults.map((f) => f.atMs + f.durationMs));
  return { format: SCHEDULE_FORMAT, seed: 7, durationMs: end + 1, kinds: ['kill', 'stop', 'pause', 'partition'], escalationTimeoutMs: 1000, nodeCount: 5, beyondBudget: false, faults, ...extra };
}

function nemesisOn(c: FakeCluster, schedule: Schedule, o: Partial<NemesisOptions> = {}): Nemesis {
  return new Nemesis({ runtime: c, probe: c, recorder: recorderOf(c), clock: c, schedule, pollMs: 5, healthyWaitMs: 2_000, catchUpWaitMs: 2_000, healTimeoutMs: 2_000, probeTimeoutMs: 200, ...o });
}

/**
 * Runs `body` on a virtual clock (setTimeout and performance faked): timers fire in order as the
 * clock moves, 1 ms at a time, never by the wall clock, so a loaded machine cannot reorder them.
 * `body` gets `settle(p)`, which moves the clock until `p` settles (at most `limitMs` virtual ms).
 */
async function onVirtualClock(body: (settle: <T>(p: Promise<T>, limitMs?: number) => Promise<T>) => Promise<void>): Promise<void> {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'performance'] });
  try {
    await body(async <T,>(p: Promise<T>, limitMs = 60_000): Promise<T> => {
      let settled = false;
      const tracked = p.finally(() => {
        settled = true;
      });
      for (let t = 0; !settled && t < limitMs; t++) await vi.advanceTimersByTimeAsync(1);
      if (!settled) throw new Error(`did not settle within ${limitMs} virtual ms`);
      return tracked;
    });
  } finally {
    vi.useRealTimers();
  }
}

describe('Nemesis executor', () => {
  it('records each start before applying it and each end before undoing it', async () => {
    const c = new FakeCluster();
    c.catchUpMs = 30;
    const s = sched([
      { kind: 'kill', target: { role: 'node', node: 'n2' }, atMs: 0, durationMs: 20, calmMs: 0 },
      { kind: 'pause', target: { role: 'node', node: 'n3' }, atMs: 20, durationMs: 20, calmMs: 0 },
      { kind: 'partition', topology: 'isolate', target: { role: 'node', node: 'n1' }, atMs: 40, durationMs: 20, calmMs: 0 },
      { kind: 'stop', target: { role: 'leader' }, atMs: 60, durationMs: 20, calmMs: 0 },
    ]);
    const n = nemesisOn(c, s);
    await n.run(new AbortController().signal);
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
      'heal',
      'start#4 stop n1',
      'stop n1',
      'end#4',
      'restart n1',
      'caughtUp#4',
    ]);
    expect(n.counts()).toEqual({ kill: 1, stop: 1, pause: 1, partition: 1 });
    expect(c.starts.map((f) => f.target)).toEqual(['node:n2', 'node:n3', 'node:n1', 'leader']);
    // caught-up time is after the restart by at least the fake's catch-up delay
    const restart = c.times.find((t) => t.what === 'restart n2')!.t;
    expect(c.caughtUpRecorded.get(1)!).toBeGreaterThanOrEqual(restart + 30);
    const detail = JSON.parse(c.starts[2].detail!) as Record<string, unknown>;
    expect(detail.topology).toBe('isolate');
  });

  it('within budget, waits for every partition to be Healthy before the next fault', async () => {
    const c = new FakeCluster();
    c.recoveryMs = 120; // unhealthy for 120 ms after each change
    const s = sched([
      { kind: 'kill', target: { role: 'random' }, atMs: 0, durationMs: 10, calmMs: 0 },
      { kind: 'pause', target: { role: 'random' }, atMs: 10, durationMs: 10, calmMs: 0 },
      { kind: 'partition', topology: 'halves', target: { role: 'random' }, atMs: 20, durationMs: 10, calmMs: 0 },
    ]);
    await nemesisOn(c, s).run(new AbortController().signal);
    const t = (what: RegExp, from = 0): number => c.times.slice(from).find((x) => what.test(x.what))!.t;
    // each start comes >= recoveryMs after the undo of the previous fault
    expect(t(/^start#2/)).toBeGreaterThanOrEqual(t(/^restart /) + 120);
    expect(t(/^start#3/)).toBeGreaterThanOrEqual(t(/^resume /) + 120);
    expect(c.maxActive).toBe(1);
  });

  it('within budget, skips a fault when the cluster stays unhealthy past the bounded wait', async () => {
    const c = new FakeCluster();
    c.stuck = ['sync3/1 Unavailable'];
    const s = sched([
      { kind: 'kill', target: { role: 'random' }, atMs: 0, durationMs: 10, calmMs: 0 },
      { kind: 'kill', target: { role: 'random' }, atMs: 10, durationMs: 10, calmMs: 0 },
    ]);
    const n = nemesisOn(c, s, { healthyWaitMs: 60 });
    await n.run(new AbortController().signal);
    expect(c.log).toEqual([]);
    const skipped = c.events.filter((e) => e.kind === 'fault-skipped');
    expect(skipped.map((e) => e.detail.index)).toEqual([0, 1]);
    expect(skipped[0].detail.unhealthy).toEqual(['sync3/1 Unavailable']);
    expect(n.counts().kill).toBe(0);
  });

  it('the stop signal ends the fault phase promptly and undoes every active fault (virtual clock)', () =>
    onVirtualClock(async (settle) => {
      const c = new FakeCluster();
      const s = sched(
        [
          { kind: 'kill', target: { role: 'node', node: 'n2' }, atMs: 0, durationMs: 30_000, calmMs: 0 },
          { kind: 'pause', target: { role: 'node', node: 'n3' }, atMs: 5, durationMs: 30_000, calmMs: 0 },
          { kind: 'partition', topology: 'halves', target: { role: 'random' }, atMs: 10, durationMs: 30_000, calmMs: 0 },
          { kind: 'kill', target: { role: 'random' }, atMs: 40_000, durationMs: 1_000, calmMs: 0 },
        ],
        { beyondBudget: true },
      );
      const ac = new AbortController();
      const n = nemesisOn(c, s);
      const t0 = c.now();
      setTimeout(() => ac.abort(), 100);
      await settle(n.run(ac.signal));
      // the abort came at 100 virtual ms; the phase ended promptly after it (virtual ms, not the wall clock's)
      expect(c.now() - t0).toBeGreaterThanOrEqual(100);
      expect(c.now() - t0).toBeLessThan(1_000);
      expect(c.maxActive).toBe(3);
      expect(n.activeCount()).toBe(0);
      expect([...c.state.values()].every((v) => v === 'up')).toBe(true);
      expect(c.grudge).toEqual({});
      // every end recorded before its undo
      for (const [id, undo] of [
        [1, 'restart n2'],
        [2, 'resume n3'],
        [3, 'heal'],
      ] as const) {
        expect(c.log.indexOf(`end#${id}`)).toBeGreaterThanOrEqual(0);
        expect(c.log.indexOf(`end#${id}`)).toBeLessThan(c.log.indexOf(undo));
      }
      expect(c.log.filter((l) => l.startsWith('start#')).length).toBe(3); // the 40 s fault never started
      const heal = await settle(n.healAll());
      expect(heal).toEqual({ healed: true });
      expect(c.log).toContain('caughtUp#1'); // caught up after the abort: recorded by healAll
    }));

  it('beyond budget, faults overlap, never share a crashed or paused node, and partitions compose', async () => {
    const c = new FakeCluster();
    c.stuck = ['sync3/0 Unavailable']; // never Healthy: beyond budget must not wait for it
    const s = sched(
      [
        { kind: 'kill', target: { role: 'leader' }, atMs: 0, durationMs: 300, calmMs: 0 },
        { kind: 'pause', target: { role: 'random' }, atMs: 20, durationMs: 300, calmMs: 0 },
        { kind: 'kill', target: { role: 'random' }, atMs: 40, durationMs: 300, calmMs: 0 },
        { kind: 'partition', topology: 'isolate', target: { role: 'node', node: 'n5' }, atMs: 60, durationMs: 100, calmMs: 0 },
        { kind: 'partition', topology: 'isolate', target: { role: 'node', node: 'n4' }, atMs: 80, durationMs: 300, calmMs: 0 },
      ],
      { beyondBudget: true },
    );
    const n = nemesisOn(c, s, { catchUpWaitMs: 50 });
    await n.run(new AbortController().signal);
    expect(c.maxActive).toBeGreaterThanOrEqual(4);
    const crashOrPause = c.starts.filter((f) => f.kind !== 'partition').map((f) => f.nodes[0]);
    expect(crashOrPause[0]).toBe('n1'); // the leader
    expect(new Set(crashOrPause).size).toBe(3);
    // while both partitions were active, both cuts were installed at once
    const both = c.log.find((l) => l.startsWith('partition ') && l.includes('"n4":[') && l.includes('"n5":['));
    expect(both).toBeDefined();
    const union = JSON.parse(both!.slice('partition '.length)) as Grudge;
    expect(canReach(union, 'n4', 'n5')).toBe(false);
    expect(canReach(union, 'n1', 'n2')).toBe(true);
    // when the first partition healed, the second stayed installed
    const after = c.log.slice(c.log.indexOf('end#' + c.starts.find((f) => f.kind === 'partition' && f.nodes[0] === 'n5')!.id));
    const reinstall = after.find((l) => l.startsWith('partition ') || l === 'heal');
    expect(reinstall).toBe(`partition ${JSON.stringify({ n1: ['n4'], n2: ['n4'], n3: ['n4'], n4: ['n1', 'n2', 'n3', 'n5'], n5: ['n4'] })}`);
    expect(n.counts()).toEqual({ kill: 2, stop: 0, pause: 1, partition: 2 });
    expect(c.grudge).toEqual({});
  });

  it('injects nothing once the stop signal fired, even while a probe was answering (virtual clock)', () =>
    onVirtualClock(async (settle) => {
      const c = new FakeCluster();
      c.leaderDelayMs = 150;
      const s = sched([{ kind: 'kill', target: { role: 'leader' }, atMs: 0, durationMs: 1_000, calmMs: 0 }]);
      const ac = new AbortController();
      setTimeout(() => ac.abort(), 50);
      await settle(nemesisOn(c, s).run(ac.signal));
      expect(c.log).toEqual([]);
      expect([...c.state.values()].every((v) => v === 'up')).toBe(true);
    }));

  it('resolves the leader and active owners through the probe, and falls back to a random node', async () => {
    const c = new FakeCluster();
    c.leaderId = 'n3';
    const s = sched([
      { kind: 'kill', target: { role: 'leader' }, atMs: 0, durationMs: 5, calmMs: 0 },
      { kind: 'kill', target: { role: 'active', store: 'sync3', partition: 3 }, atMs: 5, durationMs: 5, calmMs: 0 },
      { kind: 'partition', topology: 'active', target: { role: 'active', store: 'sync3', partition: 1 }, atMs: 10, durationMs: 5, calmMs: 0 },
    ]);
    await nemesisOn(c, s).run(new AbortController().signal);
    expect(c.starts.map((f) => f.nodes)).toEqual([['n3'], ['n4'], ['n2']]);

    const d = new FakeCluster();
    d.leaderId = null;
    const t = sched([{ kind: 'pause', target: { role: 'leader' }, atMs: 0, durationMs: 5, calmMs: 0 }]);
    await nemesisOn(d, t).run(new AbortController().signal);
    expect(d.starts).toHaveLength(1);
    expect(JSON.parse(d.starts[0].detail!).fallback).toBe('no leader known: random node');
    expect(d.ids).toContain(d.starts[0].nodes[0]);
  });

  it('live choices are a function of the schedule: a replayed schedule gives the same digest and the same faults', async () => {
    const PARTS = [0, 1, 2, 3, 4].map((partition) => ({ store: 'sync3', partition }));
    const planned = planSchedule({ seed: 1234, durationMs: 20_000, kinds: ['kill', 'stop', 'pause', 'partition'], escalationTimeoutMs: 1000, nodeCount: 5, partitions: PARTS });
    const replayed = scheduleFromJson(scheduleToJson(planned));
    expect(scheduleDigest(replayed)).toBe(scheduleDigest(planned));
    // compress time so that the test is fast; the live choices do not depend on times
    const fast = (s: Schedule): Schedule => ({ ...s, faults: s.faults.map((f, i) => ({ ...f, atMs: i * 3, durationMs: 2, calmMs: 1 })) });
    const a = new FakeCluster();
    const b = new FakeCluster();
    await nemesisOn(a, fast(planned)).run(new AbortController().signal);
    await nemesisOn(b, fast(replayed)).run(new AbortController().signal);
    expect(a.starts.length).toBe(planned.faults.length);
    expect(b.starts.map(({ kind, nodes, target, detail }) => ({ kind, nodes, target, detail }))).toEqual(
      a.starts.map(({ kind, nodes, target, detail }) => ({ kind, nodes, target, detail })),
    );
  });

  it('healAll restarts down nodes, resumes paused ones, heals, and waits for Healthy (bounded)', async () => {
    const c = new FakeCluster();
    await c.kill('n2'); // down for a reason the nemesis did not cause
    await c.partition({ n1: ['n2'] });
    c.recoveryMs = 50;
    const n = nemesisOn(c, sched([]));
    await n.run(new AbortController().signal);
    expect(await n.healAll()).toEqual({ healed: true });
    expect(c.log.slice(-2)).toEqual(['heal', 'restart n2']);
    expect(c.events.some((e) => e.kind === 'restart' && e.detail.node === 'n2')).toBe(true);

    const d = new FakeCluster();
    d.stuck = ['sync3/0 Unavailable', 'sync3/1 Unavailable'];
    const m = nemesisOn(d, sched([]), { healTimeoutMs: 80 });
    await m.run(new AbortController().signal);
    expect(await m.healAll()).toEqual({ healed: false, reason: 'cluster did not heal within 80 ms: sync3/0 Unavailable, sync3/1 Unavailable' });

    // a restart that fails does not stop the other restarts; the run gets the reason
    const e = new FakeCluster();
    await e.kill('n2');
    await e.kill('n4');
    e.failRestart.add('n2');
    const k = nemesisOn(e, sched([]));
    await k.run(new AbortController().signal);
    expect(await k.healAll()).toEqual({ healed: false, reason: 'heal failed: restart n2: restart n2: port in use' });
    expect(e.state.get('n4')).toBe('up');
  });

  it('a probe that throws counts as not Healthy; a runtime error ends the run after undoing the fault', async () => {
    const c = new FakeCluster();
    c.probeThrows = true;
    const s = sched([{ kind: 'kill', target: { role: 'random' }, atMs: 0, durationMs: 5, calmMs: 0 }]);
    await nemesisOn(c, s, { healthyWaitMs: 40 }).run(new AbortController().signal);
    expect(c.events.find((e) => e.kind === 'fault-skipped')?.detail.unhealthy).toEqual(['cluster probe did not answer']);

    const d = new FakeCluster();
    d.failKill = true;
    const n = nemesisOn(d, s);
    await expect(n.run(new AbortController().signal)).rejects.toThrow('kill n');
    expect(d.log.filter((l) => l.startsWith('start#') || l.startsWith('end#'))).toEqual([expect.stringMatching(/^start#1 kill n\d$/), 'end#1']);
    expect(n.counts().kill).toBe(0);
  });
});
