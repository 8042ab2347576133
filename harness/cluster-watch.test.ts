import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mergeMetadata, type ClusterView, type ZarisClient } from '../nodes/client/zaris-client.js';
import type { MetadataDoc } from '../nodes/node-core.js';
import { NullLedger, type FaultStart } from '../ledger/ledger-writer.js';
import { ClusterWatch, ledgerFaultRecorder, membersOf, nodeSampleRows, sampleRows } from './cluster-watch.js';

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
  const client = { fetchView: async () => v, fetchViewAndDocs: async () => ({ view: v, docs: [] }) } as unknown as ZarisClient;
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

type Doc = MetadataDoc;
type Own = Doc['runtimeMap'][number];

function doc(node: string, items: Array<Partial<Own> & { partition: number }>, replicas: string[] = ['n1', 'n2', 'n3']): Doc {
  return {
    schema: 5,
    cluster: 'c',
    node,
    inc: `${node}-i`,
    term: 1,
    leader: 'n1',
    isLeader: node === 'n1',
    nodes: [],
    stores: [],
    partitionMap: { version: 1, partitions: items.map((it) => ({ store: 's', partition: it.partition, replicas, mapVersion: 1 })) },
    runtimeMap: items.map((it) => ({ store: 's', active: 'n1', activeInc: 'n1-i', epoch: 3, health: 'Healthy', inSync: ['n1', 'n2', 'n3'], inSyncIncs: ['n1-i', 'n2-i', 'n3-i'], handoffTo: null, replicatedRevision: null, revision: 0, ...it })),
    multiKeyLongTailRetryThresholdsMs: '',
    ownerLeaseMs: 2_500,
    loop: null,
    rejoining: false,
  } as Doc;
}

/** The v2 samples (history-format.md v2 ownership[]: inSync, revisions, node, replicas). */
describe('cluster watch: runtime-map sample rows', () => {
  const base = new Map([['s/0', ['n1', 'n2', 'n3']]]);

  it('records the merged view with inSync and each replica\'s own revision, then each node\'s own committed entry', () => {
    const docs = [
      doc('n1', [{ partition: 0, revision: 40, replicatedRevision: 38 }]),
      doc('n2', [{ partition: 0, revision: 38 }]),
      // n3 missed the commit of epoch 3: its own entry still names epoch 2 and n3 as active
      doc('n3', [{ partition: 0, revision: 35, epoch: 2, active: 'n3', health: 'Degraded', inSync: ['n3', 'n1'], inSyncIncs: ['n3-i', 'n1-i'] }]),
    ];
    const v = mergeMetadata(docs);
    const rows = sampleRows(v, docs, base);
    expect(rows).toEqual([
      { node: 'n1', store: 's', partition: 0, active: 'n1', epoch: 3, health: 'Healthy', replicatedRevision: 38, inSync: ['n1', 'n2', 'n3'], revisions: { n1: 40 } },
      { node: 'n2', store: 's', partition: 0, active: 'n1', epoch: 3, health: 'Healthy', replicatedRevision: 0, inSync: ['n1', 'n2', 'n3'], revisions: { n2: 38 } },
      { node: 'n3', store: 's', partition: 0, active: 'n3', epoch: 2, health: 'Degraded', replicatedRevision: 0, inSync: ['n3', 'n1'], revisions: { n3: 35 } },
      // the merged view last: the latest row of the moment names every member's revision
      { store: 's', partition: 0, active: 'n1', epoch: 3, health: 'Healthy', replicatedRevision: 38, inSync: ['n1', 'n2', 'n3'], revisions: { n1: 40, n2: 38, n3: 35 } },
    ]);
  });

  it('leaves out revisions of nodes that did not answer or hold no copy, and rows of nodes holding no entry', () => {
    const docs = [
      doc('n1', [{ partition: 0, revision: 7 }], ['n1']),
      // n2 just restarted: no committed entry yet
      doc('n2', [{ partition: 0, revision: 0, epoch: 0, active: null, health: 'Unavailable', inSync: [] }], ['n1']),
    ];
    const rows = sampleRows(mergeMetadata(docs), docs, new Map([['s/0', ['n1']]]));
    expect(rows.map((r) => [r.node ?? 'merged', r.revisions])).toEqual([
      ['n1', { n1: 7 }],
      ['merged', { n1: 7 }],
    ]);
  });

  it('records no revision for a node the entry lists in sync under an incarnation it no longer runs', () => {
    // n3 restarted (incarnation n3-i2, empty) before the map could drop its old incarnation n3-i:
    // its revision 0 is not the listed member's (runs seed 4101 read it as replication lag)
    const restarted = { ...doc('n3', [{ partition: 0, revision: 0, inSync: ['n1', 'n3'], inSyncIncs: ['n1-i', 'n3-i'] }]), inc: 'n3-i2' };
    const docs = [doc('n1', [{ partition: 0, revision: 50, inSync: ['n1', 'n3'], inSyncIncs: ['n1-i', 'n3-i'] }]), doc('n2', [{ partition: 0, revision: 44, inSync: ['n1', 'n3'], inSyncIncs: ['n1-i', 'n3-i'] }]), restarted];
    const rows = sampleRows(mergeMetadata(docs), docs, base);
    expect(rows.map((r) => [r.node ?? 'merged', r.inSync, r.revisions])).toEqual([
      ['n1', ['n1', 'n3'], { n1: 50 }],
      // n2 is not in sync (not listed at all): its own revision is what it holds
      ['n2', ['n1', 'n3'], { n2: 44 }],
      ['n3', ['n1', 'n3'], undefined],
      ['merged', ['n1', 'n3'], { n1: 50, n2: 44 }],
    ]);
    // once the entry names the new incarnation, its revision is recorded again
    const back = [docs[0], docs[1], { ...doc('n3', [{ partition: 0, revision: 50, inSync: ['n1', 'n3'], inSyncIncs: ['n1-i', 'n3-i2'] }]), inc: 'n3-i2' }];
    back[0] = doc('n1', [{ partition: 0, revision: 50, inSync: ['n1', 'n3'], inSyncIncs: ['n1-i', 'n3-i2'] }]);
    expect(sampleRows(mergeMetadata(back), back, base).map((r) => r.revisions)).toEqual([{ n1: 50 }, { n2: 44 }, { n3: 50 }, { n1: 50, n2: 44, n3: 50 }]);
  });

  it('property: a revision recorded for an in-sync member is always that of the incarnation listed', () => {
    const nodes = ['n1', 'n2', 'n3'] as const;
    fc.assert(
      fc.property(
        fc.tuple(...nodes.map(() => fc.constantFrom('i1', 'i2'))),
        fc.tuple(...nodes.map(() => fc.record({ inSync: fc.subarray([...nodes]), listedIncs: fc.tuple(fc.constantFrom('i1', 'i2'), fc.constantFrom('i1', 'i2'), fc.constantFrom('i1', 'i2')), revision: fc.nat(100) }))),
        (runs, entries) => {
          const docs = nodes.map((n, k) => {
            const e = entries[k];
            const inSyncIncs = e.inSync.map((m) => `${m}-${e.listedIncs[nodes.indexOf(m)]}`);
            return { ...doc(n, [{ partition: 0, revision: e.revision, inSync: e.inSync, inSyncIncs }]), inc: `${n}-${runs[k]}` };
          });
          const incOf = new Map(docs.map((d) => [d.node, d.inc]));
          const v = mergeMetadata(docs);
          for (const r of sampleRows(v, docs, base)) {
            const entry = r.node ? docs.find((d) => d.node === r.node)!.runtimeMap[0] : v.runtime.get('s/0')!;
            for (const n of Object.keys(r.revisions ?? {})) {
              const i = entry.inSync.indexOf(n);
              if (i >= 0) expect(entry.inSyncIncs[i]).toBe(incOf.get(n));
            }
          }
        },
      ),
    );
  });

  it('names the replicas only where the partition map of the moment differs from the registered one', () => {
    const docs = [doc('n1', [{ partition: 0 }], ['n1', 'n3', 'n2'])];
    const rows = sampleRows(mergeMetadata(docs), docs, base);
    expect(rows.map((r) => r.replicas)).toEqual([['n1', 'n3', 'n2'], ['n1', 'n3', 'n2']]);
    expect(sampleRows(mergeMetadata(docs), docs).every((r) => Array.isArray(r.replicas))).toBe(true);
    const same = [doc('n1', [{ partition: 0 }])];
    expect(sampleRows(mergeMetadata(same), same, base).map((r) => r.replicas)).toEqual([undefined, undefined]);
  });
});

describe('cluster watch: node lines (stall findings)', () => {
  it('records every node of the cluster: answered or not, with the event-loop delay it reported', async () => {
    const n1 = { ...doc('n1', [{ partition: 0 }]), loop: { maxMs: 12.5, p99Ms: 3.1, windowMs: 30_000 } };
    const n2 = { ...doc('n2', [{ partition: 0 }]), loop: null };
    expect(nodeSampleRows(['n3', 'n1', 'n2', 'n1'], [n1, n2])).toEqual([
      { node: 'n1', answered: true, loopMaxMs: 12.5, loopP99Ms: 3.1 },
      { node: 'n2', answered: true, loopMaxMs: null, loopP99Ms: null },
      { node: 'n3', answered: false, loopMaxMs: null, loopP99Ms: null },
    ]);
    const v = { ...mergeMetadata([n1, n2]), nodes: new Map([['n1', { host: 'h', port: 1 }], ['n2', { host: 'h', port: 2 }], ['n3', { host: 'h', port: 3 }]]) } as ClusterView;
    let fail = false;
    const client = {
      fetchViewAndDocs: async () => {
        if (fail) throw new Error('no node answered');
        return { view: v, docs: [n1] };
      },
    } as unknown as ZarisClient;
    const lines: Array<[number, unknown]> = [];
    const ledger = Object.assign(new NullLedger(), { nodeSample: (t: number, rows: unknown) => void lines.push([t, rows]) });
    let now = 100;
    const w = new ClusterWatch(client, ledger, { now: () => now }, () => 3);
    await w.sample();
    fail = true;
    now = 350;
    await w.sample();
    expect(lines).toEqual([
      [100, [{ node: 'n1', answered: true, loopMaxMs: 12.5, loopP99Ms: 3.1 }, { node: 'n2', answered: false, loopMaxMs: null, loopP99Ms: null }, { node: 'n3', answered: false, loopMaxMs: null, loopP99Ms: null }]],
      [350, ['n1', 'n2', 'n3'].map((node) => ({ node, answered: false, loopMaxMs: null, loopP99Ms: null }))],
    ]);
  });
});

describe('cluster watch: the store\'s declared owner lease', () => {
  it('is unknown until a node answered, then the largest ownerLeaseMs any node declared', async () => {
    const docs = [doc('n1', [{ partition: 0 }]), { ...doc('n2', [{ partition: 0 }]), ownerLeaseMs: 3_000 }];
    const client = { fetchViewAndDocs: async () => ({ view: mergeMetadata(docs), docs }) } as unknown as ZarisClient;
    const w = new ClusterWatch(client, new NullLedger(), { now: () => 0 }, () => 3);
    expect(w.leaseMs).toBeNull();
    await w.unhealthy();
    expect(w.leaseMs).toBe(3_000);
  });
});

describe('cluster watch: the in-sync set at an ack\'s epoch (sync-ack probes)', () => {
  it('answers from the last sample when it is that recent, else from one shared fresh fetch', async () => {
    let fetches = 0;
    const at3 = view({}, [{ partition: 0, epoch: 3 }]);
    const at4 = view({}, [{ partition: 0, epoch: 4, inSync: ['n1', 'n3'] }]);
    const client = {
      fetchViewAndDocs: async () => {
        fetches++;
        await new Promise((r) => setTimeout(r, 5));
        return { view: fetches === 1 ? at3 : at4, docs: [] };
      },
    } as unknown as ZarisClient;
    const w = new ClusterWatch(client, new NullLedger(), { now: () => 0 }, () => 3);
    await w.sample();
    expect(fetches).toBe(1);
    expect(await w.inSyncAt('s', 0, 3)).toEqual(['n1', 'n2', 'n3']);
    expect(await w.inSyncAt('s', 0, 2)).toEqual(['n1', 'n2', 'n3']);
    expect(fetches).toBe(1);
    // the ack names epoch 4: the harness's view is older; callers at once share one fetch
    expect(await Promise.all([w.inSyncAt('s', 0, 4), w.inSyncAt('s', 0, 4)])).toEqual([['n1', 'n3'], ['n1', 'n3']]);
    expect(fetches).toBe(2);
    // no node reports epoch 9 (yet): unknown
    expect(await w.inSyncAt('s', 0, 9)).toBeNull();
    expect(await w.inSyncAt('s', 7, 1)).toBeNull();
  });
});

describe('cluster watch: fault recorder', () => {
  it('records a partition fault\'s isolated nodes as the nemesis gives them, and none for other faults', () => {
    const starts: unknown[] = [];
    const ledger = Object.assign(new NullLedger(), {
      faultStart(f: FaultStart): number {
        starts.push(f);
        return starts.length;
      },
    });
    const w = new ClusterWatch({} as ZarisClient, ledger, { now: () => 5 }, () => 3);
    const rec = ledgerFaultRecorder(ledger, { now: () => 5 }, w);
    rec.faultStart({ kind: 'partition', nodes: ['n2'], target: 'random', plannedMs: 1, isolated: ['n2'], detail: JSON.stringify({ topology: 'isolate' }) });
    rec.faultStart({ kind: 'partition', nodes: ['n1', 'n3'], target: 'random', plannedMs: 2, isolated: [], detail: JSON.stringify({ topology: 'bridge' }) });
    rec.faultStart({ kind: 'kill', nodes: ['n1'], target: 'random', plannedMs: 3 });
    expect(starts).toMatchObject([{ kind: 'partition', isolated: ['n2'], startMs: 5, detail: { topology: 'isolate' } }, { kind: 'partition', isolated: [] }, { kind: 'kill' }]);
    expect(starts[2]).not.toHaveProperty('isolated');
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

describe('cluster watch: the member set (issue 14)', () => {
  const doc = (members: unknown, isLeader = true): MetadataDoc => ({ node: isLeader ? 'n1' : 'n2', isLeader, members }) as unknown as MetadataDoc;
  it('the snapshot carries the leader\'s member set; none when the leader reports none or a malformed one', async () => {
    const m = { version: 4, members: [{ id: 'n1', state: 'member' }, { id: 'n4', state: 'joining' }] };
    expect(membersOf(doc(m))).toEqual({ members: m });
    expect(membersOf(undefined)).toEqual({});
    expect(membersOf(doc(undefined))).toEqual({});
    expect(membersOf(doc({ version: 4, members: [{ id: 'n1', state: 'gone' }] }))).toEqual({});
    expect(membersOf(doc({ version: '4', members: [] }))).toEqual({});
    const v = view({ n1: 'a', n2: 'b', n3: 'c' }, [{ partition: 0 }]);
    const at = (docs: MetadataDoc[]) => new ClusterWatch({ fetchView: async () => v, fetchViewAndDocs: async () => ({ view: v, docs }) } as unknown as ZarisClient, new NullLedger(), { now: () => 0 }, () => 3);
    expect((await at([doc(m, false), doc({ version: 9, members: [] })]).snapshot()).members).toEqual({ version: 9, members: [] });
    expect((await at([doc(m, false)]).snapshot()).members).toBeUndefined();
  });
});
