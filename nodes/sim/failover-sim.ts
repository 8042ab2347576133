import type { ClusterConfig } from '../cluster-config.js';
import { NodeCore } from '../node-core.js';
import { assignAll } from '../partitioning.js';
import { EventQueue } from './event-queue.js';
import { SimClients } from './sim-client.js';
import { SimClientNetwork, type AnsweredRead, type ClientLink, type SimClientNetworkHost } from './sim-client-net.js';
import { ClusterView } from './sim-cluster-view.js';
import { RunDigest } from './sim-digest.js';
import { DurabilityChecker } from './sim-durability.js';
import { checkFinalValues, checkReadValues } from './sim-final-checks.js';
import { InvariantViolation, SafetyChecker } from './sim-invariants.js';
import { SimNemesis, type SimNemesisHost } from './sim-nemesis.js';
import { NodeLifecycle, type CoreFactory, type SimNodeLifecycleHost } from './sim-node-lifecycle.js';
import { SimNetwork, type SimNetworkHost } from './sim-network.js';
import { hash32, SimRandom } from './sim-random.js';
import { newSimStats, SimViolation, type SimResult, type SimStats } from './sim-result.js';
import { presetNodeCount, simClusterConfig, validateSchedule, type SimSchedule } from './sim-schedule.js';
import { TraceRing } from './sim-trace-ring.js';
import { describeEntry, POLL_MS, type Link, type SimNode } from './sim-world.js';

export { SimViolation, type SimResult, type SimStats } from './sim-result.js';

/**
 * The deterministic failover simulation (sim brief, issue 4; DESIGN.md §2 "Write the failover
 * logic as pure state machines … a deterministic in-process simulation"): N {@link NodeCore}s —
 * the very state machine the node process runs — on a virtual clock and a virtual network, with a
 * nemesis and simulated clients, checked after every event.
 *
 * The network, as the real node shell sees TCP:
 * - every directed pair a→b is a's outbound connection to b (the real shell sends on its own
 *   outbound connection and ignores data on inbound ones); it is dialled, says hello first, and
 *   delivers in order (FIFO) while it lives; messages on different links are delayed
 *   independently, so they reorder across links;
 * - a connection breaks on a crash of either end, on a grudge cutting its direction, or at random
 *   (`resetProbability` per message): what it still carried is lost, the dialer sees the peer go
 *   down and redials after 100 ms, the acceptor sees the peer go down once it had read the hello;
 * - a grudge is directional (b drops what a sends): a→b breaks and cannot be redialled; b→a lives
 *   on. Real TCP would lose both directions (a handshake needs both); the simulation keeps the
 *   one-way case, which is harsher for the safety invariants;
 * - a probe answers `refused` when the node is down, `timeout` (after 500 ms) when either
 *   direction is cut, else `alive` — paused nodes included, as the kernel accepts for them.
 * - every message goes through the real cluster codec (v8 for control messages, the hand-made
 *   frame for `rep`), so no node ever shares an object with another.
 * Nodes: a crash discards the core; a restart builds a new NodeCore with a new incarnation,
 * empty memory and its own clock (starting near 0, as a process's monotonic clock does). A paused node neither ticks nor reads: what reaches it waits and is handled in
 * order on resume (before or after its first tick, at random). Ticks every 20-50 ms.
 * Clients (sim-client.ts) sit outside every grudge, as the harness does: a request to a crashed
 * node is refused, one to a paused node waits, one in flight when its node crashes breaks.
 *
 * Checks: the safety checkers (sim-invariants.ts) after every node event and on every read and
 * acknowledgement; the sole-survivor deadline; at the end, every value a read returned; within
 * budget also convergence (every partition Healthy and served within 60 s of the final heal),
 * then every key's final value on its active (no lost write in a sync store with RF > 1, no
 * phantom or unexpected value anywhere) and every in-sync replica identical to its active.
 *
 * The nemesis budget (sim brief): within budget, a crash waits until no node is down (crashed,
 * or restarted and not yet rejoined: the core logs `rejoined`), every partition is Healthy and
 * the runtime map names only current incarnations; pauses and partitions come at any time.
 * Beyond budget, crashes come at any time and overlap, but a majority of the nodes always keeps
 * its memory: a memory-only store cannot keep its runtime map (hence its epochs) through the
 * loss of a majority's memory at once, any more than Raft could without its disk. The `amnesia`
 * budget does take a majority's memory, and checks only that the cluster comes back.
 *
 * Everything random comes from the schedule's seed: one seed, one run, bit for bit.
 *
 * The parts, one module each: the nodes' lives (sim-node-lifecycle.ts), the node-to-node network
 * (sim-network.ts), the clients (sim-client.ts) and their connections (sim-client-net.ts), the
 * fault driver (sim-nemesis.ts), god's view of the cluster (sim-cluster-view.ts), the checkers
 * (sim-invariants.ts, sim-durability.ts, sim-final-checks.ts), the trace (sim-trace-ring.ts) and
 * the digest (sim-digest.ts). This module wires them and runs the phases.
 */

/** Options of {@link runSimulation}. */
export interface SimOptions {
  /** Events kept for a violation's trace (default 50). */
  traceSize?: number;
  /** Builds each node's core (default `new NodeCore`); tests pass deliberately broken cores here. */
  coreFactory?: CoreFactory;
  /** Hard cap on queued events processed, a guard against a runaway run (default 5,000,000). */
  maxEvents?: number;
}

/** Bounds of the phases, virtual ms. */
const BOOT_LIMIT_MS = 20_000;
const CONVERGE_LIMIT_MS = 60_000;
const BEYOND_SETTLE_MS = 15_000;
const SETTLE_MS = 1_000;
/** The async lag bound the durability checks hold the store to, ms (history-format.md v2 asyncLagMaxMs; ASYNC_LAG's default). */
const SIM_ASYNC_LAG_MS = 1_000;

/**
 * Runs one schedule: boot until every partition is Healthy, the workload with the schedule's
 * faults, then heal everything, restart every crashed node, wait for convergence and check the
 * final values. Safety invariants are checked after every event, durability at the end (within
 * budget only).
 * @returns the run's counters and digest.
 * @throws SimViolation on the first violated invariant (with the seed and the last events).
 * @throws RangeError for an invalid schedule.
 */
export function runSimulation(schedule: SimSchedule, options: SimOptions = {}): SimResult {
  return new Simulator(validateSchedule(schedule), options).run();
}

/** One run: the world's parts wired together, the event loop, and the run's phases (boot, workload, heal and final checks). */
class Simulator {
  private now = 0;
  private readonly queue = new EventQueue<() => void>();
  private readonly rand: SimRandom;
  private readonly config: ClusterConfig;
  private readonly nodes: SimNode[];
  private readonly byId = new Map<string, SimNode>();
  private readonly links: Link[][];
  private readonly cuts: number[][];
  private readonly clientLinks: ClientLink[];
  private readonly pkeys: string[];
  private readonly checker: SafetyChecker;
  private readonly durability: DurabilityChecker;
  private readonly clients: SimClients;
  private readonly traceRing: TraceRing;
  private events = 0;
  private readonly digest = new RunDigest();
  private faultsOpen = false;
  /** God's view of the cluster (sim-cluster-view.ts). */
  private readonly view: ClusterView;
  /** The fault driver (sim-nemesis.ts). */
  private readonly nem: SimNemesis;
  /** The node-to-node network (sim-network.ts). */
  private readonly net: SimNetwork;
  /** The clients' connections to the nodes (sim-client-net.ts). */
  private readonly clientNet: SimClientNetwork;
  /** Start, crash, pause and every event on a node (sim-node-lifecycle.ts). */
  private readonly life: NodeLifecycle;
  private readonly stats: SimStats = newSimStats();
  /**
   * Every answer a read got (Ok: the value id; NotFound: null), by single or hedged batch read:
   * checked against the histories at the end.
   */
  private readonly reads: AnsweredRead[] = [];
  private readonly maxEvents: number;

  constructor(private readonly s: SimSchedule, opts: SimOptions) {
    this.rand = new SimRandom(s.seed);
    this.config = simClusterConfig(s);
    this.maxEvents = opts.maxEvents ?? 5_000_000;
    const coreFactory: CoreFactory = opts.coreFactory ?? ((id, inc, config, env) => new NodeCore(id, inc, config, env));
    this.traceRing = new TraceRing(opts.traceSize ?? 50);
    const n = presetNodeCount(s.cluster);
    this.nodes = Array.from({ length: n }, (_, i) => ({ id: `n${i + 1}`, index: i, core: null, view: null, crashTouch: null, pauseTouch: null, gen: 0, restarts: 0, paused: false, held: [], tickToken: 0, rejoined: false }));
    for (const x of this.nodes) this.byId.set(x.id, x);
    const skew = s.net.linkSkewMs ?? 0;
    this.links = this.nodes.map((a) => this.nodes.map((b) => ({ from: a, to: b, state: 'down' as const, connId: 0, lastAt: 0, helloConn: -1, skewMs: skew > 0 ? (hash32(s.seed, a.index * 64 + b.index, 0x5bd1) / 0x100000000) * skew : 0 })));
    this.cuts = this.nodes.map(() => this.nodes.map(() => 0));
    this.clientLinks = this.nodes.map(() => ({ connId: 0, lastReqAt: 0, lastResAt: 0, pending: new Map() }));
    this.pkeys = assignAll(this.config).map((a) => `${a.store}/${a.partition}`);
    this.view = new ClusterView(this.nodes, this.byId, this.pkeys);
    this.checker = new SafetyChecker(this.pkeys);
    const clientRand = this.rand.fork();
    this.clients = new SimClients(
      {
        now: () => this.now,
        timer: (ms, fn) => this.at(this.now + ms, fn),
        request: (node, req, done) => this.clientNet.request(node, req, done),
      },
      this.config,
      s.workload,
      clientRand,
    );
    this.durability = new DurabilityChecker(
      {
        now: () => this.now,
        up: () => this.view.upViews(),
        paused: (node) => this.byId.get(node)?.paused ?? false,
        bestEntry: (pkey) => this.view.bestEntry(pkey),
      },
      { stores: this.config.stores, histories: this.clients.histories, asyncLagMs: SIM_ASYNC_LAG_MS, within: s.budget === 'within' },
    );
    const sim = this;
    const view = this.view;
    // what the two networks, the fault driver and the node lifecycle read of the simulator
    // (sim-network.ts, sim-client-net.ts, sim-nemesis.ts, sim-node-lifecycle.ts): one object, its
    // getters read the clock, the phase and the parts built after it
    const world: SimNetworkHost & SimClientNetworkHost & SimNemesisHost & SimNodeLifecycleHost = {
      get now() {
        return sim.now;
      },
      get faultsOpen() {
        return sim.faultsOpen;
      },
      get net() {
        return sim.net;
      },
      get clientNet() {
        return sim.clientNet;
      },
      get nem() {
        return sim.nem;
      },
      s,
      config: this.config,
      rand: this.rand,
      nodes: this.nodes,
      byId: this.byId,
      links: this.links,
      cuts: this.cuts,
      pkeys: this.pkeys,
      clientLinks: this.clientLinks,
      stats: this.stats,
      checker: this.checker,
      durability: this.durability,
      reads: this.reads,
      view,
      coreFactory,
      at: (t, fn) => this.at(t, fn),
      onNode: (x, gen, fn) => this.life.onNode(x, gen, fn),
      trace: (line) => this.traceRing.add(this.now, line),
      mix: (a, b, c) => this.digest.mix(a, b, c),
      crash: (x, why) => this.life.crash(x, why),
      restart: (x) => this.life.restart(x),
      pause: (x) => this.life.pause(x),
      resume: (x) => this.life.resume(x),
      breakLink: (l, why) => this.net.breakLink(l, why),
      bestEntry: (pkey) => view.bestEntry(pkey),
      current: (m) => view.current(m),
      mapCurrent: () => view.mapCurrent(),
      allHealthy: () => view.allHealthy(),
      servingActive: (pkey) => view.servingActive(pkey),
      violate: (inv, detail) => this.violate(inv, detail),
    };
    this.net = new SimNetwork(world);
    this.clientNet = new SimClientNetwork(world);
    this.nem = new SimNemesis(world);
    this.life = new NodeLifecycle(world);
  }

  // ───────────── the run ─────────────

  run(): SimResult {
    try {
      this.boot();
      this.workload();
      this.finish();
    } catch (e) {
      if (e instanceof InvariantViolation) throw new SimViolation(e.invariant, e.detail, this.s.seed, this.now, this.traceRing.lines());
      throw e;
    }
    for (const x of this.nodes) {
      for (const pkey of this.pkeys) this.digest.mix(x.core ? x.core.revisionOf(pkey) : -1, x.core?.committedEntry(pkey)?.epoch ?? -1);
    }
    this.stats.heldAtCrashChecked = this.durability.heldAtCrashChecked;
    this.stats.positionClaimsChecked = this.durability.positionClaimsChecked;
    return {
      seed: this.s.seed,
      events: this.events,
      virtualMs: this.now,
      digest: this.digest.hex(),
      stats: this.stats,
      clients: this.clients.stats,
    };
  }

  private boot(): void {
    for (const x of this.nodes) this.at(this.rand.between(0, this.s.bootStaggerMs ?? 50), () => this.life.startNode(x));
    const ok = this.runUntil(BOOT_LIMIT_MS, () => this.view.allHealthy() && this.view.allServing());
    if (!ok) this.violate('no-convergence', `the cluster did not become Healthy within ${BOOT_LIMIT_MS} ms of boot`);
  }

  private workload(): void {
    const t0 = this.now;
    this.faultsOpen = true;
    this.clients.start();
    for (const f of this.s.faults) this.at(t0 + f.atMs, () => this.nem.fault(f, t0 + this.s.workloadMs));
    // a strip schedule has nothing left to watch once every survivor serves: end its workload there
    this.runUntil(t0 + this.s.workloadMs, () => this.nem.survivorWatches.length > 0 && this.nem.survivorWatches.every((w) => w.done));
    this.faultsOpen = false;
    this.clients.stop();
  }

  private finish(): void {
    // heal: every grudge lifted, every paused node resumed, every crashed node restarted
    for (const end of this.nem.faultEnds.splice(0)) end();
    for (const row of this.cuts) row.fill(0);
    for (const x of this.nodes) {
      if (x.paused) this.life.resume(x);
      if (!x.core) this.life.restart(x);
    }
    const healedAt = this.now;
    const within = this.s.budget === 'within';
    const mustConverge = this.s.budget !== 'beyond';
    const converged = this.runUntil(healedAt + (mustConverge ? CONVERGE_LIMIT_MS : BEYOND_SETTLE_MS), () => this.clients.idle && this.view.allHealthy() && this.view.allServing());
    if (converged) this.stats.convergeMs = this.now - healedAt;
    checkReadValues(this.clients.histories, this.reads);
    if (!mustConverge) return;
    if (!converged) this.violate('no-convergence', `not every partition was Healthy and served within ${CONVERGE_LIMIT_MS} ms of the final heal${this.clients.idle ? '' : ' (clients still busy)'}: ${this.describeMap()}`);
    // let replication settle, then read once the cluster is (again) Healthy and served: resets
    // may still break connections and move partitions through Degraded meanwhile
    this.runUntil(this.now + SETTLE_MS, () => false);
    const settledAt = this.now;
    if (!this.runUntil(settledAt + CONVERGE_LIMIT_MS, () => this.view.allHealthy() && this.view.allServing())) {
      this.violate('no-convergence', `the cluster left Healthy after converging and did not come back within ${CONVERGE_LIMIT_MS} ms: ${this.describeMap()}`);
    }
    if (within) {
      const { config, pkeys, byId, view, durability, reads } = this;
      checkFinalValues({ config, histories: this.clients.histories, reads, pkeys, byId, view, durability }, this.stats.finals);
    }
  }

  /** Every partition's best entry, on one line. */
  private describeMap(): string {
    return this.pkeys.map((p) => `${p}=${describeEntry(this.view.bestEntry(p))}`).join(' ');
  }

  /** Processes events until `cond` holds (checked every POLL_MS) or time `limit`; true when cond held. */
  private runUntil(limit: number, cond: () => boolean): boolean {
    let nextPoll = this.now;
    for (;;) {
      if (this.now >= nextPoll) {
        if (this.s.budget !== 'amnesia') this.durability.poll(this.pkeys);
        if (cond()) return true;
        nextPoll = this.now + POLL_MS;
      }
      const t = this.queue.peekTime();
      if (t > limit && nextPoll > limit) {
        this.now = limit;
        return cond();
      }
      if (t > nextPoll) {
        this.now = nextPoll;
        continue;
      }
      const ev = this.queue.pop()!;
      this.now = ev.at;
      if (++this.events > this.maxEvents) throw new Error(`simulation exceeded ${this.maxEvents} events (seed ${this.s.seed})`);
      ev.item();
    }
  }

  private at(time: number, fn: () => void): void {
    this.queue.push(time, fn);
  }

  private violate(invariant: string, detail: string): never {
    throw new InvariantViolation(invariant, detail);
  }
}
