import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeConnection } from './client/node-connection.js';
import { Op } from './client-protocol.js';
import type { MetadataDoc } from './node-core.js';
import { partitionOfSegment, segmentOf } from './partitioning.js';
import { DEFAULT_ASYNC_LAG_MS } from '../ledger/schema.js';
import { checkNetAdmin } from '../harness/runtime/iptables.js';
import { startTestCluster, TEST_STORES, type TestCluster } from '../harness/test-support/process-cluster.js';

/** Partitions need iptables and CAP_NET_ADMIN: without them this suite is skipped, by name. */
const netAdmin = await checkNetAdmin();

/**
 * The cuts, ms: a flapping partition's "on" phases, each shorter than the owner's lease (1.5 s),
 * so the cut-off async owner goes on acknowledging alone. On loopback TCP retransmits a lost
 * segment ~0.2, 0.6, 1.4, 3.0 s after it was first sent: a cut just past one of those instants
 * (650 ms, 1,450 ms) waits longest for the next, and a cut past the link watchdog's bound for the
 * watchdog and the redial. Measured before the fix (watchdog 2 s, connect timeout 500 ms, redial
 * 100 ms): 650 ms cuts caught up 1,050-1,235 ms after the heal, 1,400 ms cuts 407-488 ms.
 */
const CUTS_MS = [650, 300, 1_450, 1_000, 1_900];

async function revisions(conn: NodeConnection, pkeys: readonly string[]): Promise<Map<string, { revision: number; inSync: string[] }> | null> {
  try {
    const r = await conn.request({ op: Op.Metadata }, 1_000);
    if (r.op !== Op.Metadata) return null;
    const doc = JSON.parse(r.json) as MetadataDoc;
    return new Map(doc.runtimeMap.filter((e) => pkeys.includes(`${e.store}/${e.partition}`)).map((e) => [`${e.store}/${e.partition}`, { revision: e.revision, inSync: e.inSync }]));
  } catch {
    return null;
  }
}

/**
 * The 60-minute run of seed 6060 (issue 11) ended with a replication-lag violation: a flapping
 * partition isolated the async owner n1 for 1.48 s at a time; after a heal its in-sync replicas
 * were still short of what it had acknowledged before the heal more than the async lag bound
 * (1 s: history-format.md v2, replication-lag) later. The cut left the replication links in TCP
 * retransmission backoff, and the link watchdog (2 s) had not fired yet: nothing was delivered
 * until it did, ~0.6 s after the heal, and the catch-up came after that. The store must have its
 * in-sync replicas hold, within the lag bound of a heal, everything it acknowledged before it.
 */
describe.skipIf(netAdmin !== null)(`after a short cut of an async owner, its in-sync replicas catch up within the async lag bound${netAdmin ? ` [NOT RUN: ${netAdmin}]` : ''}`, () => {
  let c: TestCluster;
  let conns: Map<string, NodeConnection>;
  beforeAll(async () => {
    c = await startTestCluster({ partitions: true, timing: { escalationTimeoutMs: 10_000 } });
    conns = new Map(c.config.nodes.map((n) => [n.id, new NodeConnection({ host: n.host, port: n.clientPort })]));
  }, 60_000);
  afterAll(async () => {
    for (const x of conns?.values() ?? []) x.close();
    await c?.close();
  });

  it(`cuts of ${CUTS_MS.join(', ')} ms: every in-sync replica holds the owner's revision at the heal within ${DEFAULT_ASYNC_LAG_MS} ms`, async () => {
    const view = await c.client.fetchView();
    const owner = ['n1', 'n2', 'n3'].find((n) => n !== view.leader)!;
    const others = ['n1', 'n2', 'n3'].filter((n) => n !== owner);
    const store = TEST_STORES.find((s) => s.name === 'async3')!;
    const partitions = view.stores.get('async3')!.partitions;
    const mine = [...view.runtime.values()].filter((e) => e.store === 'async3' && e.active === owner).map((e) => e.partition);
    expect(mine.length).toBeGreaterThan(0);
    const pkeys = mine.map((p) => `async3/${p}`);
    // keys of the owner's partitions only: every write is one the owner acknowledges alone during a cut
    const keys: string[] = [];
    for (let i = 0; keys.length < 16; i++) if (mine.includes(partitionOfSegment(segmentOf(`k${i}`, store.segments), partitions))) keys.push(`k${i}`);
    let stop = false;
    let acked = 0;
    const load = (async () => {
      for (let i = 0; !stop; i++) {
        await c.client.put('async3', keys[i % keys.length], Buffer.from(`v${i}`)).then(
          () => acked++,
          () => undefined,
        );
      }
    })();
    const caughtUpMs: number[] = [];
    try {
      for (const cutMs of CUTS_MS) {
        await new Promise((r) => setTimeout(r, 1_300));
        await c.runtime.partition({ [owner]: others, [others[0]]: [owner], [others[1]]: [owner] });
        await new Promise((r) => setTimeout(r, cutMs));
        await c.runtime.heal();
        const healedAt = performance.now();
        const atHeal = await revisions(conns.get(owner)!, pkeys);
        expect(atHeal).not.toBeNull();
        // poll the in-sync replicas until each holds the owner's revision at the heal
        let done = -1;
        while (performance.now() - healedAt < 5_000 && done < 0) {
          const seen = await Promise.all(others.map((n) => revisions(conns.get(n)!, pkeys)));
          const behind = pkeys.some((k) =>
            atHeal!.get(k)!.inSync.filter((n) => n !== owner).some((n) => (seen[others.indexOf(n)]?.get(k)?.revision ?? -1) < atHeal!.get(k)!.revision),
          );
          if (!behind) done = performance.now() - healedAt;
          else await new Promise((r) => setTimeout(r, 25));
        }
        caughtUpMs.push(Math.round(done));
      }
    } finally {
      stop = true;
      await load;
    }
    console.log(`async owner ${owner} cut ${CUTS_MS.join(', ')} ms, ${acked} writes acknowledged: in-sync replicas caught up ${caughtUpMs.join(', ')} ms after each heal (bound ${DEFAULT_ASYNC_LAG_MS} ms)`);
    expect(acked).toBeGreaterThan(100);
    for (const ms of caughtUpMs) {
      expect(ms).toBeGreaterThanOrEqual(0);
      expect(ms).toBeLessThan(DEFAULT_ASYNC_LAG_MS);
    }
  }, 120_000);
});
