import { deserialize, serialize } from 'node:v8';
import { FrameWriter, PayloadReader } from './framing.js';
import type { ClusterMsg } from './cluster-messages.js';
import type { ReplicatedOp } from './partition-data.js';

/**
 * Cluster-port frame payloads. The first byte says what follows:
 * - 0: a batch of control messages, v8-serialized (low rate: elections, heartbeats, proposals)
 * - 1: one replication batch (`rep`), hand-encoded because it carries every write:
 *      str16 pkey, f64 epoch, str16 tag, f64 echo, f64 leaseLeft, u32 n, n x (f64 rev, u16 seg,
 *      str16 key, u8 hasValue, [bytes32 value], f64 version)
 * - 2: hello: str16 node id, str16 incarnation, f64 term (the first frame of a connection)
 * - 3: link-ack: f64 bytes read so far on this connection. The only frame that travels back on a
 *      connection, from the accepting end to the dialling end (link-watch.ts).
 */
export const KIND_BATCH = 0;
export const KIND_REP = 1;
export const KIND_HELLO = 2;
export const KIND_LINK_ACK = 3;

/** Appends one frame holding a batch of control messages. */
export function encodeBatch(w: FrameWriter, msgs: ClusterMsg[]): void {
  const body = serialize(msgs);
  w.begin();
  w.u8(KIND_BATCH);
  w.raw(body);
  w.end();
}

/** Appends one replication frame. */
export function encodeRep(w: FrameWriter, msg: Extract<ClusterMsg, { t: 'rep' }>): void {
  w.begin();
  w.u8(KIND_REP);
  w.str16(msg.pkey);
  w.f64(msg.epoch);
  w.str16(msg.tag);
  w.f64(msg.echo);
  w.f64(msg.leaseLeft);
  w.u32(msg.ops.length);
  for (const op of msg.ops) {
    w.f64(op.rev);
    w.u16(op.seg);
    w.str16(op.key);
    if (op.value === null) w.u8(0);
    else {
      w.u8(1);
      w.bytes32(op.value);
    }
    w.f64(op.version);
  }
  w.end();
}

/** Appends a hello frame. */
export function encodeHello(w: FrameWriter, node: string, inc: string, term: number): void {
  w.begin();
  w.u8(KIND_HELLO);
  w.str16(node);
  w.str16(inc);
  w.f64(term);
  w.end();
}

/** Appends a link-ack frame: `total` bytes read so far on this connection. */
export function encodeLinkAck(w: FrameWriter, total: number): void {
  w.begin();
  w.u8(KIND_LINK_ACK);
  w.f64(total);
  w.end();
}

/**
 * Decodes a frame read on a dialled connection: only link-acks travel that way.
 * @throws Error for any other frame (the connection is then reset).
 */
export function decodeLinkAck(payload: Buffer): number {
  const r = new PayloadReader(payload);
  const kind = r.u8();
  if (kind !== KIND_LINK_ACK) throw new Error(`unexpected frame kind ${kind} on a dialled connection`);
  const total = r.f64();
  if (r.remaining !== 0) throw new Error('trailing bytes in link-ack frame');
  return total;
}

/** A decoded cluster frame. */
export type ClusterFrame = { kind: 'hello'; node: string; inc: string; term: number } | { kind: 'msgs'; msgs: ClusterMsg[] };

/**
 * Decodes one cluster frame payload.
 * @throws RangeError / Error for a truncated or unknown frame (the connection is then closed).
 */
export function decodeClusterFrame(payload: Buffer): ClusterFrame {
  const kind = payload[0];
  if (kind === KIND_BATCH) {
    const msgs = deserialize(payload.subarray(1)) as ClusterMsg[];
    if (!Array.isArray(msgs)) throw new Error('control batch is not an array');
    return { kind: 'msgs', msgs };
  }
  const r = new PayloadReader(payload);
  r.u8();
  if (kind === KIND_HELLO) {
    const node = r.str16();
    const inc = r.str16();
    const term = r.f64();
    return { kind: 'hello', node, inc, term };
  }
  if (kind === KIND_REP) {
    const pkey = r.str16();
    const epoch = r.f64();
    const tag = r.str16();
    const echo = r.f64();
    const leaseLeft = r.f64();
    const n = r.u32();
    const ops: ReplicatedOp[] = new Array(n);
    for (let i = 0; i < n; i++) {
      const rev = r.f64();
      const seg = r.u16();
      const key = r.str16();
      const value = r.u8() === 1 ? r.bytes32() : null;
      const version = r.f64();
      ops[i] = { rev, seg, key, value, version };
    }
    if (r.remaining !== 0) throw new Error('trailing bytes in rep frame');
    return { kind: 'msgs', msgs: [{ t: 'rep', pkey, epoch, tag, ops, echo, leaseLeft }] };
  }
  throw new Error(`unknown cluster frame kind ${kind}`);
}
