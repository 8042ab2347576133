import net from 'node:net';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TIMING, ownerLeaseMs, validateClusterConfig } from './cluster-config.js';
import { NodeConnection } from './client/node-connection.js';
import { decodeResponse, Op } from './client-protocol.js';
import { FrameReader } from './framing.js';
import { KvStatus } from './kv-status.js';
import type { MetadataDoc } from './node-core.js';
import { NodeShell } from './node-shell.js';
import { loopbackBlock } from '../harness/runtime/process-runtime.js';

/** Reads frames from a raw socket until it closes; resolves with the decoded responses. */
function collect(sock: net.Socket): Promise<ReturnType<typeof decodeResponse>[]> {
  const reader = new FrameReader(1 << 20);
  const out: ReturnType<typeof decodeResponse>[] = [];
  return new Promise((resolve) => {
    sock.on('data', (c) => {
      for (const f of reader.push(c)) out.push(decodeResponse(f));
    });
    sock.on('close', () => resolve(out));
    sock.on('error', () => undefined);
  });
}

/**
 * The node's client port against bad input (DESIGN.md §2 "Protocol"): a malformed or oversized
 * frame gets an InvalidInput error and a closed connection; the node keeps serving every other
 * connection.
 */
describe('node client port', () => {
  const host = `${loopbackBlock(randomBytes(4).toString('hex'))}.11`;
  const port = 7100;
  let shell: NodeShell;
  let good: NodeConnection;
  beforeAll(async () => {
    const config = validateClusterConfig({
      cluster: 't',
      nodes: [{ id: 'n1', host, clientPort: port, clusterPort: 7200 }],
      stores: [{ name: 'rf1', replicationFactor: 1, ackMode: 'sync', segments: 4 }],
      timing: { ...DEFAULT_TIMING, electionTimeoutMinMs: 50, electionTimeoutMaxMs: 100 },
      maxFrameBytes: 4096,
    });
    expect(config.maxFrameBytes).toBe(4096);
    shell = new NodeShell(config, 'n1', () => undefined);
    await shell.start();
    good = new NodeConnection({ host, port });
    // a single node elects itself and creates its partitions
    const deadline = Date.now() + 5_000;
    for (;;) {
      const r = await good.request({ op: Op.Put, store: 'rf1', key: 'warm', value: Buffer.from('x') }, 1_000);
      if (r.status === KvStatus.Ok) break;
      if (Date.now() > deadline) throw new Error('single node never served');
      await new Promise((res) => setTimeout(res, 50));
    }
  });
  afterAll(async () => {
    good?.close();
    await shell?.stop();
  });

  it('answers an oversized frame with InvalidInput and closes only that connection', async () => {
    const bad = net.connect({ host, port });
    const got = collect(bad);
    await new Promise((r) => bad.once('connect', r));
    const hdr = Buffer.alloc(4);
    hdr.writeUInt32BE(1_000_000);
    bad.write(hdr);
    const responses = await got;
    expect(responses).toHaveLength(1);
    expect(responses[0].op).toBe(Op.Error);
    expect(responses[0].status).toBe(KvStatus.InvalidInput);
    expect((responses[0] as { message: string }).message).toMatch(/exceeds the limit of 4096/);
    const r = await good.request({ op: Op.Put, store: 'rf1', key: 'after-oversized', value: Buffer.from('v') }, 1_000);
    expect(r.status).toBe(KvStatus.Ok);
  });

  it('answers a malformed frame (unknown op) with InvalidInput carrying its request id', async () => {
    const bad = net.connect({ host, port });
    const got = collect(bad);
    await new Promise((r) => bad.once('connect', r));
    bad.write(Buffer.from([0, 0, 0, 5, 0, 0, 0x30, 0x39, 77]));
    const responses = await got;
    expect(responses).toHaveLength(1);
    expect(responses[0]).toMatchObject({ op: Op.Error, reqId: 12345, status: KvStatus.InvalidInput });
    const get = await good.request({ op: Op.Get, store: 'rf1', key: 'after-oversized' }, 1_000);
    expect(get.status).toBe(KvStatus.Ok);
    expect((get as { value: Buffer }).value.toString()).toBe('v');
  });

  it('keeps answering valid requests pipelined before the bad frame on the same connection', async () => {
    const c = net.connect({ host, port });
    const got = collect(c);
    await new Promise((r) => c.once('connect', r));
    // a valid Ping (reqId 1), then garbage
    c.write(Buffer.concat([Buffer.from([0, 0, 0, 5, 0, 0, 0, 1, Op.Ping]), Buffer.from([0, 0, 0, 1, 0xff])]));
    const responses = await got;
    expect(responses.map((r) => [r.op, r.reqId, r.status])).toEqual([
      [Op.Ping, 1, KvStatus.Ok],
      [Op.Error, 0, KvStatus.InvalidInput],
    ]);
  });

  it('refuses writes to an unknown store and empty keys as InvalidInput, NotFound for a missing key', async () => {
    expect((await good.request({ op: Op.Put, store: 'nope', key: 'k', value: Buffer.from('v') }, 1_000)).status).toBe(KvStatus.InvalidInput);
    expect((await good.request({ op: Op.Put, store: 'rf1', key: '', value: Buffer.from('v') }, 1_000)).status).toBe(KvStatus.InvalidInput);
    expect((await good.request({ op: Op.Get, store: 'rf1', key: 'never-written' }, 1_000)).status).toBe(KvStatus.NotFound);
    expect((await good.request({ op: Op.Delete, store: 'rf1', key: 'never-written' }, 1_000)).status).toBe(KvStatus.NotFound);
  });

  it('applies ifAbsent and ifMatchVersion as answers (Conflict), with strictly increasing versions', async () => {
    const put = (pre: object) => good.request({ op: Op.Put, store: 'rf1', key: 'cas', value: Buffer.from('a'), ...pre }, 1_000) as Promise<{ status: KvStatus; info: { version: number } }>;
    const created = await put({ ifAbsent: true });
    expect(created.status).toBe(KvStatus.Ok);
    expect((await put({ ifAbsent: true })).status).toBe(KvStatus.Conflict);
    const stale = await put({ ifMatchVersion: created.info.version + 5 });
    expect(stale.status).toBe(KvStatus.Conflict);
    expect(stale.info.version).toBe(created.info.version);
    const next = await put({ ifMatchVersion: created.info.version });
    expect(next.status).toBe(KvStatus.Ok);
    expect(next.info.version).toBeGreaterThan(created.info.version);
    const del = (await good.request({ op: Op.Delete, store: 'rf1', key: 'cas' }, 1_000)) as { status: KvStatus; info: { version: number } };
    expect(del.status).toBe(KvStatus.Ok);
    const again = await put({ ifAbsent: true });
    expect(again.status).toBe(KvStatus.Ok);
    expect(again.info.version).toBeGreaterThan(del.info.version);
  });

  it('metadata carries the declared owner lease and the node\'s own event-loop delay', async () => {
    const r = await good.request({ op: Op.Metadata }, 1_000);
    const doc = JSON.parse((r as { json: string }).json) as MetadataDoc;
    expect(doc.ownerLeaseMs).toBe(ownerLeaseMs(DEFAULT_TIMING));
    expect(doc.loop).not.toBeNull();
    expect(doc.loop!.windowMs).toBeGreaterThanOrEqual(5_000);
    expect(doc.loop!.maxMs).toBeGreaterThanOrEqual(0);
    expect(doc.loop!.p99Ms).toBeLessThanOrEqual(doc.loop!.maxMs);
  });
});
