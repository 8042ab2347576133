import fc from 'fast-check';
import type { History, HistoryFault, HistoryStall, HistoryOwnership, HistoryRead, HistoryRun, HistoryWrite, WriteOp } from '../history-format.js';

// ---------------------------------------------------------------------------------------------
// Random zaris-history/2 documents that reach every rule of the v2 verifier: single-writer keys
// whose final state comes from a model of the store (ok applied, fail not, info either way),
// with some keys' last ack dropped from the final read (losses), odd acks (one copy, another
// node, versions that go back), reads of every sort (the model's value, an older one, a failed
// write's, an unknown id, absent), runtime-map samples with per-node entries, in-sync sets and
// revisions, faults with effective times and isolated nodes, and run records of every status.
// The times are small (0-5,000 ms) so that faults, samples, acks and reads meet.
// ---------------------------------------------------------------------------------------------

/** The nodes of every generated history. */
export const NODES_V2 = ['n1', 'n2', 'n3'];
const STORES = [
  { name: 'sync3', replicationFactor: 3, ackMode: 'sync' as const },
  { name: 'async3', replicationFactor: 3, ackMode: 'async' as const },
  { name: 'rf1', replicationFactor: 1, ackMode: 'sync' as const },
];
/** Two partitions per store (few, so that samples, faults and keys meet). */
const PARTITIONS = STORES.flatMap((s) =>
  [0, 1].map((p) => ({ store: s.name, partition: p, replicas: Array.from({ length: s.replicationFactor }, (_, k) => NODES_V2[(p + k) % 3]) })),
);

const nodeArb = fc.constantFrom(...NODES_V2);
const subsetArb = fc.subarray(NODES_V2, { minLength: 0, maxLength: 3 });

const runArb = fc.record({
  status: fc.constantFrom('complete', 'complete', 'complete', 'complete', 'complete', 'complete', 'running', 'interrupted'),
  reason: fc.constantFrom(null, null, null, null, null, null, null, 'the cluster did not return to Healthy'),
  beyondBudget: fc.boolean(),
  lag: fc.constantFrom(300, 1000),
  lease: fc.constantFrom(undefined, undefined, 400, 1500),
  bug: fc.constantFrom(null, null, null, null, null, null, null, null, null, 'stale-owner-acks'),
});

const faultArb = fc.record({
  kind: fc.constantFrom('kill', 'kill', 'stop', 'pause', 'partition'),
  nodes: fc.subarray(NODES_V2, { minLength: 1, maxLength: 2 }),
  start: fc.nat(4000),
  effective: fc.option(fc.nat(6), { nil: undefined }),
  dur: fc.nat(1500),
  never: fc.nat(9),
  caughtUp: fc.option(fc.nat(400), { nil: undefined }),
  isolated: fc.option(subsetArb, { nil: undefined }),
});

const sampleArb = fc.record({
  t: fc.nat(5000),
  store: fc.nat(2),
  partition: fc.nat(1),
  active: fc.option(nodeArb, { freq: 8, nil: null }),
  epoch: fc.integer({ min: 1, max: 4 }),
  healthy: fc.boolean(),
  rr: fc.nat(30),
  node: fc.option(nodeArb, { freq: 2, nil: undefined }),
  inSync: fc.option(subsetArb, { freq: 2, nil: undefined }),
  revisions: fc.option(fc.tuple(fc.nat(30), fc.nat(30), fc.nat(30), fc.nat(7)), { freq: 2, nil: undefined }),
  replicas: fc.option(subsetArb, { freq: 8, nil: undefined }),
});

const opArb = fc.record({
  op: fc.constantFrom<WriteOp>('put', 'put', 'cas', 'create', 'delete'),
  outcome: fc.constantFrom('ok', 'ok', 'ok', 'ok', 'fail', 'info'),
  applied: fc.boolean(),
  node: fc.nat(9),
  epoch: fc.integer({ min: 1, max: 4 }),
  revision: fc.nat(30),
  copies: fc.constantFrom(undefined, 2, 3, 3, 1),
  versionDelta: fc.constantFrom(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1),
  // a negative gap: the write starts before the previous one completed (histories from elsewhere)
  gap: fc.oneof({ weight: 6, arbitrary: fc.nat(300) }, { weight: 1, arbitrary: fc.integer({ min: -60, max: -1 }) }),
  dur: fc.integer({ min: 1, max: 80 }),
  infoNoComplete: fc.nat(20),
});

const readArb = fc.record({
  at: fc.nat(100),
  dur: fc.integer({ min: 1, max: 40 }),
  value: fc.constantFrom('model', 'model', 'model', 'older', 'failed', 'garbage', 'null', 'inflight'),
  outcome: fc.constantFrom('ok', 'ok', 'ok', 'ok', 'fail', 'info'),
  node: fc.option(nodeArb, { nil: null }),
});

const keyArb = fc.record({
  store: fc.nat(2),
  partition: fc.nat(1),
  start: fc.nat(3000),
  ops: fc.array(opArb, { minLength: 1, maxLength: 6 }),
  reads: fc.array(readArb, { maxLength: 4 }),
  final: fc.constantFrom('model', 'model', 'model', 'model', 'model', 'loss', 'loss', 'unreadable', 'missing', 'garbage', 'failed'),
});

const stallArb = fc.record({ node: nodeArb, start: fc.nat(5000), dur: fc.nat(1200) });

/** A random v2 plan. */
export const planV2Arb = fc.record({
  run: runArb,
  /** 0 (1 plan in 12): nothing is acknowledged, no reads, no samples: a run that tested nothing. */
  quiet: fc.nat(11),
  keys: fc.array(keyArb, { minLength: 1, maxLength: 6 }),
  faults: fc.array(faultArb, { maxLength: 6 }),
  samples: fc.array(sampleArb, { maxLength: 16 }),
  /** The extension `stalls` (nodes observed not running); none in about four plans of five. */
  stalls: fc.oneof({ weight: 4, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: fc.array(stallArb, { minLength: 1, maxLength: 2 }) }),
});
/** What {@link planV2Arb} generates. */
export type PlanV2 = typeof planV2Arb extends fc.Arbitrary<infer T> ? T : never;

/** The model's value of a key after the writes applied up to (not including) index `upTo`. */
function stateAfter(ws: HistoryWrite[], applied: boolean[], upTo: number): string | null {
  let state: string | null = null;
  for (let i = 0; i < upTo; i++) if (applied[i]) state = ws[i].op === 'delete' ? null : ws[i].id;
  return state;
}

/** Builds the zaris-history/2 of a plan (valid by construction: the parser accepts it). */
export function buildV2(plan: PlanV2): History {
  if (plan.quiet === 0) {
    plan = {
      ...plan,
      samples: [],
      keys: plan.keys.map((k) => ({ ...k, reads: [], final: 'model', ops: k.ops.map((o) => ({ ...o, outcome: o.outcome === 'ok' ? 'fail' : o.outcome })) })),
    };
  }
  const r = plan.run;
  const run: HistoryRun = { status: r.status as HistoryRun['status'], inconclusiveReason: r.reason, beyondBudget: r.beyondBudget, asyncLagMaxMs: r.lag, selfTestBug: r.bug };
  if (r.lease !== undefined) run.leaseMs = r.lease;
  const writes: HistoryWrite[] = [];
  const reads: HistoryRead[] = [];
  const finalReads: History['finalReads'] = [];
  plan.keys.forEach((k, ki) => {
    const store = STORES[k.store];
    const replicas = PARTITIONS.find((p) => p.store === store.name && p.partition === k.partition)!.replicas;
    const key = `key-${ki}`;
    let t = k.start;
    let version = 0;
    const ws: HistoryWrite[] = [];
    const applied: boolean[] = [];
    k.ops.forEach((o, i) => {
      const invoke = Math.max(0, t + o.gap);
      const complete = invoke + o.dur;
      const isApplied = o.outcome === 'ok' || (o.outcome === 'info' && o.applied);
      if (isApplied) version++;
      const w: HistoryWrite = { id: `k${ki}w${i + 1}`, store: store.name, key, partition: k.partition, seq: i + 1, op: o.op, invoke, outcome: o.outcome as HistoryWrite['outcome'] };
      // an info write of the last seq may have no complete (still in flight at the end)
      if (!(o.outcome === 'info' && i === k.ops.length - 1 && o.infoNoComplete === 0)) w.complete = complete;
      if (o.outcome === 'ok') {
        // acks mostly from the partition's first replica (its usual active), sometimes another
        const node = o.node < 7 ? replicas[0] : NODES_V2[o.node % 3];
        w.ack = { node, epoch: o.epoch, version: Math.max(0, version + o.versionDelta), revision: o.revision, ackMode: store.ackMode };
        if (o.copies !== undefined) w.ack.copies = o.copies;
      }
      t = complete;
      ws.push(w);
      applied.push(isApplied);
    });
    writes.push(...ws);
    const end = t;
    k.reads.forEach((x, ri) => {
      const invoke = k.start + ((end + 200 - k.start) * x.at) / 100;
      const complete = invoke + x.dur;
      const done = ws.filter((w) => typeof w.complete === 'number' && w.complete < invoke).length;
      let value: string | null;
      switch (x.value) {
        case 'model':
          value = stateAfter(ws, applied, done);
          break;
        case 'older':
          value = ws.length > 1 ? ws[0].id : null;
          break;
        case 'failed':
          value = ws.find((w) => w.outcome === 'fail')?.id ?? 'nothing-failed';
          break;
        case 'garbage':
          value = `zz${ri}`;
          break;
        case 'inflight':
          value = ws[Math.min(done, ws.length - 1)].id;
          break;
        default:
          value = null;
      }
      const outcome = x.outcome as HistoryRead['outcome'];
      reads.push({ id: `k${ki}r${ri}`, store: store.name, key, invoke, complete, outcome, node: x.node, value: outcome === 'ok' ? value : null });
    });
    const okIdx = ws.map((w) => w.outcome).lastIndexOf('ok');
    switch (k.final) {
      case 'unreadable':
        finalReads.push({ store: store.name, key, value: null, unreadable: true });
        break;
      case 'missing':
        break;
      case 'garbage':
        finalReads.push({ store: store.name, key, value: 'zz-final' });
        break;
      case 'failed':
        // a definitely failed write's value (phantom), else the model's state
        finalReads.push({ store: store.name, key, value: ws.find((w) => w.outcome === 'fail')?.id ?? stateAfter(ws, applied, ws.length) });
        break;
      case 'loss':
        // the store applied nothing from the last ack on
        finalReads.push({ store: store.name, key, value: okIdx < 0 ? stateAfter(ws, applied, ws.length) : stateAfter(ws, applied, okIdx) });
        break;
      default:
        finalReads.push({ store: store.name, key, value: stateAfter(ws, applied, ws.length) });
    }
  });
  const faults: HistoryFault[] = plan.faults.map((f, i) => {
    const fault: HistoryFault = { id: `f${i + 1}`, kind: f.kind as HistoryFault['kind'], nodes: f.nodes, start: f.start };
    if (f.effective !== undefined) fault.effective = f.start + f.effective;
    if (f.never !== 0) fault.end = f.start + f.dur;
    if (f.never !== 0 && f.caughtUp !== undefined && (f.kind === 'kill' || f.kind === 'stop')) fault.caughtUp = f.start + f.dur + f.caughtUp;
    if (f.kind === 'partition' && f.isolated !== undefined) fault.isolated = f.isolated;
    return fault;
  });
  const ownership: HistoryOwnership[] = plan.samples.map((s) => {
    const store = STORES[s.store];
    const o: HistoryOwnership = { t: s.t, store: store.name, partition: s.partition, active: s.active, epoch: s.epoch, health: s.healthy ? 'Healthy' : 'Degraded', replicatedRevision: s.rr };
    if (s.node !== undefined) o.node = s.node;
    if (s.inSync !== undefined) o.inSync = s.inSync;
    if (s.revisions !== undefined) {
      // one node's revision left out now and then (unknown)
      o.revisions = Object.fromEntries(NODES_V2.map((n, i) => [n, s.revisions![i]]).filter((_, i) => i !== s.revisions![3]));
    }
    if (s.replicas !== undefined && s.replicas.length > 0) o.replicas = s.replicas;
    return o;
  });
  const h: History = { format: 'zaris-history/2', run, nodes: NODES_V2, stores: STORES, partitions: PARTITIONS, faults, ownership, writes, reads, finalReads };
  // stalls as an export writes them: one node's merged, by node then start
  const stalls: HistoryStall[] = [];
  for (const x of [...plan.stalls].sort((a, b) => (a.node < b.node ? -1 : a.node > b.node ? 1 : 0) || a.start - b.start)) {
    const top = stalls[stalls.length - 1];
    if (top !== undefined && top.node === x.node && x.start <= top.end) top.end = Math.max(top.end, x.start + x.dur);
    else stalls.push({ node: x.node, start: x.start, end: x.start + x.dur });
  }
  if (stalls.length > 0) h.stalls = stalls;
  return h;
}
