import { isMainThread, MessageChannel, parentPort, receiveMessageOnPort, Worker, workerData, type MessagePort } from 'node:worker_threads';
import { distPath } from './checkout.js';
import { parseWriteId } from './schema.js';
import { CMP_FIELDS, INV_FIELDS, OPS, OUTCOMES, RD_ABSENT, RD_FIELDS, RD_TEXT, READ_KINDS, toMicros } from './write-batches.js';
import { SqliteLedger } from './sqlite-ledger.js';
import type {
  FaultStart,
  Invoked,
  KeyRow,
  Ledger,
  ReadRecord,
  SampleRow,
  NodeSampleRow,
  StatsRow,
  WriteCompletion,
  WriteOp,
} from './ledger-writer.js';

/** Calls queued on the main thread and applied, in order, by the worker (the rarer rows). */
type Call =
  | ['addKey', KeyRow]
  | ['faultEffective', number, number]
  | ['faultCaughtUp', number, number]
  | ['sample', number, SampleRow[]]
  | ['nodeSample', number, NodeSampleRow[]]
  | ['finalRead', number, string | null, { keyId: number; seq: number } | null, boolean, number]
  | ['stats', StatsRow]
  | ['event', number, string, unknown];

type SyncMethod = 'setMeta' | 'registerTopology' | 'registerKeys' | 'keysPage' | 'faultStart' | 'faultEnd' | 'seal' | 'flush' | 'close';

/**
 * The hot rows, packed as numbers (the structured clone of objects per write cost the harness's
 * event loop more than SQLite did), in the layouts of write-batches.ts: invokes, completions and
 * reads (strings as codes of `dict`, -1 for none); traces and read values that are not write ids
 * apart.
 */
interface Packed {
  calls: Call[];
  inv: Float64Array;
  cmp: Float64Array;
  rd: Float64Array;
  traces: Array<[number, string]>;
  /** Values of reads that are not harness write ids: [index of the read in rd, text]. */
  rdx: Array<[number, string]>;
  /** New string codes: [code, text]. */
  dict: Array<[number, string]>;
}

type ToWorker = ({ k: 'batch'; id: number } | { k: 'call'; method: SyncMethod; args: unknown[] }) & Packed;


type FromWorker = { k: 'committed'; id: number } | { k: 'failed'; id: number; message: string };

/** A synchronous call gives up after this long, ms (the worker is wedged: a harness error). */
const SYNC_TIMEOUT_MS = 120_000;

function grow(a: Float64Array): Float64Array<ArrayBuffer> {
  const b = new Float64Array(a.length * 2);
  b.set(a);
  return b;
}

/** The compiled worker entry (this module in dist/, also when the caller runs from sources under vitest). */
function workerEntry(): string {
  return distPath(import.meta.url, 'ledger/worker-ledger.js');
}

/**
 * The SQLite ledger on a worker thread (DESIGN.md §4, §8): the harness's event loop only queues
 * rows; the worker appends and commits them. Same contract as {@link SqliteLedger}: an invoke's
 * `committed` resolves only once its row is committed (the write may then be sent); faultStart,
 * faultEnd, setMeta, seal, close are synchronous and committed when they return (the main thread
 * blocks on the worker's answer, through Atomics.wait).
 * @throws Error (one line) from synchronous calls when the worker failed (SQLite error).
 */
export class WorkerLedger implements Ledger {
  private readonly worker: Worker;
  private readonly replies: MessagePort;
  private readonly flag = new Int32Array(new SharedArrayBuffer(4));
  private calls: Call[] = [];
  private inv: Float64Array<ArrayBuffer> = new Float64Array(INV_FIELDS * 1024);
  private invN = 0;
  private cmp: Float64Array<ArrayBuffer> = new Float64Array(CMP_FIELDS * 1024);
  private cmpN = 0;
  private rd: Float64Array<ArrayBuffer> = new Float64Array(RD_FIELDS * 256);
  private rdN = 0;
  private rdx: Array<[number, string]> = [];
  private traces: Array<[number, string]> = [];
  private readonly codes = new Map<string, number>();
  private newCodes: Array<[number, string]> = [];
  private nextW = 1;
  private nextBatch = 1;
  private timer: NodeJS.Immediate | null = null;
  private readonly waiting = new Map<number, { resolve(): void; reject(e: Error): void }>();
  private current: { id: number; promise: Promise<void> } | null = null;
  private failure: Error | null = null;
  private closed = false;

  /** Opens (creates) the ledger file in a new worker thread. @throws Error when it cannot be opened. */
  constructor(readonly path: string) {
    const { port1, port2 } = new MessageChannel();
    this.replies = port1;
    // a small isolate: the worker holds a batch at a time (the harness's RSS budget is 256 MB)
    this.worker = new Worker(workerEntry(), {
      workerData: { zarisLedger: true, path, flag: this.flag, replies: port2 },
      transferList: [port2],
      resourceLimits: { maxOldGenerationSizeMb: 96, maxYoungGenerationSizeMb: 8 },
    });
    this.worker.unref();
    this.worker.on('message', (m: FromWorker) => this.onMessage(m));
    this.worker.on('error', (e) => this.fail(new Error(`ledger worker: ${e.message}`)));
    try {
      this.syncCall('flush', []);
    } catch (e) {
      void this.worker.terminate();
      this.replies.close();
      throw e;
    }
  }

  private onMessage(m: FromWorker): void {
    const w = this.waiting.get(m.id);
    this.waiting.delete(m.id);
    if (m.k === 'committed') w?.resolve();
    else this.fail(new Error(m.message), w);
  }

  private fail(e: Error, first?: { reject(e: Error): void }): void {
    if (!this.failure) this.failure = e;
    first?.reject(this.failure);
    for (const w of this.waiting.values()) w.reject(this.failure);
    this.waiting.clear();
  }

  private queue(c: Call): void {
    this.calls.push(c);
    this.arm();
  }

  private arm(): void {
    if (!this.timer) this.timer = setImmediate(() => this.ship());
  }

  private code(text: string | null | undefined): number {
    if (text === null || text === undefined) return -1;
    let c = this.codes.get(text);
    if (c === undefined) {
      c = this.codes.size;
      this.codes.set(text, c);
      this.newCodes.push([c, text]);
    }
    return c;
  }

  /** Takes what is queued, as one message body (the number arrays are transferred, not copied). */
  private take(): Packed {
    const out: Packed = {
      calls: this.calls,
      inv: this.inv.slice(0, this.invN * INV_FIELDS),
      cmp: this.cmp.slice(0, this.cmpN * CMP_FIELDS),
      rd: this.rd.slice(0, this.rdN * RD_FIELDS),
      traces: this.traces,
      rdx: this.rdx,
      dict: this.newCodes,
    };
    this.calls = [];
    this.invN = 0;
    this.cmpN = 0;
    this.rdN = 0;
    this.traces = [];
    this.rdx = [];
    this.newCodes = [];
    return out;
  }

  private get queued(): boolean {
    return this.calls.length > 0 || this.invN > 0 || this.cmpN > 0 || this.rdN > 0;
  }

  /** Sends the queued calls as one batch (one transaction in the worker). */
  private ship(): void {
    if (this.timer) clearImmediate(this.timer);
    this.timer = null;
    if (!this.queued) return;
    const body = this.take();
    const id = this.current ? this.current.id : this.nextBatch++;
    this.current = null;
    this.worker.postMessage({ k: 'batch', id, ...body } satisfies ToWorker, [body.inv.buffer as ArrayBuffer, body.cmp.buffer as ArrayBuffer, body.rd.buffer as ArrayBuffer]);
  }

  private syncCall<T>(method: SyncMethod, args: unknown[]): T {
    if (this.failure) throw this.failure;
    if (this.closed) throw new Error('ledger is closed');
    if (this.timer) clearImmediate(this.timer);
    this.timer = null;
    const body = this.take();
    // invokes queued before this call are committed by it: their batch resolves with it
    const pending = this.current;
    this.current = null;
    Atomics.store(this.flag, 0, 0);
    this.worker.postMessage({ k: 'call', method, args, ...body } satisfies ToWorker, [body.inv.buffer as ArrayBuffer, body.cmp.buffer as ArrayBuffer, body.rd.buffer as ArrayBuffer]);
    if (Atomics.wait(this.flag, 0, 0, SYNC_TIMEOUT_MS) === 'timed-out') throw new Error(`ledger worker did not answer ${method} within ${SYNC_TIMEOUT_MS / 1000} s`);
    const reply = receiveMessageOnPort(this.replies)?.message as { ok: true; result: T } | { ok: false; message: string } | undefined;
    if (!reply) throw new Error(`ledger worker sent no answer to ${method}`);
    if (!reply.ok) {
      const e = new Error(reply.message);
      if (pending) this.fail(e, this.waiting.get(pending.id));
      throw e;
    }
    if (pending) {
      this.waiting.get(pending.id)?.resolve();
      this.waiting.delete(pending.id);
    }
    return reply.result;
  }

  setMeta(key: string, value: string): void {
    this.syncCall('setMeta', [key, value]);
  }
  registerTopology(t: Parameters<Ledger['registerTopology']>[0]): void {
    this.syncCall('registerTopology', [t]);
  }
  registerKeys(keys: KeyRow[]): void {
    this.syncCall('registerKeys', [keys]);
  }
  addKey(k: KeyRow): void {
    this.queue(['addKey', k]);
  }
  keysPage(afterKeyId: number, limit: number): KeyRow[] {
    return this.syncCall<KeyRow[]>('keysPage', [afterKeyId, limit]);
  }
  invoke(keyId: number, seq: number, op: WriteOp, invokeMs: number): Invoked {
    const w = this.nextW++;
    if (this.failure) return { w, committed: Promise.reject(this.failure) };
    if (!this.current) {
      const id = this.nextBatch++;
      const promise = new Promise<void>((resolve, reject) => this.waiting.set(id, { resolve, reject }));
      promise.catch(() => undefined);
      this.current = { id, promise };
    }
    if ((this.invN + 1) * INV_FIELDS > this.inv.length) this.inv = grow(this.inv);
    const b = this.invN++ * INV_FIELDS;
    const a = this.inv;
    a[b] = w;
    a[b + 1] = keyId;
    a[b + 2] = seq;
    a[b + 3] = OPS.indexOf(op);
    a[b + 4] = toMicros(invokeMs);
    this.arm();
    return { w, committed: this.current.promise };
  }
  complete(w: number, c: WriteCompletion): void {
    if ((this.cmpN + 1) * CMP_FIELDS > this.cmp.length) this.cmp = grow(this.cmp);
    const b = this.cmpN++ * CMP_FIELDS;
    const a = this.cmp;
    const ack = c.ack;
    a[b] = w;
    a[b + 1] = toMicros(c.completeMs);
    a[b + 2] = OUTCOMES.indexOf(c.outcome);
    a[b + 3] = this.code(c.status);
    a[b + 4] = c.attempts;
    a[b + 5] = ack ? this.code(ack.node) : -1;
    a[b + 6] = ack ? ack.epoch : 0;
    a[b + 7] = ack ? ack.version : 0;
    a[b + 8] = ack ? ack.revision : 0;
    a[b + 9] = ack ? (ack.ackMode === 'async' ? 1 : 0) : -1;
    a[b + 10] = ack?.copies ?? -1;
    if (c.trace !== undefined) this.traces.push([w, c.trace]);
    this.arm();
  }
  read(r: ReadRecord): void {
    if ((this.rdN + 1) * RD_FIELDS > this.rd.length) this.rd = grow(this.rd);
    const i = this.rdN++;
    const b = i * RD_FIELDS;
    const a = this.rd;
    a[b] = r.keyId;
    a[b + 1] = toMicros(r.invokeMs);
    a[b + 2] = toMicros(r.completeMs);
    a[b + 3] = OUTCOMES.indexOf(r.outcome);
    a[b + 4] = this.code(r.node);
    const value = r.outcome === 'ok' ? r.value : null;
    if (value === null) {
      a[b + 5] = RD_ABSENT;
      a[b + 6] = 0;
    } else {
      const named = parseWriteId(value);
      if (named === null) {
        a[b + 5] = RD_TEXT;
        a[b + 6] = 0;
        this.rdx.push([i, value]);
      } else {
        a[b + 5] = named.keyId;
        a[b + 6] = named.seq;
      }
    }
    a[b + 7] = READ_KINDS.indexOf(r.kind);
    this.arm();
  }
  faultStart(f: FaultStart): number {
    return this.syncCall<number>('faultStart', [f]);
  }
  faultEffective(id: number, ms: number): void {
    this.queue(['faultEffective', id, ms]);
  }
  faultEnd(id: number, endMs: number | null): void {
    this.syncCall('faultEnd', [id, endMs]);
  }
  faultCaughtUp(id: number, ms: number): void {
    this.queue(['faultCaughtUp', id, ms]);
  }
  sample(tMs: number, rows: SampleRow[]): void {
    this.queue(['sample', tMs, rows]);
  }
  nodeSample(tMs: number, rows: NodeSampleRow[]): void {
    this.queue(['nodeSample', tMs, rows]);
  }
  finalRead(keyId: number, value: string | null, resolved: { keyId: number; seq: number } | null, unreadable: boolean, tMs: number): void {
    this.queue(['finalRead', keyId, value, resolved, unreadable, tMs]);
  }
  stats(row: StatsRow): void {
    this.queue(['stats', row]);
  }
  event(tMs: number, kind: string, detail?: unknown): void {
    this.queue(['event', tMs, kind, detail]);
  }
  flush(): void {
    this.syncCall('flush', []);
  }
  seal(): void {
    this.syncCall('seal', []);
  }
  /** Commits what is queued, closes the database and ends the worker. Safe to call twice. */
  close(): void {
    if (this.closed) return;
    try {
      if (!this.failure) this.syncCall('close', []);
    } finally {
      this.closed = true;
      void this.worker.terminate();
      this.replies.close();
    }
  }
}

/** The worker side: applies calls to a SqliteLedger, one transaction per batch. */
function runWorker(): void {
  const { path: file, flag, replies } = workerData as { path: string; flag: Int32Array; replies: MessagePort };
  let ledger: SqliteLedger | null = null;
  let openError: string | null = null;
  try {
    ledger = new SqliteLedger(file);
  } catch (e) {
    openError = (e as Error).message;
  }
  const apply = (m: Packed): void => {
    const l = ledger!;
    for (const c of m.calls) {
      switch (c[0]) {
        case 'addKey':
          l.addKey(c[1]);
          break;
        case 'faultEffective':
          l.faultEffective(c[1], c[2]);
          break;
        case 'faultCaughtUp':
          l.faultCaughtUp(c[1], c[2]);
          break;
        case 'sample':
          l.sample(c[1], c[2]);
          break;
        case 'nodeSample':
          l.nodeSample(c[1], c[2]);
          break;
        case 'finalRead':
          l.finalRead(c[1], c[2], c[3], c[4], c[5]);
          break;
        case 'stats':
          l.stats(c[1]);
          break;
        case 'event':
          l.event(c[1], c[2], c[3]);
          break;
      }
    }
    // the hot rows go in as one packed row (unpacked by the seal)
    l.appendWriteBatch({ inv: m.inv, cmp: m.cmp, dict: m.dict, traces: m.traces, rd: m.rd, rdx: m.rdx });
  };
  const commit = (): void => {
    ledger!.flush();
    if (ledger!.failure) throw ledger!.failure;
  };
  parentPort!.on('message', (m: ToWorker) => {
    if (m.k === 'batch') {
      try {
        if (openError) throw new Error(openError);
        apply(m);
        commit();
        parentPort!.postMessage({ k: 'committed', id: m.id } satisfies FromWorker);
      } catch (e) {
        parentPort!.postMessage({ k: 'failed', id: m.id, message: (e as Error).message } satisfies FromWorker);
      }
      return;
    }
    let reply: { ok: true; result: unknown } | { ok: false; message: string };
    try {
      if (openError) throw new Error(`cannot open the ledger ${file}: ${openError}`);
      apply(m);
      commit();
      const fn = (ledger as unknown as Record<string, (...a: unknown[]) => unknown>)[m.method];
      const result = fn.apply(ledger, m.args);
      if (m.method !== 'close') commit();
      reply = { ok: true, result: result ?? null };
    } catch (e) {
      reply = { ok: false, message: (e as Error).message };
    }
    replies.postMessage(reply);
    Atomics.store(flag, 0, 1);
    Atomics.notify(flag, 0);
  });
}

if (!isMainThread && (workerData as { zarisLedger?: boolean } | null)?.zarisLedger) runWorker();
