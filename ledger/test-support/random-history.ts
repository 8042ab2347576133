import fc from 'fast-check';
import type { History, HistoryFault, HistoryOwnership, HistoryWrite, WriteOp } from '../history-format.js';

// ---------------------------------------------------------------------------------------------
// Random single-writer histories whose final state comes from a reference model of the store:
// every ok write is applied, no fail write is, an info write is applied or not at random; a
// key's versions count the applied writes; the final read is the last applied write (or absent).
// ---------------------------------------------------------------------------------------------

/** The three nodes of every generated history. */
export const NODES = ['n1', 'n2', 'n3'];
/** The default stores (DESIGN.md §3 "Workload"): sync3, async3, rf1. */
export const STORES = [
  { name: 'sync3', replicationFactor: 3, ackMode: 'sync' as const },
  { name: 'async3', replicationFactor: 3, ackMode: 'async' as const },
  { name: 'rf1', replicationFactor: 1, ackMode: 'sync' as const },
];
/** Three partitions per store, replicas on the ring from the partition's preferred primary. */
export const PARTITIONS = STORES.flatMap((s) =>
  [0, 1, 2].map((p) => ({ store: s.name, partition: p, replicas: Array.from({ length: s.replicationFactor }, (_, k) => NODES[(p + k) % 3]) })),
);

const opArb = fc.record({
  op: fc.constantFrom<WriteOp>('put', 'cas', 'create', 'delete'),
  outcome: fc.constantFrom('ok', 'ok', 'ok', 'fail', 'info'),
  applied: fc.boolean(), // for info: did the store apply it?
  node: fc.nat(2),
  epoch: fc.integer({ min: 1, max: 3 }),
  revision: fc.nat(30),
  gap: fc.nat(200),
  dur: fc.integer({ min: 1, max: 60 }),
});
const keyArb = fc.record({ store: fc.nat(2), partition: fc.nat(2), start: fc.nat(1000), ops: fc.array(opArb, { minLength: 1, maxLength: 8 }), readFails: fc.nat(30) });
const faultArb = fc.record({
  kind: fc.constantFrom('kill', 'stop', 'pause', 'partition'),
  node: fc.nat(2),
  start: fc.nat(3000),
  dur: fc.nat(900),
  caughtUp: fc.option(fc.nat(300)),
  never: fc.nat(9),
});
const sampleArb = fc.record({ t: fc.nat(3000), store: fc.nat(2), partition: fc.nat(2), epoch: fc.integer({ min: 1, max: 4 }), rr: fc.nat(30), node: fc.nat(2) });
/** A random plan: 1-6 keys of 1-8 writes, up to 6 faults, up to 14 runtime-map samples (times 0-3,000 ms). */
export const planArb = fc.record({
  keys: fc.array(keyArb, { minLength: 1, maxLength: 6 }),
  faults: fc.array(faultArb, { maxLength: 6 }),
  samples: fc.array(sampleArb, { maxLength: 14 }),
});
/** What {@link planArb} generates. */
export type Plan = typeof planArb extends fc.Arbitrary<infer T> ? T : never;

/** A generated history and, per key (index), which of its writes the model applied. */
export interface Built {
  history: History;
  /** per key: writes in seq order with whether the model applied them */
  applied: boolean[][];
}

/** Applies the writes the store applied; the final state is the last applied write (or absent). */
export function finalState(ws: HistoryWrite[], applied: boolean[], upTo = ws.length): string | null {
  let state: string | null = null;
  for (let i = 0; i < upTo; i++) if (applied[i]) state = ws[i].op === 'delete' ? null : ws[i].id;
  return state;
}

/** Builds the history of a plan: write ids `k<key>w<seq>`, keys `key-<key>`; 1 key in 31 has an unreadable final read, 1 in 31 none. */
export function build(plan: Plan): Built {
  const writes: HistoryWrite[] = [];
  const applied: boolean[][] = [];
  const finalReads: History['finalReads'] = [];
  plan.keys.forEach((k, ki) => {
    const store = STORES[k.store];
    const replicas = PARTITIONS.find((p) => p.store === store.name && p.partition === k.partition)!.replicas;
    let t = k.start;
    let version = 0;
    const ws: HistoryWrite[] = [];
    const ap: boolean[] = [];
    k.ops.forEach((o, i) => {
      const invoke = t + o.gap;
      const complete = invoke + o.dur;
      t = complete;
      const isApplied = o.outcome === 'ok' || (o.outcome === 'info' && o.applied);
      if (isApplied) version++;
      const w: HistoryWrite = {
        id: `k${ki}w${i + 1}`, store: store.name, key: `key-${ki}`, partition: k.partition, seq: i + 1, op: o.op,
        invoke, complete, outcome: o.outcome as HistoryWrite['outcome'],
      };
      if (o.outcome === 'ok') w.ack = { node: replicas[o.node % replicas.length], epoch: o.epoch, version, revision: o.revision, ackMode: store.ackMode };
      ws.push(w);
      ap.push(isApplied);
    });
    writes.push(...ws);
    applied.push(ap);
    // a few final reads fail or are missing: the key is then unverified
    if (k.readFails === 0) finalReads.push({ store: store.name, key: `key-${ki}`, value: null, unreadable: true });
    else if (k.readFails !== 1) finalReads.push({ store: store.name, key: `key-${ki}`, value: finalState(ws, ap) });
  });
  const faults: HistoryFault[] = plan.faults.map((f, i) => {
    const fault: HistoryFault = { id: `f${i + 1}`, kind: f.kind as HistoryFault['kind'], nodes: [NODES[f.node]], start: f.start };
    if (f.never !== 0) fault.end = f.start + f.dur;
    if (f.never !== 0 && f.caughtUp !== null && (f.kind === 'kill' || f.kind === 'stop')) fault.caughtUp = f.start + f.dur + f.caughtUp;
    return fault;
  });
  const ownership: HistoryOwnership[] = plan.samples.map((s) => ({
    t: s.t, store: STORES[s.store].name, partition: s.partition, active: NODES[s.node], epoch: s.epoch, health: 'Healthy', replicatedRevision: s.rr,
  }));
  return {
    history: { format: 'zaris-history/1', nodes: NODES, stores: STORES, partitions: PARTITIONS, faults, ownership, writes, finalReads },
    applied,
  };
}

