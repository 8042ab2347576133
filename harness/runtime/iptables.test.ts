/**
 * Real iptables on loopback (root here): a DROP rule in our own chain, jumped to from INPUT only,
 * cuts one direction of one link between addresses of 127.0.0.0/8.
 */
import { execa } from 'execa';
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { createServer, Socket, type AddressInfo, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { needs } from '../../test-support/capabilities.js';
import { chainName, checkNetAdmin, grudgeRules, IptablesPartitioner, newRunTag, ownerPid, sweepIptables } from './iptables.js';

// the rules need the iptables command and CAP_NET_ADMIN; without them those tests are NOT run
const net = needs('iptables');

// addresses of this test only (other suites use 127.0.0.N): 127.77.<pid-derived>.{1,2,3}
const NET = `127.77.${process.pid % 250}`;
const A = `${NET}.1`;
const B = `${NET}.2`;
const C = `${NET}.3`; // the client's own address
const ADDRS = { a: A, b: B, c: C };

let partitioner: IptablesPartitioner | undefined;
let leftover: string | undefined;
const servers: Server[] = [];
const udp: UdpSocket[] = [];
const ports: Record<string, number> = {};

function listen(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer((sock) => sock.end());
    servers.push(s);
    s.once('error', reject);
    s.listen(0, host, () => resolve((s.address() as AddressInfo).port));
  });
}

/** Connects from `local` to host:port: 'connected', 'timeout' or the error code. */
function connect(host: string, port: number, local: string, timeoutMs = 400): Promise<string> {
  return new Promise((resolve) => {
    const sock = new Socket();
    const done = (r: string): void => {
      clearTimeout(timer);
      sock.destroy();
      resolve(r);
    };
    const timer = setTimeout(() => done('timeout'), timeoutMs);
    sock.once('connect', () => done('connected'));
    sock.once('error', (e: NodeJS.ErrnoException) => done(e.code ?? 'error'));
    sock.connect({ host, port, localAddress: local });
  });
}

function udpSocket(addr: string): Promise<UdpSocket> {
  return new Promise((resolve, reject) => {
    const s = createSocket('udp4');
    udp.push(s);
    s.once('error', reject);
    s.bind(0, addr, () => resolve(s));
  });
}

/** Sends one datagram from `from` to `to`; true when it arrived within 300 ms. */
async function delivered(from: UdpSocket, to: UdpSocket): Promise<boolean> {
  const { address, port } = to.address();
  const got = new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => {
      to.removeListener('message', onMsg);
      resolve(false);
    }, 300);
    const onMsg = (): void => {
      clearTimeout(timer);
      to.removeListener('message', onMsg);
      resolve(true);
    };
    to.on('message', onMsg);
  });
  from.send('x', port, address);
  return got;
}

async function listing(): Promise<string> {
  return (await execa('iptables', ['-w', '10', '-S'])).stdout;
}

beforeAll(async () => {
  ports.a = await listen(A);
  ports.b = await listen(B);
});

afterAll(async () => {
  await partitioner?.close();
  if (leftover !== undefined) {
    await execa('iptables', ['-w', '10', '-D', 'INPUT', '-j', leftover], { reject: false });
    await execa('iptables', ['-w', '10', '-X', leftover], { reject: false });
  }
  for (const s of servers) s.close();
  for (const s of udp) s.close();
});

describe('iptables partitions on loopback', () => {
  it('names chains with the owner pid within 28 characters', () => {
    const tag = newRunTag(4194304);
    expect(tag).toMatch(/^p4194304-[0-9a-z]{4}$/);
    const name = chainName(tag);
    expect(name.length).toBeLessThanOrEqual(28);
    expect(ownerPid(name)).toBe(4194304);
    expect(ownerPid('zaris-certify-run42')).toBeNull();
    expect(() => chainName('p1-ABC')).toThrow('must be [a-z0-9-]');
    expect(() => chainName('p4194304-abcdefghi')).toThrow('longer than 28');
    expect(grudgeRules({ a: ['c', 'b'] }, ADDRS)).toEqual([
      ['-s', `${B}/32`, '-d', `${A}/32`, '-j', 'DROP'],
      ['-s', `${C}/32`, '-d', `${A}/32`, '-j', 'DROP'],
    ]);
    expect(() => grudgeRules({ a: ['z'] }, ADDRS)).toThrow('node "z" has no address');
  });

  it.skipIf(net.skip)(net.title('can change iptables here'), async () => {
    expect(await checkNetAdmin()).toBeNull();
  });

  it.skipIf(net.skip)(net.title('a grudge cuts exactly the links it names; heal reconnects; close leaves nothing'), async () => {
    expect(await connect(A, ports.a, C)).toBe('connected');
    expect(await connect(B, ports.b, C)).toBe('connected');

    partitioner = await IptablesPartitioner.open({ addresses: ADDRS });
    const chain = partitioner.chain;
    expect(chain).toMatch(new RegExp(`^zaris-certify-p${process.pid}-`));
    expect(await listing()).toContain(`-A INPUT -j ${chain}`);

    // a drops c's traffic: c -> a times out, c -> b still connects
    await partitioner.apply({ a: ['c'] });
    expect(await connect(A, ports.a, C)).toBe('timeout');
    expect(await connect(B, ports.b, C)).toBe('connected');

    // one direction only: datagrams c -> a are dropped, a -> c arrive
    const ua = await udpSocket(A);
    const uc = await udpSocket(C);
    expect(await delivered(uc, ua)).toBe(false);
    expect(await delivered(ua, uc)).toBe(true);

    // apply replaces: now only b is cut from c (both directions)
    await partitioner.apply({ b: ['c'], c: ['b'] });
    expect(await connect(A, ports.a, C)).toBe('connected');
    expect(await connect(B, ports.b, C)).toBe('timeout');
    expect(await delivered(uc, ua)).toBe(true);

    await partitioner.heal();
    expect(await connect(A, ports.a, C)).toBe('connected');
    expect(await connect(B, ports.b, C)).toBe('connected');

    await partitioner.close();
    await partitioner.close(); // safe twice
    const after = await listing();
    expect(after).not.toContain(chain);
    expect(after).not.toContain(NET);
  });

  it.skipIf(net.skip)(net.title('sweepIptables removes a dead run leftover chain and its jump, and keeps a live owner chain'), async () => {
    const child = await execa('sh', ['-c', 'echo $$']);
    const deadPid = Number(child.stdout.trim()); // that shell has exited
    leftover = chainName(`p${deadPid}-t${(process.pid % 1000).toString(36)}`);
    await execa('iptables', ['-w', '10', '-N', leftover]);
    await execa('iptables', ['-w', '10', '-A', leftover, '-s', `${C}/32`, '-d', `${A}/32`, '-j', 'DROP']);
    await execa('iptables', ['-w', '10', '-I', 'INPUT', '1', '-j', leftover]);
    partitioner = await IptablesPartitioner.open({ addresses: ADDRS });
    await partitioner.apply({ a: ['c'] });

    const removed = await sweepIptables();
    expect(removed).toContain(leftover);
    expect(removed).not.toContain(partitioner.chain);
    const after = await listing();
    expect(after).not.toContain(leftover);
    expect(after).toContain(`-A INPUT -j ${partitioner.chain}`);
    expect(await connect(A, ports.a, C)).toBe('timeout'); // the live run's partition is untouched
    leftover = undefined;

    await partitioner.close();
    expect(await listing()).not.toContain(partitioner.chain);
  });
});
