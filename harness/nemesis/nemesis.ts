/**
 * The nemesis executor (DESIGN.md §3 "Nemesis", §4 faults in the ledger, §5 beyond-budget): it
 * plays a {@link Schedule} against a {@link Runtime}, resolving live targets (the leader, an
 * active owner) through a {@link ClusterProbe} and recording every fault start and end through a
 * {@link FaultRecorder} BEFORE the change takes effect, so the ledger never misses a fault that
 * happened.
 *
 * Within budget (the default) it waits, bounded, for every partition to be Healthy (and the
 * previous fault healed, a restarted node caught up) before each fault. Beyond budget faults run
 * on their planned times and may overlap; they never hit a node another active crash or pause
 * already holds. At the end, {@link Nemesis.healAll} undoes everything and waits for Healthy.
 */
import type { Grudge, Runtime } from '../runtime/runtime.js';
import { buildPartition, unionGrudges, type PartitionPlan } from './grudge.js';
import { createPrng, deriveSeed, type Prng } from './prng.js';
import { describeTarget, FAULT_KINDS, type FaultKind, type FaultTarget, type PlannedFault, type Schedule } from './schedule.js';

/** What the ledger records when a fault starts (table `faults`, ledger/schema.ts). */
export interface FaultStartRecord {
  kind: FaultKind;
  /** Nodes hit: the crashed / paused node, or for a partition the nodes cut off from the rest. */
  nodes: string[];
  /** The planned target, as {@link describeTarget} writes it: `leader`, `active:sync3/2`, `node:n1`, `random`. */
  target: string;
  /** The planned start on the run clock (ms since run start) = fault-phase start + atMs. */
  plannedMs: number;
  /** JSON text: schedule index, resolved node, topology, grudge, fallbacks. */
  detail?: string;
}

/**
 * Where the nemesis records faults (the lead's ledger writer implements it). Every method must be
 * durable (committed) before it returns: the nemesis applies the fault only afterwards. Times are
 * taken by the recorder from the run clock, except `caughtUp`'s `ms`.
 */
export interface FaultRecorder {
  /** Records a fault about to start; returns its id (faults.id). */
  faultStart(f: FaultStartRecord): number;
  /** Records the end of fault `id` (restart / resume / heal about to happen). */
  faultEnd(id: number): void;
  /**
   * The runtime call that applies fault `id` returned: the fault is surely in effect now (the
   * ledger's effective_ms; the crash of a node happened between faultStart and this call).
   */
  faultEffective?(id: number): void;
  /** The node restarted after crash fault `id` was back in sync at `ms` (run clock). */
  caughtUp(id: number, ms: number): void;
  /** A free-form timeline entry (events table): kind such as `fault-skipped`, detail JSON text. */
  event(kind: string, detail: string): void;
}

/**
 * Live answers about the cluster (the lead implements it over the metadata request). Any method
 * may throw or hang; the nemesis bounds each call by `probeTimeoutMs` and treats a failure as
 * "unknown" (not healthy, no leader, not caught up).
 */
export interface ClusterProbe {
  /** The current leader's node id, or null when there is none. */
  leader(): Promise<string | null>;
  /** The active owner of one partition of one store in the runtime map, or null. */
  activeOf(store: string, partition: number): Promise<string | null>;
  /**
   * Every partition of every store (the partition map). The harness feeds it to planSchedule's
   * `partitions` so that active-owner targets name real partitions; the executor does not call it.
   */
  partitions(): Promise<Array<{ store: string; partition: number }>>;
  /** Human-readable partitions that are not Healthy (e.g. `sync3/2 Degraded`); [] when all are. */
  unhealthy(): Promise<string[]>;
  /** Is the (restarted) node back in sync for every partition it holds? */
  caughtUp(node: string): Promise<boolean>;
}

/** The harness's run clock: milliseconds since the run started (monotonic). */
export interface Clock {
  now(): number;
}

/** Options of the executor. Every time is in ms. */
export interface NemesisOptions {
  runtime: Runtime;
  schedule: Schedule;
  clock: Clock;
  recorder: FaultRecorder;
  probe: ClusterProbe;
  /** Let faults overlap and skip the Healthy waits (DESIGN.md §5). Default: schedule.beyondBudget. */
  beyondBudget?: boolean;
  /** Within budget: how long to wait for a Healthy cluster before a fault; if it stays unhealthy the fault is skipped. Default 60,000. */
  healthyWaitMs?: number;
  /** How long to wait for a restarted node to catch up before moving on. Default 60,000. */
  catchUpWaitMs?: number;
  /** healAll(): how long to wait for every partition to be Healthy. Default 60,000. */
  healTimeoutMs?: number;
  /** Polling period of the probe. Default 200. */
  pollMs?: number;
  /** Bound on one probe call. Default 5,000. */
  probeTimeoutMs?: number;
}

/** Outcome of {@link Nemesis.healAll}; `reason` (one line) when not healed: the run is INCONCLUSIVE. */
export interface HealResult {
  healed: boolean;
  reason?: string;
}

/** Injected faults by kind (results.json `faults`). */
export type FaultCounts = Record<FaultKind, number>;

/** A fault that has started and not yet been undone. */
interface ActiveFault {
  id: number;
  kind: FaultKind;
  /** crash / pause: the node; partition: undefined. */
  node?: string;
  ended: boolean;
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
  private readonly active = new Map<number, ActiveFault>();
  /** Nodes held by an active crash (down) or pause fault. */
  private readonly held = new Map<string, 'down' | 'paused'>();
  private readonly grudges = new Map<number, Grudge>();
  /** Crash faults whose node was restarted but not yet seen caught up: id -> node. */
  private readonly pendingCatchUp = new Map<number, string>();
  private readonly injected: FaultCounts = zeroCounts();
  /** Serialises partition/heal calls (the runtime replaces its grudge on each call). */
  private netChain: Promise<void> = Promise.resolve();
  private phaseStart = 0;
  private started = false;

  /** @throws RangeError when a wait option is negative. */
  constructor(opts: NemesisOptions) {
    this.o = {
      ...opts,
      beyondBudget: opts.beyondBudget ?? opts.schedule.beyondBudget,
      healthyWaitMs: opts.healthyWaitMs ?? 60_000,
      catchUpWaitMs: opts.catchUpWaitMs ?? 60_000,
      healTimeoutMs: opts.healTimeoutMs ?? 60_000,
      pollMs: opts.pollMs ?? 200,
      probeTimeoutMs: opts.probeTimeoutMs ?? 5_000,
    };
    for (const k of ['healthyWaitMs', 'catchUpWaitMs', 'healTimeoutMs', 'pollMs', 'probeTimeoutMs'] as const) {
      if (!(this.o[k] >= 0)) throw new RangeError(`nemesis: ${k} must be >= 0 ms`);
    }
  }

  /** Faults injected so far, by kind (counted once the runtime applied them). */
  counts(): FaultCounts {
    return { ...this.injected };
  }

  /** Number of faults started and not yet undone. */
  activeCount(): number {
    return this.active.size;
  }

  /**
   * Plays the schedule from now (the fault phase starts at the call). Resolves when every fault
   * ran, or promptly after `signal` aborts, with every active fault undone (its end recorded
   * first). Restarted nodes not yet caught up are left to {@link healAll}.
   * @throws the first runtime or recorder error, after undoing the active faults; Error when
   * called twice.
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.started) throw new Error('nemesis: run() called twice');
    this.started = true;
    this.phaseStart = this.o.clock.now();
    const internal = new AbortController();
    const stop = AbortSignal.any([signal, internal.signal]);
    let firstError: unknown;
    const fail = (e: unknown): void => {
      if (firstError === undefined) firstError = e;
      internal.abort();
    };
    this.event('nemesis-start', { faults: this.o.schedule.faults.length, beyondBudget: this.o.beyondBudget });
    const faults = this.o.schedule.faults;
    if (this.o.beyondBudget) {
      const tasks: Promise<void>[] = [];
      for (let i = 0; i < faults.length && !stop.aborted; i++) {
        await sleep(this.phaseStart + faults[i].atMs - this.o.clock.now(), stop);
        if (stop.aborted) break;
        tasks.push(this.runFault(i, faults[i], stop).catch(fail));
      }
      await Promise.all(tasks);
    } else {
      let notBefore = this.phaseStart;
      for (let i = 0; i < faults.length && !stop.aborted; i++) {
        const f = faults[i];
        await sleep(Math.max(this.phaseStart + f.atMs, notBefore) - this.o.clock.now(), stop);
        if (stop.aborted) break;
        const unhealthy = await this.waitHealthy(this.o.healthyWaitMs, stop);
        if (stop.aborted) break;
        if (unhealthy.length > 0) {
          this.event('fault-skipped', { index: i, reason: `cluster not Healthy within ${this.o.healthyWaitMs} ms`, unhealthy: unhealthy.slice(0, 10) });
          continue;
        }
        try {
          await this.runFault(i, f, stop);
        } catch (e) {
          fail(e);
          break;
        }
        notBefore = this.o.clock.now() + f.calmMs;
      }
    }
    // prompt end: undo whatever is still active (abort or error)
    for (const id of [...this.active.keys()]) {
      try {
        await this.endFault(id);
      } catch (e) {
        fail(e);
      }
    }
    this.event('nemesis-end', { aborted: signal.aborted, counts: this.injected, error: firstError === undefined ? undefined : oneLine(firstError) });
    if (firstError !== undefined) throw firstError;
  }

  /**
   * End phase: ends every active fault (recorded first), heals all partition rules, resumes
   * paused nodes, restarts every node that is down, then waits up to `healTimeoutMs` for every
   * partition to be Healthy, and records catch-up of restarted nodes. Never throws: a runtime
   * error or a cluster that does not heal gives `{ healed: false, reason }` (one line).
   */
  async healAll(): Promise<HealResult> {
    this.event('heal-all', { active: this.active.size });
    // every step is tried even when an earlier one failed; the first failure is the reason
    const errors: string[] = [];
    const attempt = async (what: string, op: () => Promise<void>): Promise<void> => {
      try {
        await op();
      } catch (e) {
        errors.push(`${what}: ${oneLine(e)}`);
      }
    };
    for (const id of [...this.active.keys()]) await attempt(`ending fault ${id}`, () => this.endFault(id));
    await attempt('heal', () => this.net(() => this.o.runtime.heal()));
    this.grudges.clear();
    for (const node of this.o.runtime.nodeIds()) {
      if (!this.o.runtime.isUp(node)) {
        this.event('restart', { node, reason: 'down at heal-all' });
        await attempt(`restart ${node}`, () => this.o.runtime.restart(node));
      }
    }
    if (errors.length > 0) {
      const reason = `heal failed: ${errors[0]}${errors.length > 1 ? ` (and ${errors.length - 1} more)` : ''}`;
      this.event('heal-failed', { reason, errors });
      return { healed: false, reason };
    }
    const unhealthy = await this.waitHealthy(this.o.healTimeoutMs);
    for (const [id, node] of [...this.pendingCatchUp]) {
      if (await this.probeCall(() => this.o.probe.caughtUp(node), false)) this.markCaughtUp(id);
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

  // ------------------------------------------------------------------ one fault

  /** Starts fault i, holds it for its duration (or until abort), ends it, waits for catch-up. */
  private async runFault(index: number, f: PlannedFault, stop: AbortSignal): Promise<void> {
    const started = await this.startFault(index, f, stop);
    if (started === null) return;
    const { id, node } = started;
    await sleep(f.durationMs, stop);
    await this.endFault(id);
    if ((f.kind === 'kill' || f.kind === 'stop') && node !== undefined && !stop.aborted) {
      await this.waitCaughtUp(id, node, stop);
    }
  }

  /** Resolves the target, records the start, applies the fault. null when skipped. */
  private async startFault(index: number, f: PlannedFault, stop: AbortSignal): Promise<{ id: number; node?: string } | null> {
    const rng = createPrng(deriveSeed(this.o.schedule.seed, index));
    const nodes = this.o.runtime.nodeIds();
    const detail: Record<string, unknown> = { index };
    const skip = (reason: string): null => {
      this.event('fault-skipped', { index, kind: f.kind, target: describeTarget(f.target), reason });
      return null;
    };
    const plannedMs = this.phaseStart + f.atMs;
    const target = describeTarget(f.target);

    if (f.kind === 'partition') {
      const topology = f.topology ?? 'isolate';
      let plan: PartitionPlan;
      if (topology === 'halves' || topology === 'bridge') {
        if (nodes.length < 3) return skip(`${topology} needs at least 3 nodes`);
        plan = buildPartition(topology, nodes, { rng });
      } else {
        if (nodes.length < 2) return skip('a partition needs at least 2 nodes');
        const node = await this.resolveNode(f.target, rng, nodes, detail);
        if (stop.aborted) return null; // the phase ended while the probe answered
        if (node === null) return skip('no node to isolate');
        if (!nodes.includes(node)) return skip(`target ${node} is not a node of the cluster`);
        plan = buildPartition(topology, nodes, { rng, node });
      }
      Object.assign(detail, { topology, components: plan.components, bridge: plan.bridge, grudge: plan.grudge });
      const id = this.o.recorder.faultStart({ kind: 'partition', nodes: plan.cutOff, target, plannedMs, detail: JSON.stringify(detail) });
      this.active.set(id, { id, kind: 'partition', ended: false });
      this.grudges.set(id, plan.grudge);
      const union = unionGrudges([...this.grudges.values()]);
      await this.net(() => this.o.runtime.partition(union));
      this.o.recorder.faultEffective?.(id);
      this.injected.partition++;
      return { id };
    }

    const eligible = nodes.filter((n) => this.o.runtime.isUp(n) && !this.held.has(n));
    const node = await this.resolveNode(f.target, rng, eligible, detail);
    if (stop.aborted) return null; // the phase ended while the probe answered
    if (node === null) return skip('no eligible node (every node is down or held by another fault)');
    if (!nodes.includes(node)) return skip(`target ${node} is not a node of the cluster`);
    if (this.held.has(node) || !this.o.runtime.isUp(node)) return skip(`target ${node} is already ${this.held.get(node) ?? 'down'}`);
    // claim the node before any await so that an overlapping fault cannot pick it too
    this.held.set(node, f.kind === 'pause' ? 'paused' : 'down');
    detail.node = node;
    let id: number;
    try {
      id = this.o.recorder.faultStart({ kind: f.kind, nodes: [node], target, plannedMs, detail: JSON.stringify(detail) });
    } catch (e) {
      this.held.delete(node);
      throw e;
    }
    this.active.set(id, { id, kind: f.kind, node, ended: false });
    const rt = this.o.runtime;
    if (f.kind === 'kill') await rt.kill(node);
    else if (f.kind === 'stop') await rt.stop(node);
    else await rt.pause(node);
    this.o.recorder.faultEffective?.(id);
    this.injected[f.kind]++;
    return { id, node };
  }

  /**
   * The node a target names now. leader/active come from the probe; when it has no answer, a
   * random node of `candidates` stands in (noted in `detail.fallback`).
   */
  private async resolveNode(t: FaultTarget, rng: Prng, candidates: string[], detail: Record<string, unknown>): Promise<string | null> {
    const random = (): string | null => (candidates.length === 0 ? null : rng.pick(candidates));
    switch (t.role) {
      case 'node':
        return t.node;
      case 'random':
        return random();
      case 'leader': {
        const leader = await this.probeCall(() => this.o.probe.leader(), null);
        if (leader !== null) return leader;
        detail.fallback = 'no leader known: random node';
        return random();
      }
      case 'active': {
        const owner = await this.probeCall(() => this.o.probe.activeOf(t.store, t.partition), null);
        if (owner !== null) return owner;
        detail.fallback = `no active owner of ${t.store}/${t.partition} known: random node`;
        return random();
      }
    }
  }

  /** Ends fault `id` once: records the end, then undoes it (restart / resume / heal). */
  private async endFault(id: number): Promise<void> {
    const f = this.active.get(id);
    if (f === undefined || f.ended) return;
    f.ended = true;
    try {
      this.o.recorder.faultEnd(id);
      const rt = this.o.runtime;
      if (f.kind === 'partition') {
        this.grudges.delete(id);
        const rest = [...this.grudges.values()];
        await this.net(() => (rest.length === 0 ? rt.heal() : rt.partition(unionGrudges(rest))));
      } else if (f.node !== undefined) {
        if (f.kind === 'pause') {
          await rt.resume(f.node);
        } else {
          await rt.restart(f.node);
          this.pendingCatchUp.set(id, f.node);
        }
        this.held.delete(f.node);
      }
    } finally {
      this.active.delete(id);
    }
  }

  // ------------------------------------------------------------------ waiting

  /** Polls probe.unhealthy() until it is empty, `limitMs` passes or `signal` aborts; returns the last answer. */
  private async waitHealthy(limitMs: number, signal?: AbortSignal): Promise<string[]> {
    const deadline = this.o.clock.now() + limitMs;
    for (;;) {
      const u = await this.probeCall(() => this.o.probe.unhealthy(), ['cluster probe did not answer']);
      if (u.length === 0 || signal?.aborted || this.o.clock.now() >= deadline) return u;
      await sleep(Math.min(this.o.pollMs, deadline - this.o.clock.now()), signal);
    }
  }

  /** Polls probe.caughtUp(node) (bounded by catchUpWaitMs) and records when it is. */
  private async waitCaughtUp(id: number, node: string, signal: AbortSignal): Promise<void> {
    const deadline = this.o.clock.now() + this.o.catchUpWaitMs;
    for (;;) {
      if (await this.probeCall(() => this.o.probe.caughtUp(node), false)) {
        this.markCaughtUp(id);
        return;
      }
      if (signal.aborted) return;
      if (this.o.clock.now() >= deadline) {
        this.event('catch-up-timeout', { id, node, waitedMs: this.o.catchUpWaitMs });
        return;
      }
      await sleep(Math.min(this.o.pollMs, deadline - this.o.clock.now()), signal);
    }
  }

  private markCaughtUp(id: number): void {
    if (!this.pendingCatchUp.delete(id)) return;
    this.o.recorder.caughtUp(id, this.o.clock.now());
  }

  /** Runs a probe call bounded by probeTimeoutMs; `fallback` on error or time-out. */
  private async probeCall<T>(call: () => Promise<T>, fallback: T): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        call(),
        new Promise<T>((resolve) => {
          timer = setTimeout(() => resolve(fallback), this.o.probeTimeoutMs);
        }),
      ]);
    } catch {
      return fallback;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Serialises network changes so overlapping partitions install in order. */
  private net(op: () => Promise<void>): Promise<void> {
    const next = this.netChain.then(op, op);
    this.netChain = next.catch(() => undefined);
    return next;
  }

  private event(kind: string, detail: Record<string, unknown>): void {
    this.o.recorder.event(kind, JSON.stringify(detail));
  }
}

/** Every fault kind with a zero count (a starting point for results.json `faults`). */
export function zeroCounts(): FaultCounts {
  return Object.fromEntries(FAULT_KINDS.map((k) => [k, 0])) as FaultCounts;
}
