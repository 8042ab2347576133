/**
 * The contract each TARGET declares (ledger/contract.ts, `zaris-contract/1`), built from the run's
 * settings without loading a target's client library: certify stores it in the ledger (meta
 * `contract`), and a ledger written before contracts were stored is judged by the declaration its
 * run config implies ({@link contractFromRunConfig}).
 */
import { letterContract, type Contract } from '../../ledger/contract.js';
import { DEFAULT_ASYNC_LAG_MS } from '../../ledger/schema.js';
import { etcdContract } from './etcd/etcd-contract.js';
import { exampleContract } from './example/example-contract.js';
import { natsContract } from './nats/nats-contract.js';
import { redisContract } from './redis/redis-contract.js';
import { declarationOf } from './target.js';
import { zarisContract, type ZarisStoreSpec } from './zaris-contract.js';

/** The Redis target's own settings when the run config does not say (harness/targets/redis/redis-target.ts). */
const REDIS_TARGET_DEFAULTS = { minReplicasToWrite: 1, minReplicasMaxLagS: 1 };

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null);

/**
 * The contract a run's ledger is judged by when it stores none (a ledger from before contracts):
 * its target's declaration, from the run config (meta `run_config`: `target`, `asyncLagMaxMs`,
 * `leaseMs`, `clientOptions` with the target's settings, e.g. Redis's min-replicas) and its
 * stores (the ledger's `stores` table). No `target` in the run config: Zaris, the only store
 * before targets. An imported history (`imported`) without one: the letter of its rules.
 * @returns a contract (never throws: an unknown target name falls back to the letter, with the
 *   name kept).
 */
export function contractFromRunConfig(cfg: Record<string, unknown>, stores: readonly ZarisStoreSpec[], imported: boolean): Contract {
  const lag = num(cfg.asyncLagMaxMs) ?? DEFAULT_ASYNC_LAG_MS;
  const lease = num(cfg.leaseMs);
  const target = typeof cfg.target === 'string' ? cfg.target : imported ? null : 'zaris';
  const client = typeof cfg.clientOptions === 'object' && cfg.clientOptions !== null ? (cfg.clientOptions as Record<string, unknown>) : {};
  switch (target) {
    case 'zaris':
      return zarisContract({ stores, asyncLagMs: lag, leaseMs: lease });
    case 'etcd':
      return declarationOf(etcdContract(stores[0]?.name ?? 'etcd', stores[0]?.replicationFactor ?? 3));
    case 'redis-sentinel':
      return declarationOf(
        redisContract({
          store: stores[0]?.name ?? 'redis',
          nodes: stores[0]?.replicationFactor ?? 3,
          minReplicasToWrite: num(client.minReplicasToWrite) ?? REDIS_TARGET_DEFAULTS.minReplicasToWrite,
          minReplicasMaxLagS: num(client.minReplicasMaxLagS) ?? REDIS_TARGET_DEFAULTS.minReplicasMaxLagS,
        }),
      );
    case 'example-kv':
      return declarationOf(exampleContract());
    case 'nats-jetstream':
      return declarationOf(natsContract({ store: stores[0]?.name ?? 'nats', replicas: stores[0]?.replicationFactor ?? 3, reads: client.reads === true }));
    default: {
      const letter = letterContract({ asyncLagMaxMs: lag, leaseMs: lease }, stores);
      return target === null ? letter : { ...letter, target };
    }
  }
}
