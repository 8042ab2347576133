/**
 * The nemesis executor (DESIGN.md §3 "Nemesis", §4 faults in the ledger, §5 beyond-budget; issues
 * 12 and 13): it plays a {@link Schedule} against a {@link FaultRuntime} (the Zaris nodes or any target's), resolving live targets (the
 * leader, an active owner, an in-sync replica, a replica catching up, the node a failback hands
 * to) through a {@link ClusterProbe}, and recording every fault's start and end through a
 * {@link FaultRecorder} BEFORE the change takes effect, so the ledger never misses a fault that
 * happened.
 *
 * Every planned fault runs on its own: it waits for its planned time, then for its trigger (an
 * earlier fault's node catching up or caught up, a failback under way, an earlier fault ended),
 * then for the fault budget (budget.ts: a connected majority up, holding an in-sync member of
 * every replicated partition, with this fault's effect added to every fault in effect). Within
 * budget a fault whose effect would break it waits (bounded by `gateWaitMs`, then it is skipped and
 * the skip recorded as an event); faults overlap wherever the budget allows. Beyond budget
 * nothing is checked but that a node is not already down or frozen by another fault.
 *
 * Recording (ledger `faults`): kill, stop, pause as one row per fault; a power failure as one kill
 * row per node (detail `power` = the schedule index); a partition with `nodes` = the nodes cut off
 * (one-way: both ends of the cut link) and `isolated` = the nodes that cannot reach a majority; a
 * flapping partition as one partition row per on-phase (detail `flap`); a clock fault as `clock`
 * with the node's mode and the rate or the jump; a client cut as `client-cut`. At the end,
 * {@link Nemesis.healAll} undoes everything and waits for Healthy.
 *
 * Admin requests (handoff, regenerate; issue 14's membership changes join, leave, rebalance) are
 * sent to the leader through the probe and recorded as ledger events `admin`, never as faults: an
 * ownership or membership change must lose nothing. A join goes to a running node outside the
 * member set, a leave to a member whose leaving keeps the voters' count of members; a refusal is
 * retried up to gateWaitMs. With spares (`voters`), the budget's majority and a partition's
 * `isolated` nodes count the voters only.
 */
import { setMaxListeners } from 'node:events';
import { NORMAL_CLOCK, type ClockSetting } from '../runtime/faketime.js';
import type { Grudge } from '../runtime/runtime.js';
import { budgetRefusal, evictionRefusal, withEffect, type ClusterSnapshot, type FaultState, type PartitionSnapshot } from './budget.js';
import { catchingUpNodes, nodeCaughtUp, unhealthyPartitions } from './cluster-queries.js';
import { buildPartition, isolatedNodes, unionGrudges, type PartitionPlan } from './grudge.js';
import { zeroCounts, type FaultCounts, type FaultStartRecord, type HealResult, type NemesisOptions } from './nemesis-types.js';
import { createPrng, deriveSeed, type Prng } from './prng.js';
import { StuckFaults, type StuckFault } from './stuck-faults.js';
import { ADMIN_KINDS, describeTarget, isMembershipKind, leaveCandidates, type FaultKind, type FaultTarget, type PlannedFault, type RecordedKind } from './schedule.js';

const isAdminKind = (k: FaultKind): boolean => (ADMIN_KINDS as readonly FaultKind[]).includes(k);

/** The probe a run hands the player (certify.ts imports it from here). */
export type { ClusterProbe } from './nemesis-types.js';

/** What an earlier fault did, for triggers and `same` / `active-over` / `active-of` targets. */
interface FaultStatus {
  started: boolean;
  /** The nodes it hit (crash, pause, clock, cut: the node; power: all; partition: the resolved node, else the cut-off ones). */
  nodes: string[];
  /** The partition its target was about (active, replica, active-over, active-of). */
  partition?: { store: string; partition: number };
  restarted: boolean;
  caughtUp: boolean;
  ended: boolean;
  /** It will never start (skipped, or the phase ended first): triggers on it stop waiting. */
  skipped: boolean;
}

/** Why a target has no node now (strict scenario targets wait on it, then the fault is skipped with it). */
type Unresolved = { why: string };

/** One ledger row in effect. */
interface ActiveRecord {
  id: number;
  kind: RecordedKind;
  node?: string;
  ended: boolean;
}

/** A fault allowed to start: its rows recorded and its state counted; `apply` makes the change. */
interface Started {
  holding: Holding;
  apply: () => Promise<void>;
}

/** A fault in effect, as the budget sees it (one per planned fault that started). */
interface Holding {
  index: number;
  kind: FaultKind;
  records: ActiveRecord[];
  nodes: string[];
  grudge?: Grudge;
  /** The grudge is installed now (a flapping one comes and goes). */
  installed: boolean;
  clock?: { node: string; rate: number };
  cut?: string;
  /** Run clock, ms: when it started, and its planned end (start + duration). */
  startedMs: number;
  untilMs: number;
}

/** Sleeps `ms` (<= 0: no sleep), or less when `signal` aborts. Never rejects. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (ms <= 0 || signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

function oneLine(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).split('\n')[0];
}

/** The executor. One instance per run: `run()` once, then `healAll()`. */
export class Nemesis {
  private readonly o: Required<Omit<NemesisOptions, 'beyondBudget'>> & { beyondBudget: boolean };
  /** Nodes held down (crash) or frozen (pause) by a fault in effect. */
  private readonly held = new Map<string, 'down' | 'paused'>();
  private readonly holdings = new Map<number, Holding>();
  private readonly status: FaultStatus[];
  /** Crash records whose node was restarted but not yet seen caught up: record id -> {node, index}. */
  private readonly pendingCatchUp = new Map<number, { node: string; index: number }>();
  /** Nodes restarted after a crash fault and not yet seen rejoined (budget.ts B1). */
  private readonly amnesic = new Set<string>();
  /** Nodes out now (paused, or cut off from a majority) and since when, run clock ms (budget.ts B4). */
  private readonly outSince = new Map<string, number>();
  private readonly injected: FaultCounts = zeroCounts();
  /** The nodes this nemesis's `join` requests brought in, in order (a `leave` prefers the latest). */
  private readonly joined: string[] = [];
  /** Serialises runtime network calls (partition / cut) so that unions install in order. */
  private netChain: Promise<void> = Promise.resolve();
  /** Serialises fault starts: a budget check and the change it allows are one step. */
  private startChain: Promise<unknown> = Promise.resolve();
  private snap: ClusterSnapshot | null = null;
  /** Scenarios: names bound by faults that started (`bind`) -> node. */
  private readonly bindings = new Map<string, string>();
  private wake: () => void = () => undefined;
  private changed: Promise<void> = new Promise((r) => (this.wake = r));
  private phaseStart = 0;
  private started = false;
  /** Faults whose undo failed: in effect although their rows were ended (stuck-faults.ts). */
  private readonly stuck: StuckFaults;

  /** @throws RangeError when a wait option is negative. */
  constructor(opts: NemesisOptions) {
    this.o = {
      ...opts,
      beyondBudget: opts.beyondBudget ?? opts.schedule.beyondBudget,
      gateWaitMs: opts.gateWaitMs ?? 30_000,
      catchUpWaitMs: opts.catchUpWaitMs ?? 60_000,
      healTimeoutMs: opts.healTimeoutMs ?? 60_000,
      pollMs: opts.pollMs ?? 200,
      probeTimeoutMs: opts.probeTimeoutMs ?? 5_000,
      voters: opts.voters ?? opts.runtime.nodeIds(),
    };
    for (const k of ['gateWaitMs', 'catchUpWaitMs', 'healTimeoutMs', 'pollMs', 'probeTimeoutMs'] as const) {
      if (!(this.o[k] >= 0)) throw new RangeError(`nemesis: ${k} must be >= 0 ms`);
    }
    this.status = opts.schedule.faults.map(() => ({ started: false, nodes: [], restarted: false, caughtUp: false, ended: false, skipped: false }));
    this.stuck = new StuckFaults(opts.recorder);
  }

  /** Scenarios: the names bound so far (name -> node), in binding order. */
  bound(): Record<string, string> {
    return Object.fromEntries(this.bindings);
  }

  /** Faults injected so far, by planned kind (counted once the runtime applied them). */
  counts(): FaultCounts {
    return { ...this.injected };
  }

  /** Number of ledger fault rows started and not yet ended. */
  activeCount(): number {
    let n = 0;
    for (const h of this.holdings.values()) n += h.records.filter((r) => !r.ended).length;
    return n;
  }

  /**
   * Plays the schedule from now (the fault phase starts at the call). Resolves when every fault
   * ran (or was skipped), or promptly after `signal` aborts, with every fault undone (its end
   * recorded first). Restarted nodes not yet caught up are left to {@link healAll}.
   * @throws the first runtime or recorder error, after undoing the faults in effect; Error when
   * called twice.
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.started) throw new Error('nemesis: run() called twice');
    this.started = true;
    this.phaseStart = this.o.clock.now();
    const internal = new AbortController();
    const stop = AbortSignal.any([signal, internal.signal]);
    // every planned fault waits on the signal at once
    setMaxListeners(0, stop, signal);
    let firstError: unknown;
    const fail = (e: unknown): void => {
      if (firstError === undefined) firstError = e;
      internal.abort();
    };
    this.event('nemesis-start', { faults: this.o.schedule.faults.length, beyondBudget: this.o.beyondBudget, preset: this.o.schedule.preset });
    const watching = this.watchLoop(stop);
    const tasks = this.o.schedule.faults.map((f, i) => this.play(i, f, stop).catch(fail));
    await Promise.all(tasks);
    internal.abort(); // ends the watch loop
    await watching;
    // whatever is still in effect (a failed task's fault)
    for (const h of [...this.holdings.values()]) {
      try {
        await this.end(h);
      } catch (e) {
        fail(e);
      }
    }
    this.event('nemesis-end', { aborted: signal.aborted, counts: this.injected, error: firstError === undefined ? undefined : oneLine(firstError) });
    if (firstError !== undefined) throw firstError;
  }

  /**
   * End phase: ends every fault in effect (recorded first), heals every partition rule and client
   * cut, resumes paused nodes, restarts every node that is down, then waits up to `healTimeoutMs`
   * for every partition to be Healthy, and records catch-up of restarted nodes. A fault whose undo
   * failed before (stuck-faults.ts) is undone again, its continuing row ended first; a node that
   * still cannot be resumed is killed instead (a `kill` row, detail `replaces`) and restarted.
   * Never throws: a runtime error or a cluster that does not heal gives `{ healed: false, reason }`
   * (one line).
   */
  async healAll(): Promise<HealResult> {
    this.event('heal-all', { active: this.activeCount(), stuck: this.stuck.size });
    const errors: string[] = [];
    const attempt = async (what: string, op: () => Promise<void>): Promise<void> => {
      try {
        await op();
      } catch (e) {
        errors.push(`${what}: ${oneLine(e)}`);
      }
    };
    const rt = this.o.runtime;
    for (const h of [...this.holdings.values()]) await attempt(`ending fault ${h.index}`, () => this.end(h));
    for (const s of this.stuck.endAll(['pause'])) await attempt(`resume ${s.nodes[0]}`, () => this.unfreeze(s));
    for (const s of this.stuck.endAll(['clock'])) await attempt(`clock of ${s.nodes[0]}`, () => this.undoOr(s, () => rt.setClock(s.nodes[0], NORMAL_CLOCK)));
    const cuts = this.stuck.endAll(['partition', 'client-cut']);
    await attempt('heal', () => this.net(() => rt.heal()).catch((e: unknown) => this.goOn(cuts, e)));
    for (const node of rt.nodeIds()) {
      if (!rt.isUp(node)) {
        const crashes = this.stuck.endAll(['kill', 'stop'], node);
        this.event('restart', { node, reason: 'down at heal-all' });
        await attempt(`restart ${node}`, async () => {
          await rt.restart(node).catch((e: unknown) => this.goOn(crashes, e));
          for (const s of crashes) this.pendingCatchUp.set(s.id, { node, index: s.index });
        });
      }
    }
    if (errors.length > 0) {
      const reason = `heal failed: ${errors[0]}${errors.length > 1 ? ` (and ${errors.length - 1} more)` : ''}`;
      this.event('heal-failed', { reason, errors });
      return { healed: false, reason };
    }
    const deadline = this.o.clock.now() + this.o.healTimeoutMs;
    let unhealthy: string[] = ['cluster probe did not answer'];
    for (;;) {
      const snap = await this.fetch();
      if (snap) {
        this.noteCatchUp(snap);
        unhealthy = unhealthyPartitions(snap);
      }
      if ((snap && unhealthy.length === 0) || this.o.clock.now() >= deadline) break;
      await sleep(Math.min(this.o.pollMs, deadline - this.o.clock.now()));
    }
    if (unhealthy.length > 0) {
      const shown = unhealthy.slice(0, 5).join(', ') + (unhealthy.length > 5 ? `, and ${unhealthy.length - 5} more` : '');
      const reason = `cluster did not heal within ${this.o.healTimeoutMs} ms: ${shown}`;
      this.event('heal-timeout', { reason });
      return { healed: false, reason };
    }
    this.event('healed', {});
    return { healed: true };
  }

  /** The faults go on (their undo failed): their rows reopened (stuck-faults.ts); rethrows `e`. */
  private goOn(list: readonly StuckFault[], e: unknown): never {
    for (const s of list) this.stuck.goesOn(s, e);
    throw e;
  }

  /** Undoes a stuck fault, whose continuing row was just ended; when that fails it goes on. */
  private async undoOr(s: StuckFault, undo: () => Promise<void>): Promise<void> {
    await undo().catch((e: unknown) => this.goOn([s], e));
  }

  /**
   * A paused node whose resume failed: resumed now, or else killed (a `kill` row recorded first,
   * detail `replaces`: the pause's row) so that the restart of the down nodes brings it back.
   */
  private async unfreeze(s: StuckFault): Promise<void> {
    const rt = this.o.runtime;
    const node = s.nodes[0];
    let why: unknown;
    try {
      await rt.resume(node);
      return;
    } catch (e) {
      why = e;
    }
    const id = this.o.recorder.faultStart({ kind: 'kill', nodes: [node], target: `replaces:${s.id}`, plannedMs: this.o.clock.now(), detail: JSON.stringify({ index: s.index, node, replaces: s.id, why: `resume failed: ${oneLine(why)}` }) });
    try {
      await rt.kill(node);
    } catch (e) {
      // neither resumed nor killed: it stays frozen (the pause goes on)
      this.o.recorder.faultEnd(id);
      this.goOn([s], e);
    }
    this.o.recorder.faultEffective?.(id);
    this.amnesic.add(node);
    this.stuck.add({ id, kind: 'kill', nodes: [node], index: s.index });
  }

  // ------------------------------------------------------------------ one planned fault

  /** Waits for the fault's time and trigger, passes the budget, holds it, ends it. */
  private async play(index: number, f: PlannedFault, stop: AbortSignal): Promise<void> {
    const skip = (reason: string): void => {
      this.status[index].skipped = true;
      this.event('fault-skipped', { index, kind: f.kind, target: describeTarget(f.target), reason, ...(f.name !== undefined ? { step: f.name } : {}) });
      this.poke();
    };
    try {
      await sleep(this.phaseStart + f.atMs - this.o.clock.now(), stop);
      if (stop.aborted) return;
      const triggered = f.after ? await this.waitTrigger(f, stop) : undefined;
      if (stop.aborted) return;
      if (triggered && (triggered.trigger === 'missed' || triggered.trigger === 'unreachable') && (f.after!.onMiss ?? (this.o.schedule.scenario !== undefined ? 'skip' : 'start')) === 'skip') {
        return skip(triggered.trigger === 'missed' ? `${describeEvent(f)} did not happen within ${f.after!.waitMs} ms` : `it waits on fault ${f.after!.fault}, which never started`);
      }
      const rng = createPrng(deriveSeed(this.o.schedule.seed, index));
      const deadline = this.o.clock.now() + this.o.gateWaitMs;
      let firstRefusal: string | null = null;
      let started: Started | null = null;
      for (;;) {
        const r = await this.locked(() => this.start(index, f, rng, triggered, stop));
        if (r.started) {
          started = r.started;
          const node = this.status[index].nodes[0];
          if (f.bind !== undefined && node !== undefined) this.bindings.set(f.bind, node);
          break;
        }
        if (stop.aborted) return;
        const why = r.skip ?? 'refused';
        // beyond budget nothing is waited for: a target already down or frozen is a skip
        if (r.final || (this.o.beyondBudget && !isAdminKind(f.kind))) return skip(why);
        firstRefusal ??= why;
        // (an admin request is refused by the store, or has no node to go to, not by the budget)
        if (this.o.clock.now() >= deadline) return skip(`${isAdminKind(f.kind) ? 'not possible' : 'not within the fault budget'} for ${this.o.gateWaitMs} ms: ${why}`);
        await this.nextChange(Math.max(this.o.pollMs, 20), stop);
        if (stop.aborted) return;
      }
      this.noteOut();
      if (firstRefusal !== null) this.event('fault-waited', { index, kind: f.kind, reason: firstRefusal });
      // the change itself runs outside the start lock: the budget already counts the fault
      try {
        await started.apply();
      } catch (e) {
        this.status[index].started = true; // in effect or not, it is not waited for any more
        throw e;
      }
      this.begun(index, f.kind);
      if (f.flap) await this.flap(started.holding, f, stop);
      else await sleep(f.durationMs, stop);
      await this.end(started.holding);
    } finally {
      if (!this.status[index].started) this.status[index].skipped = true;
    }
  }

  /**
   * Waits for a fault's trigger (bounded by its waitMs). Returns how it went, for the fault's
   * detail (`trigger`: `unreachable` when the fault it waits on never started, `missed` when the
   * event did not come in time, `aborted`).
   */
  private async waitTrigger(f: PlannedFault, stop: AbortSignal): Promise<Record<string, unknown>> {
    const t = f.after!;
    const deadline = this.o.clock.now() + t.waitMs;
    const ref = t.fault === undefined ? undefined : this.status[t.fault];
    const nodeOf = (): string | undefined => t.node ?? (t.name !== undefined ? this.bindings.get(t.name) : undefined);
    // node-caught-up: the node must be seen down, frozen or behind after the wait began
    let sawBehind = false;
    // promoted: the partition's active when the wait began (from the first snapshot seen)
    let baseline: string | null | undefined;
    // handoff-started, failback: the snapshot looked at last, and how the handoff was seen
    let prevSnap: ClusterSnapshot | null = null;
    let seen: 'in-progress' | 'committed' | undefined;
    const fired = (): boolean => {
      const s = this.snap;
      switch (t.event) {
        case 'catching-up':
          // from its restart on (a fast catch-up must not make the trigger wait for nothing)
          return ref !== undefined && ref.restarted;
        case 'caught-up':
          return ref !== undefined && ref.caughtUp;
        case 'ended':
          return ref !== undefined && ref.ended;
        case 'started':
          return ref !== undefined && ref.started;
        case 'failback':
        case 'handoff-started': {
          if (s === null) return false;
          const to = t.event === 'handoff-started' ? nodeOf() : undefined;
          if (t.event === 'handoff-started' && (t.node !== undefined || t.name !== undefined) && to === undefined) return false;
          const wanted = (p: PartitionSnapshot, n: string): boolean =>
            (t.store === undefined || (p.store === t.store && p.partition === t.partition)) && (to === undefined || n === to) && (ref === undefined || ref.nodes.includes(n));
          if (s.partitions.some((p) => p.handoffTo !== null && wanted(p, p.handoffTo))) {
            seen = 'in-progress';
            return true;
          }
          // A handoff to a caught-up node commits in tens of ms (the store's handoff-ready round:
          // runs/20261130T184018Z-1, 35 ms), mostly between two polls: a partition whose active
          // moved since the previous snapshot to another node while the old active is still in
          // sync was handed off (a failover moves away from an active that left the in-sync set).
          const prev = prevSnap;
          prevSnap = s;
          if (prev === null || prev === s) return false;
          const moved = s.partitions.some((p) => {
            const q = prev.partitions.find((x) => x.store === p.store && x.partition === p.partition);
            return q !== undefined && q.active !== null && p.active !== null && p.active !== q.active && p.inSync.includes(q.active) && wanted(p, p.active);
          });
          if (moved) seen = 'committed';
          return moved;
        }
        case 'node-caught-up': {
          const n = nodeOf();
          if (n === undefined || s === null) return false;
          const caught = this.o.runtime.isUp(n) && !this.held.has(n) && nodeCaughtUp(s, n);
          if (!caught) sawBehind = true;
          return sawBehind && caught;
        }
        case 'promoted': {
          if (s === null) return false;
          const p = s.partitions.find((x) => x.store === t.store && x.partition === t.partition);
          if (p === undefined) return false;
          if (baseline === undefined) {
            baseline = p.active;
            return false;
          }
          return p.active !== null && p.active !== baseline;
        }
        case 'suspected': {
          const n = nodeOf();
          return n !== undefined && s !== null && (s.suspected ?? []).includes(n);
        }
      }
      return false;
    };
    const t0 = this.o.clock.now();
    for (;;) {
      if (ref !== undefined && ref.skipped && !ref.started) return { event: t.event, fault: t.fault, trigger: 'unreachable' };
      if (fired()) {
        const waited = Math.round(this.o.clock.now() - t0);
        await sleep(t.delayMs, stop);
        return { event: t.event, fault: t.fault, waitedMs: waited, ...(seen !== undefined ? { handoff: seen } : {}) };
      }
      if (stop.aborted) return { event: t.event, fault: t.fault, trigger: 'aborted' };
      if (this.o.clock.now() >= deadline) return { event: t.event, fault: t.fault, trigger: 'missed', waitedMs: t.waitMs };
      await this.nextChange(Math.min(this.o.pollMs, Math.max(1, deadline - this.o.clock.now())), stop);
    }
  }

  /**
   * One attempt to start fault `index`: a fresh snapshot, the target, the budget, then record and
   * apply. `final` skips are not retried (no such node, impossible topology).
   */
  private async start(
    index: number,
    f: PlannedFault,
    rng: Prng,
    triggered: Record<string, unknown> | undefined,
    stop: AbortSignal,
  ): Promise<{ started?: Started; skip?: string; final?: boolean }> {
    if (stop.aborted) return {};
    const rt = this.o.runtime;
    const nodes = rt.nodeIds();
    const snap = await this.fetch();
    if (stop.aborted) return {};
    const detail: Record<string, unknown> = { index, ...(f.name !== undefined ? { step: f.name } : {}) };
    if (triggered) detail.after = triggered;
    const plannedMs = this.phaseStart + f.atMs;
    const target = describeTarget(f.target);
    const st = this.status[index];
    const usable = (n: string): boolean => rt.isUp(n) && !this.held.has(n);
    const check = (effect: Parameters<typeof withEffect>[1]): string | null => {
      if (snap) {
        // the partitions not fully in sync when it started (why the budget allowed it, for the report)
        const behind = Object.fromEntries(snap.partitions.filter((p) => p.replicationFactor > 1 && p.replicas.some((r) => !p.inSync.includes(r))).map((p) => [`${p.store}/${p.partition}`, p.inSync]));
        if (Object.keys(behind).length > 0) detail.inSync = behind;
      }
      if (this.o.beyondBudget) return null;
      const after = withEffect(this.faultState(), effect);
      return budgetRefusal(after, snap) ?? evictionRefusal(snap, this.outIntervals(after, effect, f.durationMs), Math.max(0, this.o.schedule.evictionTimeoutMs - 10_000));
    };

    if (f.kind === 'partition') {
      const topology = f.topology ?? 'isolate';
      let plan: PartitionPlan;
      if ((topology === 'halves' && f.target.role === 'random') || topology === 'bridge') {
        if (nodes.length < 3) return { skip: `${topology} needs at least 3 nodes`, final: true };
        plan = buildPartition(topology, nodes, { rng });
      } else {
        if (nodes.length < (topology === 'halves' ? 3 : 2)) return { skip: `a ${topology} partition needs at least ${topology === 'halves' ? 3 : 2} nodes`, final: true };
        const node = this.resolve(f.target, index, rng, nodes, snap, detail, f.except);
        if (typeof node !== 'string') return { skip: node?.why ?? 'no node to cut off' };
        if (!nodes.includes(node)) return { skip: `target ${node} is not a node of the cluster`, final: true };
        let other: string | undefined;
        if (f.peer) {
          const d: Record<string, unknown> = {};
          const p = this.resolve(f.peer.target, index, rng, nodes.filter((n) => n !== node), snap, d, f.peer.except);
          if (typeof p !== 'string') return { skip: `the other end: ${p?.why ?? 'no node'}` };
          if (p === node) return { skip: `the other end resolved to ${node} itself` };
          if (!nodes.includes(p)) return { skip: `target ${p} is not a node of the cluster`, final: true };
          other = p;
          detail.peer = p;
        }
        plan = buildPartition(topology, nodes, { rng, node, direction: f.direction, ...(other !== undefined ? { other } : {}) });
        detail.node = node;
        st.nodes = [node];
        if (f.peer?.bind !== undefined && other !== undefined) this.bindings.set(f.peer.bind, other);
      }
      const refusal = check({ grudge: plan.grudge });
      if (refusal) return { skip: refusal };
      const isolated = isolatedNodes(nodes, plan.grudge, this.o.voters);
      Object.assign(detail, { topology, components: plan.components, bridge: plan.bridge, grudge: plan.grudge, isolated, ...(f.flap ? { flap: { ...f.flap, cycle: 0 } } : {}) });
      if (st.nodes.length === 0) st.nodes = plan.cutOff;
      const h: Holding = { startedMs: this.o.clock.now(), untilMs: this.o.clock.now() + f.durationMs, index, kind: 'partition', records: [], nodes: plan.cutOff, grudge: plan.grudge, installed: false };
      this.holdings.set(index, h);
      const id = this.record(h, { kind: 'partition', nodes: plan.cutOff, target, plannedMs, isolated, detail: JSON.stringify(detail) });
      return { started: { holding: h, apply: () => this.install(h, id) } };
    }

    if (f.kind === 'client-cut') {
      const cutNow = new Set([...this.holdings.values()].map((x) => x.cut).filter((x): x is string => x !== undefined));
      const node = this.resolve(f.target, index, rng, nodes.filter((n) => !cutNow.has(n)), snap, detail, f.except);
      if (typeof node !== 'string') return { skip: node?.why ?? 'no node to cut the client from' };
      if (!nodes.includes(node)) return { skip: `target ${node} is not a node of the cluster`, final: true };
      if (cutNow.has(node)) return { skip: `the client is already cut from ${node}` };
      detail.node = node;
      st.nodes = [node];
      const h: Holding = { startedMs: this.o.clock.now(), untilMs: this.o.clock.now() + f.durationMs, index, kind: 'client-cut', records: [], nodes: [node], installed: false, cut: node };
      this.holdings.set(index, h);
      const id = this.record(h, { kind: 'client-cut', nodes: [node], target, plannedMs, detail: JSON.stringify(detail) });
      const apply = async (): Promise<void> => {
        await this.net(() => rt.cutClient(this.cutNodes()));
        this.o.recorder.faultEffective?.(id);
      };
      return { started: { holding: h, apply } };
    }

    if (f.kind === 'clock') {
      const modes = rt.clockModes();
      if (modes === null) return { skip: 'clock faults are not enabled in this run', final: true };
      const node = this.resolve(f.target, index, rng, nodes.filter(usable), snap, detail, f.except);
      if (typeof node !== 'string') return { skip: node?.why ?? 'no node for a clock fault' };
      if (!nodes.includes(node)) return { skip: `target ${node} is not a node of the cluster`, final: true };
      if (!usable(node)) return { skip: `target ${node} is ${this.held.get(node) ?? 'down'}` };
      const mode = modes[node];
      const plan = f.clock ?? { rate: 0.5, jumpMs: 30_000 };
      // a scenario asks for one kind of clock fault: a node whose libfaketime mode cannot make it is no target
      if (this.o.schedule.scenario !== undefined && ((mode === 'wall' && plan.jumpMs === 0) || (mode === 'monotonic' && plan.rate === 1))) {
        const fit = Object.keys(modes).filter((n) => modes[n] !== mode).join(', ');
        return { skip: `${node} runs libfaketime in ${mode} mode, which cannot make a ${mode === 'wall' ? 'clock rate' : 'wall-clock jump'} (nodes in the other mode: ${fit || 'none'})` };
      }
      const setting: ClockSetting = mode === 'wall' ? { offsetMs: plan.jumpMs, rate: 1 } : { offsetMs: 0, rate: plan.rate };
      const refusal = check({ clock: { node, rate: setting.rate } });
      if (refusal) return { skip: refusal };
      Object.assign(detail, { node, mode, ...(mode === 'wall' ? { offsetMs: setting.offsetMs } : { rate: setting.rate }) });
      st.nodes = [node];
      const h: Holding = { startedMs: this.o.clock.now(), untilMs: this.o.clock.now() + f.durationMs, index, kind: 'clock', records: [], nodes: [node], installed: false, clock: { node, rate: setting.rate } };
      this.holdings.set(index, h);
      const id = this.record(h, { kind: 'clock', nodes: [node], target, plannedMs, detail: JSON.stringify(detail) });
      const apply = async (): Promise<void> => {
        await rt.setClock(node, setting);
        this.o.recorder.faultEffective?.(id);
      };
      return { started: { holding: h, apply } };
    }

    // crash (kill, stop, power) and pause: one node, or several for a power failure
    if (isAdminKind(f.kind)) return this.startAdmin(index, f, rng, nodes, snap, detail);
    const first = this.resolve(f.target, index, rng, nodes.filter(usable), snap, detail, f.except);
    if (typeof first !== 'string') return { skip: first?.why ?? 'no eligible node (every node is down or held by another fault)' };
    if (!nodes.includes(first)) return { skip: `target ${first} is not a node of the cluster`, final: true };
    if (!usable(first)) return { skip: `target ${first} is already ${this.held.get(first) ?? 'down'}` };
    let victims = [first];
    if (f.kind === 'power') {
      const count = Math.min(f.count ?? 2, nodes.length);
      const others = rng.shuffle(nodes.filter((n) => n !== first && usable(n)));
      if (others.length < count - 1) return { skip: `a power failure of ${count} nodes needs ${count} up nodes` };
      victims = [first, ...others.slice(0, count - 1)];
    }
    const refusal = check(f.kind === 'pause' ? { paused: victims } : { down: victims });
    if (refusal) return { skip: refusal };
    for (const v of victims) this.held.set(v, f.kind === 'pause' ? 'paused' : 'down');
    st.nodes = victims;
    const recKind: RecordedKind = f.kind === 'power' ? 'kill' : (f.kind as RecordedKind);
    const h: Holding = { startedMs: this.o.clock.now(), untilMs: this.o.clock.now() + f.durationMs, index, kind: f.kind, records: [], nodes: victims, installed: false };
    this.holdings.set(index, h);
    try {
      for (const v of victims) {
        const d = { ...detail, node: v, ...(f.kind === 'power' ? { power: index, group: victims } : {}) };
        h.records.push({ id: this.o.recorder.faultStart({ kind: recKind, nodes: [v], target, plannedMs, detail: JSON.stringify(d) }), kind: recKind, node: v, ended: false });
      }
    } catch (e) {
      for (const v of victims) if (!h.records.some((r) => r.node === v)) this.held.delete(v);
      if (h.records.length === 0) this.holdings.delete(index);
      throw e;
    }
    // a power failure: every node's SIGKILL sent at once (within a few ms of each other)
    const apply = async (): Promise<void> => {
      await Promise.all(
        h.records.map(async (r) => {
          if (f.kind === 'kill' || f.kind === 'power') await rt.kill(r.node!);
          else if (f.kind === 'stop') await rt.stop(r.node!);
          else await rt.pause(r.node!);
          this.o.recorder.faultEffective?.(r.id);
        }),
      );
    };
    return { started: { holding: h, apply } };
  }

  /** Records one ledger row of a fault about to start (before its change). */
  private record(h: Holding, rec: FaultStartRecord): number {
    const id = this.o.recorder.faultStart(rec);
    h.records.push({ id, kind: rec.kind, ...(rec.kind === 'partition' ? {} : { node: rec.nodes[0] }), ended: false });
    return id;
  }

  /** The nodes the harness's traffic is cut from now. */
  private cutNodes(): string[] {
    return [...this.holdings.values()].map((x) => x.cut).filter((x): x is string => x !== undefined);
  }

  /** A fault is in effect: count it, wake the triggers. */
  private begun(index: number, kind: FaultKind): void {
    this.status[index].started = true;
    this.injected[kind]++;
    this.poke();
  }

  /**
   * The node a target names now, or why there is none. When the role has no answer (no leader
   * known, nobody catching up, no failback), a random node of `candidates` stands in (noted in
   * `detail.fallback`), but in a scenario (strict targets): there the fault waits (like a budget
   * refusal) and is skipped if the role never answers. `except` (scenarios): names whose bound
   * nodes the target must not be.
   */
  private resolve(t: FaultTarget, index: number, rng: Prng, candidates: string[], snap: ClusterSnapshot | null, detail: Record<string, unknown>, except?: readonly string[]): string | Unresolved | null {
    const strict = this.o.schedule.scenario !== undefined;
    const excluded = new Set((except ?? []).map((n) => this.bindings.get(n)).filter((n): n is string => n !== undefined));
    const pool = candidates.filter((n) => !excluded.has(n));
    const random = (why?: string): string | Unresolved | null => {
      if (why && strict) return { why };
      if (why) detail.fallback = `${why}: random node`;
      return pool.length === 0 ? null : rng.pick(pool);
    };
    const one = (n: string | null | undefined, why: string): string | Unresolved | null => {
      if (n === null || n === undefined) return random(why);
      if (excluded.has(n)) return strict ? { why: `${describeTarget(t)} is ${n}, which it must not be (${(except ?? []).filter((x) => this.bindings.get(x) === n).join(', ')})` } : random(why);
      return n;
    };
    const st = this.status[index];
    const part = (store: string, partition: number): PartitionSnapshot | undefined => snap?.partitions.find((p) => p.store === store && p.partition === partition);
    switch (t.role) {
      case 'node':
        return one(t.node, `node ${t.node}`);
      case 'random':
        return random();
      case 'leader':
        return one(snap?.leader, 'no leader known');
      case 'active': {
        st.partition = { store: t.store, partition: t.partition };
        return one(part(t.store, t.partition)?.active, `no active owner of ${t.store}/${t.partition} known`);
      }
      case 'preferred': {
        st.partition = { store: t.store, partition: t.partition };
        return one(part(t.store, t.partition)?.replicas[0], `partition ${t.store}/${t.partition} not known`);
      }
      case 'bound':
        return one(this.bindings.get(t.name), `nothing is bound to ${t.name} (the fault that binds it never started)`);
      case 'replica': {
        st.partition = { store: t.store, partition: t.partition };
        const p = part(t.store, t.partition);
        const rs = (p?.inSync ?? []).filter((n) => n !== p?.active && pool.includes(n));
        return rs.length > 0 ? rng.pick(rs) : random(`no in-sync replica of ${t.store}/${t.partition} but its owner${excluded.size > 0 ? ' and the excluded' : ''}`);
      }
      case 'heir': {
        // the first in-sync member other than the active in partition-map order (schedule.ts). Only
        // the aimed episodes (lag-crash, resync-crash, zombie-crash) name it, and a random node
        // stands in for none of them: without an in-sync heir the fault waits, like a budget
        // refusal, and is skipped if none comes (a stand-in makes the episode miss its aim)
        st.partition = { store: t.store, partition: t.partition };
        const p = part(t.store, t.partition);
        const h = (p?.replicas ?? []).find((n) => n !== p?.active && p?.inSync.includes(n) && pool.includes(n));
        return h ?? { why: `no in-sync replica of ${t.store}/${t.partition} but its owner${excluded.size > 0 ? ' and the excluded' : ''} (an aimed target waits for one)` };
      }
      case 'catching-up': {
        const cs = snap ? catchingUpNodes(snap).filter((n) => pool.includes(n)) : [];
        return cs.length > 0 ? rng.pick(cs) : random('no replica catching up');
      }
      case 'failback': {
        const hs = snap ? [...new Set(snap.partitions.map((p) => p.handoffTo).filter((n): n is string => n !== null && !excluded.has(n)))].sort() : [];
        return hs.length > 0 ? rng.pick(hs) : random('no failback under way');
      }
      case 'same': {
        const n = this.status[t.fault]?.nodes[0];
        return one(n, `fault ${t.fault} hit no node`);
      }
      case 'active-over': {
        const x = this.status[t.fault]?.nodes[0];
        const ps = (snap?.partitions ?? []).filter((p) => p.replicationFactor > 1 && p.active !== null && !excluded.has(p.active) && (x === undefined || (p.replicas.includes(x) && p.active !== x)));
        if (ps.length === 0) return random(`no partition with an owner over ${x ?? `fault ${t.fault}'s node`}`);
        // a partition where that node still catches up, when there is one (the dangerous moment)
        const behind = x === undefined ? [] : ps.filter((p) => !p.inSync.includes(x));
        const p = rng.pick(behind.length > 0 ? behind : ps);
        if (behind.length > 0) detail.behind = x;
        st.partition = { store: p.store, partition: p.partition };
        return p.active;
      }
      case 'outside': {
        // a running node the member set does not list (a spare, a node that left)
        const ms = snap?.members;
        if (!ms) return { why: 'the cluster reports no member set (metadata members)' };
        const listed = new Set(ms.members.map((m) => m.id));
        const out = pool.filter((n) => !listed.has(n));
        if (out.length === 0) return { why: `no running node outside the member set (${ms.members.map((m) => m.id).join(', ')}): nobody to join` };
        return rng.pick(out);
      }
      case 'member': {
        // a member whose leave keeps at least the voters' count of members (schedule.ts leaveCandidates)
        const ms = snap?.members;
        if (!ms) return { why: 'the cluster reports no member set (metadata members)' };
        const cands = leaveCandidates(ms.members, this.o.schedule.nodeCount, this.joined).filter((n) => pool.includes(n));
        if (cands.length === 0) {
          const pending = ms.members.filter((m) => m.state !== 'member');
          return { why: pending.length > 0 ? `a membership change is pending (${pending.map((m) => `${m.id} ${m.state}`).join(', ')})` : `${ms.members.length} members: a leave would leave fewer than ${this.o.schedule.nodeCount}` };
        }
        // mostly a member that owns partitions now: its leave moves ownership by the fenced
        // handoff, the step where a move can lose acknowledged writes (a spare that joined owns
        // none: draining it only copies; with it preferred, a planted bug that names the new owner
        // active before its copy is in sync went unnoticed in 2 of 4 runs of 150 s), else the node
        // that joined last half of the time, else any candidate
        const owners = cands.filter((n) => snap?.partitions.some((p) => p.active === n));
        if (owners.length > 0 && rng.chance(0.75)) return rng.pick(owners);
        return this.joined.some((n) => cands[0] === n) && rng.chance(0.5) ? cands[0] : rng.pick(cands);
      }
      case 'active-of': {
        const of = this.status[t.fault]?.partition;
        if (of === undefined) return random(`fault ${t.fault} was about no partition`);
        st.partition = of;
        return one(part(of.store, of.partition)?.active, `no active owner of ${of.store}/${of.partition} known`);
      }
    }
  }

  /**
   * An ownership change on demand (handoff, regenerate): resolves the node to hand to, sends the
   * admin request through the probe, and records it as a ledger event `admin` (not a fault: it
   * must lose nothing). A refusal (a change in flight, the node not in sync) is retried like a
   * budget refusal, up to gateWaitMs.
   */
  private async startAdmin(index: number, f: PlannedFault, rng: Prng, nodes: string[], snap: ClusterSnapshot | null, detail: Record<string, unknown>): Promise<{ started?: Started; skip?: string; final?: boolean }> {
    const probe = this.o.probe;
    if (!probe.admin) return { skip: 'this cluster probe cannot send admin requests', final: true };
    if (isMembershipKind(f.kind)) return this.startMembership(index, f, rng, nodes, snap, detail);
    if (!f.admin) return { skip: `a ${f.kind} fault names no partition`, final: true };
    const { store, partition } = f.admin;
    const st = this.status[index];
    let command: string;
    if (f.kind === 'handoff') {
      const to = this.resolve(f.target, index, rng, nodes, snap, detail, f.except);
      if (typeof to !== 'string') return { skip: to?.why ?? 'no node to hand off to' };
      if (!nodes.includes(to)) return { skip: `target ${to} is not a node of the cluster`, final: true };
      command = `handoff ${store}/${partition} to ${to}`;
      st.nodes = [to];
    } else {
      command = `regenerate ${store}/${partition}`;
      const active = snap?.partitions.find((p) => p.store === store && p.partition === partition)?.active;
      st.nodes = active ? [active] : [];
    }
    let r: { ok: boolean; message: string; status: string };
    try {
      r = await probe.admin(command);
    } catch (e) {
      return { skip: `${command}: ${oneLine(e)}` };
    }
    if (!r.ok) return { skip: `${command}: ${r.status}: ${r.message}` };
    this.event('admin', { ...detail, command, status: r.status, message: r.message });
    st.partition = { store, partition };
    const now = this.o.clock.now();
    const h: Holding = { startedMs: now, untilMs: now, index, kind: f.kind, records: [], nodes: st.nodes, installed: false };
    this.holdings.set(index, h);
    return { started: { holding: h, apply: async () => undefined } };
  }

  /**
   * A membership change (issue 14): `join <node>` (target `outside` or a named node), `leave
   * <node>` (target `member` or a named node), `rebalance`; sent through the probe's admin request
   * and recorded as a ledger event `admin` with the member set it was asked against (not a fault:
   * a move must lose nothing). A refusal (a change pending, the last member holding copies) is
   * retried like a budget refusal, up to gateWaitMs, then the change is skipped with the store's
   * reason.
   */
  private async startMembership(index: number, f: PlannedFault, rng: Prng, nodes: string[], snap: ClusterSnapshot | null, detail: Record<string, unknown>): Promise<{ started?: Started; skip?: string; final?: boolean }> {
    const st = this.status[index];
    let command: string;
    let node: string | null = null;
    if (f.kind === 'rebalance') {
      command = 'rebalance';
    } else {
      // a node outside the member set can join while it runs: down or frozen it cannot take copies
      const usable = (n: string): boolean => this.o.runtime.isUp(n) && !this.held.has(n);
      const to = this.resolve(f.target, index, rng, nodes.filter(usable), snap, detail, f.except);
      if (typeof to !== 'string') return { skip: to?.why ?? `no node to ${f.kind}` };
      if (!nodes.includes(to)) return { skip: `target ${to} is not a node of the cluster`, final: true };
      node = to;
      command = `${f.kind} ${to}`;
    }
    const before = snap?.members;
    let r: { ok: boolean; message: string; status: string };
    try {
      r = await this.o.probe.admin!(command);
    } catch (e) {
      return { skip: `${command}: ${oneLine(e)}` };
    }
    if (!r.ok) return { skip: `${command}: ${r.status}: ${r.message}` };
    this.event('admin', { ...detail, kind: f.kind, command, ...(node !== null ? { node } : {}), ...(before ? { membersBefore: before } : {}), status: r.status, message: r.message });
    st.nodes = node !== null ? [node] : [];
    if (f.kind === 'join' && node !== null) this.joined.push(node);
    const now = this.o.clock.now();
    const h: Holding = { startedMs: now, untilMs: now, index, kind: f.kind, records: [], nodes: st.nodes, installed: false };
    this.holdings.set(index, h);
    return { started: { holding: h, apply: async () => undefined } };
  }

  /** The faults in effect, as the budget sees them. */
  private faultState(): FaultState {
    const down = new Set<string>();
    const paused = new Set<string>();
    for (const n of this.o.runtime.nodeIds()) if (!this.o.runtime.isUp(n)) down.add(n);
    for (const [n, how] of this.held) (how === 'down' ? down : paused).add(n);
    const clocks = new Map<string, number>();
    const grudges: Grudge[] = [];
    for (const h of this.holdings.values()) {
      if (h.grudge) grudges.push(h.grudge);
      if (h.clock) clocks.set(h.clock.node, h.clock.rate);
    }
    return { nodes: this.o.runtime.nodeIds(), voters: this.o.voters, down, paused, amnesic: new Set(this.amnesic), grudge: unionGrudges(grudges), clocks };
  }

  /** The nodes out (paused, or cut off from a majority) in a state. */
  private outNodes(s: FaultState): Set<string> {
    return new Set([...s.paused, ...isolatedNodes([...s.nodes], s.grudge, s.voters)].filter((n) => !s.down.has(n)));
  }

  /**
   * Every node out after a change, with how long it stays out continuously: since it went out
   * (now when it is not out yet), until the latest planned end of the faults keeping it out (the
   * new fault's included, `durationMs` from now).
   */
  private outIntervals(after: FaultState, effect: Parameters<typeof withEffect>[1], durationMs: number): Map<string, { since: number; until: number }> {
    const now = this.o.clock.now();
    const out = new Map<string, { since: number; until: number }>();
    const touched = (h: { nodes: string[]; grudge?: Grudge }, n: string): boolean => h.nodes.includes(n) || (h.grudge !== undefined && Object.entries(h.grudge).some(([to, from]) => to === n || from.includes(n)));
    for (const n of this.outNodes(after)) {
      let until = now;
      for (const h of this.holdings.values()) if (touched(h, n)) until = Math.max(until, h.untilMs);
      if ((effect.paused ?? []).includes(n) || (effect.grudge && touched({ nodes: [], grudge: effect.grudge }, n))) until = Math.max(until, now + durationMs);
      out.set(n, { since: this.outSince.get(n) ?? now, until });
    }
    return out;
  }

  /** Updates when each node went out (after every start and end). */
  private noteOut(): void {
    const now = this.o.clock.now();
    const out = this.outNodes(this.faultState());
    for (const n of out) if (!this.outSince.has(n)) this.outSince.set(n, now);
    for (const n of [...this.outSince.keys()]) if (!out.has(n)) this.outSince.delete(n);
  }

  /** Installs a partition's cut, recorded as row `id` just before. */
  private async install(h: Holding, id: number): Promise<void> {
    h.installed = true;
    await this.installGrudges();
    this.o.recorder.faultEffective?.(id);
  }

  /** The union of every installed grudge, as the runtime's one grudge (client cuts untouched). */
  private installGrudges(): Promise<void> {
    return this.net(() => this.o.runtime.partition(unionGrudges([...this.holdings.values()].filter((x) => x.installed && x.grudge).map((x) => x.grudge!))));
  }

  /** A flapping partition: on for onMs, off for offMs, over and over until its duration ends; one ledger row per on-phase. */
  private async flap(h: Holding, f: PlannedFault, stop: AbortSignal): Promise<void> {
    const end = this.o.clock.now() + f.durationMs;
    const first = h.records[0];
    const detail = { index: h.index, topology: f.topology, grudge: h.grudge, isolated: isolatedNodes(this.o.runtime.nodeIds(), h.grudge!, this.o.voters), nodes: h.nodes };
    for (let cycle = 0; ; cycle++) {
      if (cycle > 0) {
        const id = this.record(h, {
          kind: 'partition',
          nodes: h.nodes,
          target: describeTarget(f.target),
          plannedMs: this.phaseStart + f.atMs,
          isolated: detail.isolated,
          detail: JSON.stringify({ ...detail, flap: { ...f.flap, cycle, of: first.id } }),
        });
        await this.install(h, id);
      }
      await sleep(Math.min(f.flap!.onMs, end - this.o.clock.now()), stop);
      await this.endRecords(h);
      if (stop.aborted || this.o.clock.now() + f.flap!.offMs >= end) return;
      await sleep(f.flap!.offMs, stop);
      if (stop.aborted || this.o.clock.now() >= end) return;
    }
  }

  /** Ends a partition's rows in effect and removes its cut (it stays reserved in the budget until end()). */
  private async endRecords(h: Holding): Promise<void> {
    const open = h.records.filter((r) => !r.ended);
    if (open.length === 0) return;
    for (const r of open) {
      r.ended = true;
      this.o.recorder.faultEnd(r.id);
    }
    h.installed = false;
    // the cut still there: its rows go on (stuck-faults.ts)
    await this.installGrudges().catch((e: unknown) => this.goOn(open.map((r) => ({ id: r.id, kind: r.kind, nodes: h.nodes, index: h.index })), e));
  }

  /** Ends a fault once: records the ends, then undoes it (restart / resume / heal / clock restore). */
  private async end(h: Holding): Promise<void> {
    if (!this.holdings.has(h.index)) return;
    const rt = this.o.runtime;
    const st = this.status[h.index];
    try {
      if (h.kind === 'partition') {
        await this.endRecords(h);
      } else if (h.kind === 'client-cut') {
        const open = h.records.filter((r) => !r.ended);
        for (const r of open) (r.ended = true), this.o.recorder.faultEnd(r.id);
        h.cut = undefined;
        await this.net(() => rt.cutClient(this.cutNodes())).catch((e: unknown) => this.goOn(open.map((r) => ({ id: r.id, kind: r.kind, nodes: h.nodes, index: h.index })), e));
      } else if (isAdminKind(h.kind)) {
        // an ownership or membership change is not undone: the store fails back by itself where it
        // should, and a leave is followed by a planned join
      } else if (h.kind === 'clock') {
        const open = h.records.filter((r) => !r.ended);
        for (const r of open) (r.ended = true), this.o.recorder.faultEnd(r.id);
        await rt.setClock(h.clock!.node, NORMAL_CLOCK).catch((e: unknown) => this.goOn(open.map((r) => ({ id: r.id, kind: r.kind, nodes: h.nodes, index: h.index })), e));
      } else {
        const open = h.records.filter((r) => !r.ended);
        for (const r of open) {
          r.ended = true;
          this.o.recorder.faultEnd(r.id);
        }
        try {
          // (a crash whose runtime call failed may have left its node up: nothing to restart there)
          const undo = h.kind === 'pause' ? open : open.filter((r) => !rt.isUp(r.node!));
          if (h.kind !== 'pause') for (const r of undo) this.amnesic.add(r.node!);
          const done = await Promise.allSettled(undo.map((r) => (h.kind === 'pause' ? rt.resume(r.node!) : rt.restart(r.node!))));
          const failed = undo.filter((_, i) => done[i].status === 'rejected');
          if (h.kind !== 'pause') {
            for (const r of undo) if (!failed.includes(r)) this.pendingCatchUp.set(r.id, { node: r.node!, index: h.index });
            if (failed.length === 0) st.restarted = true;
          }
          if (failed.length > 0) this.goOn(failed.map((r) => ({ id: r.id, kind: r.kind, nodes: [r.node!], index: h.index })), (done[undo.indexOf(failed[0])] as PromiseRejectedResult).reason);
        } finally {
          for (const r of open) this.held.delete(r.node!);
        }
      }
    } finally {
      this.holdings.delete(h.index);
      this.noteOut();
      st.ended = true;
      this.poke();
    }
  }

  // ------------------------------------------------------------------ watching

  /** Refreshes the snapshot every pollMs while the phase runs: triggers and catch-up records. */
  private async watchLoop(stop: AbortSignal): Promise<void> {
    while (!stop.aborted) {
      const snap = await this.fetch();
      if (snap) this.noteCatchUp(snap);
      this.poke();
      await sleep(this.o.pollMs, stop);
    }
  }

  /**
   * Records catch-up of restarted nodes seen in sync everywhere; forgets amnesia of nodes seen
   * rejoined: listed in sync somewhere, or (issue 14: a spare, a node that left) answering while
   * the partition map gives it no copy to catch up.
   */
  private noteCatchUp(snap: ClusterSnapshot): void {
    const rejoined = (n: string): boolean => snap.partitions.some((p) => p.inSync.includes(n)) || (snap.answered.includes(n) && !snap.partitions.some((p) => p.replicas.includes(n)));
    for (const n of [...this.amnesic]) if (this.o.runtime.isUp(n) && rejoined(n)) this.amnesic.delete(n);
    for (const [id, { node, index }] of [...this.pendingCatchUp]) {
      if (!nodeCaughtUp(snap, node)) continue;
      this.pendingCatchUp.delete(id);
      this.o.recorder.caughtUp(id, this.o.clock.now());
      if (![...this.pendingCatchUp.values()].some((p) => p.index === index)) this.status[index].caughtUp = true;
    }
  }

  /** A fresh snapshot, bounded by probeTimeoutMs; null when the probe failed. Kept for triggers. */
  private async fetch(): Promise<ClusterSnapshot | null> {
    let timer: NodeJS.Timeout | undefined;
    try {
      const s = await Promise.race([
        this.o.probe.snapshot(),
        new Promise<null>((resolve) => {
          timer = setTimeout(() => resolve(null), this.o.probeTimeoutMs);
        }),
      ]);
      if (s) this.snap = s;
      return s;
    } catch {
      return null;
    } finally {
      clearTimeout(timer);
    }
  }

  private poke(): void {
    const wake = this.wake;
    this.changed = new Promise((r) => (this.wake = r));
    wake();
  }

  /** Resolves on the next state change, after `ms`, or on abort. */
  private nextChange(ms: number, signal: AbortSignal): Promise<void> {
    return Promise.race([this.changed, sleep(ms, signal)]);
  }

  /** Runs `op` after every earlier start finished (a budget check and its change are one step). */
  private locked<T>(op: () => Promise<T>): Promise<T> {
    const next = this.startChain.then(op, op);
    this.startChain = next.catch(() => undefined);
    return next;
  }

  /** Serialises network changes so overlapping partitions and cuts install in order. */
  private net(op: () => Promise<void>): Promise<void> {
    const next = this.netChain.then(op, op);
    this.netChain = next.catch(() => undefined);
    return next;
  }

  private event(kind: string, detail: Record<string, unknown>): void {
    this.o.recorder.event(kind, JSON.stringify(detail));
  }
}

/** One phrase for a fault's trigger event (skip reasons): `step cut-a ended`, `promoted sync3/0`, ... */
export function describeEvent(f: PlannedFault): string {
  const t = f.after;
  if (!t) return 'no event';
  const who = t.node ?? t.name;
  const part = t.store !== undefined ? ` ${t.store}/${t.partition}` : '';
  switch (t.event) {
    case 'node-caught-up':
      return `caught-up ${who}`;
    case 'suspected':
      return `suspected ${who}`;
    case 'promoted':
      return `promoted${part}`;
    case 'handoff-started':
      return `handoff-started${part}${who !== undefined ? ` to ${who}` : ''}`;
    default:
      return `${t.event} of fault ${t.fault ?? '?'}`;
  }
}
