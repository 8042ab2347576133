import { describe, expect, it } from 'vitest';
import { FLAG_INDETERMINATE, Op, type ClientRequest, type ClientResponse } from '../client-protocol.js';
import { DEFAULT_TIMING, type ClusterConfig } from '../cluster-config.js';
import { KvStatus } from '../kv-status.js';
import type { MetadataDoc } from '../node-core.js';
import { EventQueue } from './event-queue.js';
import { SimClients, type ClientReply } from './sim-client.js';
import { SimRandom } from './sim-random.js';
import type { WorkloadParams } from './sim-schedule.js';

const CONFIG: ClusterConfig = {
  cluster: 't',
  nodes: ['n1', 'n2', 'n3'].map((id, i) => ({ id, host: `h${i}`, clientPort: 1, clusterPort: 2, preferredPrimary: true })),
  stores: [{ name: 's', replicationFactor: 3, ackMode: 'sync', segments: 3 }],
  timing: DEFAULT_TIMING,
  maxFrameBytes: 1 << 20,
  multiKeyLongTailRetryThresholdsMs: '',
};

const PARAMS: WorkloadParams = { writersPerStore: 1, keysPerWriter: 1, thinkMinMs: 10, thinkMaxMs: 10, readFraction: 0, deleteFraction: 0, maxAttempts: 3, attemptTimeoutMs: 100, deadlineMs: 10_000 };

/** A metadata document in which `active` owns every partition at `epoch`. */
function metadata(node: string, active: string, epoch: number): MetadataDoc {
  return {
    schema: 5,
    cluster: 't',
    node,
    inc: `${node}.0`,
    term: 1,
    leader: 'n1',
    isLeader: node === 'n1',
    nodes: CONFIG.nodes.map((n) => ({ id: n.id, host: n.host, clientPort: n.clientPort })),
    stores: [{ name: 's', replicationFactor: 3, ackMode: 'sync', segments: 3, partitions: 3, batchGetLimit: 500 }],
    partitionMap: { version: 3, partitions: [0, 1, 2].map((p) => ({ store: 's', partition: p, replicas: ['n1', 'n2', 'n3'], mapVersion: 1 })) },
    runtimeMap: [0, 1, 2].map((p) => ({ store: 's', partition: p, active, activeInc: `${active}.0`, epoch, health: 'Healthy' as const, inSync: ['n1', 'n2', 'n3'], inSyncIncs: ['n1.0', 'n2.0', 'n3.0'], handoffTo: null, replicatedRevision: null, revision: 0 })),
    multiKeyLongTailRetryThresholdsMs: '',
    ownerLeaseMs: 1_600,
    loop: null,
    rejoining: false,
  };
}

type Answer = ClientReply | 'silence';

/**
 * Runs one writer on virtual time until its first write completes. `answer` decides what each
 * data request gets (metadata requests get `view()`); answers arrive 1 ms later.
 */
function firstWrite(answer: (node: string, req: ClientRequest, n: number) => Answer, view: () => { active: string; epoch: number }, params: WorkloadParams = PARAMS) {
  const q = new EventQueue<() => void>();
  let now = 0;
  let n = 0;
  const sent: string[] = [];
  const clients = new SimClients(
    {
      now: () => now,
      timer: (ms, fn) => q.push(now + ms, fn),
      request: (node, req, done) => {
        let a: Answer;
        if (req.op === Op.Metadata) {
          const v = view();
          a = { kind: 'response', res: { op: Op.Metadata, reqId: req.reqId, status: KvStatus.Ok, flags: 0, json: JSON.stringify(metadata(node, v.active, v.epoch)) } };
        } else {
          sent.push(node);
          a = answer(node, req, ++n);
        }
        if (a !== 'silence') {
          const reply = a;
          q.push(now + 1, () => done(reply));
        }
      },
    },
    CONFIG,
    params,
    new SimRandom(1),
  );
  clients.start();
  const h = clients.histories[0];
  while (q.size > 0 && (h.writes.length === 0 || h.writes[0].outcome === 'pending')) {
    const e = q.pop()!;
    now = e.at;
    e.item();
  }
  clients.stop();
  return { w: h.writes[0], sent, stats: clients.stats };
}

function write(status: KvStatus, flags = 0, node = 'n1', epoch = 1): ClientReply {
  const res: ClientResponse = { op: Op.Put, reqId: 0, status, flags, info: { node, partition: 0, epoch, version: 1, revision: 1, ackMode: 'sync', copies: 2 } };
  return { kind: 'response', res };
}

describe('SimClients (the real client rules on virtual time)', () => {
  it('routes to the active of the merged map and records an acknowledged create', () => {
    const r = firstWrite(() => write(KvStatus.Ok), () => ({ active: 'n2', epoch: 4 }));
    expect(r.sent).toEqual(['n2']);
    expect(r.w).toMatchObject({ seq: 1, kind: 'create', outcome: 'ok', attempts: 1, last: 'Ok', valueId: 's/k0#1' });
    expect(r.w.ack).toEqual({ node: 'n1', epoch: 1, version: 1, revision: 1, copies: 2 });
  });

  it('refreshes the map after ReplicaWriteRejected and retries at the new active', () => {
    let active = 'n1';
    const moved = (node: string): ClientReply => {
      if (node === 'n1') {
        active = 'n3';
        return write(KvStatus.ReplicaWriteRejected);
      }
      return write(KvStatus.Ok, 0, node, 5);
    };
    // the first write comes 600 ms after the initial map fetch: past the 500 ms debounce
    const r = firstWrite(moved, () => ({ active, epoch: active === 'n1' ? 1 : 5 }), { ...PARAMS, thinkMinMs: 600, thinkMaxMs: 600 });
    expect(r.sent).toEqual(['n1', 'n3']);
    expect(r.w).toMatchObject({ outcome: 'ok', attempts: 2 });
    expect(r.stats.refreshes).toBe(2);
    // within 500 ms of a fetch the refresh is debounced (seed 000): the retries stay on n1
    active = 'n1';
    const d = firstWrite(moved, () => ({ active, epoch: active === 'n1' ? 1 : 5 }));
    expect(d.sent).toEqual(['n1', 'n1', 'n1']);
    expect(d.stats.refreshes).toBe(1);
    expect(d.w).toMatchObject({ outcome: 'fail', last: 'ReplicaWriteRejected' });
  });

  it('a timed-out write is info (it may have been applied)', () => {
    const r = firstWrite(() => 'silence', () => ({ active: 'n1', epoch: 1 }));
    expect(r.w).toMatchObject({ outcome: 'info', attempts: 3, last: 'Timeout' });
  });

  it('a write refused by a node that is down every time is a definite failure', () => {
    const r = firstWrite(() => ({ kind: 'refused' }), () => ({ active: 'n1', epoch: 1 }));
    expect(r.w).toMatchObject({ outcome: 'fail', attempts: 3, last: 'ConnectRefused' });
  });

  it('an INDETERMINATE answer followed by a Conflict is info, never fail', () => {
    const r = firstWrite((_node, _req, n) => (n === 1 ? write(KvStatus.Unavailable, FLAG_INDETERMINATE) : write(KvStatus.Conflict)), () => ({ active: 'n1', epoch: 1 }));
    expect(r.w).toMatchObject({ outcome: 'info', attempts: 2, last: 'Conflict' });
  });

  it('the attempt budget bounds retries: one attempt, Unavailable, is a failure', () => {
    const r = firstWrite(() => write(KvStatus.Unavailable), () => ({ active: 'n1', epoch: 1 }), { ...PARAMS, maxAttempts: 1 });
    expect(r.w).toMatchObject({ outcome: 'fail', attempts: 1, last: 'Unavailable' });
    expect(r.sent).toEqual(['n1']);
  });

  it('a broken connection after sending makes the write info; the deadline stops retries', () => {
    const r = firstWrite(() => ({ kind: 'broken' }), () => ({ active: 'n1', epoch: 1 }), { ...PARAMS, maxAttempts: 50, deadlineMs: 250 });
    expect(r.w.outcome).toBe('info');
    expect(r.w.attempts).toBeGreaterThan(1);
    expect(r.w.attempts).toBeLessThan(50);
  });
});
