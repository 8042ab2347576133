import { assignAll } from '../partitioning.js';
import type { ClusterConfig } from '../cluster-config.js';
import type { RuntimeEntry } from '../cluster-messages.js';
import type { DurabilityChecker } from './sim-durability.js';
import type { FaultStep, FaultTarget, SimSchedule } from './sim-schedule.js';
import { describeEntry, POLL_MS, type Link, type SimNode } from './sim-world.js';
import type { SimStats } from './sim-result.js';

/**
 * What the simulation's nemesis needs of the simulator: the virtual clock and event queue, the
 * nodes and links, crash / restart / pause / resume / link breaks, the runtime map as the nodes
 * hold it, the checkers, counters and trace. Times are virtual ms.
 */
export interface SimNemesisHost {
  readonly now: number;
  readonly s: SimSchedule;
  readonly config: ClusterConfig;
  readonly nodes: readonly SimNode[];
  readonly byId: ReadonlyMap<string, SimNode>;
  readonly links: Link[][];
  /** Per ordered node pair, the number of partition faults cutting that direction now. */
  readonly cuts: number[][];
  readonly pkeys: readonly string[];
  readonly stats: SimStats;
  readonly durability: DurabilityChecker;
  /** Faults may start (the workload phase). */
  readonly faultsOpen: boolean;
  at(time: number, fn: () => void): void;
  crash(x: SimNode, why: string): void;
  restart(x: SimNode): void;
  pause(x: SimNode): void;
  resume(x: SimNode): void;
  breakLink(l: Link, why: string): void;
  /** The highest committed entry of a partition any node holds. */
  bestEntry(pkey: string): RuntimeEntry | undefined;
  /** The member is the node's current, running incarnation. */
  current(m: { node: string; inc: string }): boolean;
  /** Every node up holds the cluster's latest committed map. */
  mapCurrent(): boolean;
  allHealthy(): boolean;
  servingActive(pkey: string): SimNode | null;
  trace(line: string | (() => string)): void;
  violate(invariant: string, detail: string): never;
}

/**
 * The simulation's fault driver: runs each fault step of a schedule at its time (crashes, pauses,
 * partitions, aimed cuts, strips of in-sync sets, lag-crashes), gated by the schedule's budget, and
 * watches that a sole surviving in-sync member takes over within the bound. The ends of running
 * faults are kept in {@link faultEnds} (the simulator heals them all at the workload's end).
 */
export class SimNemesis {
  private readonly h: SimNemesisHost;
  /** Ends of the faults running now. */
  readonly faultEnds: Array<() => void> = [];
  /** Sole in-sync survivors that must be serving their partition by a deadline. */
  readonly survivorWatches: Array<{ pkey: string; node: string; inc: string; epoch: number; victims: Set<string>; deadline: number; done: boolean }> = [];

  constructor(host: SimNemesisHost) {
    this.h = host;
  }


  fault(f: FaultStep, workloadEnd: number): void {
    if (!this.h.faultsOpen) return;
    switch (f.kind) {
      case 'crash':
        return this.crashFault(f, workloadEnd);
      case 'strip':
        return this.stripFault(f, workloadEnd);
      case 'lag-crash':
        return this.lagCrashFault(f, workloadEnd);
      case 'membership':
        return this.membershipFault(f, this.h.now + Math.max(f.durationMs, POLL_MS));
      case 'pause': {
        const x = this.resolve(f);
        if (!x.core || x.paused) return;
        this.h.pause(x);
        const end = (): void => this.h.resume(x);
        this.faultEnds.push(end);
        this.h.at(this.h.now + f.durationMs, () => this.endFault(end));
        return;
      }
      default:
        return f.target.kind === 'async-active' ? this.aimedCut(f, workloadEnd) : this.partitionFault(f);
    }
  }

  /**
   * A partition fault aimed at an async active (`async-active`): waits (polling, until the
   * workload's end) for an async partition whose active is up, not the leader, and has another
   * current in-sync member to be replaced by, and for every node up, rejoined and running (with
   * one down or still rejoining after a restart, the cut can leave no majority to replace the
   * active: a leader steps down and the cut ends with nothing decided), then cuts that active
   * off; skipped if none comes.
   */
  private aimedCut(f: FaultStep, workloadEnd: number): void {
    if (!this.h.faultsOpen) return;
    const pkey = this.downCount() === 0 && !this.h.nodes.some((y) => y.paused) ? this.targetPkey(f.target, true, f.kind) : null;
    if (pkey === null) {
      if (this.h.now + POLL_MS < workloadEnd) this.h.at(this.h.now + POLL_MS, () => this.aimedCut(f, workloadEnd));
      else this.h.stats.faultsSkipped++;
      return;
    }
    this.partitionFault(f, this.h.byId.get(this.h.bestEntry(pkey)!.active!.node)!);
  }

  /**
   * A membership request (join / leave the target node, rebalance) to the leader, as an operator's
   * admin request: asked again every POLL_MS while no leader answers it, until `until`; counted in
   * stats.membershipChanges when the leader proposed it, else skipped (a refusal is the store's
   * rule: one change at a time, never below the replication factor).
   */
  private membershipFault(f: FaultStep, until: number): void {
    if (!this.h.faultsOpen) return;
    const leader = this.leaderNode();
    const node = this.resolve(f).id;
    const command = f.op === 'rebalance' ? 'rebalance' : `${f.op} ${node}`;
    const r = leader?.core?.admin(command);
    if (r?.answer.ok) {
      this.h.stats.membershipChanges++;
      this.h.trace(`MEMBERSHIP ${command} via ${leader!.id}: ${r.answer.message}`);
      return;
    }
    if (r && !/not the leader/.test(r.answer.message)) {
      this.h.trace(`MEMBERSHIP ${command} refused: ${r.answer.message}`);
      this.h.stats.faultsSkipped++;
      return;
    }
    if (this.h.now + POLL_MS < until) this.h.at(this.h.now + POLL_MS, () => this.membershipFault(f, until));
    else this.h.stats.faultsSkipped++;
  }

  private endFault(end: () => void): void {
    const i = this.faultEnds.indexOf(end);
    if (i < 0) return;
    this.faultEnds.splice(i, 1);
    end();
  }

  /** Nodes that hold none of the cluster's memory now: down, or restarted and not yet rejoined. */
  private downCount(): number {
    return this.h.nodes.filter((x) => !x.core || !x.rejoined).length;
  }

  /**
   * Can one more node crash. Within budget: nobody down, every partition Healthy, and the runtime
   * map names only current incarnations (a Healthy entry naming a crashed node's old incarnation
   * is a map that has not caught up with the last crash yet). Beyond: a majority keeps its memory
   * (a memory-only store cannot survive losing it; see the module doc).
   */
  private crashAllowed(): boolean {
    const down = this.downCount();
    if (this.h.s.budget === 'amnesia') return true;
    if (this.h.s.budget === 'within') return down === 0 && this.h.allHealthy() && this.h.mapCurrent();
    const majority = Math.floor(this.h.nodes.length / 2) + 1;
    return down + 1 <= this.h.nodes.length - majority;
  }

  private crashFault(f: FaultStep, workloadEnd: number): void {
    if (!this.h.faultsOpen) return;
    if (!(f.whileDegraded && this.h.s.budget === 'within' ? this.downCount() === 0 && this.h.mapCurrent() : this.crashAllowed())) {
      if (this.h.now + POLL_MS < workloadEnd) this.h.at(this.h.now + POLL_MS, () => this.crashFault(f, workloadEnd));
      else this.h.stats.faultsSkipped++;
      return;
    }
    const x = this.resolve(f);
    if (!x.core) return;
    this.h.crash(x, `fault ${f.target.kind}`);
    const end = (): void => this.h.restart(x);
    this.faultEnds.push(end);
    this.h.at(this.h.now + f.durationMs, () => this.endFault(end));
  }

  /** Kill every in-sync member of the target partition but one; they stay down until the final heal. */
  private stripFault(f: FaultStep, workloadEnd: number): void {
    if (!this.h.faultsOpen) return;
    const pkey = this.h.pkeys[(f.target.kind === 'active' ? f.target.partition : 0) % this.h.pkeys.length];
    const e = this.h.bestEntry(pkey);
    const down = this.downCount();
    if (this.h.now + this.bound() > workloadEnd) {
      this.h.stats.faultsSkipped++;
      return;
    }
    // the partition is Healthy (every replica in sync) and served, nobody is down
    if (!e || !e.active || e.health !== 'Healthy' || down > 0 || e.inSync.length < 2 || !this.h.servingActive(pkey) || !e.inSync.every((m) => this.h.current(m))) {
      if (this.h.now + POLL_MS < workloadEnd) this.h.at(this.h.now + POLL_MS, () => this.stripFault(f, workloadEnd));
      else this.h.stats.faultsSkipped++;
      return;
    }
    const survivor = e.inSync[(f.survivor ?? 0) % e.inSync.length];
    const victims = e.inSync.filter((m) => m !== survivor).map((m) => this.h.byId.get(m.node)!);
    const majority = Math.floor(this.h.nodes.length / 2) + 1;
    if (this.h.nodes.length - victims.length < majority) throw new Error(`strip of ${pkey} would take down a majority (${victims.length} of ${this.h.nodes.length})`);
    this.h.stats.strips++;
    this.h.trace(`STRIP ${pkey}: survivor ${survivor.node}, killing ${victims.map((v) => v.id).join(',')}`);
    const victimKeys = victims.map((v) => `${v.id}/${v.core!.inc}`);
    for (const v of victims) this.h.crash(v, `strip ${pkey}`);
    for (const v of victims) this.faultEnds.push(() => this.h.restart(v));
    const w = { pkey, node: survivor.node, inc: survivor.inc, epoch: e.epoch, victims: new Set(victimKeys), deadline: this.h.now + this.bound(), done: false };
    this.survivorWatches.push(w);
    this.h.at(w.deadline, () => this.checkSurvivors());
  }

  /** A survivor that serves is done; one that does not by its deadline is a violation. */
  checkSurvivors(): void {
    for (const w of this.survivorWatches) {
      if (w.done) continue;
      const x = this.h.byId.get(w.node)!;
      if (x.core && x.core.inc === w.inc && x.core.isServingActive(w.pkey)) {
        w.done = true;
        continue;
      }
      const e = this.h.bestEntry(w.pkey);
      if (e && e.epoch > w.epoch && e.active && w.victims.has(`${e.active.node}/${e.active.inc}`) && !e.inSync.some((m) => m.node === w.node && m.inc === w.inc)) {
        w.done = true;
        this.h.stats.stripsVoided++;
        this.h.trace(`STRIP VOIDED ${w.pkey}: epoch ${e.epoch}, decided for the dead active ${e.active.node}, left ${w.node} out of the in-sync set`);
        continue;
      }
      if (this.h.now >= w.deadline) {
        this.h.violate('sole-survivor', `${w.node} (inc ${w.inc}), the only in-sync member of ${w.pkey} left alive, was not serving it within ${this.bound()} ms: ${describeEntry(this.h.bestEntry(w.pkey))}`);
      }
    }
  }

  private bound(): number {
    return this.h.s.survivorBoundMs ?? 10_000;
  }

  /**
   * `lag-crash` (sim-schedule.ts): cut the heir of an async partition off, then crash its active
   * while the other replicas still follow it, so that the replicas hold different prefixes of the
   * dead owner's log and the heir (the one a tie goes to) is behind. Waits like a crash for the
   * budget; skipped when the partition has no live heir.
   */
  private lagCrashFault(f: FaultStep, workloadEnd: number): void {
    if (!this.h.faultsOpen) return;
    const retry = (): void => {
      if (this.h.now + POLL_MS < workloadEnd) this.h.at(this.h.now + POLL_MS, () => this.lagCrashFault(f, workloadEnd));
      else this.h.stats.faultsSkipped++;
    };
    if (!this.crashAllowed() || this.h.nodes.some((y) => y.paused)) return retry();
    const pkey = this.targetPkey(f.target);
    const e = this.h.bestEntry(pkey);
    const owner = e?.active ? this.h.byId.get(e.active.node)! : null;
    const heirId = e?.replicas.find((n) => n !== owner?.id && e.inSync.some((m) => m.node === n && this.h.current(m)));
    if (!e || !owner || !owner.core || !heirId) return retry();
    const heir = this.h.byId.get(heirId)!;
    const ownerInc = owner.core.inc;
    this.h.trace(`LAG-CRASH ${pkey}: cutting heir ${heir.id} off, then crashing ${owner.id}`);
    this.partitionFault({ ...f, kind: 'isolate' }, heir);
    this.h.at(this.h.now + (f.lagMs ?? f.durationMs / 2), () => {
      if (!this.h.faultsOpen || owner.core?.inc !== ownerInc) return;
      // the budget again: the cut may have taken the heir out of the in-sync set already
      if (!this.crashAllowed()) {
        this.h.stats.faultsSkipped++;
        return;
      }
      this.h.crash(owner, `lag-crash ${pkey}`);
      const end = (): void => this.h.restart(owner);
      this.faultEnds.push(end);
      this.h.at(this.h.now + (f.downMs ?? 1_000), () => this.endFault(end));
    });
  }

  /**
   * The partition a fault's target names (`active`, `async-active`; others: the first partition).
   * `strict`: for `async-active`, only a partition whose active is up, not the leader, and has
   * another current in-sync member (a successor), and which a fault of `kind` cuts off without
   * the leader, or null when there is none.
   */
  private targetPkey(t: FaultTarget, strict: true, kind: FaultStep['kind']): string | null;
  private targetPkey(t: FaultTarget, strict?: false): string;
  private targetPkey(t: FaultTarget, strict = false, kind?: FaultStep['kind']): string | null {
    if (t.kind === 'active') return this.h.pkeys[t.partition % this.h.pkeys.length];
    if (t.kind !== 'async-active') return this.h.pkeys[0];
    const asyncStores = new Set(this.h.config.stores.filter((st) => st.ackMode === 'async').map((st) => st.name));
    const all = this.h.pkeys.filter((p) => asyncStores.has(p.slice(0, p.indexOf('/'))));
    if (all.length === 0) return this.h.pkeys[t.index % this.h.pkeys.length];
    const leader = this.leaderNode();
    const away = all.filter((p) => {
      const e = this.h.bestEntry(p);
      const a = e?.active;
      if (!e || !a || !this.h.current(a) || a.node === leader?.id) return false;
      // a split's minority on 5 nodes is the target and the next node: keep the leader out of it
      const x = this.h.byId.get(a.node)!;
      if (strict && kind === 'split' && this.h.nodes.length >= 5 && this.h.nodes[(x.index + 1) % this.h.nodes.length] === leader) return false;
      return !strict || e.inSync.some((m) => m.node !== a.node && this.h.current(m));
    });
    if (strict && away.length === 0) return null;
    const from = away.length > 0 ? away : all;
    return from[t.index % from.length];
  }

  /** The leader of the highest term among the nodes that believe they lead, or null. */
  private leaderNode(): SimNode | null {
    let best: SimNode | null = null;
    for (const x of this.h.nodes) if (x.core?.isLeader && (!best || x.core.currentTerm > best.core!.currentTerm)) best = x;
    return best;
  }

  private partitionFault(f: FaultStep, x: SimNode = this.resolve(f)): void {
    const others = this.h.nodes.filter((y) => y !== x);
    const pairs: Array<[SimNode, SimNode]> = [];
    const both = (a: SimNode, b: SimNode): void => {
      pairs.push([a, b], [b, a]);
    };
    // the nodes the fault is about (history-format.md faults[].nodes): the cut-off side, or for a
    // bridge every node but the bridge
    let touched: SimNode[] = [x];
    switch (f.kind) {
      case 'link': {
        const src = this.resolveTarget(f.source!);
        if (src === x) return;
        touched = [x, src];
        pairs.push([src, x]);
        break;
      }
      case 'isolate':
        for (const y of others) both(x, y);
        break;
      case 'isolate-in':
        for (const y of others) pairs.push([y, x]);
        break;
      case 'isolate-out':
        for (const y of others) pairs.push([x, y]);
        break;
      case 'split': {
        const minority = new Set([x]);
        if (this.h.nodes.length >= 5) minority.add(this.h.nodes[(x.index + 1) % this.h.nodes.length]);
        touched = [...minority];
        for (const a of minority) for (const b of this.h.nodes) if (!minority.has(b)) both(a, b);
        break;
      }
      case 'bridge': {
        const half = Math.ceil(others.length / 2);
        const left = others.slice(0, half);
        const right = others.slice(half);
        touched = others;
        for (const a of left) for (const b of right) both(a, b);
        break;
      }
      default:
        throw new Error(`not a partition fault: ${f.kind}`);
    }
    this.h.stats.partitions++;
    this.h.trace(`PARTITION ${f.kind} around ${x.id}: ${pairs.map(([a, b]) => `${a.id}-x->${b.id}`).join(' ')}`);
    for (const [a, b] of pairs) {
      this.h.cuts[a.index][b.index]++;
      this.h.breakLink(this.h.links[a.index][b.index], 'grudge');
    }
    const untouch = this.h.durability.faultStart(touched.map((y) => y.id));
    const end = (): void => {
      untouch();
      for (const [a, b] of pairs) this.h.cuts[a.index][b.index] = Math.max(0, this.h.cuts[a.index][b.index] - 1);
      this.h.trace(`HEAL ${f.kind} around ${x.id}`);
    };
    this.faultEnds.push(end);
    this.h.at(this.h.now + f.durationMs, () => this.endFault(end));
  }

  /** The node a fault hits, resolved now. */
  private resolve(f: FaultStep): SimNode {
    return this.resolveTarget(f.target);
  }

  private resolveTarget(t: FaultTarget): SimNode {
    if (t.kind === 'other') {
      const pkey = this.h.pkeys[t.partition % this.h.pkeys.length];
      const e = this.h.bestEntry(pkey);
      const replicas = e?.replicas ?? assignAll(this.h.config).find((a) => `${a.store}/${a.partition}` === pkey)!.replicas;
      const active = e?.active?.node ?? replicas[0];
      const leader = this.resolveTarget({ kind: 'leader' }).id;
      const up = (n: string): boolean => !!this.h.byId.get(n)!.core;
      const node = replicas.find((n) => n !== active && n !== leader && up(n)) ?? replicas.find((n) => n !== active) ?? replicas[0];
      return this.h.byId.get(node)!;
    }
    if (t.kind === 'node') return this.h.nodes[t.index % this.h.nodes.length];
    if (t.kind === 'leader') return this.leaderNode() ?? this.h.nodes[0];
    const pkey = this.targetPkey(t);
    const e = this.h.bestEntry(pkey);
    const node = e?.active?.node ?? assignAll(this.h.config).find((a) => `${a.store}/${a.partition}` === pkey)!.replicas[0];
    return this.h.byId.get(node)!;
  }
}
