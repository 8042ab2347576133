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
 *
 * This file is the player: each planned fault's wait, retries and skips, and the end phase. One
 * fault's start, hold and end are fault-lifecycle.ts, which hands each kind to its family's module
 * (fault-registry.ts: process-faults.ts, power-fault.ts, network-faults.ts, clock-fault.ts,
 * client-cut.ts, ownership-faults.ts, membership-faults.ts); the run's shared state is
 * player-state.ts.
 */
import { setMaxListeners } from 'node:events';
import { NORMAL_CLOCK } from '../runtime/faketime.js';
import { noteOut } from './budget-gate.js';
import { unhealthyPartitions } from './cluster-queries.js';
import { fetchSnapshot, noteCatchUp, watchLoop } from './cluster-readback.js';
import { endFault, holdFault, startFault } from './fault-lifecycle.js';
import type { FaultCounts, HealResult, NemesisOptions } from './nemesis-types.js';
import { oneLine, PlayerState, sleep, type Started } from './player-state.js';
import { createPrng, deriveSeed } from './prng.js';
import type { StuckFault } from './stuck-faults.js';
import { ADMIN_KINDS, describeTarget, type FaultKind, type PlannedFault } from './schedule.js';
import { describeEvent, waitTrigger } from './triggers.js';

const isAdminKind = (k: FaultKind): boolean => (ADMIN_KINDS as readonly FaultKind[]).includes(k);

/** The executor. One instance per run: `run()` once, then `healAll()`. */
export class Nemesis {
  private readonly ps: PlayerState;
  private started = false;

  /** @throws RangeError when a wait option is negative. */
  constructor(opts: NemesisOptions) {
    this.ps = new PlayerState(opts);
  }

  /** Scenarios: the names bound so far (name -> node), in binding order. */
  bound(): Record<string, string> {
    return Object.fromEntries(this.ps.bindings);
  }

  /** Faults injected so far, by planned kind (counted once the runtime applied them). */
  counts(): FaultCounts {
    return { ...this.ps.injected };
  }

  /** Number of ledger fault rows started and not yet ended. */
  activeCount(): number {
    return this.ps.activeCount();
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
    this.ps.phaseStart = this.ps.o.clock.now();
    const internal = new AbortController();
    const stop = AbortSignal.any([signal, internal.signal]);
    // every planned fault waits on the signal at once
    setMaxListeners(0, stop, signal);
    let firstError: unknown;
    const fail = (e: unknown): void => {
      if (firstError === undefined) firstError = e;
      internal.abort();
    };
    this.ps.event('nemesis-start', { faults: this.ps.o.schedule.faults.length, beyondBudget: this.ps.o.beyondBudget, preset: this.ps.o.schedule.preset });
    const watching = watchLoop(this.ps, stop);
    const tasks = this.ps.o.schedule.faults.map((f, i) => this.play(i, f, stop).catch(fail));
    await Promise.all(tasks);
    internal.abort(); // ends the watch loop
    await watching;
    // whatever is still in effect (a failed task's fault)
    for (const h of [...this.ps.holdings.values()]) {
      try {
        await endFault(this.ps, h);
      } catch (e) {
        fail(e);
      }
    }
    this.ps.event('nemesis-end', { aborted: signal.aborted, counts: this.ps.injected, error: firstError === undefined ? undefined : oneLine(firstError) });
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
    this.ps.event('heal-all', { active: this.activeCount(), stuck: this.ps.stuck.size });
    const errors: string[] = [];
    const attempt = async (what: string, op: () => Promise<void>): Promise<void> => {
      try {
        await op();
      } catch (e) {
        errors.push(`${what}: ${oneLine(e)}`);
      }
    };
    const rt = this.ps.o.runtime;
    for (const h of [...this.ps.holdings.values()]) await attempt(`ending fault ${h.index}`, () => endFault(this.ps, h));
    for (const s of this.ps.stuck.endAll(['pause'])) await attempt(`resume ${s.nodes[0]}`, () => this.unfreeze(s));
    for (const s of this.ps.stuck.endAll(['clock'])) await attempt(`clock of ${s.nodes[0]}`, () => this.ps.undoOr(s, () => rt.setClock(s.nodes[0], NORMAL_CLOCK)));
    const cuts = this.ps.stuck.endAll(['partition', 'client-cut']);
    await attempt('heal', () => this.ps.net(() => rt.heal()).catch((e: unknown) => this.ps.goOn(cuts, e)));
    for (const node of rt.nodeIds()) {
      if (!rt.isUp(node)) {
        const crashes = this.ps.stuck.endAll(['kill', 'stop'], node);
        this.ps.event('restart', { node, reason: 'down at heal-all' });
        await attempt(`restart ${node}`, async () => {
          await rt.restart(node).catch((e: unknown) => this.ps.goOn(crashes, e));
          for (const s of crashes) this.ps.pendingCatchUp.set(s.id, { node, index: s.index });
        });
      }
    }
    if (errors.length > 0) {
      const reason = `heal failed: ${errors[0]}${errors.length > 1 ? ` (and ${errors.length - 1} more)` : ''}`;
      this.ps.event('heal-failed', { reason, errors });
      return { healed: false, reason };
    }
    const deadline = this.ps.o.clock.now() + this.ps.o.healTimeoutMs;
    let unhealthy: string[] = ['cluster probe did not answer'];
    for (;;) {
      const snap = await fetchSnapshot(this.ps);
      if (snap) {
        noteCatchUp(this.ps, snap);
        unhealthy = unhealthyPartitions(snap);
      }
      if ((snap && unhealthy.length === 0) || this.ps.o.clock.now() >= deadline) break;
      await sleep(Math.min(this.ps.o.pollMs, deadline - this.ps.o.clock.now()));
    }
    if (unhealthy.length > 0) {
      const shown = unhealthy.slice(0, 5).join(', ') + (unhealthy.length > 5 ? `, and ${unhealthy.length - 5} more` : '');
      const reason = `cluster did not heal within ${this.ps.o.healTimeoutMs} ms: ${shown}`;
      this.ps.event('heal-timeout', { reason });
      return { healed: false, reason };
    }
    this.ps.event('healed', {});
    return { healed: true };
  }

  /**
   * A paused node whose resume failed: resumed now, or else killed (a `kill` row recorded first,
   * detail `replaces`: the pause's row) so that the restart of the down nodes brings it back.
   */
  private async unfreeze(s: StuckFault): Promise<void> {
    const rt = this.ps.o.runtime;
    const node = s.nodes[0];
    let why: unknown;
    try {
      await rt.resume(node);
      return;
    } catch (e) {
      why = e;
    }
    const id = this.ps.o.recorder.faultStart({ kind: 'kill', nodes: [node], target: `replaces:${s.id}`, plannedMs: this.ps.o.clock.now(), detail: JSON.stringify({ index: s.index, node, replaces: s.id, why: `resume failed: ${oneLine(why)}` }) });
    try {
      await rt.kill(node);
    } catch (e) {
      // neither resumed nor killed: it stays frozen (the pause goes on)
      this.ps.o.recorder.faultEnd(id);
      this.ps.goOn([s], e);
    }
    this.ps.o.recorder.faultEffective?.(id);
    this.ps.amnesic.add(node);
    this.ps.stuck.add({ id, kind: 'kill', nodes: [node], index: s.index });
  }

  // ------------------------------------------------------------------ one planned fault

  /** Waits for the fault's time and trigger, passes the budget, holds it, ends it. */
  private async play(index: number, f: PlannedFault, stop: AbortSignal): Promise<void> {
    const skip = (reason: string): void => {
      this.ps.status[index].skipped = true;
      this.ps.event('fault-skipped', { index, kind: f.kind, target: describeTarget(f.target), reason, ...(f.name !== undefined ? { step: f.name } : {}) });
      this.ps.poke();
    };
    try {
      await sleep(this.ps.phaseStart + f.atMs - this.ps.o.clock.now(), stop);
      if (stop.aborted) return;
      const triggered = f.after ? await waitTrigger(this.ps, f, stop) : undefined;
      if (stop.aborted) return;
      if (triggered && (triggered.trigger === 'missed' || triggered.trigger === 'unreachable') && (f.after!.onMiss ?? (this.ps.o.schedule.scenario !== undefined ? 'skip' : 'start')) === 'skip') {
        return skip(triggered.trigger === 'missed' ? `${describeEvent(f)} did not happen within ${f.after!.waitMs} ms` : `it waits on fault ${f.after!.fault}, which never started`);
      }
      const rng = createPrng(deriveSeed(this.ps.o.schedule.seed, index));
      const deadline = this.ps.o.clock.now() + this.ps.o.gateWaitMs;
      let firstRefusal: string | null = null;
      let started: Started | null = null;
      for (;;) {
        const r = await this.ps.locked(() => startFault(this.ps, index, f, rng, triggered, stop));
        if (r.started) {
          started = r.started;
          const node = this.ps.status[index].nodes[0];
          if (f.bind !== undefined && node !== undefined) {
            this.ps.bindings.set(f.bind, node);
            this.ps.reserve(index, node);
          }
          break;
        }
        if (stop.aborted) return;
        const why = r.skip ?? 'refused';
        // beyond budget nothing is waited for: a target already down or frozen is a skip
        if (r.final || (this.ps.o.beyondBudget && !isAdminKind(f.kind))) return skip(why);
        firstRefusal ??= why;
        // (an admin request is refused by the store, or has no node to go to, not by the budget)
        if (this.ps.o.clock.now() >= deadline) return skip(`${isAdminKind(f.kind) ? 'not possible' : 'not within the fault budget'} for ${this.ps.o.gateWaitMs} ms: ${why}`);
        await this.ps.nextChange(Math.max(this.ps.o.pollMs, 20), stop);
        if (stop.aborted) return;
      }
      noteOut(this.ps);
      if (firstRefusal !== null) this.ps.event('fault-waited', { index, kind: f.kind, reason: firstRefusal });
      // the change itself runs outside the start lock: the budget already counts the fault
      try {
        await started.apply();
      } catch (e) {
        this.ps.status[index].started = true; // in effect or not, it is not waited for any more
        throw e;
      }
      this.ps.begun(index, f.kind);
      await holdFault(this.ps, started.holding, f, stop);
      await endFault(this.ps, started.holding);
    } finally {
      if (!this.ps.status[index].started) this.ps.status[index].skipped = true;
    }
  }
}
