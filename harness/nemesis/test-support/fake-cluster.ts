import { vi } from 'vitest';
import type { ClusterConfig } from '../../../nodes/cluster-config.js';
import type { ClockMode, ClockSetting, ClusterStartOptions, Grudge, NodeEndpoint, Runtime } from '../../runtime/runtime.js';
import { canReach, majoritySize } from '../grudge.js';
import type { ClusterSnapshot } from '../budget.js';
import { Nemesis } from '../nemesis.js';
import type { ClusterProbe, FaultRecorder, FaultStartRecord, NemesisOptions } from '../nemesis-types.js';
import { SCHEDULE_FORMAT, type PlannedFault, type Schedule } from '../schedule.js';

/**
 * An in-memory cluster: a Runtime and a ClusterProbe over the same state, plus a recorder, all
 * writing to one log so that the order of records and effects can be asserted. Partition i has
 * the replicas n(i), n(i+1), n(i+2) (RF3); a node is in sync in a partition when it is up, not
 * paused, reaches a majority both ways, and (after a restart) its catch-up of that partition is
 * done: `catchUpMs` after the restart, plus `staggerMs` per partition of the node before it.
 * The active owner stays while in sync, else the first in-sync replica takes over.
 */
export class FakeCluster implements Runtime, ClusterProbe {
  readonly kind = 'process' as const;
  readonly log: string[] = [];
  readonly times: Array<{ what: string; t: number }> = [];
  readonly events: Array<{ kind: string; detail: Record<string, unknown> }> = [];
  readonly starts: Array<FaultStartRecord & { id: number }> = [];
  readonly ended = new Set<number>();
  readonly state = new Map<string, 'up' | 'down' | 'paused'>();
  grudge: Grudge = {};
  cut: string[] = [];
  readonly clocks = new Map<string, ClockSetting>();
  modes: Record<string, ClockMode> | null = null;
  catchUpMs = 0;
  staggerMs = 0;
  leaderId: string | null = 'n1';
  probeThrows = false;
  failKill = false;
  failRestart = new Set<string>();
  /** nodes whose resume throws (a runtime that cannot undo a pause) */
  failResume = new Set<string>();
  /** partition() and cutClient() throw (a runtime that cannot change the rules) */
  failNet = false;
  /** heal() throws */
  failHeal = false;
  /** partitions reported with a failback under way: partition index -> node */
  readonly handoffs = new Map<number, string>();
  /** nodes the leader suspects (snapshot `suspected`) */
  suspects: string[] = [];
  /** admin requests refused before one is accepted */
  refuseAdmin = 0;
  /**
   * The member set (snapshot `members`, issue 14) the fake keeps: `join <n>` admits n at once,
   * `leave <n>` removes it (refused for the last member), `rebalance` changes nothing; null: the
   * fake reports no member set (a store without membership changes).
   */
  members: Array<{ id: string; state: 'joining' | 'member' | 'leaving' }> | null = null;
  membersVersion = 1;
  /** extra partitions reported unhealthy whatever happens */
  stuck = false;
  /** also report an RF1 partition on every node (store rf1, partition i on node i) */
  rf1 = false;
  private readonly restartedAt = new Map<string, number>();
  private readonly active = new Map<number, string | null>();
  private nextId = 1;
  private readonly t0 = performance.now();
  maxActive = 0;
  private activeNow = 0;

  constructor(readonly ids: string[] = ['n1', 'n2', 'n3', 'n4', 'n5']) {
    for (const n of ids) this.state.set(n, 'up');
    ids.forEach((_, i) => this.active.set(i, ids[i]));
  }
  now(): number {
    return performance.now() - this.t0;
  }
  private note(what: string): void {
    this.log.push(what);
    this.times.push({ what, t: this.now() });
  }
  private expectState(n: string, s: 'up' | 'down' | 'paused', op: string): void {
    if (this.state.get(n) !== s) throw new Error(`fake: ${op} ${n} while ${this.state.get(n)}`);
  }
  replicasOf(i: number): string[] {
    const n = this.ids.length;
    return [0, 1, 2].map((k) => this.ids[(i + k) % n]);
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
    if (this.state.get(n) === 'paused') this.state.set(n, 'up'); // SIGKILL reaches a frozen process too
    this.expectState(n, 'up', 'kill');
    this.note(`kill ${n}`);
    this.state.set(n, 'down');
  }
  async stop(n: string): Promise<void> {
    this.expectState(n, 'up', 'stop');
    this.note(`stop ${n}`);
    this.state.set(n, 'down');
  }
  async restart(n: string): Promise<void> {
    if (this.failRestart.has(n)) throw new Error(`restart ${n}: port in use`);
    this.expectState(n, 'down', 'restart');
    this.note(`restart ${n}`);
    this.state.set(n, 'up');
    this.restartedAt.set(n, this.now());
  }
  async pause(n: string): Promise<void> {
    this.expectState(n, 'up', 'pause');
    this.note(`pause ${n}`);
    this.state.set(n, 'paused');
  }
  async resume(n: string): Promise<void> {
    if (this.failResume.has(n)) throw new Error(`resume ${n}: the engine refused`);
    this.expectState(n, 'paused', 'resume');
    this.note(`resume ${n}`);
    this.state.set(n, 'up');
  }
  async partition(g: Grudge): Promise<void> {
    if (this.failNet) throw new Error('partition: iptables failed');
    this.note(`partition ${JSON.stringify(g)}`);
    this.grudge = g;
  }
  async cutClient(nodes: readonly string[]): Promise<void> {
    if (this.failNet) throw new Error('cut: iptables failed');
    this.note(`cut ${nodes.join(',')}`);
    this.cut = [...nodes];
  }
  async heal(): Promise<void> {
    if (this.failHeal) throw new Error('heal: iptables failed');
    this.note('heal');
    this.grudge = {};
    this.cut = [];
  }
  async setClock(n: string, s: ClockSetting): Promise<void> {
    this.note(`clock ${n} ${s.offsetMs} x${s.rate}`);
    this.clocks.set(n, s);
  }
  clockModes(): Readonly<Record<string, ClockMode>> | null {
    return this.modes;
  }
  isUp(n: string): boolean {
    return this.state.get(n) !== 'down';
  }
  nodeIds(): string[] {
    return [...this.ids];
  }
  async close(): Promise<void> {}

  // ClusterProbe
  private reachesMajority(n: string): boolean {
    const ok = this.ids.filter((m) => this.state.get(m) === 'up' && canReach(this.grudge, n, m) && canReach(this.grudge, m, n));
    return ok.length >= majoritySize(this.ids.length);
  }
  private inSync(n: string, i: number): boolean {
    if (this.state.get(n) !== 'up' || !this.reachesMajority(n)) return false;
    const r = this.restartedAt.get(n);
    if (r === undefined) return true;
    const rank = this.ids.map((_, k) => k).filter((k) => this.replicasOf(k).includes(n)).indexOf(i);
    return this.now() >= r + this.catchUpMs + this.staggerMs * rank;
  }
  async snapshot(): Promise<ClusterSnapshot> {
    if (this.probeThrows) throw new Error('probe down');
    const partitions: ClusterSnapshot['partitions'] = this.ids.map((_, i) => {
      const replicas = this.replicasOf(i);
      const inSync = replicas.filter((n) => this.inSync(n, i));
      let active = this.active.get(i) ?? null;
      if (active === null || !inSync.includes(active)) active = inSync[0] ?? null;
      this.active.set(i, active);
      const health = this.stuck ? 'Unavailable' : inSync.length === replicas.length ? 'Healthy' : inSync.length > 0 ? 'Degraded' : 'Unavailable';
      return { store: 'sync3', partition: i, replicationFactor: 3, replicas, active, health, inSync, handoffTo: this.handoffs.get(i) ?? null };
    });
    if (this.rf1) {
      this.ids.forEach((n, i) => {
        const up = this.state.get(n) === 'up';
        partitions.push({ store: 'rf1', partition: i, replicationFactor: 1, replicas: [n], active: up ? n : null, health: up ? 'Healthy' : 'Unavailable', inSync: up ? [n] : [], handoffTo: null });
      });
    }
    const leader = this.leaderId !== null && this.state.get(this.leaderId) === 'up' ? this.leaderId : null;
    return {
      leader,
      answered: this.ids.filter((n) => this.state.get(n) === 'up' && !this.cut.includes(n)),
      partitions,
      suspected: [...this.suspects],
      ...(this.members ? { members: { version: this.membersVersion, members: this.members.map((m) => ({ ...m })) } } : {}),
    };
  }
  /** Admin requests: a handoff of sync3/i moves the active at once; `refuseAdmin` refusals first. */
  async admin(command: string): Promise<{ ok: boolean; message: string; status: string }> {
    this.note(`admin ${command}`);
    if (this.refuseAdmin > 0) {
      this.refuseAdmin--;
      return { ok: false, message: 'another change is in flight', status: 'Unavailable' };
    }
    const m = /^handoff sync3\/(\d+) to (n\d+)$/.exec(command);
    if (m) this.active.set(Number(m[1]), m[2]);
    const j = /^(join|leave) (n\d+)$/.exec(command);
    if (j && this.members) {
      const listed = this.members.some((x) => x.id === j[2]);
      if (j[1] === 'join' && listed) return { ok: false, message: `join: ${j[2]} is already a member`, status: 'Unavailable' };
      if (j[1] === 'leave' && !listed) return { ok: false, message: `leave: ${j[2]} is not a member`, status: 'Unavailable' };
      if (j[1] === 'leave' && this.members.length === 1) return { ok: false, message: `leave: ${j[2]} is the last member holding copies`, status: 'Unavailable' };
      this.members = j[1] === 'join' ? [...this.members, { id: j[2], state: 'member' }] : this.members.filter((x) => x.id !== j[2]);
      this.membersVersion++;
    }
    return { ok: true, message: 'proposed', status: 'Ok' };
  }
  /** The active of partition i now (the fake's own state). */
  activeOf(i: number): string | null {
    return this.active.get(i) ?? null;
  }
  async partitions(): Promise<Array<{ store: string; partition: number; replicationFactor: number }>> {
    return this.ids.map((_, partition) => ({ store: 'sync3', partition, replicationFactor: 3 }));
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
    this.ended.add(id);
    this.activeNow--;
  }
  faultReopen(id: number): void {
    this.note(`reopen#${id}`);
    this.ended.delete(id);
    this.activeNow++;
  }
  caughtUpRecorded = new Map<number, number>();
  event(kind: string, detail: string): void {
    this.events.push({ kind, detail: JSON.parse(detail) as Record<string, unknown> });
  }
  detailOf(id: number): Record<string, any> {
    return JSON.parse(this.starts.find((s) => s.id === id)!.detail!) as Record<string, any>;
  }
}

export function recorderOf(c: FakeCluster): FaultRecorder {
  return {
    faultStart: (f) => c.faultStart(f),
    faultEnd: (id) => c.faultEnd(id),
    faultReopen: (id) => c.faultReopen(id),
    caughtUp: (id, ms) => {
      c.log.push(`caughtUp#${id}`);
      c.caughtUpRecorded.set(id, ms);
    },
    event: (k, d) => c.event(k, d),
  };
}

export function sched(faults: PlannedFault[], extra: Partial<Schedule> = {}): Schedule {
  const end = Math.max(0, ...faults.map((f) => f.atMs + f.durationMs));
  return {
    format: SCHEDULE_FORMAT,
    seed: 7,
    durationMs: end + 1,
    kinds: ['kill', 'stop', 'pause', 'partition', 'power', 'clock', 'client-cut'],
    preset: 'random',
    escalationTimeoutMs: 1000,
    evictionTimeoutMs: 5000,
    nodeCount: 5,
    beyondBudget: false,
    faults,
    ...extra,
  };
}

export function nemesisOn(c: FakeCluster, schedule: Schedule, o: Partial<NemesisOptions> = {}): Nemesis {
  return new Nemesis({ runtime: c, probe: c, recorder: recorderOf(c), clock: c, schedule, pollMs: 5, gateWaitMs: 2_000, catchUpWaitMs: 2_000, healTimeoutMs: 2_000, probeTimeoutMs: 200, ...o });
}

export const node = (n: string) => ({ role: 'node' as const, node: n });

/**
 * Virtual time (deterministic on a loaded machine): every test runs under vitest's fake timers
 * (setTimeout, setInterval, performance, Date); `drive` advances them 5 ms at a time, letting
 * promises settle in between, until the operation ends.
 */
export async function drive<T>(op: Promise<T>): Promise<T> {
  let done = false;
  op.then(
    () => (done = true),
    () => (done = true),
  );
  for (let i = 0; !done; i++) {
    if (i > 200_000) throw new Error('drive: still running after 1,000 s of virtual time');
    await vi.advanceTimersByTimeAsync(5);
  }
  return op;
}
export const t = (c: FakeCluster, what: RegExp): number => c.times.find((x) => what.test(x.what))!.t;

