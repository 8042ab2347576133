import type { ClusterConfig } from '../cluster-config.js';
import { supersedes, type RuntimeEntry } from '../cluster-messages.js';
import { NodeCore, type CoreEnv } from '../node-core.js';
import { assignAll } from '../partitioning.js';
import { EventQueue } from './event-queue.js';
import { SimClients, type ClientStats } from './sim-client.js';
import { DurabilityChecker, type DurableView } from './sim-durability.js';
import { classifyFinal, InvariantViolation, SafetyChecker, staleRead, type FinalClass } from './sim-invariants.js';
import { SimRandom } from './sim-random.js';
import { presetNodeCount, simClusterConfig, validateSchedule, type SimSchedule } from './sim-schedule.js';
import { describeEntry, POLL_MS, type Link, type SimNode } from './sim-world.js';
import { SimNemesis, type SimNemesisHost } from './sim-nemesis.js';
import { CLOSE_NOTICE_MS, SimNetwork, type SimNetworkHost } from './sim-network.js';
import { SimClientNetwork, type ClientLink, type ReqToken, type SimClientNetworkHost } from './sim-client-net.js';

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
 */

/** A violated invariant, with what is needed to replay and understand it. */
export class SimViolation extends Error {
  override name = 'SimViolation';
  constructor(
    /** Invariant name (see sim-invariants.ts, plus "no-convergence", "sole-survivor", "lost", "phantom", "unexpected", "replica-divergence", "phantom-read", "unexpected-read"). */
    readonly invariant: string,
    readonly detail: string,
    readonly seed: number,
    /** Virtual time of the violation, ms. */
    readonly atMs: number,
    /** The last events before it, oldest first. */
    readonly trace: string[],
  ) {
    super(`${invariant} at ${atMs.toFixed(1)} ms (sim seed ${seed}): ${detail}\nlast events:\n  ${trace.join('\n  ')}`);
  }
}

/** Counters of one run. */
export interface SimStats {
  /** Node events handled (messages, ticks, client requests, probes, peer-down signals). */
  nodeEvents: number;
  messagesSent: number;
  messagesLost: number;
  resets: number;
  crashes: number;
  restarts: number;
  pauses: number;
  partitions: number;
  /** Faults that never ran (a crash held back by the budget until the workload ended). */
  faultsSkipped: number;
  strips: number;
  /**
   * Strips whose premise fell: an entry decided for the killed active's tenure (a drop it asked
   * for before it died, committed after) took the survivor out of the in-sync set, so it was no
   * longer the sole surviving in-sync replica the property is about.
   */
  stripsVoided: number;
  /**
   * Promotions a leader decided as Recovering from a more complete holder outside the in-sync set
   * (NodeCore log `possession-holder`; seed 002 possession proof over every assigned replica).
   */
  holderPromotions: number;
  /** Membership requests the leader proposed (join, leave, rebalance: sim-nemesis.ts). */
  membershipChanges: number;
  /** Partition moves finished (a leader's migration-done: core/migration-driver.ts). */
  migrations: number;
  /**
   * Acknowledged async writes a surviving replica held when their owner crashed, checked at the
   * next tenure's start (sim-durability.ts; 0 outside the within budget).
   */
  heldAtCrashChecked: number;
  /** Replicas' position claims (rep-ack, sync-req) checked against their active's log (sim-durability.ts onPositionClaim). */
  positionClaimsChecked: number;
  /** Virtual ms from the final heal until the cluster converged (-1 when it did not). */
  convergeMs: number;
  /** Final classification of every key (within budget only). */
  finals: Record<FinalClass, number>;
}

/** The result of one run. */
export interface SimResult {
  seed: number;
  /** Events popped from the queue (all kinds). */
  events: number;
  /** Virtual time at the end, ms. */
  virtualMs: number;
  /** Hash of the run's event sequence and final state: equal for equal seeds (determinism). */
  digest: string;
  stats: SimStats;
  clients: ClientStats;
}

/** Options of {@link runSimulation}. */
export interface SimOptions {
  /** Events kept for a violation's trace (default 50). */
  traceSize?: number;
  /** Builds each node's core (default `new NodeCore`); tests pass deliberately broken cores here. */
  coreFactory?: (id: string, inc: string, config: ClusterConfig, env: CoreEnv) => NodeCore;
  /** Hard cap on queued events processed, a guard against a runaway run (default 5,000,000). */
  maxEvents?: number;
}

/** Tick period range, ms. */
const TICK_MIN_MS = 20;
const TICK_MAX_MS = 50;
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
  private readonly traceRing: Array<string | (() => string)>;
  private traceAt = 0;
  private events = 0;
  private digest = 0x811c9dc5;
  private faultsOpen = false;
  /** The fault driver (sim-nemesis.ts). */
  private readonly nem: SimNemesis;
  /** The node-to-node network (sim-network.ts). */
  private readonly net: SimNetwork;
  /** The clients' connections to the nodes (sim-client-net.ts). */
  private readonly clientNet: SimClientNetwork;
  private readonly stats: SimStats = {
    nodeEvents: 0,
    messagesSent: 0,
    messagesLost: 0,
    resets: 0,
    crashes: 0,
    restarts: 0,
    pauses: 0,
    partitions: 0,
    faultsSkipped: 0,
    strips: 0,
    stripsVoided: 0,
    holderPromotions: 0,
    membershipChanges: 0,
    migrations: 0,
    heldAtCrashChecked: 0,
    positionClaimsChecked: 0,
    convergeMs: -1,
    finals: { ok: 0, recovered: 0, unexpected: 0, phantom: 0, lost: 0 },
  };
  /**
   * Every answer a read got (Ok: the value id; NotFound: null), by single or hedged batch read:
   * checked against the histories at the end.
   */
  private readonly reads: Array<{ sk: string; valueId: string | null; node: string; at: number; hedged: boolean }> = [];
  private readonly maxEvents: number;
  private readonly coreFactory: NonNullable<SimOptions['coreFactory']>;

  constructor(private readonly s: SimSchedule, opts: SimOptions) {
    this.rand = new SimRandom(s.seed);
    this.config = simClusterConfig(s);
    this.maxEvents = opts.maxEvents ?? 5_000_000;
    this.coreFactory = opts.coreFactory ?? ((id, inc, config, env) => new NodeCore(id, inc, config, env));
    this.traceRing = new Array(opts.traceSize ?? 50).fill('');
    const n = presetNodeCount(s.cluster);
    this.nodes = Array.from({ length: n }, (_, i) => ({ id: `n${i + 1}`, index: i, core: null, view: null, crashTouch: null, pauseTouch: null, gen: 0, restarts: 0, paused: false, held: [], tickToken: 0, rejoined: false }));
    for (const x of this.nodes) this.byId.set(x.id, x);
    const skew = s.net.linkSkewMs ?? 0;
    this.links = this.nodes.map((a) => this.nodes.map((b) => ({ from: a, to: b, state: 'down' as const, connId: 0, lastAt: 0, helloConn: -1, skewMs: skew > 0 ? (hash32(s.seed, a.index * 64 + b.index, 0x5bd1) / 0x100000000) * skew : 0 })));
    this.cuts = this.nodes.map(() => this.nodes.map(() => 0));
    this.clientLinks = this.nodes.map(() => ({ connId: 0, lastReqAt: 0, lastResAt: 0, pending: new Map() }));
    this.pkeys = assignAll(this.config).map((a) => `${a.store}/${a.partition}`);
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
        up: () => this.upViews(),
        paused: (node) => this.byId.get(node)?.paused ?? false,
        bestEntry: (pkey) => this.bestEntry(pkey),
      },
      { stores: this.config.stores, histories: this.clients.histories, asyncLagMs: SIM_ASYNC_LAG_MS, within: s.budget === 'within' },
    );
    const sim = this;
    // what the two networks and the fault driver read of the simulator (sim-network.ts,
    // sim-client-net.ts, sim-nemesis.ts): one object, its getters read the clock and phase
    const world: SimNetworkHost & SimClientNetworkHost & SimNemesisHost = {
      get now() {
        return sim.now;
      },
      get faultsOpen() {
        return sim.faultsOpen;
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
      at: (t, fn) => this.at(t, fn),
      onNode: (x, gen, fn) => this.onNode(x, gen, fn),
      trace: (line) => this.trace(line),
      mix: (a, b, c) => this.mix(a, b, c),
      crash: (x, why) => this.crash(x, why),
      restart: (x) => this.restart(x),
      pause: (x) => this.pause(x),
      resume: (x) => this.resume(x),
      breakLink: (l, why) => this.net.breakLink(l, why),
      bestEntry: (pkey) => this.bestEntry(pkey),
      current: (m) => this.current(m),
      mapCurrent: () => this.mapCurrent(),
      allHealthy: () => this.allHealthy(),
      servingActive: (pkey) => this.servingActive(pkey),
      violate: (inv, detail) => this.violate(inv, detail),
    };
    this.net = new SimNetwork(world);
    this.clientNet = new SimClientNetwork(world);
    this.nem = new SimNemesis(world);
  }

  // ───────────── the run ─────────────

  run(): SimResult {
    try {
      this.boot();
      this.workload();
      this.finish();
    } catch (e) {
      if (e instanceof InvariantViolation) throw new SimViolation(e.invariant, e.detail, this.s.seed, this.now, this.traceLines());
      throw e;
    }
    for (const x of this.nodes) {
      for (const pkey of this.pkeys) this.mix(x.core ? x.core.revisionOf(pkey) : -1, x.core?.committedEntry(pkey)?.epoch ?? -1);
    }
    this.stats.heldAtCrashChecked = this.durability.heldAtCrashChecked;
    this.stats.positionClaimsChecked = this.durability.positionClaimsChecked;
    return {
      seed: this.s.seed,
      events: this.events,
      virtualMs: this.now,
      digest: (this.digest >>> 0).toString(16).padStart(8, '0'),
      stats: this.stats,
      clients: this.clients.stats,
    };
  }

  private boot(): void {
    for (const x of this.nodes) this.at(this.rand.between(0, this.s.bootStaggerMs ?? 50), () => this.startNode(x));
    const ok = this.runUntil(BOOT_LIMIT_MS, () => this.allHealthy() && this.allServing());
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
      if (x.paused) this.resume(x);
      if (!x.core) this.restart(x);
    }
    const healedAt = this.now;
    const within = this.s.budget === 'within';
    const mustConverge = this.s.budget !== 'beyond';
    const converged = this.runUntil(healedAt + (mustConverge ? CONVERGE_LIMIT_MS : BEYOND_SETTLE_MS), () => this.clients.idle && this.allHealthy() && this.allServing());
    if (converged) this.stats.convergeMs = this.now - healedAt;
    this.checkReads();
    if (!mustConverge) return;
    if (!converged) this.violate('no-convergence', `not every partition was Healthy and served within ${CONVERGE_LIMIT_MS} ms of the final heal${this.clients.idle ? '' : ' (clients still busy)'}: ${this.pkeys.map((p) => `${p}=${describeEntry(this.bestEntry(p))}`).join(' ')}`);
    // let replication settle, then read once the cluster is (again) Healthy and served: resets
    // may still break connections and move partitions through Degraded meanwhile
    this.runUntil(this.now + SETTLE_MS, () => false);
    const settledAt = this.now;
    if (!this.runUntil(settledAt + CONVERGE_LIMIT_MS, () => this.allHealthy() && this.allServing())) {
      this.violate('no-convergence', `the cluster left Healthy after converging and did not come back within ${CONVERGE_LIMIT_MS} ms: ${this.pkeys.map((p) => `${p}=${describeEntry(this.bestEntry(p))}`).join(' ')}`);
    }
    if (within) this.finalChecks();
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

  // ───────────── nodes ─────────────

  private startNode(x: SimNode): void {
    x.gen++;
    const gen = x.gen;
    const inc = `${x.id}.${x.restarts}.${this.rand.int(0, 0xffff).toString(16)}`;
    // each incarnation has its own monotonic clock, as a process does (performance.now() from its
    // start, from an arbitrary origin up to a minute away): a time one incarnation sent means
    // nothing to the next
    const clockOrigin = this.now - clockOffsetMs(this.s.seed, x.index, x.restarts);
    const env: CoreEnv = {
      now: () => this.now - clockOrigin,
      random: (() => {
        const r = this.rand.fork();
        return () => r.next();
      })(),
      send: (to, msg) => this.net.send(x, gen, to, msg),
      respond: (token, res) => this.clientNet.respond(x, gen, token as ReqToken, res),
      probe: (node) => this.net.probe(x, gen, node),
      log: (event, fields) => {
        if (event === 'rejoined' && x.gen === gen) x.rejoined = true;
        if (event === 'possession-holder') this.stats.holderPromotions++;
        if (event === 'migration-done') this.stats.migrations++;
        this.trace(() => `${x.id} log ${event} ${fields ? JSON.stringify(fields) : ''}`);
      },
    };
    const core = this.coreFactory(x.id, inc, this.config, env);
    x.core = core;
    x.view = { id: x.id, inc, isServingActive: (p) => core.isServingActive(p), committedEntry: (p) => core.committedEntry(p), peek: (p, k) => core.peek(p, k), peekAt: (p, k, r) => core.peekAt(p, k, r), revisionOf: (p) => core.revisionOf(p) };
    x.crashTouch?.();
    x.crashTouch = null;
    x.paused = false;
    x.held = [];
    this.trace(`${x.id} start inc ${inc}`);
    this.scheduleTick(x, this.rand.between(0, TICK_MAX_MS));
    for (const l of this.links[x.index]) if (l.to !== x) this.net.dial(l);
  }

  private crash(x: SimNode, why: string): void {
    if (!x.core) return;
    this.stats.crashes++;
    this.trace(`${x.id} CRASH (${why})`);
    this.mix(1, x.index, 0);
    x.core = null;
    x.view = null;
    x.pauseTouch?.();
    x.pauseTouch = null;
    x.crashTouch = this.durability.crashed(x.id);
    x.gen++;
    x.paused = false;
    x.held = [];
    x.tickToken++;
    x.rejoined = false;
    for (const y of this.nodes) {
      this.net.breakLink(this.links[y.index][x.index], 'crash');
      this.net.breakLink(this.links[x.index][y.index], 'crash');
    }
    const cl = this.clientLinks[x.index];
    cl.connId++;
    const pending = [...cl.pending.values()];
    cl.pending.clear();
    for (const done of pending) this.at(this.now + CLOSE_NOTICE_MS, () => done({ kind: 'broken' }));
  }

  private restart(x: SimNode): void {
    if (x.core) return;
    x.restarts++;
    this.stats.restarts++;
    this.startNode(x);
  }

  private pause(x: SimNode): void {
    if (!x.core || x.paused) return;
    this.stats.pauses++;
    this.trace(`${x.id} PAUSE`);
    x.paused = true;
    x.tickToken++;
    x.pauseTouch = this.durability.faultStart([x.id]);
  }

  private resume(x: SimNode): void {
    if (!x.core || !x.paused) return;
    this.trace(`${x.id} RESUME (${x.held.length} waiting)`);
    x.paused = false;
    x.pauseTouch?.();
    x.pauseTouch = null;
    const held = x.held;
    x.held = [];
    // after SIGCONT the event loop may run the overdue tick or the waiting I/O first
    const tickFirst = this.rand.chance(0.5);
    if (tickFirst) this.tickNow(x);
    for (const h of held) h();
    if (!tickFirst) this.tickNow(x);
    this.scheduleTick(x, this.rand.between(TICK_MIN_MS, TICK_MAX_MS));
  }

  /** Runs `fn` on a node's core as one event: dropped if the node is gone, held if it is paused. */
  private onNode(x: SimNode, gen: number, fn: (core: NodeCore) => void): void {
    if (x.gen !== gen || !x.core) return;
    if (x.paused) {
      x.held.push(() => this.onNode(x, gen, fn));
      return;
    }
    this.stats.nodeEvents++;
    fn(x.core);
    this.afterNodeEvent(x);
  }

  private afterNodeEvent(x: SimNode): void {
    const core = x.core;
    if (!core) return;
    core.flush();
    if (this.s.budget !== 'amnesia') {
      this.checker.checkCommitted(x.view!);
      this.checker.checkServing(this.upViews(), x.view!);
      this.durability.afterEvent(x.view!, this.pkeys);
    }
    if (this.nem.survivorWatches.length > 0) this.nem.checkSurvivors();
  }

  private upViews(): DurableView[] {
    const out: DurableView[] = [];
    for (const y of this.nodes) if (y.view) out.push(y.view);
    return out;
  }

  private scheduleTick(x: SimNode, delay: number): void {
    const gen = x.gen;
    const token = x.tickToken;
    this.at(this.now + delay, () => {
      if (x.gen !== gen || x.tickToken !== token || x.paused || !x.core) return;
      this.tickNow(x);
      this.scheduleTick(x, this.rand.between(TICK_MIN_MS, TICK_MAX_MS));
    });
  }

  private tickNow(x: SimNode): void {
    if (!x.core) return;
    this.stats.nodeEvents++;
    this.mix(2, x.index, this.now);
    x.core.tick();
    this.afterNodeEvent(x);
  }

  // ───────────── god's view and the final checks ─────────────

  /** The highest-epoch committed entry of a partition on any node that is up. */
  private bestEntry(pkey: string): RuntimeEntry | undefined {
    let best: RuntimeEntry | undefined;
    for (const x of this.nodes) {
      const e = x.core?.committedEntry(pkey);
      if (e && (!best || supersedes(e, best))) best = e;
    }
    return best;
  }

  /** This member is the running incarnation of its node. */
  private current(m: { node: string; inc: string }): boolean {
    return this.byId.get(m.node)?.core?.inc === m.inc;
  }

  /** Every partition's best entry names only current incarnations (active and in-sync set). */
  private mapCurrent(): boolean {
    for (const p of this.pkeys) {
      const e = this.bestEntry(p);
      if (!e || (e.active && !this.current(e.active)) || !e.inSync.every((m) => this.current(m))) return false;
    }
    return true;
  }

  private allHealthy(): boolean {
    for (const p of this.pkeys) if (this.bestEntry(p)?.health !== 'Healthy') return false;
    return true;
  }

  /** Every partition's best entry names an up, unpaused node that serves it. */
  private allServing(): boolean {
    for (const p of this.pkeys) if (!this.servingActive(p)) return false;
    return true;
  }

  private servingActive(pkey: string): SimNode | null {
    const e = this.bestEntry(pkey);
    if (!e?.active) return null;
    const x = this.byId.get(e.active.node)!;
    if (!x.core || x.paused || x.core.inc !== e.active.inc || !x.core.isServingActive(pkey)) return null;
    return x;
  }

  /**
   * Within budget, after convergence: every key's final value on its active is allowed by its
   * history (no phantom or unexpected value anywhere; no lost write in a sync store with RF > 1),
   * and every in-sync replica holds exactly what its active holds.
   */
  private finalChecks(): void {
    const durable = new Set(this.config.stores.filter((s) => s.ackMode === 'sync' && s.replicationFactor > 1).map((s) => s.name));
    const finals = new Map<string, string | null>();
    for (const h of this.clients.histories) {
      const x = this.servingActive(h.pkey);
      if (!x) this.violate('no-convergence', `no serving active for ${h.pkey} at the final read`);
      const rec = x!.core!.peek(h.pkey, h.key);
      const valueId = rec && rec.value !== null ? rec.value.toString() : null;
      finals.set(`${h.store}/${h.key}`, valueId);
      const cls = classifyFinal(h, valueId);
      this.stats.finals[cls]++;
      const lastOk = [...h.writes].reverse().find((w) => w.outcome === 'ok');
      if (cls === 'lost' && !durable.has(h.store)) this.durability.checkLoss(h, lastOk!, `${h.store}/${h.key} (${h.pkey}) reads ${valueId ?? 'absent'} on ${x!.id}, without ${lastOk!.valueId ?? 'delete'} (seq ${lastOk!.seq}, acked by ${lastOk!.ack?.node} at epoch ${lastOk!.ack?.epoch}, t=${lastOk!.completeMs.toFixed(1)})`);
      if (cls === 'unexpected' || cls === 'phantom' || (cls === 'lost' && durable.has(h.store))) {
        this.violate(cls, `${h.store}/${h.key} (${h.pkey}) reads ${valueId ?? 'absent'} on ${x!.id}; last acknowledged: ${lastOk ? `${lastOk.valueId ?? 'delete'} (seq ${lastOk.seq}, acked by ${lastOk.ack?.node} at epoch ${lastOk.ack?.epoch}, t=${lastOk.completeMs.toFixed(1)})` : 'none'}; writes: ${h.writes.map((w) => `#${w.seq}:${w.kind}:${w.outcome}`).join(' ')}`);
      }
    }
    // every read, single or hedged (a replica answering a long-tail retry), saw every write
    // acknowledged before it was answered (v2 stale-read). Judged where no acknowledged write may
    // be lost (sync, RF > 1): in an async or RF1 store a read after an allowed loss returns the
    // older value, and the history cannot tell it from a stale read once the key is written again;
    // there the stale-owner invariant (checked on every answer) is the store's side of the rule
    const byKey = new Map(this.clients.histories.map((h) => [`${h.store}/${h.key}`, h]));
    for (const r of this.reads) {
      const h = byKey.get(r.sk);
      if (!h || !durable.has(h.store)) continue;
      const missed = staleRead(h, r, finals.get(r.sk) ?? null);
      if (missed) this.violate('stale-read', `${r.node} answered a ${r.hedged ? 'hedged batch' : 'single'} read of ${r.sk} at ${r.at.toFixed(1)} ms with ${r.valueId ?? 'absent'}, but ${missed.valueId ?? 'a delete'} (seq ${missed.seq}) was acknowledged at ${missed.completeMs.toFixed(1)} ms by ${missed.ack?.node} and survived`);
    }
    for (const pkey of this.pkeys) {
      const e = this.bestEntry(pkey)!;
      const active = this.servingActive(pkey)!;
      for (const m of e.inSync) {
        if (m.node === active.id) continue;
        const y = this.byId.get(m.node)!;
        if (!y.core || y.core.inc !== m.inc) continue;
        for (const h of this.clients.histories) {
          if (h.pkey !== pkey) continue;
          const a = active.core!.peek(pkey, h.key);
          const b = y.core.peek(pkey, h.key);
          const av = a && a.value !== null ? a.value.toString() : null;
          const bv = b && b.value !== null ? b.value.toString() : null;
          if (av !== bv || (a?.version ?? 0) !== (b?.version ?? 0)) {
            this.violate('replica-divergence', `${pkey} key ${h.key}: active ${active.id} holds ${av ?? 'absent'} v${a?.version ?? 0}, in-sync ${y.id} holds ${bv ?? 'absent'} v${b?.version ?? 0} (${describeEntry(e)})`);
          }
        }
      }
    }
  }

  /**
   * Any budget: no read ever returned a value that no write of the key carried (unexpected) or
   * whose write failed definitely (phantom: a `fail` write was never applied anywhere).
   */
  private checkReads(): void {
    const byKey = new Map(this.clients.histories.map((h) => [`${h.store}/${h.key}`, h]));
    for (const r of this.reads) {
      if (r.valueId === null) continue;
      const w = byKey.get(r.sk)?.writes.find((x) => x.valueId === r.valueId);
      if (!w) this.violate('unexpected-read', `${r.node} answered a read of ${r.sk} at ${r.at.toFixed(1)} ms with ${r.valueId}, which no write carried`);
      if (w!.outcome === 'fail') this.violate('phantom-read', `${r.node} answered a read of ${r.sk} at ${r.at.toFixed(1)} ms with ${r.valueId}, a write that failed definitely (${w!.last})`);
    }
  }

  private violate(invariant: string, detail: string): never {
    throw new InvariantViolation(invariant, detail);
  }

  // ───────────── trace and digest ─────────────

  private trace(line: string | (() => string)): void {
    const at = this.now;
    this.traceRing[this.traceAt] = typeof line === 'string' ? `${at.toFixed(1)} ${line}` : () => `${at.toFixed(1)} ${line()}`;
    this.traceAt = (this.traceAt + 1) % this.traceRing.length;
  }

  private traceLines(): string[] {
    const out: string[] = [];
    for (let i = 0; i < this.traceRing.length; i++) {
      const e = this.traceRing[(this.traceAt + i) % this.traceRing.length];
      const s = typeof e === 'string' ? e : e();
      if (s) out.push(s);
    }
    return out;
  }

  private mix(a: number, b: number, c = 0): void {
    let h = this.digest;
    h = Math.imul(h ^ a, 0x01000193);
    h = Math.imul(h ^ b, 0x01000193);
    h = Math.imul(h ^ Math.round(c * 1000), 0x01000193);
    this.digest = h;
  }
}

/**
 * The origin offset of one incarnation's clock, ms in [0, 60,000): a hash of the schedule's seed,
 * the node and its restart count, so that giving each incarnation its own clock draws nothing
 * from the run's random stream (every kept schedule replays the events it always did).
 */
function clockOffsetMs(seed: number, node: number, restarts: number): number {
  return hash32(seed, node, restarts) % 60_000;
}

/** A 32-bit hash of three integers (unsigned), for fixed per-run draws that leave the random stream alone. */
function hash32(seed: number, a: number, b: number): number {
  let h = Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(a + 1, 0xc2b2ae35) ^ Math.imul(b + 1, 0x27d4eb2f);
  h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d);
  h = Math.imul(h ^ (h >>> 12), 0x297a2d39);
  return (h ^ (h >>> 15)) >>> 0;
}
