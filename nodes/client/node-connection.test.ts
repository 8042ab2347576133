/**
 * NodeConnection against real sockets: a request the caller gave up on (Timeout) resets the
 * connection, so its bytes cannot reach the node later (certify seed 6060: requests queued during
 * a client cut were retransmitted by TCP after the heal and applied by the new active over ten
 * acknowledged sync writes of the same keys).
 */
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { IptablesPartitioner } from '../../harness/runtime/iptables.js';
import { needs } from '../../test-support/capabilities.js';
import { Op } from '../client-protocol.js';
import { NodeConnection } from './node-connection.js';
import { TransportError } from './transport-error.js';

const net = needs('iptables');

/** A node stand-in that never answers: counts connections, bytes received, and how each ended. */
interface SilentNode {
  server: Server;
  port: number;
  sockets: Socket[];
  received: () => number;
  ends: string[];
}

const servers: Server[] = [];
const sockets: Socket[] = [];

function silentNode(host: string): Promise<SilentNode> {
  let bytes = 0;
  const node: Omit<SilentNode, 'port'> = { server: createServer(), sockets: [], received: () => bytes, ends: [] };
  node.server.on('connection', (s) => {
    node.sockets.push(s);
    sockets.push(s);
    s.on('data', (d) => (bytes += d.length));
    s.on('error', (e: NodeJS.ErrnoException) => node.ends.push(e.code ?? e.message));
    s.on('close', () => node.ends.push('close'));
  });
  servers.push(node.server);
  return new Promise((resolve, reject) => {
    node.server.once('error', reject);
    node.server.listen(0, host, () => resolve({ ...node, port: (node.server.address() as AddressInfo).port }));
  });
}

async function until(cond: () => boolean, what: string, limitMs = 10_000): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > limitMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const put = (key: string) => ({ op: Op.Put, store: 's', key, value: Buffer.from('v') }) as const;

afterEach(() => {
  for (const s of sockets.splice(0)) s.destroy();
});
afterAll(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

describe('NodeConnection timeouts', () => {
  it('a written request that times out resets the connection; the others written on it fail as Transport; the next request opens a new one', async () => {
    const node = await silentNode('127.0.0.1');
    const conn = new NodeConnection({ host: '127.0.0.1', port: node.port });
    try {
      // one event-loop turn: both frames go out in one write on the first connection
      const short = conn.request(put('a'), 100);
      const long = conn.request(put('b'), 10_000);
      const shortErr = await short.then(() => null, (e: unknown) => e);
      const longErr = await long.then(() => null, (e: unknown) => e);
      expect(shortErr).toBeInstanceOf(TransportError);
      expect((shortErr as TransportError).kind).toBe('Timeout');
      expect(longErr).toBeInstanceOf(TransportError);
      expect((longErr as TransportError).kind).toBe('Transport');
      expect((longErr as TransportError).mayHaveBeenSent).toBe(true);
      // the node sees a reset, not an orderly close after the queued bytes
      await until(() => node.ends.length > 0, 'the first connection to end');
      expect(node.ends[0]).toBe('ECONNRESET');
      expect(conn.inFlight).toBe(0);
      const next = conn.request(put('c'), 100);
      await until(() => node.sockets.length === 2, 'a second connection');
      expect(await next.then(() => null, (e: unknown) => (e as TransportError).kind)).toBe('Timeout');
    } finally {
      conn.close();
    }
  });

  describe.skipIf(net.skip)(net.title('over a link that drops packets (iptables on loopback)'), () => {
    // addresses of this test only: 127.78.<pid-derived>.{1,3}
    const NET = `127.78.${process.pid % 250}`;
    const NODE = `${NET}.1`;
    const CLIENT = `${NET}.3`;
    let partitioner: IptablesPartitioner | undefined;
    afterAll(async () => {
      await partitioner?.close();
    });

    it('a request that timed out during a client cut never reaches the node after the heal (no TCP retransmission of it)', async () => {
      partitioner = await IptablesPartitioner.open({ addresses: { n: NODE } });
      const node = await silentNode(NODE);
      const conn = new NodeConnection({ host: NODE, port: node.port, localAddress: CLIENT });
      let first: Promise<unknown> | undefined;
      try {
        // an established connection with one request delivered
        let firstKind: string | null = null;
        first = conn.request(put('first'), 60_000).catch((e: unknown) => {
          firstKind = (e as TransportError).kind;
        });
        await until(() => node.received() > 0, 'the first request to arrive');
        const before = node.received();
        await partitioner.cutClient(CLIENT, ['n']);
        const cutAt = Date.now();
        const zombie = await conn.request(put('zombie'), 300).then(() => null, (e: unknown) => (e as TransportError).kind);
        expect(zombie).toBe('Timeout');
        // heal after 1 s: TCP's retransmissions of a queued frame come 0.2, 0.6, 1.4, 3.0 s after
        // its send, so one would arrive about 0.4 s after the heal
        await new Promise((r) => setTimeout(r, Math.max(0, 1_000 - (Date.now() - cutAt))));
        await partitioner.cutClient(CLIENT, []);
        await new Promise((r) => setTimeout(r, 3_000));
        expect(node.received()).toBe(before);
        // the request written before it on the reset connection failed then, as indeterminate
        expect(firstKind).toBe('Transport');
      } finally {
        conn.close();
      }
      await first;
    }, 20_000);
  });
});
