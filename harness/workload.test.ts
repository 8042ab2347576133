import { setImmediate as turn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { AttemptTrace, RetryOutcome } from '../nodes/client/retry-loop.js';
import { TransportError } from '../nodes/client/transport-error.js';
import type { ReadResult, WriteResult, ZarisClient } from '../nodes/client/zaris-client.js';
import { KvStatus } from '../nodes/kv-status.js';
import type { LongTailRetryResult } from '../nodes/multikey/long-tail-retry.js';
import { NullLedger, type Invoked, type Ledger, type ReadRecord, type WriteCompletion, type WriteOp } from '../ledger/ledger-writer.js';
import { parseWriteId } from '../ledger/schema.js';
import { createPrng } from './nemesis/prng.js';
import { Workload, type AckProber, type WorkloadStore } from './workload.js';
import { parseRetryRangeTableOrThrow, type RetryRangeTable } from '../nodes/multikey/retry-range-table.js';

type ReadEntry = ReadRecord;

/** A ledger that keeps what the workload recorded (everything else as the no-op ledger). */
interface RecordingLedger extends Ledger {
  readonly invokes: Array<{ w: number; keyId: number; seq: number; op: WriteOp; invokeMs: number }>;
  readonly completions: Map<number, WriteCompletion>;
  readonly reads: ReadEntry[];
}

function recordingLedger(): RecordingLedger {
  let n = 0;
  const rec = { invokes: [] as RecordingLedger['invokes'], completions: new Map<number, WriteCompletion>(), reads: [] as ReadEntry[] };
  return Object.assign(new NullLedger(), rec, {
    invoke(keyId: number, seq: number, op: WriteOp, invokeMs: number): Invoked {
      const w = ++n;
      rec.invokes.push({ w, keyId, seq, op, invokeMs });
      return { w, committed: Promise.resolve() };
    },
    complete(w: number, c: WriteCompletion): void {
      rec.completions.set(w, c);
    },
    read(r: ReadEntry): void {
      rec.reads.push(r);
    },
  });
}

function attempt(status: KvStatus | undefined, node?: string): AttemptTrace {
  return { n: 1, status, errorKind: status === undefined ? 'Timeout' : undefined, node, epoch: 1, startMs: 0, endMs: 0, mayHaveApplied: status === KvStatus.Ok };
}

/**
 * An in-memory store behind the client's interface: every write is acknowledged by n1 (sync acks
 * name 3 copies), reads return the latest value, except keys listed as unavailable (Unavailable)
 * or timing out (a TransportError). Each call takes one event-loop turn.
 */
class FakeStore {
  readonly values = new Map<string, string>();
  readonly unavailable = new Set<string>();
  readonly timingOut = new Set<string>();
  /** The server policy the fake client has published, per store (seed 004). */
  readonly policies = new Map<string, RetryRangeTable>();
  private rev = 0;
  private version = 0;
  constructor(private readonly stores: WorkloadStore[]) {}

  private async write(store: string, key: string, value: string | null): Promise<RetryOutcome<WriteResult>> {
    await turn();
    if (value === null) this.values.delete(`${store}/${key}`);
    else this.values.set(`${store}/${key}`, value);
    const ackMode = this.stores.find((s) => s.name === store)!.ackMode;
    const info = { node: 'n1', partition: 0, epoch: 5, version: ++this.version, revision: ++this.rev, ackMode, copies: ackMode === 'sync' ? 3 : 1 };
    return { result: { status: KvStatus.Ok, node: 'n1', epoch: 5, info }, error: undefined, attempts: [attempt(KvStatus.Ok, 'n1')], refreshes: 0, delaysMs: [], ledgerOutcome: 'ok' };
  }

  read(store: string, key: string, node: string, epoch = 5): ReadResult {
    const v = this.values.get(`${store}/${key}`);
    return v === undefined ? { status: KvStatus.NotFound, node, epoch, version: 0, value: null } : { status: KvStatus.Ok, node, epoch, version: 1, value: Buffer.from(v) };
  }

  readonly client = {
    put: (store: string, key: string, value: Buffer) => this.write(store, key, value.toString('utf8')),
    delete: (store: string, key: string) => this.write(store, key, null),
    get: async (store: string, key: string): Promise<RetryOutcome<ReadResult>> => {
      await turn();
      if (this.timingOut.has(key)) return { result: undefined, error: new TransportError('Timeout', { message: 'timed out' }), attempts: [attempt(undefined)], refreshes: 1, delaysMs: [], ledgerOutcome: 'info' };
      const r = this.unavailable.has(key) ? { status: KvStatus.Unavailable, node: 'n1', epoch: 1, version: 0, value: null } : this.read(store, key, 'n1');
      return { result: r, error: undefined, attempts: [attempt(r.status, 'n1')], refreshes: 0, delaysMs: [], ledgerOutcome: r.status === KvStatus.Ok ? 'ok' : 'fail' };
    },
    getMany: async (store: string, keys: string[]): Promise<LongTailRetryResult<ReadResult>> => {
      await turn();
      const answers = new Map(keys.filter((k) => !this.unavailable.has(k)).map((k) => [k, { value: this.read(store, k, 'n2'), target: 'n2', viaRetry: false }]));
      return { answers, delayMs: this.policies.get(store)?.delayMsFor(new Set(keys).size) ?? 8, retryFired: false, retriedKeys: [] };
    },
    policyState: (store: string) => ({ serverPolicy: () => this.policies.get(store) ?? null }),
  };
}

const STORES: WorkloadStore[] = [
  { name: 'sync3', segments: 8, partitions: 3, replicationFactor: 3, ackMode: 'sync' },
  { name: 'async3', segments: 8, partitions: 3, replicationFactor: 3, ackMode: 'async' },
];

async function run(opts: { writes: number; probeFraction?: number; prober?: AckProber; before?: (s: FakeStore) => void }): Promise<{ ledger: RecordingLedger; store: FakeStore; workload: Workload }> {
  const store = new FakeStore(STORES);
  opts.before?.(store);
  const ledger = recordingLedger();
  const rng = createPrng(42);
  let t = 0;
  const workload = new Workload(store.client as unknown as ZarisClient, ledger, { now: () => ++t }, { stores: STORES, writersPerStore: 2, keysPerWriter: 4, ratePerSec: 0, random: () => rng.next(), probeFraction: opts.probeFraction, prober: opts.prober });
  workload.start();
  while (workload.totals.attempted < opts.writes) await new Promise((r) => setTimeout(r, 5));
  await workload.stop();
  return { ledger, store, workload };
}

/** The key id -> store/key of the invokes (keys are `k<key_id>`). */
function writesByKey(ledger: RecordingLedger): Map<number, Array<{ seq: number; invokeMs: number; completeMs: number; id: string }>> {
  const out = new Map<number, Array<{ seq: number; invokeMs: number; completeMs: number; id: string }>>();
  for (const i of ledger.invokes) {
    const c = ledger.completions.get(i.w);
    if (!c) continue;
    const list = out.get(i.keyId) ?? [];
    list.push({ seq: i.seq, invokeMs: i.invokeMs, completeMs: c.completeMs, id: i.op === 'delete' ? '' : `w${i.keyId}.${i.seq}` });
    out.set(i.keyId, list);
  }
  return out;
}

describe('workload reads (history-format.md v2 reads[])', () => {
  it('reads its own keys right after writing them, single gets at ~5% and batch gets at ~1% of writes, every read recorded', async () => {
    const { ledger, workload } = await run({ writes: 4_000 });
    const writes = ledger.completions.size;
    const gets = ledger.reads.filter((r) => r.kind === 'get');
    const batch = ledger.reads.filter((r) => r.kind === 'getMany');
    // seeded draws: 5% and 1% of ~4,000 writes, with wide margins (binomial sd ~14 and ~6)
    expect(gets.length).toBeGreaterThan(writes * 0.03);
    expect(gets.length).toBeLessThan(writes * 0.07);
    const batchRequests = new Set(batch.map((r) => r.invokeMs)).size;
    expect(batchRequests).toBeGreaterThan(writes * 0.004);
    expect(batchRequests).toBeLessThan(writes * 0.016);
    expect(workload.totals.readRequests).toBe(gets.length + batchRequests);
    expect(workload.totals.readEntries).toBe(ledger.reads.length);
    expect(ledger.reads.every((r) => r.outcome === 'ok')).toBe(true);
    const byKey = writesByKey(ledger);
    for (const r of gets) {
      // a single get follows a completed write of its own key and reads that write (or absent after a delete)
      const before = byKey.get(r.keyId)!.filter((w) => w.completeMs < r.invokeMs);
      expect(before.length).toBeGreaterThan(0);
      const last = before[before.length - 1];
      expect(r.value).toBe(last.id === '' ? null : last.id);
      expect(r.node).toBe('n1');
      expect(r.completeMs).toBeGreaterThan(r.invokeMs);
    }
    // a batch get: one entry per key, sharing invoke and complete, at most 8 keys, the value a write id of that key
    const groups = new Map<number, ReadEntry[]>();
    for (const r of batch) groups.set(r.invokeMs, [...(groups.get(r.invokeMs) ?? []), r]);
    for (const g of groups.values()) {
      expect(g.length).toBeGreaterThan(1);
      expect(g.length).toBeLessThanOrEqual(8);
      expect(new Set(g.map((r) => r.completeMs)).size).toBe(1);
      expect(new Set(g.map((r) => r.keyId)).size).toBe(g.length);
      for (const r of g) if (r.value !== null) expect(parseWriteId(r.value)!.keyId).toBe(r.keyId);
      expect(g.every((r) => r.node === 'n2')).toBe(true);
    }
  }, 30_000);

  it('records unanswered reads without a value: fail for a non-answer status, info for a timeout or a key a batch left out', async () => {
    const { ledger } = await run({
      writes: 2_000,
      before: (s) => {
        for (let i = 1; i <= 16; i += 2) s.unavailable.add(`k${i}`);
        for (let i = 2; i <= 16; i += 2) s.timingOut.add(`k${i}`);
      },
    });
    const early = ledger.reads.filter((r) => r.keyId <= 16);
    expect(early.length).toBeGreaterThan(0);
    for (const r of early) {
      if (r.kind === 'get') expect(r.outcome).toBe(r.keyId % 2 === 1 ? 'fail' : 'info');
      // the fake batch get leaves the unavailable keys out, and answers the others
      if (r.kind === 'getMany') expect(r.outcome).toBe(r.keyId % 2 === 1 ? 'info' : 'ok');
      if (r.outcome !== 'ok') expect(r.value).toBeNull();
    }
    expect(early.some((r) => r.kind === 'get' && r.outcome === 'fail')).toBe(true);
    expect(early.some((r) => r.kind === 'get' && r.outcome === 'info')).toBe(true);
    expect(ledger.reads.filter((r) => r.keyId > 16).every((r) => r.outcome === 'ok')).toBe(true);
  }, 30_000);
});

describe('workload batch gets under a changing server policy (seed 004)', () => {
  it('records each change of the policy a store\'s batch gets run under, with the delay they captured', async () => {
    const store = new FakeStore(STORES);
    store.policies.set('sync3', parseRetryRangeTableOrThrow('1-4:15,5-:40'));
    const rng = createPrng(7);
    let t = 0;
    const workload = new Workload(store.client as unknown as ZarisClient, recordingLedger(), { now: () => ++t }, { stores: STORES, writersPerStore: 2, keysPerWriter: 4, ratePerSec: 0, random: () => rng.next(), batchReadFraction: 0.2, readFraction: 0 });
    workload.start();
    while (workload.totals.readRequests < 40) await new Promise((r) => setTimeout(r, 5));
    const changedAt = t;
    store.policies.set('sync3', parseRetryRangeTableOrThrow('1-4:5,5-:25'));
    const before = workload.totals.readRequests;
    while (workload.totals.readRequests < before + 40) await new Promise((r) => setTimeout(r, 5));
    await workload.stop();
    const sync3 = workload.policyChanges.filter((c) => c.store === 'sync3');
    expect(sync3.map((c) => [c.policy, c.delayMs, c.keys])).toEqual([
      ['1-4:15,5-:40', 15, 4],
      ['1-4:5,5-:25', 5, 4],
    ]);
    expect(sync3[1].atMs).toBeGreaterThan(changedAt);
    // a store with no server policy: one record, policy null, the fake's default delay
    expect(workload.policyChanges.filter((c) => c.store === 'async3').map((c) => [c.policy, c.delayMs])).toEqual([[null, 8]]);
  });
});

describe('workload acks and sync-ack probes', () => {
  it('puts the ack\'s copies into the ledger completion', async () => {
    const { ledger } = await run({ writes: 500 });
    const acks = [...ledger.completions.values()].map((c) => c.ack!);
    expect(acks.length).toBeGreaterThan(400);
    expect(acks.every((a) => a.copies === (a.ackMode === 'sync' ? 3 : 1))).toBe(true);
  }, 30_000);

  it('probes a seeded sample of sync acks at RF>1 on the other in-sync members, right after the ack, as reads of kind probe', async () => {
    const asked: string[] = [];
    const epochs = new Set<number>();
    let store: FakeStore | null = null;
    const prober: AckProber = {
      inSyncAt: async (s, _p, epoch) => {
        epochs.add(epoch);
        await turn();
        return s === 'sync3' ? ['n1', 'n2', 'n3'] : ['n1', 'n2'];
      },
      getLocal: async (node, s, key) => {
        asked.push(`${node} ${s}`);
        await turn();
        const id = Number(key.slice(1));
        if (node === 'n3' && id % 5 === 0) throw new TransportError('Transport', { message: 'reset' });
        // n3, cut off, still answers some keys under its older entry (epoch 4) with an old value
        if (node === 'n3' && id % 5 === 1) return { status: KvStatus.Ok, node, epoch: 4, version: 1, value: Buffer.from(`w${id}.1`) };
        return store!.read(s, key, node);
      },
    };
    const { ledger, workload } = await run({ writes: 3_000, probeFraction: 0.1, prober, before: (s) => (store = s) });
    const probes = ledger.reads.filter((r) => r.kind === 'probe');
    expect(probes.length).toBe(workload.totals.probes);
    // never the async store, never the acking node
    expect(asked.every((a) => a.endsWith('sync3'))).toBe(true);
    expect(new Set(probes.map((p) => p.node))).toEqual(new Set(['n2', 'n3']));
    const syncAcks = ledger.invokes.filter((i) => ledger.completions.get(i.w)?.ack?.ackMode === 'sync').length;
    // 10% of the sync acks, two probes each (binomial sd ~ 12 acks)
    expect(probes.length / 2).toBeGreaterThan(syncAcks * 0.06);
    expect(probes.length / 2).toBeLessThan(syncAcks * 0.14);
    const byKey = writesByKey(ledger);
    // the in-sync set asked for is the ack's epoch's
    expect([...epochs]).toEqual([5]);
    expect(probes.some((p) => p.node === 'n3' && p.keyId % 5 === 0)).toBe(true);
    expect(probes.some((p) => p.node === 'n3' && p.keyId % 5 === 1)).toBe(true);
    for (const p of probes) {
      if (p.node === 'n3' && p.keyId % 5 === 0) {
        expect(p.outcome).toBe('info');
        continue;
      }
      if (p.node === 'n3' && p.keyId % 5 === 1) {
        // an answer under an entry older than the ack's epoch does not speak for the ack's copies
        expect(p.outcome).toBe('fail');
        expect(p.value).toBeNull();
        continue;
      }
      // the probe follows the ack at once, before the key's next write: it reads the write just acknowledged
      const writes = byKey.get(p.keyId)!;
      const before = writes.filter((w) => w.completeMs <= p.invokeMs);
      const last = before[before.length - 1];
      const next = writes[before.length];
      if (next) expect(next.invokeMs).toBeGreaterThan(p.completeMs);
      expect(p.outcome).toBe('ok');
      expect(p.value).toBe(last.id === '' ? null : last.id);
    }
  }, 30_000);

  it('probes nothing without a prober', async () => {
    const { ledger, workload } = await run({ writes: 1_000, probeFraction: 1 });
    expect(ledger.reads.some((r) => r.kind === 'probe')).toBe(false);
    expect(workload.totals.probes).toBe(0);
  }, 30_000);
});
