import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeConnection } from './client/node-connection.js';
import { Op } from './client-protocol.js';
import { KvStatus } from './kv-status.js';
import { partitionOfSegment, segmentOf } from './partitioning.js';
import type { MetadataDoc } from './node-core.js';
import { checkNetAdmin } from '../harness/runtime/iptables.js';
import { startTestCluster, waitFor, waitHealthy, type TestCluster } from '../harness/test-support/process-cluster.js';

/** Partitions need iptables and CAP_NET_ADMIN: without them this suite is skipped, by name. */
const netAdmin = await checkNetAdmin();

/**
 * Length of the cut, ms. On loopback TCP retransmits a lost segment after ~0.2, 0.6, 1.4, 3.1,
 * 6.3, 12.9, 26 s (RTO doubling from 200 ms): a connection cut for 14 s sends its next
 * retransmission ~12 s after the heal. A shell that only replaces links that close stays deaf
 * and mute that long (the soak freeze of issue 11, 2 minutes there); the link watchdog replaces
 * a link that delivers nothing within timing.linkStallMs.
 */
const CUT_MS = 14_000;
/** The isolated node must be heard again (and hear) within this long after the heal, ms. */
const HEARD_WITHIN_MS = 5_000;

async function metadata(conn: NodeConnection): Promise<MetadataDoc | null> {
  try {
    const r = await conn.request({ op: Op.Metadata }, 1_000);
    return r.op === Op.Metadata ? (JSON.parse(r.json) as MetadataDoc) : null;
  } catch {
    return null;
  }
}

/**
 * Issue 11, the freeze of the 40-minute soak (seed 4040): after a 23.5 s partition of the leader
 * healed, n1 stayed silent to its peers for two minutes, because its peer connections sat in TCP
 * retransmission backoff and nothing replaced them. Real processes, a real iptables cut.
 */
describe.skipIf(netAdmin !== null)(`a node cut off by a long partition is heard again right after the heal${netAdmin ? ` [NOT RUN: ${netAdmin}]` : ''}`, () => {
  let c: TestCluster;
  let conns: Map<string, NodeConnection>;
  beforeAll(async () => {
    c = await startTestCluster({ partitions: true });
    conns = new Map(c.config.nodes.map((n) => [n.id, new NodeConnection({ host: n.host, port: n.clientPort })]));
  }, 60_000);
  afterAll(async () => {
    for (const x of conns?.values() ?? []) x.close();
    await c?.close();
  });

  it(`the leader isolated for ${CUT_MS / 1000} s rejoins within ${HEARD_WITHIN_MS / 1000} s of the heal, its stalled links replaced`, async () => {
    const leaderId = (await c.client.fetchView()).leader!;
    expect(leaderId).toMatch(/^n\d$/);
    const others = c.config.nodes.map((n) => n.id).filter((n) => n !== leaderId);
    // keep traffic on every link, as the workload does
    let stop = false;
    const load = (async () => {
      let i = 0;
      while (!stop) {
        await c.client.put('async3', `k${i % 8}`, Buffer.from(`v${i}`));
        i++;
      }
    })();
    await c.runtime.partition({ [leaderId]: others, [others[0]]: [leaderId], [others[1]]: [leaderId] });
    await new Promise((r) => setTimeout(r, CUT_MS));
    // the others moved on: a new leader in a higher term
    const before = await metadata(conns.get(others[0])!);
    expect(before?.leader).not.toBe(leaderId);
    await c.runtime.heal();
    const healedAt = performance.now();
    // heard both ways: the isolated node follows the new term's leader, and that leader has it
    // back in an in-sync set (it heard its catch-up requests and acknowledgements)
    let heardMs = -1;
    await waitFor(async () => {
      const [iso, peer] = await Promise.all([metadata(conns.get(leaderId)!), metadata(conns.get(others[0])!)]);
      if (!iso || !peer || !peer.leader || peer.leader === leaderId) return false;
      const follows = iso.leader === peer.leader && iso.term === peer.term;
      const inSync = peer.runtimeMap.some((e) => e.inSync.includes(leaderId));
      if (follows && inSync) heardMs = performance.now() - healedAt;
      return heardMs >= 0;
    }, 60_000, `${leaderId} to be heard again after the heal`);
    stop = true;
    await load;
    const healthy = await waitHealthy(c.client, 30_000);
    const healthyMs = performance.now() - healedAt;
    const log = readFileSync(path.join(c.runDir, 'nodes', `${leaderId}.log`), 'utf8');
    const stalls = log.split('\n').filter((l) => l.includes('"peer-link-stalled"')).length;
    console.log(`${leaderId} isolated ${CUT_MS} ms: heard again ${heardMs.toFixed(0)} ms after the heal, every partition Healthy after ${healthyMs.toFixed(0)} ms; ${stalls} stalled links reset by ${leaderId}`);
    expect(heardMs).toBeLessThan(HEARD_WITHIN_MS);
    expect(stalls).toBeGreaterThan(0);
    expect([...healthy.runtime.values()].every((e) => e.health === 'Healthy')).toBe(true);
  }, 120_000);
});

/**
 * Length of the second cut, ms: shorter than the 11 s it takes to confirm a silent owner down
 * (suspicion 1 s + escalation 10 s), and such that without the watchdog every link stays silent
 * at least 4.6 s after the heal, wherever its first lost segment fell in the cut's first second
 * (next retransmissions at +6.2 s and +12.6 s).
 */
const SHORT_CUT_MS = 8_000;

/**
 * Issue 10, bug 2 (15-minute run, seed 4042): an owner cut off by a 6.6 s partition (below the
 * 11 s it takes to confirm it down) was replaced at a higher epoch 5 s after the heal with no
 * fault on it: its links delivered nothing after the heal, so the leader still heard nothing.
 * With the link watchdog it is heard again at once and keeps its partitions.
 */
describe.skipIf(netAdmin !== null)(`an owner cut off for less than the escalation keeps its partitions after the heal${netAdmin ? ` [NOT RUN: ${netAdmin}]` : ''}`, () => {
  let c: TestCluster;
  beforeAll(async () => {
    c = await startTestCluster({ partitions: true, timing: { escalationTimeoutMs: 10_000 } });
  }, 60_000);
  afterAll(async () => {
    await c?.close();
  });

  it(`an async owner isolated ${SHORT_CUT_MS / 1000} s is not failed over after the heal`, async () => {
    const view = await c.client.fetchView();
    // an owner that is not the leader (the issue's case): its partitions keep the same active
    const owner = ['n1', 'n2', 'n3'].find((n) => n !== view.leader)!;
    const mine = [...view.runtime.values()].filter((e) => e.active === owner).map((e) => `${e.store}/${e.partition}`);
    expect(mine.length).toBeGreaterThan(0);
    const others = ['n1', 'n2', 'n3'].filter((n) => n !== owner);
    let stop = false;
    const load = (async () => {
      let i = 0;
      while (!stop) {
        await c.client.put('async3', `k${i % 16}`, Buffer.from(`v${i}`));
        i++;
      }
    })();
    await c.runtime.partition({ [owner]: others, [others[0]]: [owner], [others[1]]: [owner] });
    await new Promise((r) => setTimeout(r, SHORT_CUT_MS));
    await c.runtime.heal();
    const healedAt = performance.now();
    // watch past the moment a leader deaf since the cut would confirm it down (1 s + 10 s)
    const movedAway: string[] = [];
    while (performance.now() - healedAt < 8_000) {
      const v = await c.client.fetchView().catch(() => null);
      for (const pkey of mine) {
        const e = v?.runtime.get(pkey);
        if (e && e.active !== null && e.active !== owner && !movedAway.includes(pkey)) movedAway.push(pkey);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    stop = true;
    await load;
    console.log(`${owner} isolated ${SHORT_CUT_MS} ms (escalation 10 s): partitions that moved away after the heal: ${movedAway.length ? movedAway.join(', ') : 'none'}`);
    expect(movedAway).toEqual([]);
    const after = await c.client.fetchView();
    for (const pkey of mine) expect(after.runtime.get(pkey)!.active).toBe(owner);
  }, 120_000);
});

/**
 * Found by a 3-minute certify run (seed 4040): an owner restarted earlier, then cut off, went on
 * acknowledging for 3.6 s, far past its lease. The leader echoed the send time of the restarted
 * node's last reply, but kept the old incarnation's (a restarted process's clock starts again
 * near 0, so the new, smaller times never replaced it): the new incarnation took that old time as
 * a lease reaching far into its own future. An echo now names the incarnation whose clock it is.
 */
describe.skipIf(netAdmin !== null)(`an owner restarted, then cut off, stops acknowledging within its lease${netAdmin ? ` [NOT RUN: ${netAdmin}]` : ''}`, () => {
  let c: TestCluster;
  beforeAll(async () => {
    c = await startTestCluster({ partitions: true });
  }, 60_000);
  afterAll(async () => {
    await c?.close();
  });

  it('after a restart and failback, an isolated owner acknowledges nothing past ownerLeaseMs', async () => {
    const view = await c.client.fetchView();
    const node = ['n1', 'n2', 'n3'].find((n) => n !== view.leader)!;
    // let the first incarnation's clock run well ahead of the one a restart starts again
    await new Promise((r) => setTimeout(r, 12_000));
    await c.runtime.kill(node);
    await c.runtime.restart(node);
    const healthy = await waitHealthy(c.client, 30_000);
    const owned = [...healthy.runtime.values()].find((e) => e.store === 'async3' && e.active === node)!;
    expect(owned).toBeDefined();
    const key = Array.from({ length: 200 }, (_, i) => `k${i}`).find((k) => partitionOfSegment(segmentOf(k, 12), 3) === owned.partition)!;
    const cfg = c.config.nodes.find((n) => n.id === node)!;
    const direct = new NodeConnection({ host: cfg.host, port: cfg.clientPort });
    const doc = await metadata(direct);
    const others = ['n1', 'n2', 'n3'].filter((n) => n !== node);
    try {
      // it serves: a write to it directly is acknowledged
      await waitFor(async () => (await direct.request({ op: Op.Put, store: 'async3', key, value: Buffer.from('before') }, 1_000).catch(() => null))?.status === KvStatus.Ok, 10_000, `${node} to acknowledge async3 writes`);
      await c.runtime.partition({ [node]: others, [others[0]]: [node], [others[1]]: [node] });
      const cutAt = performance.now();
      let lastOk = -1;
      const seen = new Map<string, number>();
      while (performance.now() - cutAt < 5_000) {
        const r = await direct.request({ op: Op.Put, store: 'async3', key, value: Buffer.from('cut') }, 1_000).catch(() => null);
        const name = r ? KvStatus[r.status] : 'no answer';
        seen.set(name, (seen.get(name) ?? 0) + 1);
        if (r && r.status === KvStatus.Ok) lastOk = performance.now() - cutAt;
        await new Promise((res) => setTimeout(res, 50));
      }
      console.log(`${node} restarted, owner of async3/${owned.partition} again, then isolated: last acknowledgement ${lastOk.toFixed(0)} ms after the cut (ownerLeaseMs ${doc?.ownerLeaseMs}); answers ${JSON.stringify(Object.fromEntries(seen))}`);
      expect(lastOk).toBeGreaterThan(0);
      expect(lastOk).toBeLessThan(doc!.ownerLeaseMs + 300);
    } finally {
      direct.close();
      await c.runtime.heal();
    }
  }, 120_000);
});
