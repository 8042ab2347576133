import { describe, expect, it } from 'vitest';
import { NullLedger, type Invoked, type Ledger, type ReadRecord, type WriteCompletion, type WriteOp } from '../../ledger/ledger-writer.js';
import { parseWriteId } from '../../ledger/schema.js';
import { Workload } from '../workload.js';
import type { ReadOutcome, TargetClient, WriteOutcome, WriteRequest } from './target.js';
import { TargetDriver, traceOf } from './target-driver.js';

/** A ledger that keeps invokes (with whether each was committed before its write was sent), completions and reads. */
/** NullLedger typed as the Ledger interface (its no-op methods take no arguments), to override with the real signatures. */
const LedgerBase = NullLedger as unknown as new () => Ledger;

class KeepingLedger extends LedgerBase {
  n = 0;
  readonly invokes: Array<{ w: number; keyId: number; seq: number; op: WriteOp }> = [];
  readonly completions = new Map<number, WriteCompletion>();
  readonly reads: ReadRecord[] = [];
  committed = new Set<number>();
  override invoke(keyId: number, seq: number, op: WriteOp): Invoked {
    const w = ++this.n;
    this.invokes.push({ w, keyId, seq, op });
    return { w, committed: Promise.resolve().then(() => void this.committed.add(w)) };
  }
  override complete(w: number, c: WriteCompletion): void {
    this.completions.set(w, c);
  }
  override read(r: ReadRecord): void {
    this.reads.push(r);
  }
}

/**
 * A store behind the adapter interface: it acknowledges at epoch 9 on n2 with a version per key,
 * except that writes of value ids listed in `failing` get a refusal (fail) and those in `timing`
 * an indeterminate timeout after two attempts. It checks that every write's invoke was committed
 * before the write reached it.
 */
class FakeAdapter implements TargetClient {
  readonly values = new Map<string, string>();
  readonly versions = new Map<string, number>();
  readonly failing = new Set<string>();
  readonly timing = new Set<string>();
  uncommittedSends = 0;
  private rev = 100;
  constructor(private readonly ledger: KeepingLedger) {}
  async write(req: WriteRequest): Promise<WriteOutcome> {
    // a macrotask, as a real round trip: the workload's loops must not starve the event loop
    await new Promise((res) => setImmediate(res));
    const id = parseWriteId(req.valueId)!;
    const w = this.ledger.invokes.find((i) => i.keyId === id.keyId && i.seq === id.seq)!.w;
    if (!this.ledger.committed.has(w)) this.uncommittedSends++;
    const k = `${req.store}/${req.key}`;
    if (this.failing.has(req.valueId)) return { outcome: 'fail', status: 'NOREPLICAS', attempts: [{ n: 1, node: 'n2', status: 'NOREPLICAS', epoch: 9, startMs: 1, endMs: 2 }] };
    if (this.timing.has(req.valueId)) {
      return {
        outcome: 'info',
        status: 'DeadlineExceeded',
        attempts: [
          { n: 1, node: null, status: 'NoConnection', startMs: 1, endMs: 1.5 },
          { n: 2, node: 'n2', status: 'DeadlineExceeded', epoch: 9, startMs: 1.5, endMs: 7.0004, note: 'the member did not answer in time' },
        ],
      };
    }
    if (req.op === 'create' && this.values.has(k)) return { outcome: 'fail', status: 'Conflict', attempts: [{ n: 1, node: 'n2', status: 'Conflict', epoch: 9, startMs: 1, endMs: 2 }] };
    if (req.op === 'delete') this.values.delete(k);
    else this.values.set(k, req.valueId);
    const version = (this.versions.get(k) ?? 0) + 1;
    this.versions.set(k, version);
    const revision = ++this.rev;
    return { outcome: 'ok', status: 'OK', ack: { node: 'n2', epoch: 9, version, revision }, attempts: [{ n: 1, node: 'n2', status: 'OK', epoch: 9, startMs: 1, endMs: 2 }] };
  }
  async read(store: string, key: string): Promise<ReadOutcome> {
    return (await this.readMany(store, [key]))[0];
  }
  async readMany(store: string, keys: readonly string[]): Promise<ReadOutcome[]> {
    await Promise.resolve();
    return keys.map((key) => {
      const v = this.values.get(`${store}/${key}`) ?? null;
      return { key, outcome: 'ok' as const, status: v === null ? 'NotFound' : 'OK', node: 'n2', value: v };
    });
  }
  async close(): Promise<void> {}
}

describe('target driver', () => {
  it('an adapter attempt in the trace: status, node, epoch, times to the microsecond, the note', () => {
    expect(traceOf({ n: 2, node: 'n1', status: 'DeadlineExceeded', epoch: 4, startMs: 1.23456, endMs: 9.87654, note: 'why' })).toEqual({ n: 2, s: 'DeadlineExceeded', node: 'n1', e: 4, t0: 1.235, t1: 9.877, note: 'why' });
    expect(traceOf({ n: 1, node: null, status: 'NoConnection', startMs: 0, endMs: 1 })).toEqual({ n: 1, s: 'NoConnection', node: null, t0: 0, t1: 1 });
  });

  it('maps an adapter outcome to the ledger: the ack with the store\'s ack mode; an ok without an ack is indeterminate; a Conflict says the view was stale', async () => {
    const d = new TargetDriver(
      {
        write: async (req: WriteRequest): Promise<WriteOutcome> =>
          req.valueId === 'noack' ? { outcome: 'ok', status: 'OK', attempts: [] } : req.valueId === 'conflict' ? { outcome: 'fail', status: 'Conflict', attempts: [{ n: 1, node: 'n1', status: 'Conflict', startMs: 0, endMs: 1 }] } : { outcome: 'ok', status: 'OK', ack: { node: 'n1', epoch: 2, version: 5, revision: 7, copies: 2 }, attempts: [{ n: 1, node: 'n1', status: 'OK', epoch: 2, startMs: 0, endMs: 1 }] },
      } as unknown as TargetClient,
      'fake 1.0',
    );
    const ok = await d.write({ store: 's', key: 'k', op: 'put', valueId: 'w1.1', ifMatchVersion: 0, ackMode: 'async' });
    expect(ok).toEqual({ outcome: 'ok', status: 'OK', ack: { node: 'n1', epoch: 2, version: 5, revision: 7, ackMode: 'async', copies: 2 }, attempts: [{ n: 1, s: 'OK', node: 'n1', e: 2, t0: 0, t1: 1 }] });
    const noAck = await d.write({ store: 's', key: 'k', op: 'put', valueId: 'noack', ifMatchVersion: 0, ackMode: 'sync' });
    expect(noAck.outcome).toBe('info');
    expect(noAck.ack).toBeUndefined();
    expect(noAck.attempts).toHaveLength(1);
    const conflict = await d.write({ store: 's', key: 'k', op: 'create', valueId: 'conflict', ifMatchVersion: 0, ackMode: 'sync' });
    expect(conflict).toMatchObject({ outcome: 'fail', status: 'Conflict', staleView: true });
  });

  it('the workload through an adapter records every write as for the Zaris client: invoke committed before the send, outcome, trace, ack', async () => {
    const ledger = new KeepingLedger();
    const adapter = new FakeAdapter(ledger);
    adapter.failing.add('w1.3');
    adapter.timing.add('w2.2');
    let t = 0;
    let r = 0;
    const random = (): number => [0.5, 0.02, 0.9, 0.3][r++ % 4];
    const wl = new Workload(new TargetDriver(adapter, 'fake 1.0'), ledger, { now: () => ++t }, {
      stores: [{ name: 'kv', segments: 1, partitions: 1, replicationFactor: 3, ackMode: 'async', partitionOf: () => 0 }],
      writersPerStore: 1,
      keysPerWriter: 2,
      ratePerSec: 0,
      random,
      writesPerKey: { min: 3, max: 3 },
    });
    wl.start();
    while (ledger.completions.size < 12) await new Promise((res) => setTimeout(res, 1));
    await wl.stop();
    expect(adapter.uncommittedSends).toBe(0);
    const done = ledger.invokes.filter((i) => ledger.completions.has(i.w));
    // every completed write is ok, fail or info; acks name the adapter's node, epoch, version, revision and the store's mode
    for (const i of done) {
      const c = ledger.completions.get(i.w)!;
      if (c.outcome === 'ok') {
        expect(c.ack).toMatchObject({ node: 'n2', epoch: 9, ackMode: 'async' });
        expect(c.trace).toBeUndefined();
      } else expect(c.ack).toBeUndefined();
    }
    const failed = ledger.invokes.find((i) => i.keyId === 1 && i.seq === 3)!;
    expect(ledger.completions.get(failed.w)).toMatchObject({ outcome: 'fail', status: 'NOREPLICAS', attempts: 1 });
    expect(JSON.parse(ledger.completions.get(failed.w)!.trace!)).toEqual([{ n: 1, s: 'NOREPLICAS', node: 'n2', e: 9, t0: 1, t1: 2 }]);
    const timedOut = ledger.invokes.find((i) => i.keyId === 2 && i.seq === 2)!;
    expect(ledger.completions.get(timedOut.w)).toMatchObject({ outcome: 'info', status: 'DeadlineExceeded', attempts: 2 });
    expect(JSON.parse(ledger.completions.get(timedOut.w)!.trace!)[1]).toEqual({ n: 2, s: 'DeadlineExceeded', node: 'n2', e: 9, t0: 1.5, t1: 7, note: 'the member did not answer in time' });
    // a key's first write is a create; after an indeterminate one the workload no longer assumes the key's state
    expect(ledger.invokes.find((i) => i.keyId === 1 && i.seq === 1)!.op).toBe('create');
    expect(ledger.invokes.find((i) => i.keyId === 2 && i.seq === 3)!.op).toBe('put');
    // reads went through the adapter and name the node and the value read
    expect(ledger.reads.length).toBeGreaterThan(0);
    for (const rd of ledger.reads) expect(rd).toMatchObject({ outcome: 'ok', node: 'n2' });
    expect(wl.totals.ok + wl.totals.fail + wl.totals.info).toBe(wl.totals.attempted);
  });
});
