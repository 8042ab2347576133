import Database from 'better-sqlite3';
import { createPrng } from './nemesis/prng.js';
import { applySchema, META, SCHEMA_VERSION } from '../ledger/schema.js';
import { KeyPacker } from '../ledger/key-packer.js';
import { BATCH_FMT, packBatch, toMicros } from '../ledger/write-batches.js';

/**
 * A synthetic run's ledger as the harness leaves it before the seal (issue 11: measure the end
 * of a 4-hour run without running one): the hot path's packed batches (write-batches.ts, the
 * layout the worker ledger writes), keys, runtime-map samples, faults, per-second stats, harness
 * events and the final reads, shaped like `make certify` at its defaults:
 * - 3 stores (sync3, async3, rf1) x 3 partitions on n1..n3, 8 writers x 16 key slots per store;
 *   a slot writes its key 10-100 times (create, then put / cas, 3% deletes), then a fresh key;
 * - `rate` writes/s in group commits every {@link SyntheticRun.batchMs}, a completion committed in
 *   the batch where it lands: 2-9 ms latency, 94% ok, 2% fail (Conflict), 4% info (Timeout), 1%
 *   retried (2-3 attempts, up to 2 s); non-ok and retried writes carry an attempt trace as the
 *   workload writes it;
 * - a read of the slot's key after 1 write in `readEvery` (get / getMany / probe), answering the
 *   last acknowledged state; 1 read in 100,000 returns an older value (a stale read);
 * - a fault every 20 s (kill, stop, pause, partition in turn) that bumps its node's partitions'
 *   epochs; samples every 250 ms: per partition the merged view and each replica's own entry,
 *   with in-sync sets and revisions;
 * - final reads of every key: its last acknowledged state, but for 1 key in 10,000 the state
 *   before it (a loss of the last ack);
 * - with {@link SyntheticRun.lossEvery} (the end phase with many findings), allowed losses too.
 * Deterministic for a seed. Memory: the slots' keys and the writes in flight.
 */
export interface SyntheticRun {
  path: string;
  durationMs: number;
  /** Writes per second over all stores. */
  rate: number;
  seed?: number;
  /** 1 write in readEvery is followed by a read (default 10; 0 = no reads). */
  readEvery?: number;
  /** Group-commit period, ms (default 10). */
  batchMs?: number;
  /** Progress callback (fraction done). */
  progress?: (fraction: number) => void;
  /**
   * Pack the batches while the run is written, as the ledger's worker does during a run
   * (ledger/key-packer.ts KeyPacker.step after each second of run time); default true. The CPU
   * time it took is returned (packCpuMs).
   */
  packWhileRunning?: boolean;
  /**
   * Allowed losses (the end phase of a run with tens of thousands of findings): 1 key of the rf1
   * store in lossEvery loses its last acknowledged write when its node is next killed or stopped
   * (rf1; its final read waits for that crash, and reads the last ack when none comes before the
   * end); an async3 key whose last write was invoked and acknowledged within 400 ms before its owner's kill
   * or stop loses it (async-ack: the samples then show the async replicas' revisions 500 ms
   * behind the active's, within the 1,000 ms lag bound); and 1 sync3 key in
   * {@link SYNC_LOSS_EVERY} loses its last ack (a violation). Default 0: none of these (the async
   * replicas' revisions equal the active's).
   */
  lossEvery?: number;
}

/** lossEvery: 1 sync3 key in this many loses its last ack (a violation: a few hundred in 40 minutes). */
const SYNC_LOSS_EVERY = 200;
/** lossEvery: an async key whose last ack was invoked (took its revision) this close before its owner's crash loses it, ms. */
const ASYNC_LOSS_MS = 400;
/** lossEvery: how far the async replicas' revisions trail the active's in the samples, ms. */
const ASYNC_TRAIL_MS = 500;

const STORES = [
  { name: 'sync3', rf: 3, mode: 'sync' },
  { name: 'async3', rf: 3, mode: 'async' },
  { name: 'rf1', rf: 1, mode: 'sync' },
];
const NODES = ['n1', 'n2', 'n3'];
const PARTITIONS = 3;
const SYNC_STORE = 0;
const RF1_STORE = 2;
/** Runtime-map samples every this many ms. */
const SAMPLE_MS = 250;
const WRITERS = 8;
const KEYS_PER_WRITER = 16;

interface Slot {
  store: number;
  partition: number;
  keyId: number;
  seq: number;
  remaining: number;
  present: boolean;
  /** The last acknowledged state: a write id, or null (absent). */
  acked: string | null;
  /** The acknowledged state before it (for an injected stale read or loss). */
  before: string | null;
  busyUntil: number;
  /** The last write's outcome was ok, invoked at this instant (ms: its revision is of then); null otherwise. */
  lastOkInvokeMs: number | null;
  /** lossEvery: the final read returns the state before the last ack. */
  lose: boolean;
}

/**
 * Writes the synthetic run's ledger at `o.path` (a new file).
 * @returns the number of writes and reads recorded and keys created.
 */
export function writeSyntheticRun(o: SyntheticRun): { writes: number; reads: number; keys: number; packCpuMs: number } {
  const rng = createPrng(o.seed ?? 4040);
  const batchMs = o.batchMs ?? 10;
  const readEvery = o.readEvery ?? 10;
  const lossEvery = o.lossEvery ?? 0;
  if (!Number.isSafeInteger(lossEvery) || lossEvery < 0) throw new Error(`writeSyntheticRun: lossEvery must be a non-negative integer, got ${lossEvery}`);
  const db = new Database(o.path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  applySchema(db);
  const meta = db.prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)');
  const insKey = db.prepare('INSERT INTO keys (key_id, store, key, partition, writer) VALUES (?, ?, ?, ?, ?)');
  const insBatch = db.prepare('INSERT INTO write_batches (inv, cmp, dict, traces, fmt, rd, rdx, rid0) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
  const insHotString = db.prepare('INSERT INTO hot_strings (code, text) VALUES (?, ?)');
  let readsRecorded = 0;
  const insFinal = db.prepare('INSERT INTO final_reads (key_id, value, value_key_id, value_seq, unreadable, t_ms) VALUES (?, ?, ?, ?, 0, ?)');
  const insSample = db.prepare(
    'INSERT INTO samples (t_ms, store, partition, active, epoch, health, replicated_revision, node, in_sync, revisions, replicas) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)',
  );
  const insFault = db.prepare('INSERT INTO faults (kind, nodes, target, planned_ms, start_ms, effective_ms, end_ms, caught_up_ms, detail, isolated) VALUES (?, ?, NULL, ?, ?, ?, ?, ?, NULL, ?)');
  const insStats = db.prepare('INSERT INTO stats (t_s, store, acked, failed, indeterminate, p50_ms, p95_ms, p99_ms, max_ms, statuses) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
  const insEvent = db.prepare('INSERT INTO events (t_ms, kind, detail) VALUES (?, ?, ?)');

  db.transaction(() => {
    meta.run(META.schemaVersion, String(SCHEMA_VERSION));
    meta.run(META.rules, 'zaris-history/2');
    meta.run(META.status, 'running');
    meta.run(META.seed, String(o.seed ?? 4040));
    meta.run(META.runtime, 'process');
    meta.run(META.durationMs, String(o.durationMs));
    meta.run(META.startedAtUtc, '2026-11-30T00:00:00.000Z');
    meta.run(META.runConfig, JSON.stringify({ durationMs: o.durationMs, rate: o.rate, writersPerStore: WRITERS, keysPerWriter: KEYS_PER_WRITER, faults: ['kill', 'stop', 'pause', 'partition'], beyondBudget: false, asyncLagMaxMs: 1000, leaseMs: 2100, selfTestBug: null, synthetic: true }));
    NODES.forEach((n, i) => db.prepare('INSERT INTO nodes VALUES (?, ?, ?, ?, 1)').run(n, `127.0.0.${11 + i}`, 7000 + i, 7100 + i));
    for (const s of STORES) {
      db.prepare('INSERT INTO stores VALUES (?, ?, ?, 64)').run(s.name, s.rf, s.mode);
      for (let p = 0; p < PARTITIONS; p++) db.prepare('INSERT INTO partitions VALUES (?, ?, ?)').run(s.name, p, JSON.stringify(replicasOf(s.rf, p)));
    }
  })();

  let nextKeyId = 1;
  let keysMade = 0;
  const newKey = (slot: Slot, t: number): void => {
    if (slot.keyId > 0) finalRead(slot, t);
    slot.keyId = nextKeyId++;
    keysMade++;
    slot.seq = 0;
    slot.remaining = 10 + Math.floor(rng.next() * 91);
    slot.present = false;
    slot.acked = null;
    slot.before = null;
    slot.lastOkInvokeMs = null;
    slot.lose = lossEvery > 0 && ((slot.store === RF1_STORE && rng.int(1, lossEvery) === 1) || (slot.store === SYNC_STORE && rng.int(1, SYNC_LOSS_EVERY) === 1));
    slot.partition = rng.int(0, PARTITIONS - 1);
    insKey.run(slot.keyId, STORES[slot.store].name, `k${slot.keyId}`, slot.partition, 0);
  };
  const insertFinal = (keyId: number, v: string | null, t: number): void => {
    const m = v === null ? null : /^w(\d+)\.(\d+)$/.exec(v);
    insFinal.run(keyId, v, m ? Number(m[1]) : null, m ? Number(m[2]) : null, t);
  };
  // lossEvery: rf1 keys whose last ack is lost when their node next crashes, per node
  const rf1Pending = new Map<string, Array<{ keyId: number; acked: string | null; before: string | null }>>();
  const finalRead = (slot: Slot, t: number): void => {
    if (slot.lose && slot.store === RF1_STORE && slot.lastOkInvokeMs !== null) {
      const node = replicasOf(1, slot.partition)[0];
      let l = rf1Pending.get(node);
      if (l === undefined) rf1Pending.set(node, (l = []));
      l.push({ keyId: slot.keyId, acked: slot.acked, before: slot.before });
      return;
    }
    const lose = slot.keyId % 10_000 === 0 || (slot.lose && slot.lastOkInvokeMs !== null);
    insertFinal(slot.keyId, lose ? slot.before : slot.acked, t);
  };

  const slots: Slot[] = [];
  for (let s = 0; s < STORES.length; s++) {
    for (let i = 0; i < WRITERS * KEYS_PER_WRITER; i++) {
      const slot: Slot = { store: s, partition: 0, keyId: 0, seq: 0, remaining: 0, present: false, acked: null, before: null, busyUntil: 0, lastOkInvokeMs: null, lose: false };
      db.transaction(() => newKey(slot, 0))();
      slots.push(slot);
    }
  }
  // per partition: epoch, the active, the revision counter, the version counter
  const parts = STORES.flatMap((s, si) => Array.from({ length: PARTITIONS }, (_, p) => ({ store: si, p, epoch: 1, active: replicasOf(s.rf, p)[0], rev: 0, ver: 0, revs: [] as number[] })));
  // lossEvery: the async replicas' revisions trail the active's (its revision ASYNC_TRAIL_MS ago)
  const trail = lossEvery > 0 ? ASYNC_TRAIL_MS / SAMPLE_MS : 0;
  const partOf = (store: number, p: number): (typeof parts)[number] => parts[store * PARTITIONS + p];

  // completions and reads waiting for their batch: [complete time, fields...] rows
  const pendingCmp: Array<{ t: number; row: number[]; trace?: string }> = [];
  const pendingRd: Array<{ t: number; row: number[] }> = [];
  let w = 0;
  let writes = 0;
  let reads = 0;
  let readCount = 0;
  let cursor = 0;
  const perBatch = (o.rate * batchMs) / 1000;
  let carry = 0;
  const codes: Record<string, number> = { Ok: 0, Conflict: 1, Timeout: 2, n1: 3, n2: 4, n3: 5, Unavailable: 6 };
  let dictSent = false;
  const stats = STORES.map(() => ({ acked: 0, failed: 0, info: 0 }));
  let nextSample = 0;
  let nextFault = 20_000;
  let faultKind = 0;
  let nextSecond = 1000;
  let lastProgress = 0;

  const commit = db.transaction((t: number, inv: number[], cmp: number[], traces: Array<[number, string]>, rd: number[]) => {
    if (inv.length > 0 || cmp.length > 0 || rd.length > 0) {
      const p = packBatch({ inv: Float64Array.from(inv), cmp: Float64Array.from(cmp), rd: Float64Array.from(rd) });
      const dict = dictSent ? '[]' : JSON.stringify(Object.entries(codes).map(([text, c]) => [c, text]));
      if (!dictSent) for (const [text, c] of Object.entries(codes)) insHotString.run(c, text);
      dictSent = true;
      insBatch.run(p.inv, p.cmp, dict, JSON.stringify(traces), BATCH_FMT, p.rd, null, readsRecorded + 1);
      readsRecorded += rd.length / 8;
    }
    while (t >= nextSample) {
      for (const part of parts) {
        const s = STORES[part.store];
        const replicas = replicasOf(s.rf, part.p);
        const inSync = JSON.stringify(replicas);
        part.revs.push(part.rev);
        if (part.revs.length > trail + 1) part.revs.shift();
        const revOf = (n: string): number => (s.mode === 'async' && n !== part.active ? part.revs[0] : part.rev);
        const revisions = JSON.stringify(Object.fromEntries(replicas.map((n) => [n, revOf(n)])));
        insSample.run(nextSample, s.name, part.p, part.active, part.epoch, 'Healthy', part.rev, null, inSync, revisions);
        for (const n of replicas) insSample.run(nextSample, s.name, part.p, part.active, part.epoch, 'Healthy', part.rev, n, inSync, JSON.stringify({ [n]: revOf(n) }));
      }
      nextSample += SAMPLE_MS;
    }
    while (t >= nextSecond) {
      STORES.forEach((s, i) => {
        insStats.run(nextSecond / 1000 - 1, s.name, stats[i].acked, stats[i].failed, stats[i].info, 4.1, 8.2, 9.5, 40.3, JSON.stringify({ Ok: stats[i].acked, Conflict: stats[i].failed, Timeout: stats[i].info }));
        stats[i] = { acked: 0, failed: 0, info: 0 };
      });
      if (nextSecond % 10_000 === 0) insEvent.run(nextSecond, 'harness', JSON.stringify({ rssMb: 150, heapUsedMb: 40, acked: writes }));
      nextSecond += 1000;
    }
    if (t >= nextFault) {
      const kind = ['kill', 'stop', 'pause', 'partition'][faultKind++ % 4];
      const node = NODES[rng.int(0, 2)];
      insFault.run(kind, JSON.stringify([node]), nextFault, nextFault, nextFault + 5, nextFault + 3000, kind === 'kill' || kind === 'stop' ? nextFault + 4000 : null, kind === 'partition' ? JSON.stringify([node]) : null);
      for (const part of parts) if (part.active === node && STORES[part.store].rf > 1) part.epoch++;
      if (lossEvery > 0 && (kind === 'kill' || kind === 'stop')) {
        for (const k of rf1Pending.get(node) ?? []) insertFinal(k.keyId, k.before, nextFault);
        rf1Pending.delete(node);
        // async keys acknowledged by the crashed owner just before the crash lose that ack: their
        // key ends here (a fresh key takes the slot), its final read the state before
        for (const slot of slots) {
          if (STORES[slot.store].mode !== 'async' || partOf(slot.store, slot.partition).active !== node) continue;
          if (slot.lastOkInvokeMs === null || slot.busyUntil > nextFault || slot.lastOkInvokeMs < nextFault - ASYNC_LOSS_MS) continue;
          slot.lose = true;
          newKey(slot, nextFault);
        }
      }
      nextFault += 20_000;
    }
  });

  const packer = o.packWhileRunning === false ? null : new KeyPacker(db);
  let packCpuMs = 0;
  let nextPack = 1000;
  for (let t = batchMs; t <= o.durationMs; t += batchMs) {
    const inv: number[] = [];
    const cmp: number[] = [];
    const traces: Array<[number, string]> = [];
    const rd: number[] = [];
    carry += perBatch;
    let n = Math.floor(carry);
    carry -= n;
    for (let tries = 0; n > 0 && tries < slots.length; tries++) {
      const slot = slots[cursor];
      cursor = (cursor + 1) % slots.length;
      if (slot.busyUntil > t - batchMs) continue;
      n--;
      if (slot.remaining <= 0) newKey(slot, t);
      slot.remaining--;
      const invoke = toMicros(t - batchMs + rng.next() * batchMs);
      const seq = ++slot.seq;
      const del = slot.present && rng.chance(0.03);
      const op = !slot.present ? 2 : del ? 3 : seq % 4 === 1 ? 1 : 0;
      w++;
      writes++;
      inv.push(w, slot.keyId, seq, op, invoke);
      const r = rng.next();
      const retried = r < 0.01;
      const latency = retried ? 100 + rng.next() * 1900 : 2 + rng.next() * 7;
      const complete = toMicros(invoke + latency);
      slot.busyUntil = complete;
      const outcome = r > 0.96 ? 2 : r > 0.94 ? 1 : 0;
      const part = partOf(slot.store, slot.partition);
      const s = STORES[slot.store];
      let trace: string | undefined;
      if (retried || outcome !== 0) {
        const attempts = retried ? [{ n: 1, s: 'Timeout', node: part.active, e: part.epoch, t0: invoke, t1: toMicros(invoke + latency / 2) }, { n: 2, s: outcome === 0 ? 'Ok' : outcome === 1 ? 'Conflict' : 'Timeout', node: part.active, e: part.epoch, t0: toMicros(invoke + latency / 2), t1: complete }] : [{ n: 1, s: outcome === 1 ? 'Conflict' : 'Timeout', node: part.active, e: part.epoch, t0: invoke, t1: complete }];
        trace = JSON.stringify(attempts);
      }
      const id = `w${slot.keyId}.${seq}`;
      if (outcome === 0) {
        part.rev++;
        part.ver++;
        pendingCmp.push({ t: complete, row: [w, complete, 0, codes.Ok, retried ? 2 : 1, codes[part.active], part.epoch, part.epoch * 2 ** 32 + part.ver, part.rev, s.mode === 'async' ? 1 : 0, s.rf > 1 && s.mode === 'sync' ? 2 + rng.int(0, 1) : 1], trace });
        slot.before = slot.acked;
        slot.acked = op === 3 ? null : id;
        slot.present = op !== 3;
        slot.lastOkInvokeMs = invoke;
        stats[slot.store].acked++;
      } else {
        pendingCmp.push({ t: complete, row: [w, complete, outcome, outcome === 1 ? codes.Conflict : codes.Timeout, retried ? 2 : 1, -1, 0, 0, 0, -1, -1], trace });
        if (outcome === 1) stats[slot.store].failed++;
        else {
          slot.lastOkInvokeMs = null;
          stats[slot.store].info++;
          // an indeterminate write: the model cannot know; the harness goes on as if it was applied
          slot.before = slot.acked;
          slot.acked = op === 3 ? null : id;
          slot.present = op !== 3;
        }
      }
      if (readEvery > 0 && writes % readEvery === 0) {
        readCount++;
        const stale = readCount % 100_000 === 0 && slot.before !== null;
        const v = stale ? slot.before : slot.acked;
        const m = v === null ? null : /^w(\d+)\.(\d+)$/.exec(v);
        const rInvoke = toMicros(complete + 1);
        const rComplete = toMicros(rInvoke + 1.5);
        pendingRd.push({ t: rComplete, row: [slot.keyId, rInvoke, rComplete, 0, codes[part.active], m ? Number(m[1]) : -1, m ? Number(m[2]) : 0, readCount % 3] });
        reads++;
      }
    }
    // completions and reads that landed in this batch's window
    for (let i = 0; i < pendingCmp.length; ) {
      const c = pendingCmp[i];
      if (c.t <= t) {
        cmp.push(...c.row);
        if (c.trace !== undefined) traces.push([c.row[0], c.trace]);
        pendingCmp[i] = pendingCmp[pendingCmp.length - 1];
        pendingCmp.pop();
      } else i++;
    }
    for (let i = 0; i < pendingRd.length; ) {
      const r = pendingRd[i];
      if (r.t <= t) {
        rd.push(...r.row);
        pendingRd[i] = pendingRd[pendingRd.length - 1];
        pendingRd.pop();
      } else i++;
    }
    commit(t, inv, cmp, traces, rd);
    if (packer !== null && t >= nextPack) {
      nextPack += 1000;
      const c0 = process.cpuUsage();
      while (packer.step(50));
      const c = process.cpuUsage(c0);
      packCpuMs += (c.user + c.system) / 1000;
    }
    if (o.progress && t - lastProgress >= 60_000) {
      lastProgress = t;
      o.progress(t / o.durationMs);
    }
  }
  // the end phase: what is still in flight completes; every key is read
  const end = o.durationMs + 5_000;
  db.transaction(() => {
    const cmp: number[] = [];
    const traces: Array<[number, string]> = [];
    for (const c of pendingCmp) {
      cmp.push(...c.row);
      if (c.trace !== undefined) traces.push([c.row[0], c.trace]);
    }
    const rd: number[] = [];
    for (const r of pendingRd) rd.push(...r.row);
    const p = packBatch({ inv: new Float64Array(0), cmp: Float64Array.from(cmp), rd: Float64Array.from(rd) });
    insBatch.run(p.inv, p.cmp, '[]', JSON.stringify(traces), BATCH_FMT, p.rd, null, readsRecorded + 1);
    for (const slot of slots) finalRead(slot, end);
    // rf1 keys whose node did not crash again: nothing lost
    for (const l of rf1Pending.values()) for (const k of l) insertFinal(k.keyId, k.acked, end);
    meta.run(META.status, 'complete');
  })();
  db.close();
  return { writes, reads, keys: keysMade, packCpuMs: Math.round(packCpuMs) };
}

function replicasOf(rf: number, p: number): string[] {
  return Array.from({ length: rf }, (_, k) => NODES[(p + k) % 3]);
}

