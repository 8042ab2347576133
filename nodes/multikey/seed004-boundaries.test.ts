import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TIMING, validateClusterConfig } from '../cluster-config.js';
import { NodeConnection } from '../client/node-connection.js';
import { ZarisClient } from '../client/zaris-client.js';
import { Op } from '../client-protocol.js';
import { KvStatus } from '../kv-status.js';
import { NodeShell } from '../node-shell.js';
import { loopbackBlock } from '../../harness/runtime/process-runtime.js';
import { getManyWithLongTailRetry, KeyCapExceededError, type Timers } from './long-tail-retry.js';
import { NO_LOCAL_SETTINGS, resolveBatchGetRetryDelay, resolveComputeRetryDelay } from './retry-policy-precedence.js';
import { DEFAULT_BATCH_GET_TABLE, parseRetryRangeTableOrThrow } from './retry-range-table.js';

/**
 * Seed 004's boundary inputs at every public entry point of the multi-key policy: a request of 0
 * distinct keys looks up no range and schedules no retry timer ("no retry"); 1 key and exactly 500
 * keys are served (the fallback cap is 500); 501 keys are refused before any lookup or fan-out.
 * Entry points: the precedence functions, the long-tail retry, the client's getMany and the
 * node's getMany.
 */
const SERVER = parseRetryRangeTableOrThrow(DEFAULT_BATCH_GET_TABLE);
const keys = (n: number, prefix = 'k'): string[] => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

/** Timers that only count what was scheduled (nothing ever fires). */
function countingTimers(): Timers & { scheduled: number[] } {
  const scheduled: number[] = [];
  return { scheduled, setTimeout: (_cb, ms) => scheduled.push(ms), clearTimeout: () => undefined };
}

describe('seed 004 boundaries: precedence', () => {
  it.each([
    [0, null, 'no-keys'],
    [1, 8, 'server'],
    [500, 100, 'server'],
    [501, 500, 'server'],
  ] as const)('%i distinct keys: delay %s (%s)', (n, delay, source) => {
    expect(resolveBatchGetRetryDelay(NO_LOCAL_SETTINGS, SERVER, n)).toEqual({ delayMs: delay, source });
    expect(resolveComputeRetryDelay(NO_LOCAL_SETTINGS, SERVER, n)).toEqual({ delayMs: delay, source });
  });

  it('property: 0 keys is "no retry" whatever the local settings and server policy', () => {
    fc.assert(
      fc.property(fc.integer({ min: -5, max: 5_000_000 }), fc.boolean(), fc.boolean(), (fixed, local, server) => {
        const settings = { batchGetFixedThresholdMicros: fixed, ...(local ? { batchGetRange: SERVER, computeRange: SERVER } : {}) };
        const policy = server ? SERVER : null;
        expect(resolveBatchGetRetryDelay(settings, policy, 0).delayMs).toBeNull();
        expect(resolveComputeRetryDelay(settings, policy, 0).delayMs).toBeNull();
      }),
      { seed: 4004, numRuns: 200 },
    );
  });
});

describe('seed 004 boundaries: long-tail retry', () => {
  const route = (k: string) => ({ primary: 'n1', alternate: k.endsWith('0') ? 'n2' : null });
  it.each([0, 1, 500, 501])('%i distinct keys', async (n) => {
    const timers = countingTimers();
    const lookups: number[] = [];
    const fetched: string[][] = [];
    const run = getManyWithLongTailRetry(
      keys(n),
      { delayMsFor: (c) => { lookups.push(c); return resolveBatchGetRetryDelay(NO_LOCAL_SETTINGS, SERVER, c).delayMs; } },
      { routeKey: route, timers, fetch: async (_t, ks) => { fetched.push([...ks]); return new Map(ks.map((k) => [k, k])); } },
    );
    if (n > 500) {
      await expect(run).rejects.toBeInstanceOf(KeyCapExceededError);
      expect(lookups).toEqual([]);
      expect(fetched).toEqual([]);
      return;
    }
    const r = await run;
    expect(r.answers.size).toBe(n);
    expect(lookups).toEqual(n === 0 ? [] : [n]);
    expect(fetched.flat().length).toBe(n);
    expect(timers.scheduled).toEqual(n === 0 ? [] : [n === 500 ? 100 : 8]); // k0 has an alternate
    expect(r.delayMs).toBe(n === 0 ? null : n === 500 ? 100 : 8);
  });

  it('a null delay (no retry) schedules no timer even where keys have alternates', async () => {
    const timers = countingTimers();
    const r = await getManyWithLongTailRetry(['a0', 'b0'], { delayMsFor: () => null }, { routeKey: route, timers, fetch: async (_t, ks) => new Map(ks.map((k) => [k, 1])) });
    expect(timers.scheduled).toEqual([]);
    expect(r.delayMs).toBeNull();
    expect(r.answers.size).toBe(2);
  });
});

describe('seed 004 boundaries: the client and the node (one node process in-process)', () => {
  const host = `${loopbackBlock(randomBytes(4).toString('hex'))}.11`;
  const port = 7300;
  let shell: NodeShell;
  let client: ZarisClient;
  let raw: NodeConnection;
  beforeAll(async () => {
    const config = validateClusterConfig({
      cluster: 'seed004',
      nodes: [{ id: 'n1', host, clientPort: port, clusterPort: 7400 }],
      stores: [{ name: 'rf1', replicationFactor: 1, ackMode: 'sync', segments: 8 }],
      timing: { ...DEFAULT_TIMING, electionTimeoutMinMs: 50, electionTimeoutMaxMs: 100 },
      multiKeyLongTailRetryThresholdsMs: DEFAULT_BATCH_GET_TABLE,
    });
    shell = new NodeShell(config, 'n1', () => undefined);
    await shell.start();
    raw = new NodeConnection({ host, port });
    const deadline = Date.now() + 5_000;
    while ((await raw.request({ op: Op.Put, store: 'rf1', key: 'k0', value: Buffer.from('v0') }, 1_000)).status !== KvStatus.Ok) {
      if (Date.now() > deadline) throw new Error('the single node never served');
      await new Promise((r) => setTimeout(r, 50));
    }
    client = await new ZarisClient({ seeds: [{ host, port }] }).connect();
  });
  afterAll(async () => {
    client?.close();
    raw?.close();
    await shell?.stop();
  });

  it.each([0, 1, 500])('client getMany of %i distinct keys answers every key (k0 found, others absent)', async (n) => {
    const r = await client.getMany('rf1', keys(n));
    expect(r.answers.size).toBe(n);
    expect(r.delayMs).toBe(n === 0 ? null : n === 500 ? 100 : 8);
    expect(r.retryFired).toBe(false);
    if (n > 0) {
      expect(r.answers.get('k0')?.value.status).toBe(KvStatus.Ok);
      expect(r.answers.get('k0')?.value.value?.toString()).toBe('v0');
    }
    if (n === 500) expect(r.answers.get('k499')?.value.status).toBe(KvStatus.NotFound);
  });

  it('client getMany of 501 distinct keys is refused before any request (KeyCapExceededError); duplicates count once', async () => {
    await expect(client.getMany('rf1', keys(501))).rejects.toBeInstanceOf(KeyCapExceededError);
    const dup = await client.getMany('rf1', [...keys(500), ...keys(500)]);
    expect(dup.answers.size).toBe(500);
  });

  it.each([0, 1, 500])("the node's getMany of %i distinct keys: Ok, one item per key", async (n) => {
    const r = await raw.request({ op: Op.GetMany, store: 'rf1', keys: keys(n), allowReplica: false }, 2_000);
    expect(r.status).toBe(KvStatus.Ok);
    expect(r.op === Op.GetMany ? r.items.length : -1).toBe(n);
  });

  it("the node's getMany of 501 distinct keys: InvalidInput, and the node keeps serving", async () => {
    const r = await raw.request({ op: Op.GetMany, store: 'rf1', keys: keys(501), allowReplica: false }, 2_000);
    expect(r.status).toBe(KvStatus.InvalidInput);
    expect((await raw.request({ op: Op.Get, store: 'rf1', key: 'k0' }, 1_000)).status).toBe(KvStatus.Ok);
  });
});
