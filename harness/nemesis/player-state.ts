/**
 * The state one run of the player shares between its modules (every planned fault's status, the
 * faults in effect, held and amnesic nodes, the latest snapshot) and the primitives they all use.
 */
import type { Grudge } from '../runtime/runtime.js';
import type { ClusterSnapshot } from './budget.js';
import { zeroCounts, type FaultCounts, type FaultStartRecord, type NemesisOptions } from './nemesis-types.js';
import type { FaultKind, PlannedFault, RecordedKind } from './schedule.js';
import { StuckFaults, type StuckFault } from './stuck-faults.js';

/** The executor's options with every default filled in (NemesisOptions). */
export type PlayerOptions = Required<Omit<NemesisOptions, 'beyondBudget'>> & { beyondBudget: boolean };

/** What an earlier fault did, for triggers and `same` / `active-over` / `active-of` targets. */
export interface FaultStatus {
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
export type Unresolved = { why: string };

/** One ledger row in effect. */
export interface ActiveRecord {
  id: number;
  kind: RecordedKind;
  node?: string;
  ended: boolean;
}

/** A fault allowed to start: its rows recorded and its state counted; `apply` makes the change. */
export interface Started {
  holding: Holding;
  apply: () => Promise<void>;
}

/** A fault in effect, as the budget sees it (one per planned fault that started). */
export interface Holding {
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
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
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

/** The first line of an error's message (skip reasons, heal reasons, events). */
export function oneLine(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).split('\n')[0];
}

/** The shared state of one run of the player (one per Nemesis). */
export class PlayerState {
  readonly o: PlayerOptions;
  /** Nodes held down (crash) or frozen (pause) by a fault in effect. */
  readonly held = new Map<string, 'down' | 'paused'>();
  readonly holdings = new Map<number, Holding>();
  readonly status: FaultStatus[];
  /** Crash records whose node was restarted but not yet seen caught up: record id -> {node, index}. */
  readonly pendingCatchUp = new Map<number, { node: string; index: number }>();
  /** Nodes restarted after a crash fault and not yet seen rejoined (budget.ts B1). */
  readonly amnesic = new Set<string>();
  /** Nodes out now (paused, or cut off from a majority) and since when, run clock ms (budget.ts B4). */
  readonly outSince = new Map<string, number>();
  readonly injected: FaultCounts = zeroCounts();
  /** The nodes this nemesis's `join` requests brought in, in order (a `leave` prefers the latest). */
  readonly joined: string[] = [];
  /** Serialises runtime network calls (partition / cut) so that unions install in order. */
  private netChain: Promise<void> = Promise.resolve();
  /** Serialises fault starts: a budget check and the change it allows are one step. */
  private startChain: Promise<unknown> = Promise.resolve();
  /** The latest snapshot the probe gave (cluster-readback.ts), for triggers. */
  snap: ClusterSnapshot | null = null;
  /** Scenarios: names bound by faults that started (`bind`) -> node. */
  readonly bindings = new Map<string, string>();
  /**
   * Nodes an episode bound (`bind`: the zombie of a zombie-crash, the heir of a resync-crash),
   * reserved for that episode until each of its faults has started or will not: node -> the
   * episode's fault indexes ({@link episodeMembers}). A fault of another episode does not resolve
   * its target to them ({@link reservedAgainst}); generated schedules only (a scenario says
   * exactly what hits what).
   */
  readonly reserved = new Map<string, ReadonlySet<number>>();
  private wake: () => void = () => undefined;
  private changed: Promise<void> = new Promise((r) => (this.wake = r));
  /** Run clock, ms: when the fault phase started (run()). */
  phaseStart = 0;
  /** Faults whose undo failed: in effect although their rows were ended (stuck-faults.ts). */
  readonly stuck: StuckFaults;

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

  /**
   * Reserves `node`, bound by fault `index` (a `bind`), for that fault's episode. A scenario's
   * binds reserve nothing.
   */
  reserve(index: number, node: string): void {
    if (this.o.schedule.scenario !== undefined) return;
    this.reserved.set(node, episodeMembers(this.o.schedule.faults, index));
  }

  /**
   * The nodes fault `index` must not resolve a target to: those reserved by an episode it is not
   * part of. A reservation ends once each fault of its episode started or was skipped. In a mix of
   * faults, the opening's short isolation of an owner cut off a zombie-crash's zombie just as it
   * came back, and a resync-crash's pause froze it: the state the episode waited for never came.
   */
  reservedAgainst(index: number): string[] {
    const out: string[] = [];
    for (const [node, members] of this.reserved) {
      if ([...members].every((j) => this.status[j].started || this.status[j].skipped)) this.reserved.delete(node);
      else if (!members.has(index)) out.push(node);
    }
    return out;
  }

  /** Number of ledger fault rows started and not yet ended. */
  activeCount(): number {
    let n = 0;
    for (const h of this.holdings.values()) n += h.records.filter((r) => !r.ended).length;
    return n;
  }

  /** Records one ledger row of a fault about to start (before its change). */
  record(h: Holding, rec: FaultStartRecord): number {
    const id = this.o.recorder.faultStart(rec);
    h.records.push({ id, kind: rec.kind, ...(rec.kind === 'partition' ? {} : { node: rec.nodes[0] }), ended: false });
    return id;
  }

  /** The nodes the harness's traffic is cut from now. */
  cutNodes(): string[] {
    return [...this.holdings.values()].map((x) => x.cut).filter((x): x is string => x !== undefined);
  }

  /** A fault is in effect: count it, wake the triggers. */
  begun(index: number, kind: FaultKind): void {
    this.status[index].started = true;
    this.injected[kind]++;
    this.poke();
  }

  /**
   * The end of a fault's rows still open, recorded (in order, before the fault is undone, so a
   * row never ends after its undo): returns those rows, for {@link goOnAll} when the undo fails.
   */
  endOpen(h: Holding): ActiveRecord[] {
    const open = h.records.filter((r) => !r.ended);
    for (const r of open) {
      r.ended = true;
      this.o.recorder.faultEnd(r.id);
    }
    return open;
  }

  /** {@link goOn} for rows of one holding, each with the holding's nodes; rethrows `e`. */
  goOnAll(h: Holding, rows: readonly ActiveRecord[], e: unknown): never {
    return this.goOn(rows.map((r) => ({ id: r.id, kind: r.kind, nodes: h.nodes, index: h.index })), e);
  }

  /** The faults go on (their undo failed): their rows reopened (stuck-faults.ts); rethrows `e`. */
  goOn(list: readonly StuckFault[], e: unknown): never {
    for (const s of list) this.stuck.goesOn(s, e);
    throw e;
  }

  /** Undoes a stuck fault, whose continuing row was just ended; when that fails it goes on. */
  async undoOr(s: StuckFault, undo: () => Promise<void>): Promise<void> {
    await undo().catch((e: unknown) => this.goOn([s], e));
  }

  /** Wakes whatever waits on the next state change (triggers, the budget gate). */
  poke(): void {
    const wake = this.wake;
    this.changed = new Promise((r) => (this.wake = r));
    wake();
  }

  /** Resolves on the next state change, after `ms`, or on abort. */
  nextChange(ms: number, signal: AbortSignal): Promise<void> {
    return Promise.race([this.changed, sleep(ms, signal)]);
  }

  /** Runs `op` after every earlier start finished (a budget check and its change are one step). */
  locked<T>(op: () => Promise<T>): Promise<T> {
    const next = this.startChain.then(op, op);
    this.startChain = next.catch(() => undefined);
    return next;
  }

  /** Serialises network changes so overlapping partitions and cuts install in order. */
  net(op: () => Promise<void>): Promise<void> {
    const next = this.netChain.then(op, op);
    this.netChain = next.catch(() => undefined);
    return next;
  }

  /** Records a timeline event (the recorder's `event`), its detail as JSON text. */
  event(kind: string, detail: Record<string, unknown>): void {
    this.o.recorder.event(kind, JSON.stringify(detail));
  }
}

/**
 * The faults of the episode fault `i` binds a node for (`bind`), as indexes: `i`, and each later
 * fault that names the bound name (its trigger's `name`, a `bound` target) or refers to a fault of
 * the episode (its trigger's or its target's `fault`). References only point back, so one pass.
 */
export function episodeMembers(faults: readonly PlannedFault[], i: number): ReadonlySet<number> {
  const members = new Set([i]);
  const name = faults[i].bind;
  for (let j = i + 1; j < faults.length; j++) {
    const f = faults[j];
    const t = f.target as { role: string; fault?: number; name?: string };
    const byFault = (f.after?.fault !== undefined && members.has(f.after.fault)) || (t.fault !== undefined && members.has(t.fault));
    const byName = name !== undefined && (f.after?.name === name || (t.role === 'bound' && t.name === name));
    if (byFault || byName) members.add(j);
  }
  return members;
}
