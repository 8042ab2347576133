import { mkdtempSync, readFileSync, rmSync, appendFileSync } from 'node:fs';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { classifyExampleError, ExampleKvClient } from './example-kv-client.js';
import { ExampleKv, startExampleKv } from './example-kv-server.js';

const work = mkdtempSync(join(tmpdir(), 'zaris-certify-example-kv-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('the example store (state machine)', () => {
  it('applies puts, creates, cas and deletes by their rules; a refused write changes nothing', () => {
    const kv = new ExampleKv();
    expect(kv.apply({ key: 'a', op: 'put', value: 'w1', seq: 1 }).answer).toEqual({ code: 200, body: { status: 'OK', version: 1, revision: 1 } });
    expect(kv.apply({ key: 'a', op: 'create', value: 'w2', seq: 2 }).answer.body.status).toBe('Conflict');
    expect(kv.apply({ key: 'a', op: 'cas', value: 'w3', ifMatchVersion: 9, seq: 3 }).answer.body.status).toBe('Conflict');
    expect(kv.apply({ key: 'a', op: 'cas', value: 'w4', ifMatchVersion: 1, seq: 4 }).answer.body).toEqual({ status: 'OK', version: 2, revision: 2 });
    expect(kv.apply({ key: 'a', op: 'delete', seq: 5 }).answer.body).toEqual({ status: 'OK', version: 3, revision: 3 });
    expect(kv.apply({ key: 'a', op: 'delete', seq: 6 }).answer).toEqual({ code: 404, body: { status: 'NotFound' } });
    expect(kv.read('a')).toBeNull();
    expect(kv.apply({ key: 'a', op: 'create', value: 'w7', seq: 7 }).answer.body).toEqual({ status: 'OK', version: 4, revision: 4 });
    expect(kv.apply({ key: 'a', op: 'jump', seq: 8 }).answer.code).toBe(400);
  });

  it('refuses a late write: a sequence number not above the key\'s last applied one', () => {
    const kv = new ExampleKv();
    kv.apply({ key: 'a', op: 'put', value: 'w2', seq: 2 });
    expect(kv.apply({ key: 'a', op: 'put', value: 'w1', seq: 1 }).answer.body.status).toBe('Conflict');
    expect(kv.read('a')).toBe('w2');
  });

  it('property: replaying the log of any write sequence rebuilds the same state, also with a torn last line', () => {
    const write = fc.record({ key: fc.constantFrom('a', 'b', 'c'), op: fc.constantFrom('put', 'cas', 'create', 'delete'), value: fc.constantFrom('x', 'y'), ifMatchVersion: fc.nat(4), seq: fc.nat(30) });
    fc.assert(
      fc.property(fc.array(write, { maxLength: 40 }), fc.nat(20), (ws, cut) => {
        const kv = new ExampleKv();
        const lines = ws.map((w) => kv.apply(w).line).filter((l) => l !== null).map((l) => JSON.stringify(l));
        const again = new ExampleKv();
        const text = lines.join('\n');
        again.replay(lines.length > 0 ? `${text}\n${lines[lines.length - 1].slice(0, cut)}` : text);
        expect([...again.keys]).toEqual([...kv.keys]);
        expect(again.revision).toBe(kv.revision);
        // versions of a key only grow
        for (const [k, e] of kv.keys) expect(e.version).toBe(lines.map((l) => JSON.parse(l) as { k: string }).filter((l) => l.k === k).length);
      }),
      { seed: 5, numRuns: 300 },
    );
  });
});

describe('the example store over HTTP, through the adapter', () => {
  async function start(dir: string): Promise<{ server: http.Server; client: ExampleKvClient }> {
    const server = await startExampleKv('127.0.0.1', 0, dir);
    const port = (server.address() as AddressInfo).port;
    const client = new ExampleKvClient({ nodes: [{ id: 'n1', host: '127.0.0.1' }], ports: { http: port } }, { now: () => performance.now(), operationTimeoutMs: 2_000 });
    return { server, client };
  }
  const stop = (s: http.Server): Promise<void> => new Promise((r) => s.close(() => r()));

  it('acknowledges with version and revision, refuses by the rules, keeps what it acknowledged across a restart', async () => {
    const dir = mkdtempSync(join(work, 'n1-'));
    let { server, client } = await start(dir);
    const put = await client.write({ store: 'kv', key: 'a', op: 'put', valueId: 'w1.1' });
    expect(put).toMatchObject({ outcome: 'ok', status: 'OK', ack: { node: 'n1', epoch: 1, version: 1, revision: 1 } });
    expect(put.attempts).toHaveLength(1);
    expect(await client.write({ store: 'kv', key: 'a', op: 'create', valueId: 'w1.2' })).toMatchObject({ outcome: 'fail', status: 'Conflict' });
    expect(await client.write({ store: 'kv', key: 'b', op: 'delete', valueId: '' })).toMatchObject({ outcome: 'fail', status: 'NotFound' });
    await client.write({ store: 'kv', key: 'b', op: 'put', valueId: 'w2.1' });
    expect(readFileSync(join(dir, 'example-kv.log'), 'utf8').trim().split('\n')).toHaveLength(2);
    await stop(server);
    ({ server, client } = await start(dir));
    expect((await client.readMany('kv', ['a', 'b', 'zz'])).map((r) => [r.outcome, r.value])).toEqual([['ok', 'w1.1'], ['ok', 'w2.1'], ['ok', null]]);
    // a fresh adapter starts its sequence numbers again: the store refuses them until they pass the log's
    expect(await client.write({ store: 'kv', key: 'a', op: 'put', valueId: 'w1.3' })).toMatchObject({ outcome: 'fail', status: 'Conflict' });
    await stop(server);
    // a torn last line (a crash mid-append) is ignored at start
    appendFileSync(join(dir, 'example-kv.log'), '{"k":"a","v":"w');
    ({ server, client } = await start(dir));
    expect((await client.read('kv', 'a')).value).toBe('w1.1');
    await stop(server);
  });

  it('a write to a node that is down is a definite failure (connection refused); a timeout is indeterminate', async () => {
    const { server, client } = await start(mkdtempSync(join(work, 'n1-')));
    await stop(server);
    expect(await client.write({ store: 'kv', key: 'a', op: 'put', valueId: 'w1.1' })).toMatchObject({ outcome: 'fail', status: 'ConnectionRefused' });
    expect(await client.read('kv', 'a')).toMatchObject({ outcome: 'fail', status: 'ConnectionRefused' });
    expect(classifyExampleError(Object.assign(new Error('t'), { name: 'TimeoutError' }))).toEqual({ outcome: 'info', status: 'DeadlineExceeded' });
    expect(classifyExampleError(new TypeError('fetch failed', { cause: { code: 'ECONNRESET' } }))).toEqual({ outcome: 'info', status: 'ECONNRESET' });
    expect(classifyExampleError('anything')).toEqual({ outcome: 'info', status: 'Unknown' });
  });
});
