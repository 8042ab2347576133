import { CONTRACT_FORMAT } from '../../../ledger/contract.js';
import type { TargetContract } from '../target.js';

/** The example store's one store (key space). */
export const EXAMPLE_STORE = 'kv';

/**
 * The example store's contract (example-kv-server.ts): one node holds the one key space
 * (RF 1), a write is acknowledged once it is fsynced to the node's log, so it claims no loss at
 * all: a kill, stop or pause loses nothing acknowledged (not even `rf1`: the log survives the
 * crash); no async path, no lease, one owner that never changes (fencing trivially holds), reads
 * served from the one copy (linearizable), writes fenced by the client's sequence numbers (no
 * duplicates).
 */
export function exampleContract(): TargetContract {
  return {
    format: CONTRACT_FORMAT,
    target: 'example-kv',
    stores: [
      {
        name: EXAMPLE_STORE,
        replicationFactor: 1,
        ackMode: 'sync',
        ackDurableOn: 'one-node',
        partitions: 1,
        segments: 1,
        source: 'example-kv-server.ts: one node; a write is acknowledged after its log line is fsynced',
      },
    ],
    claims: [],
    asyncLagMs: { value: null, source: 'example-kv-server.ts: no replication, so no asynchronous acknowledgement' },
    leaseMs: { value: null, source: 'example-kv-server.ts: one owner, never replaced: no lease' },
    fencing: { value: true, source: 'example-kv-server.ts: one owner at epoch 1 for ever' },
    linearizableReads: { value: true, source: 'example-kv-server.ts: every read is served by the one node from the state its acknowledged writes built' },
    duplicates: { value: false, source: "example-kv-server.ts: a write whose sequence number is not above its key's last applied one is refused" },
  };
}
