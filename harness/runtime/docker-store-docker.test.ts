import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { needs } from '../../test-support/capabilities.js';
import { DEFAULT_MAX_FRAME_BYTES } from '../../nodes/cluster-config.js';
import { ZarisClient } from '../../nodes/client/zaris-client.js';
import { KvStatus } from '../../nodes/kv-status.js';
import { TEST_STORES, TEST_TIMING, waitFor, waitHealthy } from '../test-support/process-cluster.js';
import { DockerRuntime } from './docker-runtime.js';

// Container test with the real store node (dist/nodes/node-main.js in the node image): writes,
// a SIGKILL of an active owner through the engine, a pause, a partition inside the containers,
// restart at the same address, and every acknowledged write read back. Needs a Docker engine and the
// node image's base (present or makeable); without them it is NOT run, and says why.
const containers = needs('docker');

describe.skipIf(containers.skip)(containers.title('store in containers'), () => {
  let runtime: DockerRuntime;
  let runDir: string;
  let client: ZarisClient;
  const acked = new Map<string, string>();
  /** Values of writes after the last acknowledged one whose outcome was indeterminate (info): they may have taken effect. */
  const maybe = new Map<string, string[]>();

  beforeAll(async () => {
    runDir = mkdtempSync(join(tmpdir(), 'zaris-certify-docker-store-test-'));
    runtime = new DockerRuntime({ readyTimeoutMs: 30_000 });
    const config = await runtime.start({ runDir, nodeIds: ['n1', 'n2', 'n3'], template: { cluster: 'docker-store', stores: TEST_STORES, timing: TEST_TIMING, maxFrameBytes: DEFAULT_MAX_FRAME_BYTES, multiKeyLongTailRetryThresholdsMs: '' } });
    client = new ZarisClient({ seeds: config.nodes.map((n) => runtime.clientEndpoint(n.id)), attemptTimeoutMs: 1_500, retry: { maxAttempts: 3, backoffMillis: 100, timeoutMs: 10_000, disableRetries: false } });
    await waitFor(() => client.connect().then(() => true, () => false), 20_000, 'the containers to answer');
    await waitHealthy(client, 30_000);
  }, 120_000);

  afterAll(async () => {
    client?.close();
    await runtime?.close();
    if (runDir) rmSync(runDir, { recursive: true, force: true });
  });

  const writeRound = async (round: number): Promise<void> => {
    await Promise.all(
      ['sync3', 'async3'].flatMap((store) =>
        Array.from({ length: 30 }, async (_, i) => {
          const value = `${store}-k${i}-r${round}`;
          const o = await client.put(store, `k${i}`, Buffer.from(value));
          const sk = `${store}/k${i}`;
          if (o.ledgerOutcome === 'ok') {
            acked.set(sk, value);
            maybe.delete(sk);
          } else if (o.ledgerOutcome === 'info') maybe.set(sk, [...(maybe.get(sk) ?? []), value]);
        }),
      ),
    );
  };

  it('fails over a SIGKILLed active, survives a pause and a partition, and keeps every acknowledged sync write', async () => {
    await writeRound(1);
    expect(acked.size).toBe(60);
    await runtime.kill('n1');
    await waitFor(async () => {
      const e = (await client.fetchView().catch(() => null))?.runtime.get('sync3/0');
      return !!e?.active && e.active !== 'n1';
    }, 20_000, 'sync3/0 to fail over');
    await writeRound(2);
    await runtime.restart('n1');
    await waitHealthy(client, 40_000);
    await runtime.pause('n3');
    await writeRound(3);
    await runtime.resume('n3');
    await runtime.partition({ n2: ['n1', 'n3'], n1: ['n2'], n3: ['n2'] });
    await writeRound(4);
    await runtime.heal();
    await waitHealthy(client, 40_000);
    for (const [sk, value] of acked) {
      if (!sk.startsWith('sync3/')) continue;
      const [store, key] = sk.split('/');
      const r = await client.get(store, key);
      expect(r.result?.status, sk).toBe(KvStatus.Ok);
      // the last acknowledged value, or a later write that timed out but took effect (recovered)
      expect([value, ...(maybe.get(sk) ?? [])], sk).toContain(r.result!.value!.toString());
    }
  }, 240_000);
});
