import { decodeClusterFrame, encodeBatch, encodeRep } from '../cluster-codec.js';
import { tenureTag, type ClusterMsg } from '../cluster-messages.js';
import { FrameWriter } from '../framing.js';
import type { NodeCore, ProbeResult } from '../node-core.js';
import type { SimStats } from './sim-result.js';
import type { DurabilityChecker } from './sim-durability.js';
import type { SimRandom } from './sim-random.js';
import type { SimSchedule } from './sim-schedule.js';
import { describeMsg } from './sim-trace.js';
import type { Link, SimNode } from './sim-world.js';

/** Time for a socket close to be noticed by an end, ms. */
export const CLOSE_NOTICE_MS = 1;
/** The shell's redial delay and connect/probe timeout, ms (node-shell.ts). */
export const REDIAL_MS = 100;
export const CONNECT_TIMEOUT_MS = 500;

/** What the simulated cluster network needs of the simulator (virtual time, ms). */
export interface SimNetworkHost {
  readonly now: number;
  readonly s: SimSchedule;
  readonly rand: SimRandom;
  readonly byId: ReadonlyMap<string, SimNode>;
  /** links[a][b]: the directed connection a dials to b. */
  readonly links: Link[][];
  /** cuts[a][b] > 0: b's messages to a are dropped (grudges in effect). */
  readonly cuts: number[][];
  readonly stats: SimStats;
  readonly durability: DurabilityChecker;
  at(time: number, fn: () => void): void;
  /** Runs `fn` on the node's core if incarnation `gen` is still up (held while paused; then flush and checks). */
  onNode(x: SimNode, gen: number, fn: (core: NodeCore) => void): void;
  trace(line: string | (() => string)): void;
  mix(a: number, b: number, c?: number): void;
}

/**
 * The simulation's node-to-node network (sim brief): directed connections dialled as the shell
 * does (refused while nothing listens, timed out across a cut, redialled), FIFO per connection,
 * delays with a per-link skew, resets that lose the connection and what is queued on it, grudges
 * that drop and break, close notices (NodeLeft), probes, and every message through the real
 * cluster codec. Replica position claims are checked as they are sent (sim-durability.ts).
 */
export class SimNetwork {
  private readonly h: SimNetworkHost;
  private readonly codec = new FrameWriter(4096);

  constructor(host: SimNetworkHost) {
    this.h = host;
  }


  delay(): number {
    return this.h.rand.between(this.h.s.net.minDelayMs, this.h.s.net.maxDelayMs);
  }

  cut(a: SimNode, b: SimNode): boolean {
    return this.h.cuts[a.index][b.index] > 0;
  }

  dial(l: Link): void {
    if (l.state !== 'down' || !l.from.core) return;
    l.state = 'connecting';
    const conn = ++l.connId;
    const started = this.h.now;
    const gen = l.from.gen;
    this.h.at(this.h.now + 2 * this.delay(), () => {
      if (l.connId !== conn || l.from.gen !== gen) return;
      if (!l.to.core) {
        // refused: nothing listens; the shell redials after 100 ms
        l.state = 'down';
        this.h.at(this.h.now + REDIAL_MS, () => l.from.gen === gen && this.dial(l));
        return;
      }
      if (this.cut(l.from, l.to) || this.cut(l.to, l.from)) {
        this.h.at(started + CONNECT_TIMEOUT_MS, () => {
          if (l.connId !== conn || l.from.gen !== gen) return;
          l.state = 'down';
          this.h.at(this.h.now + REDIAL_MS, () => l.from.gen === gen && this.dial(l));
        });
        return;
      }
      l.state = 'up';
      l.lastAt = this.h.now;
      this.h.durability.linkChanged(l.from.id, l.to.id, true);
      this.h.trace(`link ${l.from.id}->${l.to.id} up (conn ${conn})`);
      // the shell writes the hello when the connect callback runs (held while the dialer is paused)
      this.onNodeRaw(l.from, gen, () => {
        if (l.connId !== conn || !l.from.core) return;
        const hello: ClusterMsg = { t: 'hello', inc: l.from.core.inc, term: l.from.core.currentTerm };
        this.enqueue(l, hello, true);
      });
    });
  }

  /** Like onNode, for shell-level work that does not run the core (no flush, no checks). */
  private onNodeRaw(x: SimNode, gen: number, fn: () => void): void {
    if (x.gen !== gen || !x.core) return;
    if (x.paused) {
      x.held.push(() => this.onNodeRaw(x, gen, fn));
      return;
    }
    fn();
  }

  breakLink(l: Link, why: string): void {
    if (l.from === l.to || l.state === 'down') return;
    const wasUp = l.state === 'up';
    const conn = l.connId;
    l.state = 'down';
    l.connId++;
    this.h.durability.linkChanged(l.from.id, l.to.id, false);
    if (wasUp) this.h.trace(`link ${l.from.id}->${l.to.id} broken (${why})`);
    const a = l.from;
    const b = l.to;
    if (a.core) {
      const gen = a.gen;
      this.h.at(this.h.now + CLOSE_NOTICE_MS, () =>
        this.h.onNode(a, gen, (core) => {
          if (wasUp) core.onPeerDown(b.id);
          this.h.at(this.h.now + REDIAL_MS, () => a.gen === gen && this.dial(l));
        }),
      );
    }
    if (wasUp && b.core) {
      const gen = b.gen;
      this.h.at(this.h.now + CLOSE_NOTICE_MS, () =>
        this.h.onNode(b, gen, (core) => {
          if (l.helloConn === conn) core.onPeerDown(a.id);
        }),
      );
    }
  }

  send(x: SimNode, gen: number, to: string, msg: ClusterMsg): void {
    if (x.gen !== gen) return;
    const y = this.h.byId.get(to);
    if (!y) return;
    if (this.h.s.budget !== 'amnesia') {
      if (msg.t === 'rep-ack') this.checkPositionClaim('rep-ack', x, y, msg.pkey, msg.tag, msg.rev);
      else if (msg.t === 'sync-req' && !msg.recovery && msg.haveTag === msg.tag && msg.haveRev >= 0) this.checkPositionClaim('sync-req', x, y, msg.pkey, msg.tag, msg.haveRev);
    }
    const l = this.h.links[x.index][y.index];
    this.h.stats.messagesSent++;
    if (l.state !== 'up') {
      this.h.stats.messagesLost++;
      return;
    }
    if (this.cut(x, y)) {
      this.h.stats.messagesLost++;
      this.breakLink(l, 'grudge');
      return;
    }
    if (this.h.rand.chance(this.h.s.net.resetProbability)) {
      this.h.stats.resets++;
      this.h.stats.messagesLost++;
      this.breakLink(l, 'reset');
      return;
    }
    this.enqueue(l, msg, false);
  }

  /**
   * Replica `x` claims a position in the log of tenure `tag` to `y` (a rep-ack of revision `rev`,
   * or a sync-req from revision `rev` naming that tenure): when `y` is, by its committed entry,
   * the active of that very tenure, `x`'s copy must be its log's prefix at `rev`
   * (sim-durability.ts onPositionClaim). Judged at the sending instant, on both copies as they are.
   */
  private checkPositionClaim(what: 'rep-ack' | 'sync-req', x: SimNode, y: SimNode, pkey: string, tag: string, rev: number): void {
    if (!x.view || !y.view) return;
    const e = y.view.committedEntry(pkey);
    if (!e?.active || e.active.node !== y.id || e.active.inc !== y.view.inc || tenureTag(e.active, e.activeSince) !== tag) return;
    this.h.durability.onPositionClaim(what, x.view, y.view, pkey, tag, rev);
  }

  private enqueue(l: Link, msg: ClusterMsg, hello: boolean): void {
    const copy = hello ? msg : this.wire(msg);
    const t = Math.max(this.h.now + this.delay() + l.skewMs, l.lastAt);
    l.lastAt = t;
    const conn = l.connId;
    const b = l.to;
    this.h.at(t, () => {
      if (l.connId !== conn || l.state !== 'up') {
        this.h.stats.messagesLost++;
        return;
      }
      const gen = b.gen;
      this.h.onNode(b, gen, (core) => {
        this.h.mix(3, l.from.index * 16 + b.index, this.h.now);
        this.h.trace(() => `${l.from.id}->${b.id} ${describeMsg(copy)}`);
        if (copy.t === 'hello') l.helloConn = conn;
        core.onMessage(l.from.id, copy);
      });
    });
  }

  /** The message as the peer decodes it: through the real cluster codec (a deep copy). */
  private wire(msg: ClusterMsg): ClusterMsg {
    const w = this.codec;
    if (msg.t === 'rep') encodeRep(w, msg);
    else encodeBatch(w, [msg]);
    const frame = w.take();
    const fr = decodeClusterFrame(frame.subarray(4));
    if (fr.kind !== 'msgs' || fr.msgs.length !== 1) throw new Error(`codec round trip of ${msg.t} gave ${fr.kind}`);
    return fr.msgs[0];
  }

  probe(x: SimNode, gen: number, node: string): void {
    const y = this.h.byId.get(node);
    if (!y || x.gen !== gen) return;
    let result: ProbeResult;
    let after: number;
    if (!y.core) {
      result = 'refused';
      after = 2 * this.delay();
    } else if (this.cut(x, y) || this.cut(y, x)) {
      result = 'timeout';
      after = CONNECT_TIMEOUT_MS;
    } else {
      result = 'alive';
      after = 2 * this.delay();
    }
    this.h.at(this.h.now + after, () =>
      this.h.onNode(x, gen, (core) => {
        this.h.trace(`${x.id} probe ${node} -> ${result}`);
        core.onProbeResult(node, result);
      }),
    );
  }
}
