import { describe, expect, it } from 'vitest';
import { DEFAULT_TIMING, ownerLeaseMs, type ClusterConfig, type StoreConfig } from '../cluster-config.js';
import { PartitionData } from '../partition-data.js';
import { runtimeEntry } from '../test-support/runtime-entry.js';
import { buildMetadata, type MetadataSource } from './metadata.js';
import type { LocalPartition } from './partition-state.js';

const STORE: StoreConfig = { name: 's', replicationFactor: 3, ackMode: 'sync', segments: 4 };

function source(over: Partial<MetadataSource> = {}): MetadataSource {
  const config = {
    cluster: 'c1',
    nodes: ['n1', 'n2', 'n3'].map((id, i) => ({ id, host: '127.0.0.1', clientPort: 7000 + i, peerPort: 7100 + i, preferredPrimary: i === 0 })),
    stores: [STORE],
    timing: DEFAULT_TIMING,
    multiKeyLongTailRetryThresholdsMs: '',
  } as unknown as ClusterConfig;
  const data = new PartitionData([0, 1, 2, 3]);
  data.apply({ rev: 1, seg: 0, key: 'k', value: Buffer.from('v'), version: 1 });
  const lp = { pkey: 's/0', store: STORE, partition: 0, data, act: { tag: 'x' } } as unknown as LocalPartition;
  return {
    config,
    id: 'n1',
    inc: 'n1-i1',
    me: { node: 'n1', inc: 'n1-i1' },
    term: 3,
    leaderId: 'n2',
    isLeader: false,
    nPartitions: 1,
    parts: new Map([['s/0', lp]]),
    committed: new Map([['s/0', runtimeEntry({ epoch: 9 })]]),
    replicatedRevision: () => 1,
    loop: () => null,
    suspected: () => [],
    rejoining: () => false,
    members: { version: 2, members: [{ id: 'n1', host: '127.0.0.1', clientPort: 1, peerPort: 2, state: 'member' as const }, { id: 'n4', host: '127.0.0.1', clientPort: 3, peerPort: 4, state: 'joining' as const }] },
    ...over,
  };
}

describe('buildMetadata (nodes/core/metadata.ts): the metadata document, schema 5', () => {
  it('gives the partition and runtime maps, the leader, the stores and the owner lease; replicatedRevision only where this node is the serving active', () => {
    const doc = buildMetadata(source());
    expect(doc).toMatchObject({ schema: 5, cluster: 'c1', node: 'n1', inc: 'n1-i1', term: 3, leader: 'n2', isLeader: false, ownerLeaseMs: ownerLeaseMs(DEFAULT_TIMING), rejoining: false, suspected: [] });
    expect(doc.members).toEqual({ version: 2, members: [{ id: 'n1', state: 'member' }, { id: 'n4', state: 'joining' }] });
    expect(doc.partitionMap).toEqual({ version: 1, partitions: [{ store: 's', partition: 0, replicas: ['n1', 'n2', 'n3'], mapVersion: 1 }] });
    expect(doc.runtimeMap).toEqual([{ store: 's', partition: 0, active: 'n1', activeInc: 'n1-i1', epoch: 9, health: 'Healthy', inSync: ['n1', 'n2', 'n3'], inSyncIncs: ['n1-i1', 'n2-i1', 'n3-i1'], handoffTo: null, replicatedRevision: 1, revision: 1 }]);
    expect(doc.stores[0]).toMatchObject({ name: 's', replicationFactor: 3, ackMode: 'sync', segments: 4, partitions: 1, batchGetLimit: 500 });
    // another node's partition: no replicatedRevision; no committed entry: Unavailable, epoch 0
    const other = buildMetadata(source({ me: { node: 'n1', inc: 'old' } }));
    expect(other.runtimeMap[0].replicatedRevision).toBeNull();
    const none = buildMetadata(source({ committed: new Map() }));
    expect(none.runtimeMap[0]).toMatchObject({ active: null, epoch: 0, health: 'Unavailable', inSync: [] });
  });
});
