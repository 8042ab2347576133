import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeConnection } from './client/node-connection.js';
import { Op } from './client-protocol.js';
import { KvStatus } from './kv-status.js';
import { partitionOfSegment, segmentOf } from './partitioning.js';
import { needs } from '../test-support/capabilities.js';
import { startTestCluster, TEST_TIMING, waitFor, waitHealthy, type TestCluster } from '../harness/test-support/process-cluster.js';

/** Keys of `store` that fall in partition `p` (the stores in tests have 12 segments, 3 partitions). */
function keysOf(p: number, n: number): string[] {
  const out: string[] = [];
  for (let i = 0; out.length < n; i++) if (partitionOfSegment(segmentOf(`k${i}`, 12), 3) === p) out.push(`k${i}`);
  return out;
}

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}

/**
 * Multi-process failover (issue 4, seed 002): SIGKILL of an active owner under write load, an
 * active cut off by iptables, and the heal back to Healthy with each preferred primary owning its
 * partitions again.
 */
// cutting an active off needs iptables (CAP_NET_ADMIN); without it that test is NOT run
const net = needs('iptables');

describe('failover of real node processes', () => {
  let c: TestCluster;
  beforeAll(async () => {
    c = await startTestCluster({ partitions: !net.skip });
  }, 60_000);
  afterAll(async () => {
    await c?.close();
  });

  it('resumes writes on a promoted replica after SIGKILL of the active (kill-to-first-ack times printed)', async () => {
    const keys = keysOf(0, 16);
    const times: number[] = [];
    for (let round = 0; round < 3; round++) {
      const before = (await c.client.fetchView()).runtime.get('sync3/0')!;
      expect(before.active).toBe('n1');
      let stop = false;
      let killedAt = 0;
      let firstAckAfterKill = 0;
      const writers = keys.map(async (key, i) => {
        let seq = 0;
        while (!stop) {
          const o = await c.client.put('sync3', key, Buffer.from(`r${round}-${i}-${seq++}`));
          if (o.ledgerOutcome === 'ok' && killedAt > 0 && !firstAckAfterKill) {
            const r = o.result!;
            if (r.info.node !== 'n1') {
              expect(r.info.epoch).toBeGreaterThan(before.epoch);
              firstAckAfterKill = performance.now();
            }
          }
        }
      });
      await new Promise((r) => setTimeout(r, 300));
      killedAt = performance.now();
      await c.runtime.kill('n1');
      await waitFor(() => firstAckAfterKill > 0, 15_000, 'the first acknowledged write after the kill');
      times.push(firstAckAfterKill - killedAt);
      stop = true;
      await Promise.all(writers);
      await c.runtime.restart('n1');
      await waitHealthy(c.client, 30_000);
    }
    console.log(`kill -9 of the active of sync3/0 -> first acknowledged write on it: ${times.map((t) => `${t.toFixed(0)} ms`).join(', ')}; p50 ${quantile(times, 0.5).toFixed(0)} ms`);
    expect(times).toHaveLength(3);
  }, 120_000);

  it.skipIf(net.skip)(net.title('promotes a replica at a higher epoch when the active is cut off, and the old active acks no sync write after'), async () => {
    const before = (await c.client.fetchView()).runtime.get('sync3/0')!;
    expect(before.active).toBe('n1');
    await c.runtime.partition({ n1: ['n2', 'n3'], n2: ['n1'], n3: ['n1'] });
    const cutAt = performance.now();
    // the majority side waits the escalation timeout (2 s here) before promoting
    let promoted: { active: string | null; epoch: number } | null = null;
    await waitFor(async () => {
      const v = await c.client.fetchView().catch(() => null);
      const e = v?.runtime.get('sync3/0');
      if (e && e.active && e.active !== 'n1' && e.epoch > before.epoch) promoted = { active: e.active, epoch: e.epoch };
      return promoted !== null;
    }, 20_000, 'a replica promoted on the majority side');
    const promotedAfter = performance.now() - cutAt;
    expect(promotedAfter).toBeGreaterThanOrEqual(TEST_TIMING.escalationTimeoutMs);
    // from now on the old active must not acknowledge any sync write, whatever we send it
    const n1 = c.config.nodes.find((n) => n.id === 'n1')!;
    const direct = new NodeConnection({ host: n1.host, port: n1.clientPort });
    const statuses = new Map<string, number>();
    try {
      for (const key of keysOf(0, 20)) {
        const res = await direct.request({ op: Op.Put, store: 'sync3', key, value: Buffer.from('from-the-old-active') }, 6_000).catch((e: Error) => ({ status: -1, err: e.message }));
        const name = 'err' in res ? 'transport/indeterminate' : KvStatus[res.status];
        statuses.set(name, (statuses.get(name) ?? 0) + 1);
        expect(res.status).not.toBe(KvStatus.Ok);
      }
    } finally {
      direct.close();
    }
    console.log(`active of sync3/0 cut off: promoted ${promoted!.active} at epoch ${promoted!.epoch} after ${promotedAfter.toFixed(0)} ms; old active answered ${JSON.stringify(Object.fromEntries(statuses))}`);
    // those writes never took effect on the new side
    for (const key of keysOf(0, 20)) {
      const r = await c.client.get('sync3', key);
      if (r.result?.status === KvStatus.Ok) expect(r.result.value!.toString()).not.toBe('from-the-old-active');
    }
    await c.runtime.heal();
    const healed = await waitHealthy(c.client, 40_000);
    expect(healed.runtime.get('sync3/0')!.active).toBe('n1');
    expect(healed.runtime.get('sync3/0')!.epoch).toBeGreaterThan(promoted!.epoch);
  }, 120_000);
});
