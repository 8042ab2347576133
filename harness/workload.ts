import { TransportError } from '../nodes/client/transport-error.js';
import type { ReadResult, ZarisClient } from '../nodes/client/zaris-client.js';
import { partitionOfSegment, segmentOf } from '../nodes/partitioning.js';
import type { Ledger, Outcome, WriteOp } from '../ledger/ledger-writer.js';
import { writeId } from '../ledger/schema.js';
import type { RunClock } from './clock.js';
import { isWorkloadDriver, round3, ZarisDriver, zarisReadAnswer, type WorkloadDriver } from './workload-driver.js';

/** A store the workload writes (DESIGN.md §3: sync3, async3, rf1 by default). */
export interface WorkloadStore {
  name: string;
  segments: number;
  partitions: number;
  replicationFactor: number;
  /** The store's configured ack mode (sync acks at RF > 1 are probed). */
  ackMode: 'sync' | 'async';
  /**
   * The partition of a key (a target's `partitionOf`); default: the Zaris rule, the key's segment
   * (of `segments`) grouped into `partitions`.
   */
  partitionOf?: (key: string) => number;
}

/**
 * What the sync-ack probes need (issue 10, last build bullet), from the harness, not from the
 * client under test: the partition's in-sync members at the ack's epoch, and a local read of one
 * node's own copy (the store's `getLocal`: Ok with value and the epoch of the node's own committed
 * entry, NotFound, or a non-Ok status when that node is not an in-sync member under its current
 * incarnation).
 */
export interface AckProber {
  /** In-sync members of a partition (the active included) at `epoch` or later, or null when unknown. */
  inSyncAt(store: string, partition: number, epoch: number): Promise<readonly string[] | null>;
  /** One local read on `node`; may throw a TransportError. */
  getLocal(node: string, store: string, key: string): Promise<ReadResult>;
}

/** Workload shape. */
export interface WorkloadOptions {
  stores: WorkloadStore[];
  /** Writers per store; each owns its keys, so a key's writes are sequential. */
  writersPerStore: number;
  /** Keys each writer writes at a time (its slots); each slot runs on its own: writes in flight = writers x keys. */
  keysPerWriter: number;
  /**
   * A key takes between min and max writes, then retires: the writer moves to a fresh key and the
   * retired key's last acknowledged write must survive every fault until the end of the run (the
   * final reads check it). Default 10..100 (a 4-hour run at 3,000 writes/s creates ~0.8 M keys).
   */
  writesPerKey?: { min: number; max: number };
  /** Target writes per second over all stores; 0 = as fast as possible. */
  ratePerSec: number;
  /** Seeded PRNG (0..1) choosing operations. */
  random: () => number;
  /** Fraction of writes that are deletes (default 0.03). */
  deleteFraction?: number;
  /**
   * Reads of the workload's own keys, checked by the verifier (history-format.md v2 read rules).
   * After a write, with probability `readFraction` (default 0.05) a single get of the key just
   * written; else with probability `batchReadFraction` (default 0.01) a batch get (seed 004
   * long-tail retry) of the writer's current keys (at most `batchReadKeys`, default 8). With the
   * defaults, read entries come to ~13% of writes, read requests to ~6%.
   */
  readFraction?: number;
  batchReadFraction?: number;
  batchReadKeys?: number;
  /**
   * Sync-ack probes: this fraction of the sync acks at RF > 1 (default 0.01) is followed at once by
   * a local read of the key on each other in-sync member (recorded as reads of kind 'probe').
   * Needs `prober`; without one nothing is probed.
   */
  probeFraction?: number;
  prober?: AckProber;
}

/** The kinds of read the ledger records (CONTRACT.md `Ledger.read`). */
type ReadKind = Parameters<Ledger['read']>[0]['kind'];

interface KeyState {
  keyId: number;
  store: string;
  key: string;
  partition: number;
  seq: number;
  /** Writes left before the key retires. */
  remaining: number;
  /** true present, false absent, null unknown (after an indeterminate write). */
  present: boolean | null;
  version: number;
}

/** Per-store per-second figures, flushed to the ledger's stats table every second. */
interface SecondBucket {
  acked: number;
  failed: number;
  indeterminate: number;
  latencies: number[];
  statuses: Record<string, number>;
}

/** The ledger event of a batch get that ran under a multi-key retry policy other than the store's previous batch get's (seed 004). */
export const BATCH_GET_POLICY_EVENT = 'batch-get-policy';

/**
 * A change of the server policy a store's batch gets run under, as the client under test had
 * published it when the batch get started (seed 004: the request captures its delay once).
 */
export interface BatchGetPolicySeen {
  store: string;
  /** The published server table (canonical text), or null when none was published. */
  policy: string | null;
  /** The delay this request captured, ms (null: no lookup). */
  delayMs: number | null;
  /** Distinct keys of the request. */
  keys: number;
  /** Run clock at the request's start, ms. */
  atMs: number;
}

/** Receives every acknowledged write (the failover meter listens here). */
export type AckListener = (store: string, partition: number, node: string, epoch: number, tMs: number) => void;

/** Totals of a workload run, for the console and the benchmark. */
export interface WorkloadTotals {
  attempted: number;
  ok: number;
  fail: number;
  info: number;
  /** Read requests made (a batch get counts once), and read entries recorded (one per key). */
  readRequests: number;
  readEntries: number;
  /** Read entries whose outcome was not `ok`. */
  readsUnanswered: number;
  /** Local reads made by sync-ack probes. */
  probes: number;
}

interface Writer {
  store: WorkloadStore;
  index: number;
  slots: KeyState[];
}

/**
 * The workload (DESIGN.md §3): W writers per store, each owning its keys; every write has a
 * unique value id (its write id `w<key_id>.<seq>`), is recorded in the ledger at invoke (and only
 * sent once that row is committed), and completed with the outcome the client's attempt trace
 * implies. Mix: plain puts, ifMatchVersion puts (cas), ifAbsent creates, deletes, batch reads.
 * Keys retire after a few writes, so acknowledged writes stay the last of their key for the rest of
 * the run and the final reads test their durability through every later fault. Memory holds only
 * the writers' current keys: it does not grow with the run.
 */
export class Workload {
  private readonly writers: Writer[] = [];
  private nextKeyId = 1;
  private stopped = false;
  private running: Promise<void>[] = [];
  private readonly buckets = new Map<string, SecondBucket>();
  private currentSecond = -1;
  private statsTimer: NodeJS.Timeout | null = null;
  private readonly ackListeners: AckListener[] = [];
  readonly totals: WorkloadTotals = { attempted: 0, ok: 0, fail: 0, info: 0, readRequests: 0, readEntries: 0, readsUnanswered: 0, probes: 0 };
  private tokens = 0;
  private tokenWaiters: Array<() => void> = [];
  private refill: NodeJS.Timeout | null = null;

  /** What the workload writes and reads through (the client under test). */
  private readonly driver: WorkloadDriver;

  /**
   * @param client the client under test: a Zaris client (driven by {@link ZarisDriver}) or any
   *   {@link WorkloadDriver} (a target's client adapter: targets/target-driver.ts).
   */

  /** Per store: the server policy its last batch get ran under (seed 004). */
  private readonly policySeen = new Map<string, string | null>();
  /** Every change of the policy a store's batch gets ran under, in order (also `batch-get-policy` ledger events). */
  readonly policyChanges: BatchGetPolicySeen[] = [];
  constructor(
    client: ZarisClient | WorkloadDriver,
    private readonly ledger: Ledger,
    private readonly clock: RunClock,
    private readonly opts: WorkloadOptions,
  ) {
    this.driver = isWorkloadDriver(client) ? client : new ZarisDriver(client);
    for (const store of opts.stores) {
      for (let w = 0; w < opts.writersPerStore; w++) {
        const slots: KeyState[] = [];
        for (let i = 0; i < opts.keysPerWriter; i++) slots.push(this.newKey(store, w));
        this.writers.push({ store, index: w, slots });
      }
    }
  }

  /** Keys created so far (each registered in the ledger before its first write). */
  get keysCreated(): number {
    return this.nextKeyId - 1;
  }

  /** A fresh key `k<key_id>` of a store, registered in the ledger (committed with its first invoke at the latest). */
  private newKey(store: WorkloadStore, writer: number): KeyState {
    const keyId = this.nextKeyId++;
    const key = `k${keyId}`;
    const partition = store.partitionOf ? store.partitionOf(key) : partitionOfSegment(segmentOf(key, store.segments), store.partitions);
    const range = this.opts.writesPerKey ?? { min: 10, max: 100 };
    const remaining = range.min + Math.floor(this.opts.random() * (range.max - range.min + 1));
    this.ledger.addKey({ keyId, store: store.name, key, partition, writer });
    return { keyId, store: store.name, key, partition, seq: 0, remaining, present: false, version: 0 };
  }

  onAck(l: AckListener): void {
    this.ackListeners.push(l);
  }

  /** Starts every writer. */
  start(): void {
    if (this.opts.ratePerSec > 0) {
      const perTick = this.opts.ratePerSec / 100;
      this.refill = setInterval(() => {
        this.tokens = Math.min(this.tokens + perTick, this.opts.ratePerSec / 5);
        while (this.tokens >= 1 && this.tokenWaiters.length > 0) {
          this.tokens -= 1;
          this.tokenWaiters.shift()!();
        }
      }, 10);
    }
    this.statsTimer = setInterval(() => this.rollSecond(Math.floor(this.clock.now() / 1000)), 250);
    // every key slot is its own sequential loop: a key stuck in retries (its partition failing
    // over) holds up only itself, never the writer's other keys
    for (const w of this.writers) for (let slot = 0; slot < w.slots.length; slot++) this.running.push(this.slotLoop(w, slot));
  }

  /** Stops issuing writes and waits for the ones in flight (each bounded by the client's deadline). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.refill) clearInterval(this.refill);
    for (const w of this.tokenWaiters) w();
    this.tokenWaiters = [];
    await Promise.all(this.running);
    if (this.statsTimer) clearInterval(this.statsTimer);
    this.rollSecond(Number.MAX_SAFE_INTEGER);
  }

  private take(): Promise<void> | null {
    if (this.opts.ratePerSec <= 0) return null;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return null;
    }
    return new Promise((r) => this.tokenWaiters.push(r));
  }

  private async slotLoop(w: Writer, slot: number): Promise<void> {
    const rnd = this.opts.random;
    const delFrac = this.opts.deleteFraction ?? 0.03;
    const readFrac = this.opts.readFraction ?? 0.05;
    const batchFrac = this.opts.batchReadFraction ?? 0.01;
    while (!this.stopped) {
      const wait = this.take();
      if (wait) await wait;
      if (this.stopped) break;
      const k = w.slots[slot];
      await this.write(k, rnd() < delFrac);
      // reads where stale reads show: the key just written, and the writer's other current keys
      const r = rnd();
      if (r < readFrac) await this.readOne(k);
      else if (r < readFrac + batchFrac) await this.batchRead(w.slots);
      if (--k.remaining <= 0) w.slots[slot] = this.newKey(w.store, w.index);
    }
  }

  /** Records one read entry (CONTRACT.md `Ledger.read`) and counts it. */
  private recordRead(k: KeyState, kind: ReadKind, invokeMs: number, completeMs: number, outcome: Outcome, node: string | null, value: string | null): void {
    this.ledger.read({ keyId: k.keyId, invokeMs, completeMs, outcome, node, value, kind });
    this.totals.readEntries++;
    if (outcome !== 'ok') this.totals.readsUnanswered++;
  }

  /** A single get of `k` through the client under test (Zaris: its active owner, seed 000 retries). */
  private async readOne(k: KeyState): Promise<void> {
    this.totals.readRequests++;
    const invokeMs = this.clock.now();
    const r = await this.driver.read(k.store, k.key);
    this.recordRead(k, 'get', invokeMs, this.clock.now(), r.outcome, r.node, r.outcome === 'ok' ? r.value : null);
    const b = this.bucket(k.store);
    b.statuses[r.statusName] = (b.statuses[r.statusName] ?? 0) + 1;
  }

  /**
   * A batch get of the writer's current keys through the client under test (Zaris: seed 004
   * long-tail retry: a group still pending after the policy's delay is retried once on another
   * in-sync replica). One read entry per key, sharing invoke and complete; a key no attempt
   * answered is recorded as `info`.
   */
  private async batchRead(slots: KeyState[]): Promise<void> {
    const keys = slots.slice(0, this.opts.batchReadKeys ?? 8);
    const store = keys[0].store;
    this.totals.readRequests++;
    const invokeMs = this.clock.now();
    const res = await this.driver.readMany(store, keys.map((k) => k.key));
    if (res.policy && (!this.policySeen.has(store) || this.policySeen.get(store) !== res.policy.table)) {
      // seed 004 in certification: when the batch gets of a store start following another policy
      this.policySeen.set(store, res.policy.table);
      const seen: BatchGetPolicySeen = { store, policy: res.policy.table, delayMs: res.policy.delayMs, keys: new Set(keys.map((k) => k.key)).size, atMs: invokeMs };
      this.policyChanges.push(seen);
      this.ledger.event(invokeMs, BATCH_GET_POLICY_EVENT, seen);
    }
    const completeMs = this.clock.now();
    for (const k of keys) {
      const a = res.answers.get(k.key);
      if (a) this.recordRead(k, 'getMany', invokeMs, completeMs, 'ok', a.node, a.value);
      else this.recordRead(k, 'getMany', invokeMs, completeMs, 'info', null, null);
    }
    const b = this.bucket(store);
    b.statuses[res.statusName] = (b.statuses[res.statusName] ?? 0) + 1;
  }

  /**
   * Sync-ack probe (issue 10): right after a sync ack at RF > 1, reads `k` locally on each other
   * in-sync member of its partition at the ack's epoch, each recorded as a read of kind 'probe'
   * with the node read and the value found there. A node that answers under a committed entry
   * older than the ack's epoch (cut off, it has not learned that the ack's tenure left it out of
   * the in-sync set) does not speak for the ack's copies: recorded as `fail`, without its value.
   */
  private async probe(k: KeyState, ackNode: string, ackEpoch: number): Promise<void> {
    const prober = this.opts.prober!;
    const members = (await prober.inSyncAt(k.store, k.partition, ackEpoch)) ?? [];
    await Promise.all(
      members
        .filter((n) => n !== ackNode)
        .map(async (node) => {
          this.totals.probes++;
          const invokeMs = this.clock.now();
          let outcome: Outcome = 'fail';
          let value: string | null = null;
          try {
            const r = await prober.getLocal(node, k.store, k.key);
            const a = r.epoch >= ackEpoch ? zarisReadAnswer(r) : null;
            if (a) {
              outcome = 'ok';
              value = a.value;
            }
          } catch (e) {
            outcome = e instanceof TransportError ? 'info' : 'fail';
          }
          this.recordRead(k, 'probe', invokeMs, this.clock.now(), outcome, node, value);
        }),
    );
  }

  private async write(k: KeyState, wantDelete: boolean): Promise<void> {
    const store = this.storeOf(k.store);
    let op: WriteOp;
    if (k.present === false) op = 'create';
    else if (k.present === true && wantDelete) op = 'delete';
    else if (k.present === true && (k.seq & 3) === 1) op = 'cas';
    else op = 'put';
    const seq = ++k.seq;
    const id = writeId(k.keyId, seq);
    const invokeMs = this.clock.now();
    const { w, committed } = this.ledger.invoke(k.keyId, seq, op, invokeMs);
    await committed;
    this.totals.attempted++;
    const out = await this.driver.write({ store: k.store, key: k.key, op, valueId: id, ifMatchVersion: k.version, ackMode: store.ackMode });
    const completeMs = this.clock.now();
    // an ok that names no ack cannot be recorded as one (never an ack that did not happen): it
    // may have been applied, so it is indeterminate
    const ledgerOutcome: Outcome = out.outcome === 'ok' && !out.ack ? 'info' : out.outcome;
    const ack = ledgerOutcome === 'ok' ? out.ack : undefined;
    const trace = out.attempts.length > 1 || ledgerOutcome !== 'ok' ? JSON.stringify(out.attempts) : undefined;
    this.ledger.complete(w, { completeMs, outcome: ledgerOutcome, status: out.status, attempts: out.attempts.length, ack, trace });
    const b = this.bucket(k.store);
    for (const a of out.attempts) {
      const name = a.s ?? 'Error';
      b.statuses[name] = (b.statuses[name] ?? 0) + 1;
    }
    if (ack) {
      this.totals.ok++;
      b.acked++;
      b.latencies.push(completeMs - invokeMs);
      k.present = op !== 'delete';
      k.version = ack.version;
      for (const l of this.ackListeners) l(k.store, k.partition, ack.node, ack.epoch, completeMs);
      if (this.opts.prober && store.ackMode === 'sync' && store.replicationFactor > 1 && this.opts.random() < (this.opts.probeFraction ?? 0.01)) await this.probe(k, ack.node, ack.epoch);
    } else if (ledgerOutcome === 'fail') {
      this.totals.fail++;
      b.failed++;
      // a definite failure changed nothing, but a Conflict/NotFound tells us our view was stale
      if (out.staleView) k.present = null;
    } else {
      this.totals.info++;
      b.indeterminate++;
      k.present = null;
    }
  }

  private storeOf(name: string): WorkloadStore {
    const s = this.opts.stores.find((x) => x.name === name);
    if (!s) throw new Error(`unknown store "${name}"`);
    return s;
  }

  private bucket(store: string): SecondBucket {
    const sec = Math.floor(this.clock.now() / 1000);
    if (sec !== this.currentSecond) this.rollSecond(sec);
    let b = this.buckets.get(store);
    if (!b) {
      b = { acked: 0, failed: 0, indeterminate: 0, latencies: [], statuses: {} };
      this.buckets.set(store, b);
    }
    return b;
  }

  /** Writes the finished second's figures to the ledger and starts a new one. */
  private rollSecond(sec: number): void {
    if (sec === this.currentSecond) return;
    if (this.currentSecond >= 0) {
      for (const [store, b] of this.buckets) {
        const l = b.latencies.sort((x, y) => x - y);
        const q = (p: number): number | null => (l.length ? round3(l[Math.min(l.length - 1, Math.floor(p * l.length))]) : null);
        this.ledger.stats({ tS: this.currentSecond, store, acked: b.acked, failed: b.failed, indeterminate: b.indeterminate, p50Ms: q(0.5), p95Ms: q(0.95), p99Ms: q(0.99), maxMs: l.length ? round3(l[l.length - 1]) : null, statuses: b.statuses });
      }
    }
    this.buckets.clear();
    this.currentSecond = sec;
  }
}

