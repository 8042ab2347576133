import { isMainThread, MessageChannel, receiveMessageOnPort, Worker, workerData, type MessagePort } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { distPath } from '../dist-path.js';
import { ChunkScanner, type ChunkResult, type ScanContext } from './chunk-scan.js';

/** A worker that sends nothing for this long is wedged (a harness error), ms. */
const WORKER_SILENCE_MS = 600_000;

type FromWorker = { k: 'result'; result: ChunkResult } | { k: 'done' } | { k: 'error'; message: string };

/**
 * Whether a ledger can be scanned in parallel: a file (not `:memory:`) in WAL mode (a reader on
 * another connection never blocks, and is never blocked by, the verifier's transaction), with a
 * key_id span of at least `minKeys` (a worker costs ~50 ms to start).
 */
export function parallelScanPossible(db: Database.Database, minKeys: number): boolean {
  if (db.memory || db.name === '' || db.name === ':memory:') return false;
  if (String(db.pragma('journal_mode', { simple: true })).toLowerCase() !== 'wal') return false;
  const span = db.prepare('SELECT MAX(key_id) - MIN(key_id) + 1 FROM keys').pluck().get() as number | null;
  return span !== null && span >= minKeys;
}

/**
 * The verifier's chunk scan on two threads (DESIGN.md §8: 2 cores): a worker thread opens the
 * ledger read-only and scans key ranges with its own {@link ChunkScanner}; the calling thread
 * scans too, and the two claim ranges from one shared counter, so that neither idles. The
 * worker's results come back as messages, handed to `take` on the calling thread (which alone
 * writes findings), in whatever order the ranges finish (the findings table has no order).
 * Synchronous for the caller: it returns when every range was taken.
 */
export class ParallelScan {
  constructor(
    private readonly path: string,
    private readonly ctx: ScanContext,
  ) {}

  /**
   * Scans `ranges` ([lo, hi) key_id ranges): `local` scans one on this thread; `take` receives
   * every result (this thread's and the worker's).
   * @throws Error when the worker fails (its one-line message) or stays silent for 10 minutes.
   */
  run(ranges: Array<[number, number]>, local: (lo: number, hi: number) => ChunkResult, take: (r: ChunkResult) => void): void {
    const shared = new Int32Array(new SharedArrayBuffer(8));
    // shared[0]: the next range to claim; shared[1]: messages the worker sent (for Atomics.wait)
    const { port1, port2 } = new MessageChannel();
    const worker = new Worker(distPath(import.meta.url, 'harness/verifier/parallel-scan.js'), {
      workerData: { zarisScan: true, path: this.path, ctx: this.ctx, ranges, shared, port: port2 },
      transferList: [port2],
      // a small isolate: the worker holds one range's rows at a time (memory stays flat)
      resourceLimits: { maxOldGenerationSizeMb: 96, maxYoungGenerationSizeMb: 8 },
    });
    let workerDone = false;
    let failure: Error | null = null;
    const drain = (): void => {
      for (;;) {
        const m = receiveMessageOnPort(port1)?.message as FromWorker | undefined;
        if (m === undefined) return;
        if (m.k === 'result') take(m.result);
        else if (m.k === 'done') workerDone = true;
        else failure ??= new Error(`verifier worker: ${m.message}`);
      }
    };
    try {
      for (;;) {
        const i = Atomics.add(shared, 0, 1);
        if (i >= ranges.length) break;
        take(local(ranges[i][0], ranges[i][1]));
        drain();
        if (failure) throw failure;
      }
      while (!workerDone) {
        const seen = Atomics.load(shared, 1);
        drain();
        if (failure) throw failure;
        if (workerDone) break;
        if (Atomics.wait(shared, 1, seen, WORKER_SILENCE_MS) === 'timed-out') throw new Error('verifier worker sent nothing for 10 minutes');
      }
    } finally {
      port1.close();
      void worker.terminate();
    }
  }
}

/** The worker side: claims ranges from the shared counter and posts each range's result. */
function runWorker(): void {
  const { path, ctx, ranges, shared, port } = workerData as { path: string; ctx: ScanContext; ranges: Array<[number, number]>; shared: Int32Array; port: MessagePort };
  const post = (m: FromWorker): void => {
    port.postMessage(m);
    Atomics.add(shared, 1, 1);
    Atomics.notify(shared, 1);
  };
  let db: Database.Database | null = null;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
    const scanner = new ChunkScanner(db, ctx);
    db.exec('BEGIN');
    for (;;) {
      const i = Atomics.add(shared, 0, 1);
      if (i >= ranges.length) break;
      post({ k: 'result', result: scanner.scan(ranges[i][0], ranges[i][1]) });
    }
    db.exec('COMMIT');
    post({ k: 'done' });
  } catch (e) {
    post({ k: 'error', message: (e as Error).message.split('\n')[0] });
  } finally {
    db?.close();
    port.close();
  }
}

if (!isMainThread && (workerData as { zarisScan?: boolean } | null)?.zarisScan) runWorker();
