import net from 'node:net';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TIMING, ownerLeaseMs, validateClusterConfig } from './cluster-config.js';
import { NodeConnection } from './client/node-connection.js';
import { decodeResponse, Op } from './client-protocol.js';
import { encodeBatch, encodeHello } from './cluster-codec.js';
import { FrameReader, FrameWriter } from './framing.js';
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

/**
 * Stale connections of a dead process (runs/evidence-stale-incarnation-seed14): a killed node's
 * kernel keeps retransmitting what the process had written into a cut link (its hello, replies)
 * and delivers it once the cut heals, possibly after the node's next incarnation said hello on a
 * connection of its own. The shell drops it: a connection accepted before the newest one a peer
 * said hello on carries nothing of today's peer.
 */
describe('node cluster port: a connection older than the peer\'s newest hello is stale', () => {
  const block = loopbackBlock(randomBytes(4).toString('hex'));
  const host = (i: number): string => `${block}.${11 + i}`;
  const clusterPort = 7200;
  const logs: Array<{ event: string; fields: Record<string, unknown> }> = [];
  let shell: NodeShell;
  beforeAll(async () => {
    const config = validateClusterConfig({
      cluster: 't',
      nodes: [0, 1, 2].map((i) => ({ id: `n${i + 1}`, host: host(i), clientPort: 7100, clusterPort })),
      stores: [{ name: 'sync3', replicationFactor: 3, ackMode: 'sync', segments: 4 }],
      timing: DEFAULT_TIMING,
    });
    shell = new NodeShell(config, 'n1', (event, fields) => logs.push({ event, fields: fields ?? {} }));
    await shell.start();
  });
  afterAll(async () => {
    await shell?.stop();
  });

  /**
   * A raw connection to n1's cluster port from `from`, connected; `read` resolves once n1
   * acknowledged bytes read on it (its link-ack: what was written before has been handled).
   */
  async function dial(from: string): Promise<{ sock: net.Socket; closed: Promise<void>; read: Promise<void> }> {
    const sock = net.connect({ host: host(0), port: clusterPort, localAddress: from });
    sock.on('error', () => undefined);
    const closed = new Promise<void>((r) => sock.once('close', () => r()));
    const read = new Promise<void>((r) => sock.once('data', () => r()));
    await new Promise((r) => sock.once('connect', r));
    return { sock, closed, read };
  }

  function hello(inc: string, term: number): Buffer {
    const w = new FrameWriter(256);
    encodeHello(w, 'n2', inc, term);
    encodeBatch(w, [{ t: 'rep-nack', pkey: 'none/0', tag: 'none', reason: 'test' }]);
    return w.take();
  }

  /** Did `p` settle within `ms`. */
  function within(p: Promise<void>, ms: number): Promise<boolean> {
    return Promise.race([p.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);
  }

  /** Waits until n1's log has an event that `match` accepts (or 5 s). */
  async function logged(match: (l: { event: string; fields: Record<string, unknown> }) => boolean): Promise<boolean> {
    for (let i = 0; i < 100; i++) {
      if (logs.some(match)) return true;
      await new Promise((r) => setTimeout(r, 50));
    }
    return false;
  }

  it('a hello-less connection from the peer\'s address is closed when a newer one says hello', async () => {
    const old = await dial(host(1));
    const fresh = await dial(host(1));
    fresh.sock.write(hello('inc-b', 1));
    expect(await within(old.closed, 5_000)).toBe(true);
    // what the dead process wrote arrives too late: nothing reads it
    expect(old.sock.destroyed).toBe(true);
    expect(fresh.sock.destroyed).toBe(false);
    fresh.sock.destroy();
    await fresh.closed;
  });

  it('a hello on a connection accepted before the newest hello is dropped with its connection', async () => {
    logs.length = 0;
    // from another address (the address rule cannot tell), so only the accept order decides
    const old = await dial(`${block}.99`);
    const fresh = await dial(host(1));
    fresh.sock.write(hello('inc-d', 2));
    await fresh.read;
    old.sock.write(hello('inc-c', 2));
    expect(await within(old.closed, 5_000)).toBe(true);
    expect(await logged((l) => l.event === 'stale-connection' && l.fields.inc === 'inc-c')).toBe(true);
    // the core only ever heard of inc-d replacing inc-b (the first test's), never of inc-c
    expect(logs.filter((l) => l.event === 'incarnation').map((l) => [l.fields.old, l.fields.inc])).toEqual([['inc-b', 'inc-d']]);
    expect(fresh.sock.destroyed).toBe(false);
    fresh.sock.destroy();
    await fresh.closed;
  });
});
