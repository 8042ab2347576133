import { FLAG_INDETERMINATE, Op, type ClientRequest, type ClientResponse } from '../client-protocol.js';
import type { ClusterConfig } from '../cluster-config.js';
import { mergeMetadata, type ClusterView } from '../client/zaris-client.js';
import { backoffDelayMs, requiresMapRefresh, shouldRetry } from '../client/retry-policy.js';
import type { LedgerOutcome } from '../client/retry-loop.js';
import { KvStatus } from '../kv-status.js';
import type { MetadataDoc } from '../node-core.js';
import { partitionCount, partitionOfSegment, segmentOf } from '../partitioning.js';
import type { SimRandom } from './sim-random.js';
import type { WorkloadParams } from './sim-schedule.js';

/** How a client request to a node ended, as the client's connection sees it. */
export type ClientReply =
  | { kind: 'response'; res: ClientResponse }
  /** Nothing listens at the node's address: the request was never written. */
  | { kind: 'refused' }
  /** The connection broke after the request was written: it may have been applied. */
  | { kind: 'broken' };

/** What the simulated clients need from the simulator: virtual time and the client network. */
export interface ClientHost {
  /** Virtual time, ms. */
  now(): number;
  /** Runs `fn` after `delayMs` of virtual time. */
  timer(delayMs: number, fn: () => void): void;
  /** Sends a request to a node's client port; `done` is called at most once (never on a timeout: the client times out itself). */
  request(node: string, req: ClientRequest, done: (reply: ClientReply) => void): void;
}

/** The write operations of the workload (DESIGN.md §3): put, ifMatchVersion put, ifAbsent create, delete. */
export type WriteKind = 'put' | 'cas' | 'create' | 'delete';

/** One write of a key's history, in the order the key's writer issued them. */
export interface WriteRecord {
  /** 1-based sequence number within the key. */
  seq: number;
  kind: WriteKind;
  /** The unique value id written (`store/key#seq`); null for a delete. */
  valueId: string | null;
  /** `pending` until the operation completes. */
  outcome: LedgerOutcome | 'pending';
  /** Status of the last attempt (or the transport failure kind). */
  last: string;
  attempts: number;
  invokeMs: number;
  completeMs: number;
  /** For an acknowledged write: who acked it, at which epoch and version. */
  ack?: { node: string; epoch: number; version: number; revision: number; copies: number };
}

/** Every write of one key (one writer owns it, so they are totally ordered). */
export interface KeyHistory {
  store: string;
  key: string;
  /** `${store}/${partition}` */
  pkey: string;
  writes: WriteRecord[];
}

/** Counters of the simulated clients. */
export interface ClientStats {
  writesOk: number;
  writesFail: number;
  writesInfo: number;
  reads: number;
  readsAnswered: number;
  /** Hedged batch reads sent straight to an in-sync replica (seed 004's long-tail retry target). */
  hedgedReads: number;
  /** Of those, the ones the replica answered (Ok or NotFound) instead of declining. */
  hedgedAnswered: number;
  attempts: number;
  refreshes: number;
}

interface KeyState {
  h: KeyHistory;
  present: boolean | null;
  version: number;
}

interface Attempt {
  status?: KvStatus;
  /** Transport failure kind when the attempt threw. */
  error?: string;
  mayHaveApplied: boolean;
  res?: ClientResponse;
}

interface OpRun {
  req: ClientRequest;
  store: string;
  key: string;
  n: number;
  deadline: number;
  anyMayHaveApplied: boolean;
  onDone: (outcome: LedgerOutcome, last: Attempt, attempts: number) => void;
}

/** Shared debounce of map refreshes after a successful one (seed 000: 500 ms). */
const REFRESH_DEBOUNCE_MS = 500;
/** Timeout of one metadata request during a refresh, ms (the real client's default). */
const METADATA_TIMEOUT_MS = 500;
/** Base of the client's linear backoff, ms (seed 000 default). */
const BACKOFF_MS = 100;

/**
 * The simulated clients: one writer per (store, writer index), each owning its keys and writing
 * them one operation at a time, plus reads. Routing and retries are the real client's
 * (DESIGN.md §2 "Client", seed 000): a key goes to the active of the highest-epoch runtime entry
 * any node reported ({@link mergeMetadata}); each attempt's status goes through
 * {@link shouldRetry} / {@link requiresMapRefresh} / {@link backoffDelayMs}; attempts AND the
 * deadline bound the operation; one shared map refresh is in flight at a time with a 500 ms
 * debounce. The ledger outcome is the real loop's rule: `ok` when the last attempt was Ok, else
 * `info` when any attempt may have been applied (a timeout, a broken connection, an
 * INDETERMINATE-flagged answer), else `fail`. The loop is written as callbacks on virtual time
 * (the real one awaits promises) so the whole simulation stays synchronous and deterministic.
 */
export class SimClients {
  readonly histories: KeyHistory[] = [];
  readonly stats: ClientStats = { writesOk: 0, writesFail: 0, writesInfo: 0, reads: 0, readsAnswered: 0, hedgedReads: 0, hedgedAnswered: 0, attempts: 0, refreshes: 0 };
  private view: ClusterView | null = null;
  private refreshing: Array<() => void> | null = null;
  private lastRefreshOk = -Infinity;
  private reqId = 0;
  private stopped = true;
  private busy = 0;
  private readonly writers: KeyState[][] = [];

  /**
   * @param host the simulator's client network and clock.
   * @param config the cluster config (stores, nodes).
   * @param params the workload shape.
   * @param rand the clients' own random stream.
   */
  constructor(
    private readonly host: ClientHost,
    private readonly config: ClusterConfig,
    private readonly params: WorkloadParams,
    private readonly rand: SimRandom,
  ) {
    const parts = partitionCount(config);
    for (const st of config.stores) {
      for (let w = 0; w < params.writersPerStore; w++) {
        const mine: KeyState[] = [];
        for (let i = 0; i < params.keysPerWriter; i++) {
          const key = `k${w * params.keysPerWriter + i}`;
          const h: KeyHistory = { store: st.name, key, pkey: `${st.name}/${partitionOfSegment(segmentOf(key, st.segments), parts)}`, writes: [] };
          this.histories.push(h);
          mine.push({ h, present: false, version: 0 });
        }
        this.writers.push(mine);
      }
    }
  }

  /** No operation in flight and none will start (after {@link stop}). */
  get idle(): boolean {
    return this.stopped && this.busy === 0;
  }

  /** The client's current merged view, or null before the first successful refresh. */
  get clusterView(): ClusterView | null {
    return this.view;
  }

  /** Starts every writer (after a first map refresh). */
  start(): void {
    this.stopped = false;
    this.refresh(() => {
      for (const keys of this.writers) this.host.timer(this.think(), () => this.nextOp(keys, 0));
    });
  }

  /** No new operation starts; those in flight finish (each bounded by its deadline). */
  stop(): void {
    this.stopped = true;
  }

  private think(): number {
    return this.rand.between(this.params.thinkMinMs, this.params.thinkMaxMs);
  }

  private nextOp(keys: KeyState[], i: number): void {
    if (this.stopped) return;
    const k = keys[i % keys.length];
    const again = (): void => {
      this.busy--;
      this.host.timer(this.think(), () => this.nextOp(keys, i + 1));
    };
    this.busy++;
    if (this.rand.chance(this.params.readFraction)) {
      this.stats.reads++;
      const target = this.rand.pick(keys);
      const alternate = this.rand.chance(0.5) ? this.alternateOf(target.h.store, target.h.key) : null;
      if (alternate !== null) {
        this.hedged(alternate, target.h.store, target.h.key, again);
        return;
      }
      this.run({ op: Op.Get, reqId: 0, store: target.h.store, key: target.h.key }, (_o, last) => {
        if (last.status === KvStatus.Ok || last.status === KvStatus.NotFound) this.stats.readsAnswered++;
        again();
      });
      return;
    }
    this.write(k, again);
  }

  private write(k: KeyState, done: () => void): void {
    const h = k.h;
    let kind: WriteKind;
    const seqNext = h.writes.length + 1;
    if (k.present === false) kind = 'create';
    else if (k.present === true && this.rand.chance(this.params.deleteFraction)) kind = 'delete';
    else if (k.present === true && (seqNext & 3) === 1) kind = 'cas';
    else kind = 'put';
    const valueId = kind === 'delete' ? null : `${h.store}/${h.key}#${seqNext}`;
    const rec: WriteRecord = { seq: seqNext, kind, valueId, outcome: 'pending', last: '', attempts: 0, invokeMs: this.host.now(), completeMs: 0 };
    h.writes.push(rec);
    let req: ClientRequest;
    const value = valueId === null ? Buffer.alloc(0) : Buffer.from(valueId);
    switch (kind) {
      case 'create':
        req = { op: Op.Put, reqId: 0, store: h.store, key: h.key, value, ifAbsent: true };
        break;
      case 'cas':
        req = { op: Op.Put, reqId: 0, store: h.store, key: h.key, value, ifMatchVersion: k.version };
        break;
      case 'delete':
        req = { op: Op.Delete, reqId: 0, store: h.store, key: h.key };
        break;
      default:
        req = { op: Op.Put, reqId: 0, store: h.store, key: h.key, value };
    }
    this.run(req, (outcome, last, attempts) => {
      rec.outcome = outcome;
      rec.attempts = attempts;
      rec.completeMs = this.host.now();
      rec.last = last.status !== undefined ? KvStatus[last.status] : (last.error ?? 'error');
      if (outcome === 'ok') {
        this.stats.writesOk++;
        const res = last.res as Extract<ClientResponse, { info: unknown }>;
        rec.ack = { node: res.info.node, epoch: res.info.epoch, version: res.info.version, revision: res.info.revision, copies: res.info.copies };
        k.present = kind !== 'delete';
        k.version = res.info.version;
      } else if (outcome === 'fail') {
        this.stats.writesFail++;
        if (last.status === KvStatus.Conflict || last.status === KvStatus.NotFound) k.present = null;
      } else {
        this.stats.writesInfo++;
        k.present = null;
      }
      done();
    });
  }

  /** One operation through the retry loop (seed 000's two bounds). */
  private run(req: ClientRequest, onDone: OpRun['onDone']): void {
    const r = req as { store: string; key: string };
    const op: OpRun = { req, store: r.store, key: r.key, n: 0, deadline: this.host.now() + this.params.deadlineMs, anyMayHaveApplied: false, onDone };
    this.attempt(op);
  }

  private attempt(op: OpRun): void {
    op.n++;
    this.stats.attempts++;
    const target = this.route(op.store, op.key);
    if (target === null) {
      // no active owner in the map: the real client throws PartitionUnavailable before sending
      this.endAttempt(op, { error: 'PartitionUnavailable', mayHaveApplied: false });
      return;
    }
    let settled = false;
    const req = { ...op.req, reqId: ++this.reqId } as ClientRequest;
    this.host.request(target, req, (reply) => {
      if (settled) return;
      settled = true;
      if (reply.kind === 'refused') return this.endAttempt(op, { error: 'ConnectRefused', mayHaveApplied: false });
      if (reply.kind === 'broken') return this.endAttempt(op, { error: 'Transport', mayHaveApplied: true });
      const res = reply.res;
      if (res.flags & FLAG_INDETERMINATE) return this.endAttempt(op, { error: 'Indeterminate', mayHaveApplied: true });
      this.endAttempt(op, { status: res.status, mayHaveApplied: res.status === KvStatus.Ok, res });
    });
    this.host.timer(this.params.attemptTimeoutMs, () => {
      if (settled) return;
      settled = true;
      this.endAttempt(op, { error: 'Timeout', mayHaveApplied: true });
    });
  }

  private endAttempt(op: OpRun, a: Attempt): void {
    if (a.mayHaveApplied) op.anyMayHaveApplied = true;
    const status = a.status;
    const retryable = status === undefined ? true : shouldRetry(status);
    const refresh = status === undefined ? true : retryable && requiresMapRefresh(status);
    const finish = (): void => op.onDone(status === KvStatus.Ok ? 'ok' : op.anyMayHaveApplied ? 'info' : 'fail', a, op.n);
    if (!(retryable && op.n < this.params.maxAttempts && this.host.now() < op.deadline)) return finish();
    const next = (): void => {
      const now = this.host.now();
      if (now >= op.deadline) return finish();
      const delay = backoffDelayMs(op.n, BACKOFF_MS, status, op.deadline - now);
      if (delay <= 0) return this.attempt(op);
      this.host.timer(delay, () => (this.host.now() >= op.deadline ? finish() : this.attempt(op)));
    };
    if (refresh) this.refresh(next);
    else next();
  }

  /**
   * The replica a long-tail retry would ask (the real client's choice: an in-sync member other
   * than the active, from the merged map), or null.
   */
  private alternateOf(store: string, key: string): string | null {
    const v = this.view;
    const st = v?.stores.get(store);
    if (!v || !st) return null;
    const e = v.runtime.get(`${store}/${partitionOfSegment(segmentOf(key, st.segments), st.partitions)}`);
    return e ? (e.inSync.find((n) => n !== e.active) ?? null) : null;
  }

  /**
   * A hedged batch read of one key sent straight to `node` (as seed 004's retry sends still
   * pending keys to another replica): one attempt; the replica answers or declines per key. What
   * it answers is checked by the simulator like any read.
   */
  private hedged(node: string, store: string, key: string, done: () => void): void {
    this.stats.hedgedReads++;
    let settled = false;
    const finish = (): void => {
      if (settled) return;
      settled = true;
      done();
    };
    this.host.request(node, { op: Op.GetMany, reqId: ++this.reqId, store, keys: [key], allowReplica: true }, (reply) => {
      if (settled) return;
      if (reply.kind === 'response' && reply.res.op === Op.GetMany && reply.res.items.length === 1) {
        const st = reply.res.items[0].status;
        if (st === KvStatus.Ok || st === KvStatus.NotFound) this.stats.hedgedAnswered++;
      }
      finish();
    });
    this.host.timer(this.params.attemptTimeoutMs, finish);
  }

  private route(store: string, key: string): string | null {
    const v = this.view;
    if (!v) return null;
    const st = v.stores.get(store);
    if (!st) return null;
    const e = v.runtime.get(`${store}/${partitionOfSegment(segmentOf(key, st.segments), st.partitions)}`);
    return e?.active ?? null;
  }

  /**
   * The shared map refresh (seed 000 "one refresh, not a thundering herd"): callers ride the
   * fetch in flight; within 500 ms of a successful one nothing is fetched. A fetch asks every
   * node for its metadata (500 ms timeout) and merges what answered; a fetch nobody answered
   * leaves the map as it was.
   */
  private refresh(done: () => void): void {
    if (this.refreshing) {
      this.refreshing.push(done);
      return;
    }
    if (this.host.now() - this.lastRefreshOk < REFRESH_DEBOUNCE_MS) return done();
    this.stats.refreshes++;
    const waiters = [done];
    this.refreshing = waiters;
    const docs: MetadataDoc[] = [];
    let outstanding = this.config.nodes.length;
    let finished = false;
    const finish = (): void => {
      if (finished) return;
      finished = true;
      if (docs.length > 0) {
        this.view = mergeMetadata(docs);
        this.lastRefreshOk = this.host.now();
      }
      this.refreshing = null;
      for (const w of waiters) w();
    };
    for (const n of this.config.nodes) {
      this.host.request(n.id, { op: Op.Metadata, reqId: ++this.reqId }, (reply) => {
        if (finished) return;
        if (reply.kind === 'response' && reply.res.op === Op.Metadata && reply.res.status === KvStatus.Ok) docs.push(JSON.parse(reply.res.json) as MetadataDoc);
        if (--outstanding === 0) finish();
      });
    }
    this.host.timer(METADATA_TIMEOUT_MS, finish);
  }
}
