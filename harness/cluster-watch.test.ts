import { describe, expect, it } from 'vitest';
import type { ClusterView, ZarisClient } from '../nodes/client/zaris-client.js';
import { NullLedger } from '../ledger/ledger-writer.js';
import { ClusterWatch } from './cluster-watch.js';

type Item = ClusterView['runtime'] extends Map<string, infer V> ? V : never;

function view(incs: Record<string, string>, items: Array<Partial<Item> & { partition: number }>): ClusterView {
  const runtime = new Map<string, Item>();
  for (const it of items) {
    runtime.set(`s/${it.partition}`, {
      store: 's',
      active: 'n1',
      activeInc: 'a',
      epoch: 3,
      health: 'Healthy',
      inSync: ['n1', 'n2', 'n3'],
      inSyncIncs: ['a', 'b', 'c'],
      handoffTo: null,
      replicatedRevision: null,
      revision: 0,
      replicas: ['n1', 'n2', 'n3'],
      ...it,
    });
  }
  return { cluster: 'c', leader: 'n1', nodes: new Map(), stores: new Map(), runtime, schema: 5, policy: '', incs: new Map(Object.entries(incs)), at: 0 };
}

function watchOf(v: ClusterView): ClusterWatch {
  const client = { fetchView: async () => v } as unknown as ZarisClient;
  return new ClusterWatch(client, new NullLedger(), { now: () => 0 }, () => 3);
}

/** The nemesis's budget gate (the failover simulation found a Healthy map can still name a dead incarnation). */
describe('cluster watch: the fault budget gate', () => {
  it('is satisfied only by Healthy partitions whose in-sync members run the incarnations named', async () => {
    expect(await watchOf(view({ n1: 'a', n2: 'b', n3: 'c' }, [{ partition: 0 }, { partition: 1 }])).unhealthy()).toEqual([]);
    // n2 restarted as incarnation b2, the map still lists its old incarnation b: not fit
    expect(await watchOf(view({ n1: 'a', n2: 'b2', n3: 'c' }, [{ partition: 0 }])).unhealthy()).toEqual(['s/0 lists n2 under an incarnation that is not running']);
    // a node that did not answer is unknown, hence unfit
    expect(await watchOf(view({ n1: 'a', n3: 'c' }, [{ partition: 0 }])).unhealthy()).toHaveLength(1);
    expect(await watchOf(view({ n1: 'a', n2: 'b', n3: 'c' }, [{ partition: 0, health: 'Degraded' }])).unhealthy()).toEqual(['s/0 Degraded']);
    expect(await watchOf(view({ n1: 'a', n2: 'b', n3: 'c' }, [{ partition: 0, inSync: ['n1', 'n3'], inSyncIncs: ['a', 'c'] }])).unhealthy()).toEqual(['s/0 2/3 in sync']);
  });

  it('counts a restarted node caught up only under its current incarnation', async () => {
    expect(await watchOf(view({ n1: 'a', n2: 'b2', n3: 'c' }, [{ partition: 0 }])).caughtUp('n2')).toBe(false);
    expect(await watchOf(view({ n1: 'a', n2: 'b2', n3: 'c' }, [{ partition: 0, inSyncIncs: ['a', 'b2', 'c'] }])).caughtUp('n2')).toBe(true);
    expect(await watchOf(view({ n1: 'a', n3: 'c' }, [{ partition: 0 }])).caughtUp('n2')).toBe(false);
    // a node not assigned any partition is trivially caught up once it answers
    expect(await watchOf(view({ n1: 'a', n2: 'b', n3: 'c', n4: 'd' }, [{ partition: 0 }])).caughtUp('n4')).toBe(true);
  });
});

describe('cluster watch: the nemesis snapshot (nemesis/budget.ts)', () => {
  it('lists in-sync members only under the incarnation each runs now, with the handoff and replication factor', async () => {
    const w = watchOf(view({ n1: 'a', n2: 'b2', n3: 'c' }, [{ partition: 0, handoffTo: 'n3' }, { partition: 1, inSyncIncs: ['a', 'b2', 'c'], health: 'Degraded' }]));
    expect(await w.snapshot()).toEqual({
      leader: 'n1',
      answered: ['n1', 'n2', 'n3'],
      partitions: [
        { store: 's', partition: 0, replicationFactor: 3, replicas: ['n1', 'n2', 'n3'], active: 'n1', health: 'Healthy', inSync: ['n1', 'n3'], handoffTo: 'n3' },
        { store: 's', partition: 1, replicationFactor: 3, replicas: ['n1', 'n2', 'n3'], active: 'n1', health: 'Degraded', inSync: ['n1', 'n2', 'n3'], handoffTo: null },
      ],
    });
    expect(await w.partitions()).toEqual([
      { store: 's', partition: 0, replicationFactor: 3 },
      { store: 's', partition: 1, replicationFactor: 3 },
    ]);
  });
});
