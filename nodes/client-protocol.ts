import { FrameWriter, PayloadReader } from './framing.js';
import { KvStatus } from './kv-status.js';

/**
 * The client-port wire protocol (DESIGN.md §2 "Protocol").
 *
 * Request payload:  u32 requestId | u8 op | op fields
 * Response payload: u32 requestId | u8 op | u8 status (KvStatus) | u8 flags | op fields
 *
 * Fields: str8 = u8 length + UTF-8, str16 = u16 length + UTF-8, bytes32 = u32 length + bytes,
 * f64 = IEEE double (epochs, versions, revisions: integers exact to 2^53). Big-endian throughout.
 *
 * Ops and their fields:
 * - Put (1):      str8 store, str16 key, u8 flags (1 ifMatchVersion, 2 ifAbsent),
 *                 [f64 expectedVersion if flag 1], bytes32 value
 * - Get (2):      str8 store, str16 key, u8 flags (1 local: the node answers from its own copy,
 *                 for probes; see NodeCore)
 * - Delete (3):   str8 store, str16 key, u8 flags (1 ifMatchVersion), [f64 expectedVersion]
 * - GetMany (4):  str8 store, u8 flags (1 allowReplica), u16 n, n x str16 key
 * - Metadata (5): nothing; answered with a JSON document (schema 5)
 * - Ping (6):     nothing
 * - Admin (7):    str16 command (one line of text; node-admin.ts: answered by the leader)
 * Responses:
 * - Put/Delete: str8 node, u16 partition, f64 epoch, f64 version, f64 revision, u8 ackMode
 *   (0 sync, 1 async), u16 copies. On Conflict, version is the key's current version.
 * - Get: str8 node, f64 epoch, f64 version, bytes32 value (empty unless Ok)
 * - GetMany: str8 node, u16 n, n x (u8 status, f64 version, bytes32 value)
 * - Metadata: bytes32 JSON
 * - Admin: bytes32 JSON (node-admin.ts AdminAnswer)
 * - Error (op 0): status InvalidInput, str16 message; the node then closes the connection.
 * Response flag bit 0 (INDETERMINATE): the write was applied somewhere and its fate is unknown
 * (the owner lost ownership or could not complete replication in time); the client must treat
 * it like a timeout, never as a definite failure.
 */
export const Op = {
  Error: 0,
  Put: 1,
  Get: 2,
  Delete: 3,
  GetMany: 4,
  Metadata: 5,
  Ping: 6,
  Admin: 7,
} as const;
export type OpCode = (typeof Op)[keyof typeof Op];

/** Response flag: the write may have been applied (see module doc). */
export const FLAG_INDETERMINATE = 1;

export type ClientRequest =
  | { op: typeof Op.Put; reqId: number; store: string; key: string; value: Buffer; ifMatchVersion?: number; ifAbsent?: boolean }
  /** `local` (probes): answered from the node's own copy, never routed to by ordinary calls. */
  | { op: typeof Op.Get; reqId: number; store: string; key: string; local?: boolean }
  | { op: typeof Op.Delete; reqId: number; store: string; key: string; ifMatchVersion?: number }
  | { op: typeof Op.GetMany; reqId: number; store: string; keys: string[]; allowReplica: boolean }
  | { op: typeof Op.Metadata; reqId: number }
  | { op: typeof Op.Ping; reqId: number }
  /** An operator request (node-admin.ts): one line such as `handoff sync3/0 to n2`. */
  | { op: typeof Op.Admin; reqId: number; command: string };

/** What an Ok write response tells the ledger (DESIGN.md §2). */
export interface WriteInfo {
  node: string;
  partition: number;
  epoch: number;
  version: number;
  revision: number;
  ackMode: 'sync' | 'async';
  /**
   * How many copies held the write when it was acknowledged, the active included (sync at
   * RF > 1: the in-sync members that had applied it; async and RF1: 1; 0 on a refusal).
   */
  copies: number;
}

export interface GetManyItem {
  status: KvStatus;
  version: number;
  value: Buffer | null;
}

export type ClientResponse =
  | { op: typeof Op.Put | typeof Op.Delete; reqId: number; status: KvStatus; flags: number; info: WriteInfo }
  | { op: typeof Op.Get; reqId: number; status: KvStatus; flags: number; node: string; epoch: number; version: number; value: Buffer | null }
  | { op: typeof Op.GetMany; reqId: number; status: KvStatus; flags: number; node: string; items: GetManyItem[] }
  | { op: typeof Op.Metadata; reqId: number; status: KvStatus; flags: number; json: string }
  | { op: typeof Op.Ping; reqId: number; status: KvStatus; flags: number }
  | { op: typeof Op.Admin; reqId: number; status: KvStatus; flags: number; json: string }
  | { op: typeof Op.Error; reqId: number; status: KvStatus; flags: number; message: string };

/** A request the node cannot parse; answered with an Error response, then the connection closes. */
export class ProtocolError extends Error {
  override name = 'ProtocolError';
  constructor(message: string, readonly reqId: number) {
    super(message);
  }
}

const EMPTY = Buffer.alloc(0);

/** Appends one request frame. @throws RangeError for a store/key too long for its length field. */
export function encodeRequest(w: FrameWriter, r: ClientRequest): void {
  w.begin();
  w.u32(r.reqId);
  w.u8(r.op);
  switch (r.op) {
    case Op.Put: {
      w.str8(r.store);
      w.str16(r.key);
      const flags = (r.ifMatchVersion !== undefined ? 1 : 0) | (r.ifAbsent ? 2 : 0);
      w.u8(flags);
      if (r.ifMatchVersion !== undefined) w.f64(r.ifMatchVersion);
      w.bytes32(r.value);
      break;
    }
    case Op.Get:
      w.str8(r.store);
      w.str16(r.key);
      w.u8(r.local ? 1 : 0);
      break;
    case Op.Delete:
      w.str8(r.store);
      w.str16(r.key);
      w.u8(r.ifMatchVersion !== undefined ? 1 : 0);
      if (r.ifMatchVersion !== undefined) w.f64(r.ifMatchVersion);
      break;
    case Op.GetMany:
      w.str8(r.store);
      w.u8(r.allowReplica ? 1 : 0);
      w.u16(r.keys.length);
      for (const k of r.keys) w.str16(k);
      break;
    case Op.Metadata:
    case Op.Ping:
      break;
    case Op.Admin:
      w.str16(r.command);
      break;
  }
  w.end();
}

/**
 * Decodes one request payload.
 * @throws ProtocolError (with the request id when it could be read) for unknown ops, truncated
 * or trailing bytes, or invalid flag combinations.
 */
export function decodeRequest(payload: Buffer): ClientRequest {
  const r = new PayloadReader(payload);
  let reqId = 0;
  try {
    reqId = r.u32();
    const op = r.u8();
    let out: ClientRequest;
    switch (op) {
      case Op.Put: {
        const store = r.str8();
        const key = r.str16();
        const flags = r.u8();
        if (flags & ~3) throw new ProtocolError(`unknown put flags ${flags}`, reqId);
        if ((flags & 3) === 3) throw new ProtocolError('put cannot carry both ifMatchVersion and ifAbsent', reqId);
        const ifMatchVersion = flags & 1 ? r.f64() : undefined;
        const value = r.bytes32();
        out = { op, reqId, store, key, value };
        if (ifMatchVersion !== undefined) out.ifMatchVersion = ifMatchVersion;
        if (flags & 2) out.ifAbsent = true;
        break;
      }
      case Op.Get: {
        const store = r.str8();
        const key = r.str16();
        const flags = r.u8();
        if (flags & ~1) throw new ProtocolError(`unknown get flags ${flags}`, reqId);
        out = { op, reqId, store, key };
        if (flags & 1) out.local = true;
        break;
      }
      case Op.Delete: {
        const store = r.str8();
        const key = r.str16();
        const flags = r.u8();
        if (flags & ~1) throw new ProtocolError(`unknown delete flags ${flags}`, reqId);
        out = { op, reqId, store, key };
        if (flags & 1) out.ifMatchVersion = r.f64();
        break;
      }
      case Op.GetMany: {
        const store = r.str8();
        const flags = r.u8();
        const n = r.u16();
        const keys: string[] = new Array(n);
        for (let i = 0; i < n; i++) keys[i] = r.str16();
        out = { op, reqId, store, keys, allowReplica: (flags & 1) === 1 };
        break;
      }
      case Op.Metadata:
      case Op.Ping:
        out = { op, reqId };
        break;
      case Op.Admin:
        out = { op, reqId, command: r.str16() };
        break;
      default:
        throw new ProtocolError(`unknown op ${op}`, reqId);
    }
    if (r.remaining !== 0) throw new ProtocolError(`${r.remaining} trailing bytes after op ${op}`, reqId);
    return out;
  } catch (e) {
    if (e instanceof ProtocolError) throw e;
    throw new ProtocolError(`malformed request: ${(e as Error).message}`, reqId);
  }
}

/** Appends one response frame. */
export function encodeResponse(w: FrameWriter, r: ClientResponse): void {
  w.begin();
  w.u32(r.reqId);
  w.u8(r.op);
  w.u8(r.status);
  w.u8(r.flags);
  switch (r.op) {
    case Op.Put:
    case Op.Delete:
      w.str8(r.info.node);
      w.u16(r.info.partition);
      w.f64(r.info.epoch);
      w.f64(r.info.version);
      w.f64(r.info.revision);
      w.u8(r.info.ackMode === 'async' ? 1 : 0);
      w.u16(r.info.copies);
      break;
    case Op.Get:
      w.str8(r.node);
      w.f64(r.epoch);
      w.f64(r.version);
      w.bytes32(r.value ?? EMPTY);
      break;
    case Op.GetMany:
      w.str8(r.node);
      w.u16(r.items.length);
      for (const it of r.items) {
        w.u8(it.status);
        w.f64(it.version);
        w.bytes32(it.value ?? EMPTY);
      }
      break;
    case Op.Metadata:
    case Op.Admin:
      w.bytes32(Buffer.from(r.json, 'utf8'));
      break;
    case Op.Ping:
      break;
    case Op.Error:
      w.str16(r.message.slice(0, 1000));
      break;
  }
  w.end();
}

/**
 * Decodes one response payload.
 * @throws ProtocolError for an unknown op or truncated payload.
 */
export function decodeResponse(payload: Buffer): ClientResponse {
  const r = new PayloadReader(payload);
  let reqId = 0;
  try {
    reqId = r.u32();
    const op = r.u8();
    const status = r.u8() as KvStatus;
    const flags = r.u8();
    switch (op) {
      case Op.Put:
      case Op.Delete: {
        const node = r.str8();
        const partition = r.u16();
        const epoch = r.f64();
        const version = r.f64();
        const revision = r.f64();
        const ackMode = r.u8() === 1 ? 'async' : 'sync';
        const copies = r.u16();
        return { op, reqId, status, flags, info: { node, partition, epoch, version, revision, ackMode, copies } };
      }
      case Op.Get: {
        const node = r.str8();
        const epoch = r.f64();
        const version = r.f64();
        const value = r.bytes32();
        return { op, reqId, status, flags, node, epoch, version, value: status === KvStatus.Ok ? value : null };
      }
      case Op.GetMany: {
        const node = r.str8();
        const n = r.u16();
        const items: GetManyItem[] = new Array(n);
        for (let i = 0; i < n; i++) {
          const st = r.u8() as KvStatus;
          const version = r.f64();
          const value = r.bytes32();
          items[i] = { status: st, version, value: st === KvStatus.Ok ? value : null };
        }
        return { op, reqId, status, flags, node, items };
      }
      case Op.Metadata:
      case Op.Admin:
        return { op, reqId, status, flags, json: r.bytes32().toString('utf8') };
      case Op.Ping:
        return { op, reqId, status, flags };
      case Op.Error:
        return { op, reqId, status, flags, message: r.str16() };
      default:
        throw new ProtocolError(`unknown response op ${op}`, reqId);
    }
  } catch (e) {
    if (e instanceof ProtocolError) throw e;
    throw new ProtocolError(`malformed response: ${(e as Error).message}`, reqId);
  }
}
