/**
 * A schedule as text: its canonical JSON (the ledger meta `schedule`), its sha256 digest
 * (results.json `scheduleDigest`), and the short label of a target (the ledger's faults.target).
 */
import type { FaultTarget, Schedule } from './schedule-types.js';
import { createHash } from 'node:crypto';

/**
 * JSON with object keys sorted at every level and no whitespace; `undefined` members dropped.
 * Equal values give byte-equal text whatever their key order.
 * @throws TypeError for values JSON cannot hold (functions, bigint, non-finite numbers).
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError(`canonicalJson: non-finite number ${value}`);
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  if (typeof value === 'object') {
    const o = value as Record<string, unknown>;
    const keys = Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(',')}}`;
  }
  throw new TypeError(`canonicalJson: cannot encode a ${typeof value}`);
}

/** The schedule as stored in the ledger meta `schedule`: its canonical JSON. */
export function scheduleToJson(schedule: Schedule): string {
  return canonicalJson(schedule);
}

/** sha256 (lower-case hex, 64 characters) of the schedule's canonical JSON (results.json `scheduleDigest`). */
export function scheduleDigest(schedule: Schedule): string {
  return createHash('sha256').update(scheduleToJson(schedule)).digest('hex');
}

/**
 * A short label of a target, as the ledger's faults.target holds it: `leader`, `active:sync3/2`,
 * `replica:async3/0`, `node:n1`, `random`, `catching-up`, `failback`, `same:#3`,
 * `active-over:#3`, `active-of:#3`.
 */
export function describeTarget(t: FaultTarget): string {
  switch (t.role) {
    case 'leader':
    case 'random':
    case 'catching-up':
    case 'failback':
    case 'outside':
    case 'member':
      return t.role;
    case 'node':
      return `node:${t.node}`;
    case 'active':
    case 'replica':
    case 'heir':
      return `${t.role}:${t.store}/${t.partition}`;
    case 'same':
    case 'active-over':
    case 'active-of':
      return `${t.role}:#${t.fault}`;
    case 'preferred':
      return `preferred:${t.store}/${t.partition}`;
    case 'bound':
      return `bound:${t.name}`;
  }
}
