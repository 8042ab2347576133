import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { decodeRequest, decodeResponse, encodeRequest, encodeResponse, Op, ProtocolError, type ClientRequest, type ClientResponse } from './client-protocol.js';
import { FrameError, FrameReader, FrameWriter } from './framing.js';
import { KvStatus } from './kv-status.js';

const arbKey = fc.string({ minLength: 1, maxLength: 40 });
const arbStore = fc.constantFrom('sync3', 'async3', 'rf1');
const arbReq: fc.Arbitrary<ClientRequest> = fc.oneof(
  fc.record({ op: fc.constant(Op.Put), reqId: fc.nat(), store: arbStore, key: arbKey, value: fc.uint8Array({ maxLength: 64 }).map((a) => Buffer.from(a)) }),
  fc.record({ op: fc.constant(Op.Put), reqId: fc.nat(), store: arbStore, key: arbKey, value: fc.uint8Array({ maxLength: 8 }).map((a) => Buffer.from(a)), ifMatchVersion: fc.nat() }),
  fc.record({ op: fc.constant(Op.Put), reqId: fc.nat(), store: arbStore, key: arbKey, value: fc.uint8Array({ maxLength: 8 }).map((a) => Buffer.from(a)), ifAbsent: fc.constant(true) }),
  fc.record({ op: fc.constant(Op.Get), reqId: fc.nat(), store: arbStore, key: arbKey }),
  fc.record({ op: fc.constant(Op.Get), reqId: fc.nat(), store: arbStore, key: arbKey, local: fc.constant(true) }),
  fc.record({ op: fc.constant(Op.Delete), reqId: fc.nat(), store: arbStore, key: arbKey }),
  fc.record({ op: fc.constant(Op.GetMany), reqId: fc.nat(), store: arbStore, keys: fc.array(arbKey, { maxLength: 20 }), allowReplica: fc.boolean() }),
  fc.record({ op: fc.constant(Op.Metadata), reqId: fc.nat() }),
  fc.record({ op: fc.constant(Op.Ping), reqId: fc.nat() }),
) as fc.Arbitrary<ClientRequest>;

function frames(build: (w: FrameWriter) => void, max = 1 << 20): Buffer[] {
  const w = new FrameWriter(8);
  build(w);
  return new FrameReader(max).push(w.take());
}

describe('client protocol framing', () => {
  it('round-trips every request shape, many per buffer, however the bytes are chunked', () => {
    fc.assert(
      fc.property(fc.array(arbReq, { minLength: 1, maxLength: 10 }), fc.array(fc.integer({ min: 1, max: 17 }), { minLength: 1, maxLength: 5 }), (reqs, cuts) => {
        const w = new FrameWriter(16);
        for (const r of reqs) encodeRequest(w, r);
        const bytes = w.take();
        const reader = new FrameReader(1 << 20);
        const got: ClientRequest[] = [];
        let off = 0;
        let c = 0;
        while (off < bytes.length) {
          const n = cuts[c++ % cuts.length];
          for (const f of reader.push(Buffer.from(bytes.subarray(off, off + n)))) got.push(decodeRequest(f));
          off += n;
        }
        expect(got).toEqual(reqs);
        expect(reader.pendingBytes).toBe(0);
      }),
    );
  });

  it('round-trips write, read, batch and error responses', () => {
    const rs: ClientResponse[] = [
      { op: Op.Put, reqId: 7, status: KvStatus.Ok, flags: 0, info: { node: 'n2', partition: 1, epoch: 9, version: 3, revision: 1234, ackMode: 'async', copies: 1 } },
      { op: Op.Delete, reqId: 8, status: KvStatus.Conflict, flags: 1, info: { node: 'n1', partition: 0, epoch: 2, version: 5, revision: 0, ackMode: 'sync', copies: 0 } },
      { op: Op.Get, reqId: 9, status: KvStatus.Ok, flags: 0, node: 'n3', epoch: 4, version: 2, value: Buffer.from('w1.2') },
      { op: Op.Get, reqId: 10, status: KvStatus.NotFound, flags: 0, node: 'n3', epoch: 4, version: 0, value: null },
      { op: Op.GetMany, reqId: 11, status: KvStatus.Ok, flags: 0, node: 'n1', items: [{ status: KvStatus.Ok, version: 1, value: Buffer.from('a') }, { status: KvStatus.Moved, version: 0, value: null }] },
      { op: Op.Error, reqId: 0, status: KvStatus.InvalidInput, flags: 0, message: 'frame too large' },
    ];
    const got = frames((w) => rs.forEach((r) => encodeResponse(w, r))).map(decodeResponse);
    expect(got).toEqual(rs);
  });

  it('rejects an oversized frame before buffering it', () => {
    const r = new FrameReader(1024);
    const hdr = Buffer.alloc(4);
    hdr.writeUInt32BE(1025);
    expect(() => r.push(hdr)).toThrow(FrameError);
    expect(() => r.push(hdr)).toThrow(/exceeds the limit of 1024/);
  });

  it('rejects malformed payloads with the request id when it could be read', () => {
    // unknown op 99 after request id 42
    const p = Buffer.from([0, 0, 0, 42, 99]);
    expect(() => decodeRequest(p)).toThrow(ProtocolError);
    try {
      decodeRequest(p);
    } catch (e) {
      expect((e as ProtocolError).reqId).toBe(42);
    }
    // a put truncated inside its key
    const w = new FrameWriter();
    encodeRequest(w, { op: Op.Put, reqId: 5, store: 's', key: 'abcdef', value: Buffer.from('v') });
    const full = new FrameReader(1 << 20).push(w.take())[0];
    expect(() => decodeRequest(full.subarray(0, 12))).toThrow(/malformed request/);
    // trailing garbage
    expect(() => decodeRequest(Buffer.concat([full, Buffer.from([1])]))).toThrow(/trailing/);
    // both preconditions
    const both = Buffer.from(full);
    const flagsAt = 4 + 1 + 1 + 1 + 2 + 6;
    both[flagsAt] = 3;
    expect(() => decodeRequest(both)).toThrow(/both ifMatchVersion and ifAbsent/);
  });

  it('fuzz: decoding arbitrary bytes either succeeds or throws ProtocolError, never anything else', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        try {
          decodeRequest(Buffer.from(bytes));
        } catch (e) {
          expect(e).toBeInstanceOf(ProtocolError);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
