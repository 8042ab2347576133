import { Op, type ClientRequest, type ClientResponse } from '../client-protocol.js';
import type { ClusterConfig } from '../cluster-config.js';
import { KvStatus } from '../kv-status.js';
import type { NodeCore } from '../node-core.js';
import { partitionCount, partitionOfSegment, segmentOf } from '../partitioning.js';
import type { ClientReply } from './sim-client.js';
import type { DurabilityChecker } from './sim-durability.js';
import type { SafetyChecker } from './sim-invariants.js';
import type { SimRandom } from './sim-random.js';
import type { SimSchedule } from './sim-schedule.js';
import { describeReq, describeRes } from './sim-trace.js';
import type { SimNode } from './sim-world.js';

/** The clients' connection to one node: FIFO both ways, requests by serial. */
export interface ClientLink {
  connId: number;
  lastReqAt: number;
  lastResAt: number;
  pending: Map<number, (r: ClientReply) => void>;
}

/** What a node hands back with its answer: the connection, the request's serial, what it touched. */
export interface ReqToken {
  node: number;
  conn: number;
  serial: number;
  /** Partition of the request's key, and `store/key` (null for metadata). */
  pkey: string | null;
  sk: string | null;
  /** A batch read: its `store/key`s, in request order. */
  batch: string[] | null;
}

/** One answer a read got (Ok: the value id; NotFound: null), by a single or a hedged batch read. */
export interface AnsweredRead {
  /** The key, as `store/key`. */
  sk: string;
  valueId: string | null;
  /** The node that answered. */
  node: string;
  /** Virtual time the node answered, ms. */
  at: number;
  /** Answered as part of a batch read (a replica answering a long-tail retry can be among them). */
  hedged: boolean;
}

/** What the clients' network needs of the simulator (virtual time, ms). */
export interface SimClientNetworkHost {
  readonly now: number;
  readonly s: SimSchedule;
  readonly config: ClusterConfig;
  readonly rand: SimRandom;
  readonly byId: ReadonlyMap<string, SimNode>;
  /** One per node, by node index (a crash breaks its connection: the simulator bumps connId). */
  readonly clientLinks: ClientLink[];
  readonly checker: SafetyChecker;
  readonly durability: DurabilityChecker;
  /** Every answer a read got, checked against the histories at the end. */
  readonly reads: AnsweredRead[];
  at(time: number, fn: () => void): void;
  onNode(x: SimNode, gen: number, fn: (core: NodeCore) => void): void;
  trace(line: string | (() => string)): void;
}

/**
 * The simulated clients' connections to the nodes: requests and answers delayed and FIFO per
 * node, a refused connection to a node that is down, and on every answer the checks a node's
 * read or acknowledgement must pass (sim-invariants.ts, sim-durability.ts) before it travels back.
 */
export class SimClientNetwork {
  private readonly h: SimClientNetworkHost;
  private serial = 0;

  constructor(host: SimClientNetworkHost) {
    this.h = host;
  }


  private clientDelay(): number {
    return this.h.rand.between(this.h.s.net.clientMinDelayMs, this.h.s.net.clientMaxDelayMs);
  }

  request(node: string, req: ClientRequest, done: (r: ClientReply) => void): void {
    const y = this.h.byId.get(node);
    if (!y || !y.core) {
      this.h.at(this.h.now + 2 * this.clientDelay(), () => done({ kind: 'refused' }));
      return;
    }
    const cl = this.h.clientLinks[y.index];
    const serial = ++this.serial;
    cl.pending.set(serial, done);
    const conn = cl.connId;
    const gen = y.gen;
    const t = Math.max(this.h.now + this.clientDelay(), cl.lastReqAt);
    cl.lastReqAt = t;
    const keyed = req.op === Op.Get || req.op === Op.Put || req.op === Op.Delete;
    const token: ReqToken = { node: y.index, conn, serial, pkey: keyed ? this.pkeyOf(req.store, req.key) : null, sk: keyed ? `${req.store}/${req.key}` : null, batch: req.op === Op.GetMany ? req.keys.map((k) => `${req.store}/${k}`) : null };
    this.h.at(t, () => {
      if (cl.connId !== conn) return;
      this.h.onNode(y, gen, (core) => {
        if (req.op !== Op.Metadata) this.h.trace(() => `client->${y.id} ${describeReq(req)}`);
        core.onClient(req, token);
      });
    });
  }

  /** env.respond of a node: the checks on reads and acks, then the answer travels to the client. */
  respond(x: SimNode, gen: number, token: ReqToken, res: ClientResponse): void {
    if (x.gen !== gen || !x.view) return;
    const deposedChecked = this.h.s.budget !== 'amnesia';
    if (res.op === Op.Get && (res.status === KvStatus.Ok || res.status === KvStatus.NotFound)) {
      this.h.checker.checkRead(x.view, token.pkey!, KvStatus[res.status]);
      if (deposedChecked) this.h.checker.checkNotDeposed(x.view, token.pkey!, 'read');
      this.h.reads.push({ sk: token.sk!, valueId: res.status === KvStatus.Ok && res.value ? res.value.toString() : null, node: x.id, at: this.h.now, hedged: false });
    } else if (res.op === Op.GetMany && token.batch) {
      res.items.forEach((it, i) => {
        if (it.status === KvStatus.Ok || it.status === KvStatus.NotFound) this.h.reads.push({ sk: token.batch![i], valueId: it.status === KvStatus.Ok && it.value ? it.value.toString() : null, node: x.id, at: this.h.now, hedged: true });
      });
    } else if ((res.op === Op.Put || res.op === Op.Delete) && res.status === KvStatus.Ok && res.flags === 0) {
      this.h.checker.checkAck(x.view, token.pkey!);
      if (deposedChecked) {
        this.h.checker.checkNotDeposed(x.view, token.pkey!, 'ack');
        const slash = token.sk!.indexOf('/');
        this.h.durability.onAck(x.view, token.pkey!, token.sk!.slice(0, slash), token.sk!.slice(slash + 1), res.info);
      }
    }
    const copy = res.op === Op.Put || res.op === Op.Delete ? { ...res, info: { ...res.info } } : { ...res };
    if (res.op !== Op.Metadata) this.h.trace(() => `${x.id}->client ${describeRes(copy)}`);
    const cl = this.h.clientLinks[token.node];
    const t = Math.max(this.h.now + this.clientDelay(), cl.lastResAt);
    cl.lastResAt = t;
    this.h.at(t, () => {
      if (cl.connId !== token.conn) return;
      const done = cl.pending.get(token.serial);
      if (!done) return;
      cl.pending.delete(token.serial);
      done({ kind: 'response', res: copy });
    });
  }

  private pkeyOf(store: string, key: string): string {
    const st = this.h.config.stores.find((s) => s.name === store)!;
    return `${store}/${partitionOfSegment(segmentOf(key, st.segments), partitionCount(this.h.config))}`;
  }
}
