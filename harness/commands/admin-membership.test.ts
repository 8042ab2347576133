import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { createServer, type Server, type Socket } from 'node:net';
import { distPath } from '../dist-path.js';
import { FrameReader, FrameWriter } from '../../nodes/framing.js';
import { decodeRequest, encodeResponse, Op } from '../../nodes/client-protocol.js';
import { KvStatus } from '../../nodes/kv-status.js';
import type { AdminAnswer } from '../../nodes/node-admin.js';
import type { ClusterStatus } from './admin.js';

const cli = distPath(import.meta.url, 'harness/cli.js');

async function run(args: string[]): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  const r = await execa('node', [cli, ...args], { reject: false, timeout: 30_000 });
  return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
}

/**
 * A fake leader on the store's client protocol (framing + client-protocol, nothing of NodeCore): it
 * answers Metadata with a document carrying the member set of issue 14 and Admin requests by the
 * store's contract for join / leave / rebalance (the real node side is the lead's: nodes/). It
 * records every command it got.
 */
class FakeLeader {
  readonly commands: string[] = [];
  members: Array<{ id: string; state: 'joining' | 'member' | 'leaving' }> = [
    { id: 'n1', state: 'member' },
    { id: 'n2', state: 'member' },
    { id: 'n3', state: 'leaving' },
  ];
  version = 7;
  private server: Server | null = null;
  port = 0;

  async start(): Promise<void> {
    this.server = createServer((sock) => this.serve(sock));
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', () => r()));
    this.port = (this.server.address() as { port: number }).port;
  }
  async close(): Promise<void> {
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }
  private doc(): string {
    return JSON.stringify({
      schema: 5,
      cluster: 'fake',
      node: 'n1',
      inc: 'i1',
      term: 3,
      leader: 'n1',
      isLeader: true,
      nodes: ['n1', 'n2', 'n3', 'n4'].map((id) => ({ id, host: '127.0.0.1', clientPort: this.port })),
      stores: [],
      partitionMap: { version: 1, partitions: [] },
      runtimeMap: [],
      multiKeyLongTailRetryThresholdsMs: '',
      ownerLeaseMs: 2100,
      loop: null,
      suspected: [],
      rejoining: false,
      members: { version: this.version, members: this.members },
    });
  }
  /** The store's contract (BRIEF): refusals are one line; ok when proposed. */
  private answer(command: string): { status: KvStatus; answer: AdminAnswer } {
    const a = (status: KvStatus, ok: boolean, message: string) => ({ status, answer: { ok, node: 'n1', leader: 'n1', message } });
    const m = /^(join|leave) (\S+)$/.exec(command);
    if (command === 'rebalance') return a(KvStatus.Ok, true, `rebalance of the partition map over ${this.members.length} members proposed`);
    if (!m) return a(KvStatus.InvalidInput, false, `unknown admin command "${command.split(' ')[0]}"`);
    if (!['n1', 'n2', 'n3', 'n4'].includes(m[2])) return a(KvStatus.InvalidInput, false, `unknown node "${m[2]}"`);
    if (this.members.some((x) => x.state !== 'member')) return a(KvStatus.Unavailable, false, 'a membership change is still pending');
    return a(KvStatus.Ok, true, `${m[1]} of ${m[2]} proposed (members version ${this.version + 1})`);
  }
  private serve(sock: Socket): void {
    const reader = new FrameReader(1 << 20);
    sock.on('error', () => undefined);
    sock.on('data', (chunk: Buffer) => {
      const w = new FrameWriter();
      for (const payload of reader.push(chunk)) {
        const req = decodeRequest(payload);
        if (req.op === Op.Metadata) encodeResponse(w, { op: Op.Metadata, reqId: req.reqId, status: KvStatus.Ok, flags: 0, json: this.doc() });
        else if (req.op === Op.Admin) {
          this.commands.push(req.command);
          const r = this.answer(req.command);
          encodeResponse(w, { op: Op.Admin, reqId: req.reqId, status: r.status, flags: 0, json: JSON.stringify(r.answer) });
        } else encodeResponse(w, { op: Op.Error, reqId: req.reqId, status: KvStatus.InvalidInput, flags: 0, message: 'not in this fake' });
      }
      sock.write(w.take());
    });
  }
}

describe('admin join | leave | rebalance and the member set in status (a fake leader on the client protocol)', () => {
  const leader = new FakeLeader();
  let seeds: string;
  beforeAll(async () => {
    await leader.start();
    seeds = `127.0.0.1:${leader.port}`;
  });
  afterAll(async () => {
    await leader.close();
  });

  it('status prints the member set (table and JSON): states, version, the nodes outside', async () => {
    const t = await run(['admin', 'status', '--seeds', seeds]);
    expect(t.stderr).toBe('');
    expect(t.exitCode).toBe(0);
    expect(t.stdout.split('\n').slice(0, 2)).toEqual(['cluster fake, leader n1', 'members (version 7): n1, n2, n3 (leaving); outside: n4']);
    const j = await run(['admin', 'status', '--json', '--seeds', seeds]);
    expect(j.exitCode).toBe(0);
    expect((JSON.parse(j.stdout) as ClusterStatus).members).toEqual({ version: 7, members: leader.members, outside: ['n4'] });
  }, 60_000);

  it('a pending change refuses join in one line (exit 3); then join, leave and rebalance are sent to the leader and the answer printed', async () => {
    const pending = await run(['admin', 'join', 'n4', '--seeds', seeds]);
    expect([pending.exitCode, pending.stderr.trim()]).toEqual([3, 'zaris-certify: admin join refused by n1 (Unavailable): a membership change is still pending']);
    leader.members = leader.members.map((m) => ({ ...m, state: 'member' as const }));
    const join = await run(['admin', 'join', 'n4', '--seeds', seeds]);
    expect([join.exitCode, join.stdout.trim(), join.stderr]).toEqual([0, 'join of n4 proposed (members version 8) (by leader n1)', '']);
    const leave = await run(['admin', 'leave', 'n2', '--seeds', seeds, '--json']);
    expect(leave.exitCode).toBe(0);
    expect(JSON.parse(leave.stdout)).toEqual({ status: 'Ok', ok: true, node: 'n1', leader: 'n1', message: 'leave of n2 proposed (members version 8)' });
    const re = await run(['admin', 'rebalance', '--seeds', seeds]);
    expect([re.exitCode, re.stdout.trim()]).toEqual([0, 'rebalance of the partition map over 3 members proposed (by leader n1)']);
    const unknown = await run(['admin', 'leave', 'n9', '--seeds', seeds]);
    expect([unknown.exitCode, unknown.stderr.trim()]).toEqual([64, 'zaris-certify: admin leave refused by n1 (InvalidInput): unknown node "n9"']);
    expect(leader.commands).toEqual(['join n4', 'join n4', 'leave n2', 'rebalance', 'leave n9']);
  }, 60_000);

  it('bad arguments are one line with exit 64, nothing sent', async () => {
    const before = leader.commands.length;
    const cases: Array<[string[], string]> = [
      [['admin', 'join', '--seeds', seeds], 'zaris-certify: usage: zaris-certify admin join <node> --seeds host:port,...'],
      [['admin', 'leave', 'n1', 'n2', '--seeds', seeds], 'zaris-certify: usage: zaris-certify admin leave <node> --seeds host:port,...'],
      [['admin', 'rebalance', 'now', '--seeds', seeds], 'zaris-certify: usage: zaris-certify admin rebalance --seeds host:port,...'],
    ];
    for (const [args, line] of cases) {
      const r = await run(args);
      expect({ args, code: r.exitCode, stderr: r.stderr.trim() }).toEqual({ args, code: 64, stderr: line });
    }
    expect(leader.commands.length).toBe(before);
  }, 60_000);
});
