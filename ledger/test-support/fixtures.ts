import type { History, HistoryAck, HistoryFault, HistoryOwnership, HistoryRead, HistoryRun, HistoryWrite, Outcome, WriteOp } from '../history-format.js';

/**
 * Small hand-made histories the project owns (only the *.cases.test.ts suites read the shared
 * cases), each with the verdict and findings the rules of history-format.md give, by
 * our own reading of them. v1 fixtures exercise the v1 rules; v2 fixtures the v2 rules, among
 * them the eight inputs of issue 10 that came out wrong before v2.
 */

/** A finding as history-format.md's `expected` lists it. */
export interface FixtureFinding {
  class: string;
  kind: string;
  store: string;
  key: string | null;
  write: string | null;
  partition?: number;
  read?: string;
}

/** A fixture: the history and what the rules say of it. */
export interface Fixture {
  name: string;
  why: string;
  history: History;
  verdict: 'CERTIFIED' | 'FAILED' | 'INCONCLUSIVE';
  findings: FixtureFinding[];
  /** The INCONCLUSIVE reason, when the fixture pins it. */
  reason?: string;
}

const NODES = ['n1', 'n2', 'n3'];
const STORES = {
  sync3: { name: 'sync3', replicationFactor: 3, ackMode: 'sync' as const },
  async3: { name: 'async3', replicationFactor: 3, ackMode: 'async' as const },
  rf1: { name: 'rf1', replicationFactor: 1, ackMode: 'sync' as const },
};
type StoreName = keyof typeof STORES;

/** A write of key k (partition 0); `ack` is filled for `ok` from the given fields. */
export function w(
  id: string,
  store: StoreName,
  key: string,
  seq: number,
  invoke: number,
  complete: number,
  outcome: Outcome,
  ack?: Partial<HistoryAck> & { node?: string },
  op: WriteOp = 'put',
): HistoryWrite {
  const out: HistoryWrite = { id, store, key, partition: 0, seq, op, invoke, complete, outcome };
  if (outcome === 'ok') {
    out.ack = { node: 'n1', epoch: 1, version: seq, revision: seq, ackMode: STORES[store].ackMode, ...ack };
  }
  return out;
}

/** A sample of partition 0. */
export function own(t: number, store: StoreName, active: string | null, epoch: number, extra: Partial<HistoryOwnership> = {}): HistoryOwnership {
  return { t, store, partition: 0, active, epoch, health: 'Healthy', replicatedRevision: 0, ...extra };
}

/** A fault. */
export function fault(id: string, kind: HistoryFault['kind'], nodes: string[], start: number, end?: number, extra: Partial<HistoryFault> = {}): HistoryFault {
  const f: HistoryFault = { id, kind, nodes, start, ...extra };
  if (end !== undefined) f.end = end;
  return f;
}

/** A read of key k. */
export function rd(id: string, store: StoreName, key: string, invoke: number, complete: number, value: string | null, outcome: Outcome = 'ok', node: string | null = 'n1'): HistoryRead {
  return { id, store, key, invoke, complete, outcome, node, value: outcome === 'ok' ? value : null };
}

/** A v1 history of the given stores (one partition each, replicas n1, n2, n3 / n1). */
export function v1(stores: StoreName[], parts: Pick<History, 'faults' | 'ownership' | 'writes' | 'finalReads'>): History {
  return {
    format: 'zaris-history/1',
    nodes: [...NODES],
    stores: stores.map((s) => ({ ...STORES[s] })),
    partitions: stores.map((s) => ({ store: s, partition: 0, replicas: s === 'rf1' ? ['n1'] : [...NODES] })),
    ...parts,
  };
}

/** A v2 history; `run` defaults to a complete run within the budget, lag bound 1,000 ms. */
export function v2(stores: StoreName[], parts: Pick<History, 'faults' | 'ownership' | 'writes' | 'finalReads'> & { reads?: HistoryRead[]; run?: Partial<HistoryRun> }): History {
  const { run, reads, ...rest } = parts;
  return {
    ...v1(stores, rest),
    format: 'zaris-history/2',
    run: { status: 'complete', inconclusiveReason: null, beyondBudget: false, asyncLagMaxMs: 1000, selfTestBug: null, ...run },
    reads: reads ?? [],
  };
}

const lost = (cls: string, store: string, key: string, write: string): FixtureFinding => ({ class: cls, kind: 'lost', store, key, write });

/** v1 fixtures (judged by the v1 rules). */
export const V1_FIXTURES: Fixture[] = [
  {
    name: 'clean-sync',
    why: 'Every acknowledged write is in the final state.',
    history: v1(['sync3'], {
      faults: [fault('f1', 'kill', ['n2'], 1000, 2000)],
      ownership: [own(0, 'sync3', 'n1', 1)],
      writes: [w('w1', 'sync3', 'k1', 1, 100, 104, 'ok'), w('w2', 'sync3', 'k1', 2, 200, 205, 'ok')],
      finalReads: [{ store: 'sync3', key: 'k1', value: 'w2' }],
    }),
    verdict: 'CERTIFIED',
    findings: [],
  },
  {
    name: 'lost-sync',
    why: 'A sync RF3 ack missing from the final state, no allowance.',
    history: v1(['sync3'], {
      faults: [fault('f1', 'kill', ['n1'], 1000, 2000)],
      ownership: [own(0, 'sync3', 'n1', 1)],
      writes: [w('w1', 'sync3', 'k1', 1, 100, 104, 'ok'), w('w2', 'sync3', 'k1', 2, 200, 205, 'ok')],
      finalReads: [{ store: 'sync3', key: 'k1', value: 'w1' }],
    }),
    verdict: 'FAILED',
    findings: [lost('violation', 'sync3', 'k1', 'w2')],
  },
  {
    name: 'async-owner-crash',
    why: 'v1: acked async, the owner killed after the ack, never seen replicated: allowed.',
    history: v1(['async3'], {
      faults: [fault('f1', 'kill', ['n1'], 500, 900)],
      ownership: [own(0, 'async3', 'n1', 1), own(600, 'async3', 'n2', 2, { health: 'Degraded' })],
      writes: [w('w1', 'async3', 'k1', 1, 100, 104, 'ok', { revision: 5 })],
      finalReads: [{ store: 'async3', key: 'k1', value: null }],
    }),
    verdict: 'CERTIFIED',
    findings: [lost('async-ack', 'async3', 'k1', 'w1')],
  },
  {
    name: 'beyond-budget',
    why: 'v1: every replica down at once after the ack.',
    history: v1(['sync3'], {
      faults: [fault('f1', 'kill', ['n1'], 500, 900), fault('f2', 'kill', ['n2'], 510, 900), fault('f3', 'stop', ['n3'], 520, 900, { caughtUp: 950 })],
      ownership: [own(0, 'sync3', 'n1', 1)],
      writes: [w('w1', 'sync3', 'k1', 1, 100, 104, 'ok')],
      finalReads: [{ store: 'sync3', key: 'k1', value: null }],
    }),
    verdict: 'CERTIFIED',
    findings: [lost('beyond-budget', 'sync3', 'k1', 'w1')],
  },
  {
    name: 'mixed-run',
    why: 'v1: a loss, a phantom, an unexpected value, a recovered write, an unverified key and a clean key.',
    history: v1(['sync3', 'rf1'], {
      faults: [fault('f1', 'kill', ['n1'], 3000, 4000)],
      ownership: [own(0, 'sync3', 'n1', 1), own(0, 'rf1', 'n1', 1)],
      writes: [
        w('a1', 'sync3', 'ka', 1, 100, 104, 'ok'),
        w('a2', 'sync3', 'ka', 2, 200, 204, 'ok'),
        w('b1', 'sync3', 'kb', 1, 100, 104, 'fail'),
        w('c1', 'sync3', 'kc', 1, 100, 104, 'ok'),
        w('d1', 'sync3', 'kd', 1, 100, 104, 'ok'),
        w('d2', 'sync3', 'kd', 2, 200, 204, 'info'),
        w('e1', 'rf1', 'ke', 1, 100, 104, 'ok'),
        w('f1', 'rf1', 'kf', 1, 100, 104, 'ok'),
        w('f2', 'rf1', 'kf', 2, 2000, 2004, 'ok'),
      ],
      finalReads: [
        { store: 'sync3', key: 'ka', value: 'a1' },
        { store: 'sync3', key: 'kb', value: 'b1' },
        { store: 'sync3', key: 'kc', value: 'zz' },
        { store: 'sync3', key: 'kd', value: 'd2' },
        { store: 'rf1', key: 'ke', value: null, unreadable: true },
        { store: 'rf1', key: 'kf', value: 'f1' },
      ],
    }),
    verdict: 'FAILED',
    findings: [
      lost('violation', 'sync3', 'ka', 'a2'),
      { class: 'violation', kind: 'phantom', store: 'sync3', key: 'kb', write: 'b1' },
      { class: 'violation', kind: 'unexpected', store: 'sync3', key: 'kc', write: 'zz' },
      { class: 'info', kind: 'recovered', store: 'sync3', key: 'kd', write: 'd2' },
      { class: 'info', kind: 'unverified', store: 'rf1', key: 'ke', write: 'e1' },
      lost('rf1', 'rf1', 'kf', 'f2'),
    ],
  },
];

/** The eight inputs of issue 10, as zaris-history/2 (the sixth to eighth are about outputs). */
export const ISSUE_10: Record<string, Fixture> = {
  ownerNeverLost: {
    name: 'issue10-async-owner-never-lost',
    why: 'async3: n1 active all run, never crashed; a sample shows n1 still active at epoch 2: the owner never lost ownership.',
    history: v2(['async3'], {
      faults: [fault('f1', 'pause', ['n2'], 2100, 2600, { effective: 2101 })],
      ownership: [own(0, 'async3', 'n1', 1), own(2650, 'async3', 'n1', 2)],
      writes: [w('w1', 'async3', 'k1', 1, 1990, 2000, 'ok', { revision: 7 })],
      finalReads: [{ store: 'async3', key: 'k1', value: null }],
    }),
    verdict: 'FAILED',
    findings: [lost('violation', 'async3', 'k1', 'w1')],
  },
  sync3AckSaysAsync: {
    name: 'issue10-sync3-ack-says-async',
    why: "sync3: the ack claims async, the acking node is killed later, the write is lost: the store's mode decides.",
    history: v2(['sync3'], {
      faults: [fault('f1', 'kill', ['n1'], 3000, 4000, { effective: 3002 })],
      ownership: [own(0, 'sync3', 'n1', 1)],
      writes: [w('w1', 'sync3', 'k1', 1, 100, 104, 'ok', { ackMode: 'async' })],
      finalReads: [{ store: 'sync3', key: 'k1', value: null }],
    }),
    verdict: 'FAILED',
    findings: [lost('violation', 'sync3', 'k1', 'w1')],
  },
  rf1AckAfterRestart: {
    name: 'issue10-rf1-ack-after-restart',
    why: 'rf1: n1 killed at 1,000, restarted at 2,000, caught up at 3,000; acked at 2,500 and lost with no later crash, within the budget.',
    history: v2(['rf1'], {
      faults: [fault('f1', 'kill', ['n1'], 1000, 2000, { effective: 1001, caughtUp: 3000 })],
      ownership: [own(0, 'rf1', 'n1', 1)],
      writes: [w('w1', 'rf1', 'k1', 1, 2490, 2500, 'ok')],
      finalReads: [{ store: 'rf1', key: 'k1', value: null }],
    }),
    verdict: 'FAILED',
    findings: [lost('violation', 'rf1', 'k1', 'w1')],
  },
  nothingAcknowledged: {
    name: 'issue10-nothing-acknowledged',
    why: 'Every write failed, one kill: nothing was tested.',
    history: v2(['sync3'], {
      faults: [fault('f1', 'kill', ['n2'], 1000, 2000, { effective: 1001 })],
      ownership: [own(0, 'sync3', 'n1', 1)],
      writes: [w('w1', 'sync3', 'k1', 1, 100, 104, 'fail'), w('w2', 'sync3', 'k1', 2, 200, 204, 'fail'), w('w3', 'sync3', 'k2', 1, 300, 304, 'fail')],
      finalReads: [
        { store: 'sync3', key: 'k1', value: null },
        { store: 'sync3', key: 'k2', value: null },
      ],
    }),
    verdict: 'INCONCLUSIVE',
    findings: [],
    reason: 'no write was acknowledged',
  },
  harnessDied: {
    name: 'issue10-run-still-running',
    why: 'The ledger says running: the harness died before the end; the reason is carried through.',
    history: v2(['sync3'], {
      run: { status: 'running', inconclusiveReason: 'the harness died' },
      faults: [fault('f1', 'kill', ['n2'], 1000, 2000, { effective: 1001 })],
      ownership: [own(0, 'sync3', 'n1', 1)],
      writes: [w('w1', 'sync3', 'k1', 1, 100, 104, 'ok')],
      finalReads: [{ store: 'sync3', key: 'k1', value: 'w1' }],
    }),
    verdict: 'INCONCLUSIVE',
    findings: [],
    reason: 'the run did not finish (its harness stopped before the end phase); the harness died',
  },
  infoDeleteRecovered: {
    name: 'issue10-info-delete-recovered',
    why: 'An absent final value matching an info delete: the indeterminate delete took effect (recovered).',
    history: v2(['sync3'], {
      faults: [fault('f1', 'pause', ['n3'], 1000, 2000)],
      ownership: [own(0, 'sync3', 'n1', 1)],
      writes: [w('w1', 'sync3', 'k1', 1, 100, 104, 'ok'), w('w2', 'sync3', 'k1', 2, 200, 5200, 'info', undefined, 'delete')],
      finalReads: [{ store: 'sync3', key: 'k1', value: null }],
    }),
    verdict: 'CERTIFIED',
    findings: [{ class: 'info', kind: 'recovered', store: 'sync3', key: 'k1', write: 'w2' }],
  },
};

/** v2 fixtures, one per kind and allowance of the v2 rules beyond issue 10's. */
export const V2_FIXTURES: Fixture[] = [
  ...Object.values(ISSUE_10),
  {
    name: 'v2-async-ack-allowed',
    why: 'Acked async by n1, n1 killed 12 ms later; the survivors held revision 38, not 40: allowed, n2 took over.',
    history: v2(['async3'], {
      faults: [fault('f1', 'kill', ['n1'], 5010, 8000, { effective: 5012 })],
      ownership: [
        own(0, 'async3', 'n1', 3, { inSync: ['n1', 'n2', 'n3'], revisions: { n1: 30, n2: 30, n3: 30 } }),
        own(4990, 'async3', 'n1', 3, { inSync: ['n1', 'n2', 'n3'], revisions: { n1: 39, n2: 38, n3: 38 } }),
        own(6500, 'async3', 'n2', 4, { health: 'Degraded', inSync: ['n2', 'n3'], revisions: { n2: 38, n3: 38 } }),
      ],
      writes: [w('w1', 'async3', 'k1', 1, 4000, 4004, 'ok', { epoch: 3, revision: 38 }), w('w2', 'async3', 'k1', 2, 4995, 5000, 'ok', { epoch: 3, revision: 40 })],
      finalReads: [{ store: 'async3', key: 'k1', value: 'w1' }],
    }),
    verdict: 'CERTIFIED',
    findings: [lost('async-ack', 'async3', 'k1', 'w2')],
  },
  {
    name: 'v2-stale-read-after-an-allowed-loss',
    why: 'w2 acked async by n1, n1 killed before it streamed; n2 took over without w2; a read from n2 returns w1, then w3 is acked by n2 and survives. The read only shows w2\'s allowed (async-ack) loss: excused (our reading of "while that write survives"); the key\'s later stale read is judged on its own.',
    history: v2(['async3'], {
      faults: [fault('f1', 'kill', ['n1'], 5010, 8000, { effective: 5012 })],
      ownership: [
        own(0, 'async3', 'n1', 3, { inSync: ['n1', 'n2', 'n3'], revisions: { n1: 30, n2: 30, n3: 30 } }),
        own(4990, 'async3', 'n1', 3, { inSync: ['n1', 'n2', 'n3'], revisions: { n1: 39, n2: 38, n3: 38 } }),
        own(6500, 'async3', 'n2', 4, { health: 'Degraded', inSync: ['n2', 'n3'], revisions: { n2: 38, n3: 38 } }),
      ],
      writes: [
        w('w1', 'async3', 'k1', 1, 4000, 4004, 'ok', { epoch: 3, revision: 38 }),
        w('w2', 'async3', 'k1', 2, 4995, 5000, 'ok', { epoch: 3, revision: 40 }),
        w('w3', 'async3', 'k1', 3, 7000, 7004, 'ok', { node: 'n2', epoch: 4, revision: 41 }),
        w('x1', 'async3', 'k2', 1, 4000, 4004, 'ok', { epoch: 3, revision: 38 }),
        w('x2', 'async3', 'k2', 2, 4995, 5000, 'ok', { epoch: 3, revision: 40 }),
        w('x3', 'async3', 'k2', 3, 7000, 7004, 'ok', { node: 'n2', epoch: 4, revision: 41 }),
      ],
      reads: [
        rd('r1', 'async3', 'k1', 6800, 6802, 'w1', 'ok', 'n2'),
        rd('r2', 'async3', 'k2', 6800, 6802, 'x1', 'ok', 'n2'),
        rd('r3', 'async3', 'k2', 7100, 7102, 'x1', 'ok', 'n2'),
      ],
      finalReads: [
        { store: 'async3', key: 'k1', value: 'w3' },
        { store: 'async3', key: 'k2', value: 'x3' },
      ],
    }),
    verdict: 'FAILED',
    findings: [{ class: 'violation', kind: 'stale-read', store: 'async3', key: 'k2', write: 'x1', read: 'r3' }],
  },
  {
    name: 'v2-stale-read-of-an-async-write-not-allowed',
    why: 'The same stale read of an async store, but the owner neither crashed nor lost ownership: the missed write is no allowed loss, so the read is a violation.',
    history: v2(['async3'], {
      faults: [fault('f1', 'pause', ['n3'], 9000, 9500)],
      ownership: [own(0, 'async3', 'n1', 3, { inSync: ['n1', 'n2', 'n3'], revisions: { n1: 30, n2: 30, n3: 30 } })],
      writes: [
        w('w1', 'async3', 'k1', 1, 4000, 4004, 'ok', { epoch: 3, revision: 38 }),
        w('w2', 'async3', 'k1', 2, 4995, 5000, 'ok', { epoch: 3, revision: 40 }),
        w('w3', 'async3', 'k1', 3, 7000, 7004, 'ok', { epoch: 3, revision: 41 }),
      ],
      reads: [rd('r1', 'async3', 'k1', 6800, 6802, 'w1')],
      finalReads: [{ store: 'async3', key: 'k1', value: 'w3' }],
    }),
    verdict: 'FAILED',
    findings: [{ class: 'violation', kind: 'stale-read', store: 'async3', key: 'k1', write: 'w1', read: 'r1' }],
  },
  {
    name: 'v2-rf1-after-a-regeneration',
    why: 'rf1/0 was re-homed from n1 to n2 (samples carry the map of the moment, replicas [n2]); a write acked by n2, then n2 killed: rf1 by the replicas at the ack. The same loss with n1 killed instead is a violation (n2 never crashed).',
    history: v2(['rf1'], {
      faults: [fault('f1', 'kill', ['n2'], 5000, 6000, { effective: 5001 }), fault('f2', 'kill', ['n1'], 5000, 6000, { effective: 5001 })],
      ownership: [own(0, 'rf1', 'n1', 1, { replicas: ['n1'] }), own(3000, 'rf1', 'n2', 3, { replicas: ['n2'], inSync: ['n2'] })],
      writes: [w('a1', 'rf1', 'ka', 1, 4000, 4004, 'ok', { node: 'n2', epoch: 3 })],
      finalReads: [{ store: 'rf1', key: 'ka', value: null }],
    }),
    verdict: 'CERTIFIED',
    findings: [lost('rf1', 'rf1', 'ka', 'a1')],
  },
  {
    name: 'v2-rf1-after-a-regeneration-no-crash',
    why: 'rf1/0 re-homed to n2 before the ack; only n1, no longer a replica, was killed after it: a violation.',
    history: v2(['rf1'], {
      faults: [fault('f1', 'kill', ['n1'], 5000, 6000, { effective: 5001 })],
      ownership: [own(0, 'rf1', 'n1', 1, { replicas: ['n1'] }), own(3000, 'rf1', 'n2', 3, { replicas: ['n2'], inSync: ['n2'] })],
      writes: [w('a1', 'rf1', 'ka', 1, 4000, 4004, 'ok', { node: 'n2', epoch: 3 })],
      finalReads: [{ store: 'rf1', key: 'ka', value: null }],
    }),
    verdict: 'FAILED',
    findings: [lost('violation', 'rf1', 'ka', 'a1')],
  },
  {
    name: 'v2-rf1-moved-after-the-ack',
    why: 'issue 14: n1 acked an RF1 write; a move then handed rf1/0 to n3 (samples from 3000 show replicas [n3]) and n3 was killed at 5000: the only copy moved with the partition and died with n3, rf1 (make sim MEMBERSHIP=1 RUNS=1000 SEED=7, run 563).',
    history: v2(['rf1'], {
      faults: [fault('f1', 'kill', ['n3'], 5000, 6000, { effective: 5001 })],
      ownership: [own(0, 'rf1', 'n1', 1, { replicas: ['n1'] }), own(3000, 'rf1', 'n3', 5, { replicas: ['n3'], inSync: ['n3'] })],
      writes: [w('a1', 'rf1', 'ka', 1, 1000, 1004, 'ok', { node: 'n1', epoch: 1 })],
      finalReads: [{ store: 'rf1', key: 'ka', value: null }],
    }),
    verdict: 'CERTIFIED',
    findings: [lost('rf1', 'rf1', 'ka', 'a1')],
  },
  {
    name: 'v2-rf1-moved-after-the-ack-crash-before-holding',
    why: 'The same move, but n3 was killed at 2000, before it held the partition (listed from 3000), and n1 never crashed: a violation.',
    history: v2(['rf1'], {
      faults: [fault('f1', 'kill', ['n3'], 2000, 2500, { effective: 2001 })],
      ownership: [own(0, 'rf1', 'n1', 1, { replicas: ['n1'] }), own(3000, 'rf1', 'n3', 5, { replicas: ['n3'], inSync: ['n3'] })],
      writes: [w('a1', 'rf1', 'ka', 1, 1000, 1004, 'ok', { node: 'n1', epoch: 1 })],
      finalReads: [{ store: 'rf1', key: 'ka', value: null }],
    }),
    verdict: 'FAILED',
    findings: [lost('violation', 'rf1', 'ka', 'a1')],
  },
  {
    name: 'v2-rf1-acked-before-the-sample-of-its-tenure',
    why: 'rf1/0 regenerated onto n2 at epoch 3; n2 acked a write 10 ms before the first sample showing that map (replicas [n2]), then n2 was killed: the acking node held the only copy, rf1 (runs seed 4040, 150 s: two such writes were violations).',
    history: v2(['rf1'], {
      faults: [fault('f1', 'kill', ['n2'], 5000, 6000, { effective: 5001 })],
      ownership: [own(0, 'rf1', 'n1', 1, { replicas: ['n1'] }), own(3000, 'rf1', 'n2', 3, { replicas: ['n2'], inSync: ['n2'] })],
      writes: [w('a1', 'rf1', 'ka', 1, 2980, 2990, 'ok', { node: 'n2', epoch: 3 })],
      finalReads: [{ store: 'rf1', key: 'ka', value: null }],
    }),
    verdict: 'CERTIFIED',
    findings: [lost('rf1', 'rf1', 'ka', 'a1')],
  },
  {
    name: 'v2-rf1-acked-before-the-sample-of-its-tenure-no-crash',
    why: 'The same early ack by n2, but only n3, which never held the partition, was killed after it: n2 never crashed, a violation.',
    history: v2(['rf1'], {
      faults: [fault('f1', 'kill', ['n3'], 5000, 6000, { effective: 5001 })],
      ownership: [own(0, 'rf1', 'n1', 1, { replicas: ['n1'] }), own(3000, 'rf1', 'n2', 3, { replicas: ['n2'], inSync: ['n2'] })],
      writes: [w('a1', 'rf1', 'ka', 1, 2980, 2990, 'ok', { node: 'n2', epoch: 3 })],
      finalReads: [{ store: 'rf1', key: 'ka', value: null }],
    }),
    verdict: 'FAILED',
    findings: [lost('violation', 'rf1', 'ka', 'a1')],
  },
  {
    name: 'v2-async-beyond-the-lease',
    why: 'n1 was cut off from a majority for 3 s (lease 2.5 s) when the write was invoked: no allowance.',
    history: v2(['async3'], {
      run: { leaseMs: 2500 },
      faults: [fault('f1', 'partition', ['n1'], 1000, 6000, { effective: 1001, isolated: ['n1'] }), fault('f2', 'kill', ['n1'], 4050, 7000, { effective: 4051 })],
      ownership: [own(0, 'async3', 'n1', 1, { revisions: { n1: 1, n2: 1, n3: 1 } })],
      writes: [w('w1', 'async3', 'k1', 1, 4000, 4010, 'ok', { revision: 9 })],
      finalReads: [{ store: 'async3', key: 'k1', value: null }],
    }),
    verdict: 'FAILED',
    findings: [lost('violation', 'async3', 'k1', 'w1')],
  },
  {
    name: 'v2-async-deposed-owner',
    why: 'A sample showed n2 active at a higher epoch before the write was invoked: the acking owner was deposed.',
    history: v2(['async3'], {
      faults: [fault('f1', 'kill', ['n1'], 3050, 7000, { effective: 3051 })],
      ownership: [own(0, 'async3', 'n1', 1), own(2000, 'async3', 'n2', 2, { node: 'n2' })],
      writes: [w('w1', 'async3', 'k1', 1, 3000, 3010, 'ok', { revision: 9 })],
      finalReads: [{ store: 'async3', key: 'k1', value: null }],
    }),
    verdict: 'FAILED',
    findings: [lost('violation', 'async3', 'k1', 'w1')],
  },
  {
    name: 'v2-beyond-budget-allowed',
    why: 'In a run allowed past the budget: n3 out of sync at the ack, n1 and n2 then down together.',
    history: v2(['sync3'], {
      run: { beyondBudget: true },
      faults: [fault('f1', 'partition', ['n3'], 500, 5000), fault('f2', 'kill', ['n1'], 1100, 3000, { effective: 1101 }), fault('f3', 'kill', ['n2'], 1104, 3000, { effective: 1105 })],
      ownership: [own(0, 'sync3', 'n1', 1, { inSync: ['n1', 'n2', 'n3'] }), own(900, 'sync3', 'n1', 2, { health: 'Degraded', inSync: ['n1', 'n2'] })],
      writes: [w('w1', 'sync3', 'k1', 1, 995, 1000, 'ok', { epoch: 2, copies: 2 })],
      finalReads: [{ store: 'sync3', key: 'k1', value: null }],
    }),
    verdict: 'CERTIFIED',
    findings: [lost('beyond-budget', 'sync3', 'k1', 'w1')],
  },
  {
    name: 'v2-reads',
    why: 'A stale read, a phantom read and an unexpected read, one per key; a fresh read and a read of an in-flight write are fine.',
    history: v2(['sync3'], {
      faults: [fault('f1', 'pause', ['n3'], 1000, 2000)],
      ownership: [own(0, 'sync3', 'n1', 1)],
      writes: [
        w('a1', 'sync3', 'ka', 1, 100, 104, 'ok'),
        w('a2', 'sync3', 'ka', 2, 200, 205, 'ok'),
        w('b1', 'sync3', 'kb', 1, 100, 104, 'ok'),
        w('b2', 'sync3', 'kb', 2, 200, 205, 'fail'),
        w('c1', 'sync3', 'kc', 1, 100, 104, 'ok'),
        w('d1', 'sync3', 'kd', 1, 100, 104, 'ok'),
        w('d2', 'sync3', 'kd', 2, 300, 305, 'ok'),
      ],
      reads: [
        rd('r1', 'sync3', 'ka', 300, 302, 'a1'),
        rd('r0', 'sync3', 'ka', 150, 152, 'a1'),
        rd('r2', 'sync3', 'kb', 300, 302, 'b2'),
        rd('r3', 'sync3', 'kc', 300, 302, 'nope'),
        rd('r4', 'sync3', 'kd', 301, 303, 'd2'),
        rd('r5', 'sync3', 'kd', 250, 252, 'd1'),
        rd('r6', 'sync3', 'kd', 400, 402, null, 'fail'),
      ],
      finalReads: [
        { store: 'sync3', key: 'ka', value: 'a2' },
        { store: 'sync3', key: 'kb', value: 'b1' },
        { store: 'sync3', key: 'kc', value: 'c1' },
        { store: 'sync3', key: 'kd', value: 'd2' },
      ],
    }),
    verdict: 'FAILED',
    findings: [
      { class: 'violation', kind: 'stale-read', store: 'sync3', key: 'ka', write: 'a1', read: 'r1' },
      { class: 'violation', kind: 'phantom-read', store: 'sync3', key: 'kb', write: 'b2', read: 'r2' },
      { class: 'violation', kind: 'unexpected-read', store: 'sync3', key: 'kc', write: 'nope', read: 'r3' },
    ],
  },
  {
    name: 'v2-stale-absent-read',
    why: 'An absent value read after a put was acknowledged and no delete was under way: stale; the same after a delete was invoked: fine.',
    history: v2(['sync3'], {
      faults: [fault('f1', 'pause', ['n3'], 1000, 2000)],
      ownership: [own(0, 'sync3', 'n1', 1)],
      writes: [
        w('a1', 'sync3', 'ka', 1, 100, 104, 'ok'),
        w('b1', 'sync3', 'kb', 1, 100, 104, 'ok'),
        w('b2', 'sync3', 'kb', 2, 200, 220, 'ok', undefined, 'delete'),
      ],
      reads: [rd('r1', 'sync3', 'ka', 300, 302, null), rd('r2', 'sync3', 'kb', 205, 210, null)],
      finalReads: [
        { store: 'sync3', key: 'ka', value: 'a1' },
        { store: 'sync3', key: 'kb', value: null },
      ],
    }),
    verdict: 'FAILED',
    findings: [{ class: 'violation', kind: 'stale-read', store: 'sync3', key: 'ka', write: null, read: 'r1' }],
  },
  {
    name: 'v2-stale-read-of-a-lost-write',
    why: 'An old value read after a later ack, but the later write did not survive: the loss is the finding, not the read.',
    history: v2(['sync3'], {
      faults: [fault('f1', 'pause', ['n3'], 1000, 2000)],
      ownership: [own(0, 'sync3', 'n1', 1)],
      writes: [w('a1', 'sync3', 'ka', 1, 100, 104, 'ok'), w('a2', 'sync3', 'ka', 2, 200, 205, 'ok')],
      reads: [rd('r1', 'sync3', 'ka', 300, 302, 'a1')],
      finalReads: [{ store: 'sync3', key: 'ka', value: 'a1' }],
    }),
    verdict: 'FAILED',
    findings: [lost('violation', 'sync3', 'ka', 'a2')],
  },
  {
    name: 'v2-overlapping-writes',
    why: 'Writes that overlap in time (a history from elsewhere): W is still the last ok write by seq acknowledged before the read began.',
    history: v2(['sync3'], {
      faults: [fault('f1', 'pause', ['n3'], 1000, 2000)],
      ownership: [own(0, 'sync3', 'n1', 1)],
      writes: [w('a1', 'sync3', 'ka', 1, 100, 500, 'ok'), w('a2', 'sync3', 'ka', 2, 200, 300, 'ok'), w('b1', 'sync3', 'kb', 1, 100, 500, 'ok'), w('b2', 'sync3', 'kb', 2, 200, 300, 'ok')],
      reads: [rd('r1', 'sync3', 'ka', 350, 352, 'a1'), rd('r2', 'sync3', 'kb', 450, 452, 'b2')],
      finalReads: [
        { store: 'sync3', key: 'ka', value: 'a2' },
        { store: 'sync3', key: 'kb', value: 'b2' },
      ],
    }),
    verdict: 'FAILED',
    findings: [{ class: 'violation', kind: 'stale-read', store: 'sync3', key: 'ka', write: 'a1', read: 'r1' }],
  },
  {
    name: 'v2-ack-checks',
    why: 'A sync RF3 ack on one copy; an ack from a node that was not the active of its epoch.',
    history: v2(['sync3'], {
      faults: [fault('f1', 'pause', ['n3'], 1000, 2000)],
      ownership: [own(0, 'sync3', 'n1', 1)],
      writes: [
        w('a1', 'sync3', 'ka', 1, 100, 104, 'ok', { copies: 2 }),
        w('a2', 'sync3', 'ka', 2, 200, 204, 'ok', { copies: 1 }),
        w('b1', 'sync3', 'kb', 1, 100, 104, 'ok', { node: 'n2' }),
      ],
      finalReads: [
        { store: 'sync3', key: 'ka', value: 'a2' },
        { store: 'sync3', key: 'kb', value: 'b1' },
      ],
    }),
    verdict: 'FAILED',
    findings: [
      { class: 'violation', kind: 'under-replicated-ack', store: 'sync3', key: 'ka', write: 'a2' },
      { class: 'violation', kind: 'ack-not-from-active', store: 'sync3', key: 'kb', write: 'b1' },
    ],
  },
  {
    name: 'v2-runtime-map',
    why: 'Epoch conflict, a node whose epoch goes back, Healthy with a replica out of sync, an async replica left behind.',
    history: v2(['sync3', 'async3'], {
      faults: [fault('f1', 'pause', ['n3'], 9000, 9100)],
      ownership: [
        own(0, 'sync3', 'n1', 3, { node: 'n1' }),
        own(100, 'sync3', 'n2', 3, { node: 'n2' }),
        own(200, 'sync3', 'n2', 2, { node: 'n2' }),
        own(300, 'sync3', 'n2', 4, { inSync: ['n1', 'n2'] }),
        own(0, 'async3', 'n1', 2, { inSync: ['n1', 'n2', 'n3'], revisions: { n1: 10, n2: 10, n3: 10 } }),
        own(3000, 'async3', 'n1', 2, { inSync: ['n1', 'n2', 'n3'], revisions: { n1: 400, n2: 12, n3: 400 } }),
        own(5000, 'async3', 'n1', 2, { inSync: ['n1', 'n2', 'n3'], revisions: { n1: 800, n2: 12, n3: 800 } }),
      ],
      writes: [w('a1', 'sync3', 'ka', 1, 100, 104, 'ok', { node: 'n1', epoch: 4 }), w('b1', 'async3', 'kb', 1, 100, 104, 'ok', { epoch: 2 })],
      finalReads: [
        { store: 'sync3', key: 'ka', value: 'a1' },
        { store: 'async3', key: 'kb', value: 'b1' },
      ],
    }),
    verdict: 'FAILED',
    findings: [
      { class: 'violation', kind: 'ack-not-from-active', store: 'sync3', key: 'ka', write: 'a1' },
      { class: 'violation', kind: 'epoch-conflict', store: 'sync3', key: null, write: null, partition: 0 },
      { class: 'violation', kind: 'epoch-regression', store: 'sync3', key: null, write: null, partition: 0 },
      { class: 'violation', kind: 'false-healthy', store: 'sync3', key: null, write: null, partition: 0 },
      { class: 'violation', kind: 'replication-lag', store: 'async3', key: null, write: null, partition: 0 },
    ],
  },
  {
    name: 'v2-epoch-after-a-restart',
    why: 'n2 saw epoch 4, was killed and restarted, and its new process first learnt epoch 3: a new memory, no regression (v2-runtime-map has one without a crash).',
    history: v2(['sync3'], {
      faults: [fault('f1', 'kill', ['n2'], 1000, 1500, { effective: 1001 })],
      ownership: [
        own(0, 'sync3', 'n1', 4, { node: 'n2' }),
        own(1600, 'sync3', 'n1', 3, { node: 'n2' }),
        own(1700, 'sync3', 'n1', 4, { node: 'n2' }),
      ],
      writes: [w('a1', 'sync3', 'ka', 1, 100, 104, 'ok', { node: 'n1', epoch: 4 })],
      finalReads: [{ store: 'sync3', key: 'ka', value: 'a1' }],
    }),
    verdict: 'CERTIFIED',
    findings: [],
  },
  ...totalLossFixtures(),
  {
    name: 'v2-self-test-not-shown',
    why: 'A self-test run whose bug never showed cannot certify anything.',
    history: v2(['sync3'], {
      run: { selfTestBug: 'stale-owner-acks' },
      faults: [fault('f1', 'kill', ['n2'], 1000, 2000)],
      ownership: [own(0, 'sync3', 'n1', 1)],
      writes: [w('w1', 'sync3', 'k1', 1, 100, 104, 'ok')],
      finalReads: [{ store: 'sync3', key: 'k1', value: 'w1' }],
    }),
    verdict: 'INCONCLUSIVE',
    findings: [],
    reason: 'a self-test run (store started with the bug stale-owner-acks) must come out FAILED, and the bug never showed',
  },
];

/**
 * Our total-amnesia reading (history-rules.ts; runs allowed past the fault budget only): a power
 * failure of every replica ends the partition's life, the memory-only store bootstraps again
 * (epoch 1, versions from 2^32 + 1); version-regression, epoch-conflict and ack-not-from-active
 * compare within one life. Each beyond-budget fixture has a within-budget twin where nothing is
 * excused. And "down" ends only at a listing in sync that records a revision for the node.
 */
function totalLossFixtures(): Fixture[] {
  const E1 = 2 ** 32;
  const all = (t: number, active: string, epoch: number, revisions: Record<string, number> = { n1: 0, n2: 0, n3: 0 }): HistoryOwnership =>
    own(t, 'sync3', active, epoch, { inSync: [...NODES], revisions });
  const power = [fault('f1', 'kill', ['n1', 'n2', 'n3'], 1000, 1500, { effective: 1001 })];
  const between = (beyondBudget: boolean): History =>
    v2(['sync3'], {
      run: { beyondBudget },
      faults: power,
      ownership: [all(0, 'n1', 1), all(1600, 'n1', 1)],
      writes: [
        w('a1', 'sync3', 'ka', 1, 100, 104, 'ok', { node: 'n1', epoch: 1, version: E1 + 5 }),
        w('a2', 'sync3', 'ka', 2, 1700, 1704, 'ok', { node: 'n1', epoch: 1, version: E1 + 1 }),
      ],
      finalReads: [{ store: 'sync3', key: 'ka', value: 'a2' }],
    });
  const conflict = (beyondBudget: boolean): History =>
    v2(['sync3'], {
      run: { beyondBudget },
      faults: power,
      ownership: [all(0, 'n1', 1), all(1600, 'n2', 1)],
      writes: [
        w('b1', 'sync3', 'kb', 1, 100, 104, 'ok', { node: 'n1', epoch: 1, version: E1 + 1 }),
        w('b2', 'sync3', 'kb', 2, 1700, 1704, 'ok', { node: 'n2', epoch: 1, version: E1 + 2 }),
      ],
      finalReads: [{ store: 'sync3', key: 'kb', value: 'b2' }],
    });
  // n3 restarts empty at 1200; the sample at 1300 still lists it in sync (its dead incarnation:
  // no revision recorded for it); n1 and n2 lose power at 2000; the sample at 3000 lists all three
  const listed = (n3Revision: boolean): History =>
    v2(['sync3'], {
      run: { beyondBudget: true },
      faults: [fault('f1', 'kill', ['n3'], 1000, 1200, { effective: 1001 }), fault('f2', 'kill', ['n1', 'n2'], 2000, 2500, { effective: 2001 })],
      ownership: [all(0, 'n1', 1), all(1300, 'n1', 1, n3Revision ? { n1: 1, n2: 1, n3: 0 } : { n1: 1, n2: 1 }), all(3000, 'n1', 1)],
      writes: [w('c1', 'sync3', 'kc', 1, 400, 404, 'ok', { node: 'n1', epoch: 1, version: E1 + 1 })],
      finalReads: [{ store: 'sync3', key: 'kc', value: null }],
    });
  return [
    {
      name: 'v2-total-loss-between-writes',
      why: 'Beyond the budget, all three replicas lose power between two acks of ka: the store starts again at version 2^32+1, which is not compared with the version before the loss.',
      history: between(true),
      verdict: 'CERTIFIED',
      findings: [],
    },
    {
      name: 'v2-total-loss-within-budget',
      why: 'The same power failure in a run within the budget: a total loss must not happen there, the lower version stays a regression.',
      history: between(false),
      verdict: 'FAILED',
      findings: [{ class: 'violation', kind: 'version-regression', store: 'sync3', key: 'ka', write: 'a2' }],
    },
    {
      name: 'v2-epoch-conflict-across-a-total-loss',
      why: 'Beyond the budget, epoch 1 has active n1 before the power failure and n2 after it (a new cluster bootstrapped): samples and acks of different lives are not compared.',
      history: conflict(true),
      verdict: 'CERTIFIED',
      findings: [],
    },
    {
      name: 'v2-epoch-conflict-within-budget',
      why: 'The same two actives at epoch 1 within the budget: an epoch conflict, and b1 was acked by a node other than an active of its epoch.',
      history: conflict(false),
      verdict: 'FAILED',
      findings: [
        { class: 'violation', kind: 'ack-not-from-active', store: 'sync3', key: 'kb', write: 'b1' },
        { class: 'violation', kind: 'epoch-conflict', store: 'sync3', key: null, write: null, partition: 0 },
      ],
    },
    {
      name: 'v2-down-until-listed-with-a-revision',
      why: 'n3 restarted empty and a sample lists it in sync without a revision (its dead incarnation): it stays down until the sample at 3000, so with n1 and n2 down from 2001 every replica was down: beyond-budget.',
      history: listed(false),
      verdict: 'CERTIFIED',
      findings: [lost('beyond-budget', 'sync3', 'kc', 'c1')],
    },
    {
      name: 'v2-down-ends-at-a-listing-with-a-revision',
      why: 'The same run where the sample at 1300 records a revision for n3: n3 is back in sync then, never down with n1 and n2 at once: the loss of c1 is a violation.',
      history: listed(true),
      verdict: 'FAILED',
      findings: [lost('violation', 'sync3', 'kc', 'c1')],
    },
  ];
}

/** Every fixture. */
export const FIXTURES: Fixture[] = [...V1_FIXTURES, ...V2_FIXTURES];

/** A fixture by name. @throws Error when there is none. */
export function fixture(name: string): Fixture {
  const f = FIXTURES.find((x) => x.name === name);
  if (f === undefined) throw new Error(`no fixture ${name}`);
  return f;
}

/** A deep copy of a fixture's history (tests may change it). */
export function historyOf(name: string): History {
  return JSON.parse(JSON.stringify(fixture(name).history)) as History;
}

/**
 * Losses told as incidents (reports/incidents.ts), the project's own: a pause of n3 (f1), then n1
 * killed (f2, effective 5,012 ms). rf1 loses a1, a2 (acked by n1 before the kill: allowed, one
 * incident); sync3 loses b1..b3 (acked by n1 at epoch 3 before the kill: violations, one
 * incident; the runtime map went n1@e3 -> n2@e4 at 6,000); c1, acked by n2 at epoch 4, is missing
 * after the ownership change to n3 at epoch 5 (9,000, no crash); a read of d1 from n2 at 7,500
 * returns d1.1 after d1.2 was acknowledged (a stale read in epoch 4, the epoch n2 took at 6,000).
 */
export const INCIDENTS_FIXTURE: Fixture = {
  name: 'incidents',
  why: 'Losses of two stores after one crash, one after an ownership change, one stale read: four incidents.',
  history: v2(['sync3', 'rf1'], {
    faults: [fault('f1', 'pause', ['n3'], 1000, 1500), fault('f2', 'kill', ['n1'], 5010, 8000, { effective: 5012 })],
    ownership: [
      own(0, 'sync3', 'n1', 3),
      own(6000, 'sync3', 'n2', 4, { health: 'Degraded' }),
      own(9000, 'sync3', 'n3', 5, { health: 'Degraded' }),
      own(0, 'rf1', 'n1', 1),
    ],
    writes: [
      w('a1', 'rf1', 'a1', 1, 4000, 4004, 'ok'),
      w('a2', 'rf1', 'a2', 1, 4500, 4504, 'ok'),
      w('b1', 'sync3', 'b1', 1, 4100, 4104, 'ok', { epoch: 3 }),
      w('b2', 'sync3', 'b2', 1, 4400, 4404, 'ok', { epoch: 3 }),
      w('b3', 'sync3', 'b3', 1, 4900, 4904, 'ok', { epoch: 3 }),
      w('c1', 'sync3', 'c1', 1, 8000, 8004, 'ok', { node: 'n2', epoch: 4 }),
      w('d1.1', 'sync3', 'd1', 1, 6100, 6104, 'ok', { node: 'n2', epoch: 4 }),
      w('d1.2', 'sync3', 'd1', 2, 7000, 7004, 'ok', { node: 'n2', epoch: 4 }),
      w('e1', 'sync3', 'e1', 1, 100, 104, 'ok', { epoch: 3 }),
    ],
    reads: [rd('r1', 'sync3', 'd1', 7500, 7502, 'd1.1', 'ok', 'n2')],
    finalReads: [
      { store: 'rf1', key: 'a1', value: null },
      { store: 'rf1', key: 'a2', value: null },
      { store: 'sync3', key: 'b1', value: null },
      { store: 'sync3', key: 'b2', value: null },
      { store: 'sync3', key: 'b3', value: null },
      { store: 'sync3', key: 'c1', value: null },
      { store: 'sync3', key: 'd1', value: 'd1.2' },
      { store: 'sync3', key: 'e1', value: 'e1' },
    ],
  }),
  verdict: 'FAILED',
  findings: [
    lost('rf1', 'rf1', 'a1', 'a1'),
    lost('rf1', 'rf1', 'a2', 'a2'),
    lost('violation', 'sync3', 'b1', 'b1'),
    lost('violation', 'sync3', 'b2', 'b2'),
    lost('violation', 'sync3', 'b3', 'b3'),
    lost('violation', 'sync3', 'c1', 'c1'),
    { class: 'violation', kind: 'stale-read', store: 'sync3', key: 'd1', write: 'd1.1', read: 'r1' },
  ],
};
