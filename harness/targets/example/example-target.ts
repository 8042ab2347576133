import type { RuntimeKind } from '../../runtime/runtime.js';
import { distPath } from '../../dist-path.js';
import { processRuntimeMissing } from '../installed.js';
import type { ClientOptions, ErrorOutcome, LaunchContext, NodeLaunch, OwnershipSampler, OwnershipView, Target, TargetClient, TargetCluster, TargetContract } from '../target.js';
import { checkTargetContract, endpointOf } from '../target.js';
import { EXAMPLE_STORE, exampleContract } from './example-contract.js';
import { classifyExampleError, ExampleKvClient } from './example-kv-client.js';

/** The compiled store, below dist/. */
const SERVER = 'harness/targets/example/example-kv-server.js';

/**
 * The example target (docs/targets.md, "Write a target for your own store"): the single-node
 * store of example-kv-server.ts, in this repository, run by this checkout's Node.js on the process
 * runtime. Its contract (example-contract.ts) claims no loss. One node: a partition has nothing
 * to cut it from, so partitions are refused; and every crash takes the whole cluster down, past a
 * replicated store's fault budget (certify runs a single-node target past the budget).
 */
export class ExampleKvTarget implements Target {
  readonly name = 'example-kv' as const;
  readonly nodeIds = ['n1'] as const;
  readonly ports = { http: 7790 } as const;
  readonly contract: TargetContract = exampleContract();
  readonly clientLibrary = `node fetch (Node.js ${process.versions.node})`;
  readonly unsupportedFaults = { partition: 'one node: there is nothing to cut it off from' };

  constructor() {
    checkTargetContract(this.contract);
  }

  async unavailableReason(runtime: RuntimeKind): Promise<string | null> {
    if (runtime === 'docker') return 'the example target runs on the process runtime only (RUNTIME=process): its node is this checkout\'s Node.js';
    try {
      distPath(import.meta.url, SERVER);
    } catch (e) {
      return (e as Error).message;
    }
    return processRuntimeMissing();
  }

  async version(): Promise<string> {
    return `example-kv (this repository, Node.js ${process.versions.node})`;
  }

  partitionOf(store: string): number {
    if (store !== EXAMPLE_STORE) throw new RangeError(`example-kv target has no store ${store}`);
    return 0;
  }

  launch(nodeId: string, ctx: LaunchContext): NodeLaunch {
    const { host, port } = endpointOf(ctx.cluster, nodeId, 'http');
    return { processes: [{ name: 'kv', command: process.execPath, args: [distPath(import.meta.url, SERVER), host, String(port), ctx.dataDir], readyPort: 'http' }] };
  }

  client(cluster: TargetCluster, opts: ClientOptions): TargetClient {
    return new ExampleKvClient(cluster, opts);
  }

  /**
   * One node owns the one partition at epoch 1 for ever: Healthy with its revision when it
   * answers `/status` (bounded, 500 ms), Unavailable with no active when it does not.
   */
  sampler(cluster: TargetCluster): OwnershipSampler {
    const node = cluster.nodes[0].id;
    const { host, port } = endpointOf(cluster, node, 'http');
    return {
      async sample(): Promise<OwnershipView> {
        const rev = await fetch(`http://${host}:${port}/status`, { signal: AbortSignal.timeout(500) })
          .then(async (r) => Number(((await r.json()) as { revision?: unknown }).revision))
          .catch(() => null);
        if (rev === null || !Number.isFinite(rev)) {
          return { rows: [{ store: EXAMPLE_STORE, partition: 0, node: null, active: null, epoch: 1, health: 'Unavailable', replicatedRevision: 0, inSync: [] }], leader: null, answered: [] };
        }
        const row = { store: EXAMPLE_STORE, partition: 0, active: node, epoch: 1, health: 'Healthy' as const, replicatedRevision: rev, inSync: [node], revisions: { [node]: rev } };
        return { rows: [{ ...row, node: null }, { ...row, node }], leader: node, answered: [node] };
      },
      async close(): Promise<void> {},
    };
  }

  classifyError(error: unknown): ErrorOutcome {
    return classifyExampleError(error);
  }
}
