/** The simulated nodes' lives: start, crash, restart, pause, resume, ticks, and each event run on a node's core. */
import type { ClusterConfig } from '../cluster-config.js';
import type { NodeCore, CoreEnv } from '../node-core.js';
import type { ClientLink, ReqToken, SimClientNetwork } from './sim-client-net.js';
import type { ClusterView } from './sim-cluster-view.js';
import type { DurabilityChecker } from './sim-durability.js';
import type { SafetyChecker } from './sim-invariants.js';
import type { SimNemesis } from './sim-nemesis.js';
import { CLOSE_NOTICE_MS, type SimNetwork } from './sim-network.js';
import { hash32, type SimRandom } from './sim-random.js';
import type { SimStats } from './sim-result.js';
import type { SimSchedule } from './sim-schedule.js';
import type { Link, SimNode } from './sim-world.js';

/** Tick period range, ms. */
const TICK_MIN_MS = 20;
const TICK_MAX_MS = 50;

/** Builds one node incarnation's core: the very state machine the node process runs, or a deliberately broken one in tests. */
export type CoreFactory = (id: string, inc: string, config: ClusterConfig, env: CoreEnv) => NodeCore;

/** What the node lifecycle needs of the simulator (virtual time, ms). */
export interface SimNodeLifecycleHost {
  readonly now: number;
  readonly s: SimSchedule;
  readonly config: ClusterConfig;
  readonly rand: SimRandom;
  readonly nodes: readonly SimNode[];
  /** links[a][b]: the directed connection a dials to b. */
  readonly links: Link[][];
  /** One per node, by node index. */
  readonly clientLinks: ClientLink[];
  readonly stats: SimStats;
  readonly checker: SafetyChecker;
  readonly durability: DurabilityChecker;
  readonly view: ClusterView;
  /** Every partition, as `store/partition`. */
  readonly pkeys: readonly string[];
  /** The node-to-node network: a core's sends and probes, dialling at start, breaks at a crash. */
  readonly net: Pick<SimNetwork, 'send' | 'probe' | 'dial' | 'breakLink'>;
  /** The clients' connections: a core's answers. */
  readonly clientNet: Pick<SimClientNetwork, 'respond'>;
  /** The fault driver: its sole-survivor watches are checked after every node event. */
  readonly nem: Pick<SimNemesis, 'survivorWatches' | 'checkSurvivors'>;
  readonly coreFactory: CoreFactory;
  at(time: number, fn: () => void): void;
  trace(line: string | (() => string)): void;
  mix(a: number, b: number, c?: number): void;
}

/**
 * Starts, crashes, restarts, pauses and resumes simulated nodes, ticks them every 20-50 ms, and
 * runs each event on a node's core: dropped when the incarnation it was made for is gone, held
 * while the node is paused (handled in order on resume, before or after its overdue tick, at
 * random), then flushed and followed by the safety and durability checks. A crash discards the
 * core; a restart builds a new one with a new incarnation, empty memory and its own clock.
 */
export class NodeLifecycle {
  private readonly h: SimNodeLifecycleHost;

  constructor(host: SimNodeLifecycleHost) {
    this.h = host;
  }

  /** Starts a new incarnation of `x`: a fresh core, a first tick within 50 ms, its outbound links dialled. */
  startNode(x: SimNode): void {
    const h = this.h;
    x.gen++;
    const gen = x.gen;
    const inc = `${x.id}.${x.restarts}.${h.rand.int(0, 0xffff).toString(16)}`;
    // each incarnation has its own monotonic clock, as a process does (performance.now() from its
    // start, from an arbitrary origin up to a minute away): a time one incarnation sent means
    // nothing to the next
    const clockOrigin = h.now - clockOffsetMs(h.s.seed, x.index, x.restarts);
    const env: CoreEnv = {
      now: () => h.now - clockOrigin,
      random: (() => {
        const r = h.rand.fork();
        return () => r.next();
      })(),
      send: (to, msg) => h.net.send(x, gen, to, msg),
      respond: (token, res) => h.clientNet.respond(x, gen, token as ReqToken, res),
      probe: (node) => h.net.probe(x, gen, node),
      log: (event, fields) => {
        if (event === 'rejoined' && x.gen === gen) x.rejoined = true;
        if (event === 'possession-holder') h.stats.holderPromotions++;
        if (event === 'migration-done') h.stats.migrations++;
        h.trace(() => `${x.id} log ${event} ${fields ? JSON.stringify(fields) : ''}`);
      },
    };
    const core = h.coreFactory(x.id, inc, h.config, env);
    x.core = core;
    x.view = { id: x.id, inc, isServingActive: (p) => core.isServingActive(p), committedEntry: (p) => core.committedEntry(p), peek: (p, k) => core.peek(p, k), peekAt: (p, k, r) => core.peekAt(p, k, r), revisionOf: (p) => core.revisionOf(p) };
    x.crashTouch?.();
    x.crashTouch = null;
    x.paused = false;
    x.held = [];
    h.trace(`${x.id} start inc ${inc}`);
    this.scheduleTick(x, h.rand.between(0, TICK_MAX_MS));
    for (const l of h.links[x.index]) if (l.to !== x) h.net.dial(l);
  }

  /** Kills `x` (SIGKILL): its memory gone, every link to and from it broken, its clients' requests in flight broken. No-op when down. */
  crash(x: SimNode, why: string): void {
    const h = this.h;
    if (!x.core) return;
    h.stats.crashes++;
    h.trace(`${x.id} CRASH (${why})`);
    h.mix(1, x.index, 0);
    x.core = null;
    x.view = null;
    x.pauseTouch?.();
    x.pauseTouch = null;
    x.crashTouch = h.durability.crashed(x.id);
    x.gen++;
    x.paused = false;
    x.held = [];
    x.tickToken++;
    x.rejoined = false;
    for (const y of h.nodes) {
      h.net.breakLink(h.links[y.index][x.index], 'crash');
      h.net.breakLink(h.links[x.index][y.index], 'crash');
    }
    const cl = h.clientLinks[x.index];
    cl.connId++;
    const pending = [...cl.pending.values()];
    cl.pending.clear();
    for (const done of pending) h.at(h.now + CLOSE_NOTICE_MS, () => done({ kind: 'broken' }));
  }

  /** Starts the next incarnation of a crashed node. No-op when it is up. */
  restart(x: SimNode): void {
    if (x.core) return;
    x.restarts++;
    this.h.stats.restarts++;
    this.startNode(x);
  }

  /** Pauses `x` (SIGSTOP): it neither ticks nor reads until resumed. No-op when down or paused. */
  pause(x: SimNode): void {
    if (!x.core || x.paused) return;
    this.h.stats.pauses++;
    this.h.trace(`${x.id} PAUSE`);
    x.paused = true;
    x.tickToken++;
    x.pauseTouch = this.h.durability.faultStart([x.id]);
  }

  /** Resumes `x` (SIGCONT): what waited is handled in order, before or after its overdue tick. No-op unless paused. */
  resume(x: SimNode): void {
    const h = this.h;
    if (!x.core || !x.paused) return;
    h.trace(`${x.id} RESUME (${x.held.length} waiting)`);
    x.paused = false;
    x.pauseTouch?.();
    x.pauseTouch = null;
    const held = x.held;
    x.held = [];
    // after SIGCONT the event loop may run the overdue tick or the waiting I/O first
    const tickFirst = h.rand.chance(0.5);
    if (tickFirst) this.tickNow(x);
    for (const e of held) e();
    if (!tickFirst) this.tickNow(x);
    this.scheduleTick(x, h.rand.between(TICK_MIN_MS, TICK_MAX_MS));
  }

  /** Runs `fn` on a node's core as one event: dropped if the node is gone, held if it is paused. */
  onNode(x: SimNode, gen: number, fn: (core: NodeCore) => void): void {
    if (x.gen !== gen || !x.core) return;
    if (x.paused) {
      x.held.push(() => this.onNode(x, gen, fn));
      return;
    }
    this.h.stats.nodeEvents++;
    fn(x.core);
    this.afterNodeEvent(x);
  }

  private afterNodeEvent(x: SimNode): void {
    const h = this.h;
    const core = x.core;
    if (!core) return;
    core.flush();
    if (h.s.budget !== 'amnesia') {
      h.checker.checkCommitted(x.view!);
      h.checker.checkServing(h.view.upViews(), x.view!);
      h.durability.afterEvent(x.view!, h.pkeys);
    }
    if (h.nem.survivorWatches.length > 0) h.nem.checkSurvivors();
  }

  private scheduleTick(x: SimNode, delay: number): void {
    const h = this.h;
    const gen = x.gen;
    const token = x.tickToken;
    h.at(h.now + delay, () => {
      if (x.gen !== gen || x.tickToken !== token || x.paused || !x.core) return;
      this.tickNow(x);
      this.scheduleTick(x, h.rand.between(TICK_MIN_MS, TICK_MAX_MS));
    });
  }

  private tickNow(x: SimNode): void {
    if (!x.core) return;
    this.h.stats.nodeEvents++;
    this.h.mix(2, x.index, this.h.now);
    x.core.tick();
    this.afterNodeEvent(x);
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
