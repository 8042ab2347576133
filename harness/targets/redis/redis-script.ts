/**
 * The Redis adapter's write (issue 15), one Lua script run atomically by the master. Redis keeps
 * no per-key versions and no replication revision a client can see with its write, so the script
 * keeps both beside the value, as the Zaris store does (DESIGN.md §2 "Versions per key increase
 * strictly"; nodes/node-core.ts "every tenure starts its versions above any version an earlier
 * tenure can have given"):
 * - `<store>:<key>` holds the value id; `<store>:<key>:v` the key's version (kept on delete, so a
 *   re-created key goes on counting); `<store>:rev` the partition's revision counter.
 * - A write's version and revision are `max(current, tenure base) + 1`, the tenure base being
 *   Sentinel's config epoch of the master written to times 2^32: a master promoted at a higher
 *   epoch gives versions above anything an earlier master could have given, even where it never
 *   received that master's last writes (the async-ack window): versions never go backwards.
 * - The revision counter is replicated with the data, so a replica's copy of it says how far it
 *   holds the master's writes (the sampler's per-node `revisions`).
 * `#!lua` (no flags): Redis 7 refuses the script before running it on a read-only replica
 * (READONLY) and on a master short of good replicas (NOREPLICAS): a refusal changes nothing.
 */
import { createHash } from 'node:crypto';
import type { WriteOp } from '../../../ledger/ledger-writer.js';

/** Versions and revisions of config epoch e start above e * TENURE_STRIDE. */
export const TENURE_STRIDE = 2 ** 32;

export const WRITE_SCRIPT = `#!lua
-- KEYS: value key, version key, the partition's revision key
-- ARGV: op (put|cas|create|delete), value id, expected version (cas), tenure base
local cur = tonumber(redis.call('GET', KEYS[2]) or '0')
local present = redis.call('EXISTS', KEYS[1]) == 1
local op = ARGV[1]
if op == 'create' and present then return {'Conflict', cur, 0} end
if op == 'cas' and ((not present) or cur ~= tonumber(ARGV[3])) then return {'Conflict', cur, 0} end
if op == 'delete' and not present then return {'NotFound', cur, 0} end
local base = tonumber(ARGV[4])
local v = math.max(cur, base) + 1
local r = math.max(tonumber(redis.call('GET', KEYS[3]) or '0'), base) + 1
redis.call('SET', KEYS[2], string.format('%.0f', v))
redis.call('SET', KEYS[3], string.format('%.0f', r))
if op == 'delete' then redis.call('DEL', KEYS[1]) else redis.call('SET', KEYS[1], ARGV[2]) end
return {'OK', v, r}
`;

/** SHA-1 of the script (EVALSHA). */
export const WRITE_SCRIPT_SHA = createHash('sha1').update(WRITE_SCRIPT).digest('hex');

/** The Redis key holding a workload key's value id. */
export function valueKey(store: string, key: string): string {
  return `${store}:${key}`;
}

/** The Redis key of a store's revision counter (one partition per store). */
export function revisionKey(store: string): string {
  return `${store}:rev`;
}

/** KEYS and ARGV of one write. */
export function scriptArgs(store: string, key: string, op: WriteOp, valueId: string, ifMatchVersion: number | undefined, epoch: number): { keys: string[]; argv: string[] } {
  return {
    keys: [valueKey(store, key), `${valueKey(store, key)}:v`, revisionKey(store)],
    argv: [op, valueId, String(ifMatchVersion ?? 0), String(epoch * TENURE_STRIDE)],
  };
}

/** The script's reply: `OK` with the version and revision written, or a refusal that changed nothing. */
export interface ScriptReply {
  status: 'OK' | 'Conflict' | 'NotFound';
  version: number;
  revision: number;
}

/** Parses the script's reply. @throws Error when the reply is not the script's shape. */
export function parseScriptReply(reply: unknown): ScriptReply {
  if (!Array.isArray(reply) || reply.length !== 3) throw new Error(`unexpected script reply ${JSON.stringify(reply)}`);
  const status = String(reply[0]);
  if (status !== 'OK' && status !== 'Conflict' && status !== 'NotFound') throw new Error(`unexpected script status ${status}`);
  const version = Number(reply[1]);
  const revision = Number(reply[2]);
  if (!Number.isSafeInteger(version) || !Number.isSafeInteger(revision)) throw new Error(`unexpected script numbers ${JSON.stringify(reply)}`);
  return { status, version, revision };
}
