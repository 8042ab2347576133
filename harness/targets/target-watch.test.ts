import { describe, expect, it } from 'vitest';
import { NullLedger, type Ledger, type SampleRow } from '../../ledger/ledger-writer.js';
import { nodeCaughtUp, unhealthyPartitions } from '../nemesis/cluster-queries.js';
import type { OwnershipSample, OwnershipSampler, OwnershipView, TargetContract } from './target.js';
import { redisContract } from './redis/redis-contract.js';
import { snapshotOf, TargetWatch, viewRows } from './target-watch.js';

const NODES = ['n1', 'n2', 'n3'];
const contract: TargetContract = redisContract({ store: 'kv', nodes: 3, minReplicasToWrite: 1, minReplicasMaxLagS: 1 });

function merged(over: Partial<OwnershipSample> = {}): OwnershipSample {
  return { store: 'kv', partition: 0, node: null, active: 'n1', epoch: 3, health: 'Healthy', replicatedRevision: 10, inSync: ['n1', 'n2', 'n3'], revisions: { n1: 10, n2: 10, n3: 10 }, ...over };
}
function own(node: string, over: Partial<OwnershipSample> = {}): OwnershipSample {
  return { store: 'kv', partition: 0, node, active: 'n1', epoch: 3, health: 'Healthy', replicatedRevision: 0, ...over };
}
function view(rows: OwnershipSample[], leader: string | null = 'n1', answered = NODES): OwnershipView {
  return { rows, leader, answered };
}

/** A sampler that answers the views given, one per call (the last one again when they run out). */
class ScriptedSampler implements OwnershipSampler {
  calls = 0;
  constructor(private readonly views: OwnershipView[]) {}
  async sample(): Promise<OwnershipView> {
    return this.views[Math.min(this.calls++, this.views.length - 1)];
  }
  async close(): Promise<void> {}
}

/** A ledger that keeps samples and events. */
/** NullLedger typed as the Ledger interface (its no-op methods take no arguments), to override with the real signatures. */
const LedgerBase = NullLedger as unknown as new () => Ledger;

class KeepingLedger extends LedgerBase {
  readonly samples: Array<{ t: number; rows: SampleRow[] }> = [];
  readonly events: Array<{ t: number; kind: string; detail: unknown }> = [];
  override sample(t: number, rows: SampleRow[]): void {
    this.samples.push({ t, rows });
  }
  override event(t: number, kind: string, detail?: unknown): void {
    this.events.push({ t, kind, detail });
  }
}

describe('target watch', () => {
  it('records the per-node rows first and the merged row last (the latest sample at a time is the merged one)', () => {
    const rows = viewRows(view([merged(), own('n1'), own('n2', { revisions: { n2: 9 } })]));
    expect(rows.map((r) => r.node)).toEqual(['n1', 'n2', null]);
    expect(rows[1]).toEqual({ store: 'kv', partition: 0, node: 'n2', active: 'n1', epoch: 3, health: 'Healthy', replicatedRevision: 0, revisions: { n2: 9 } });
    expect(rows[2]).toEqual({ store: 'kv', partition: 0, node: null, active: 'n1', epoch: 3, health: 'Healthy', replicatedRevision: 10, inSync: ['n1', 'n2', 'n3'], revisions: { n1: 10, n2: 10, n3: 10 } });
  });

  it("the nemesis's snapshot: every node a replica, the merged active, health and in-sync set, no handoff", () => {
    const snap = snapshotOf(view([merged({ inSync: ['n3', 'n1'], health: 'Degraded' }), own('n1')], 'n1', ['n3', 'n1']), contract, NODES);
    expect(snap).toEqual({
      leader: 'n1',
      answered: ['n1', 'n3'],
      partitions: [{ store: 'kv', partition: 0, replicationFactor: 3, replicas: NODES, active: 'n1', health: 'Degraded', inSync: ['n1', 'n3'], handoffTo: null }],
    });
    // what the executor derives from it: the partition is not healthy, n2 is not caught up, n3 is
    expect(unhealthyPartitions(snap)).toEqual(['kv/0 Degraded']);
    expect(nodeCaughtUp(snap, 'n2')).toBe(false);
    expect(nodeCaughtUp(snap, 'n3')).toBe(true);
    // scoped to one partition (the zombie-crash's trigger): in sync there is enough; a partition
    // the snapshot does not hold is never caught up
    expect(nodeCaughtUp(snap, 'n3', { store: 'kv', partition: 0 })).toBe(true);
    expect(nodeCaughtUp(snap, 'n2', { store: 'kv', partition: 0 })).toBe(false);
    expect(nodeCaughtUp(snap, 'n3', { store: 'kv', partition: 1 })).toBe(false);
  });

  it('caught up in one partition while behind in another: scoped, yes; across every partition, no', () => {
    const snap = {
      leader: 'n1',
      answered: ['n1', 'n2', 'n3'],
      partitions: [
        { store: 'a', partition: 0, replicationFactor: 3, replicas: NODES, active: 'n1', health: 'Healthy' as const, inSync: ['n1', 'n2', 'n3'], handoffTo: null },
        { store: 'b', partition: 0, replicationFactor: 3, replicas: NODES, active: 'n1', health: 'Degraded' as const, inSync: ['n1', 'n3'], handoffTo: null },
      ],
    };
    expect(nodeCaughtUp(snap, 'n2')).toBe(false);
    expect(nodeCaughtUp(snap, 'n2', { store: 'a', partition: 0 })).toBe(true);
    expect(nodeCaughtUp(snap, 'n2', { store: 'b', partition: 0 })).toBe(false);
  });

  it('a partition no merged row names is Unavailable with nobody in sync (the budget refuses what needs it)', () => {
    const snap = snapshotOf(view([own('n1')], null, ['n1']), contract, NODES);
    expect(snap.partitions[0]).toMatchObject({ active: null, health: 'Unavailable', inSync: [] });
  });

  it('samples into the ledger on the run clock, answers the probe, waits for Healthy', async () => {
    const ledger = new KeepingLedger();
    const sampler = new ScriptedSampler([view([merged({ health: 'Degraded', inSync: ['n1', 'n2'] })]), view([merged({ inSync: ['n1', 'n2'] })]), view([merged(), own('n2')])]);
    const w = new TargetWatch(sampler, ledger, { now: () => 42 }, contract, NODES);
    expect(w.leaseMs).toBe(4_000);
    expect(await w.unhealthy()).toEqual(['kv/0 Degraded']);
    expect(await w.unhealthy()).toEqual(['kv/0 2/3 in sync']);
    expect(await w.unhealthy()).toEqual([]);
    expect(ledger.samples).toEqual([]);
    await w.sample();
    expect(ledger.samples).toHaveLength(1);
    expect(ledger.samples[0].t).toBe(42);
    expect(ledger.samples[0].rows.map((r) => r.node)).toEqual(['n2', null]);
    expect(await w.partitions()).toEqual([{ store: 'kv', partition: 0, replicationFactor: 3 }]);
  });

  it('measures a failover: a crash of the active owner to the first ack by another node', async () => {
    const ledger = new KeepingLedger();
    const w = new TargetWatch(new ScriptedSampler([view([merged()])]), ledger, { now: () => 0 }, contract, NODES);
    await w.sample();
    w.crashStarting(7, 'n2', 100); // not the owner: nothing measured
    w.crashStarting(8, 'n1', 1_000);
    w.onAck('kv', 0, 'n1', 3, 1_200); // the old owner still: not the end
    w.onAck('kv', 0, 'n3', 4, 3_500.04);
    w.onAck('kv', 0, 'n2', 4, 3_600); // measured once
    expect(w.failoverMs).toEqual([2_500]);
    expect(ledger.events).toEqual([{ t: 3_500.04, kind: 'failover', detail: { faultId: 8, store: 'kv', partition: 0, node: 'n3', from: 'n1', ms: 2_500 } }]);
  });

  it('shares one sampling round between callers arriving together', async () => {
    const sampler = new ScriptedSampler([view([merged()])]);
    const w = new TargetWatch(sampler, new NullLedger(), { now: () => 0 }, contract, NODES);
    await Promise.all([w.snapshot(), w.snapshot(), w.unhealthy()]);
    expect(sampler.calls).toBe(1);
  });
});
