/**
 * The outcome rules of the Redis client (ioredis 5) for the adapter's write script (issue 15):
 * `fail` only when the write surely was not applied, `info` when it may have been.
 *
 * - Error replies that Redis gives before running a `#!lua` script, or instead of running it:
 *   READONLY (a replica), NOREPLICAS (min-replicas-to-write not met), MASTERDOWN, LOADING, BUSY
 *   (another script runs), NOSCRIPT (EVALSHA of an unknown script), OOM, NOAUTH, WRONGTYPE: fail.
 * - ioredis refusing to send: "Stream isn't writeable and enableOfflineQueue options is false"
 *   (not connected, offline queue off): fail. The adapter's own MasterUnconfirmed (it would not
 *   send to a master Sentinel does not name): fail.
 * - "Command timed out", "Connection is closed.", MaxRetriesPerRequestError, socket errors, any
 *   other error reply (an `ERR` from inside a script may come after a write), anything unknown: info.
 */
import type { ErrorOutcome } from '../target.js';

/** Error-reply codes (the reply's first word) that mean the command did not run. */
const REFUSED_CODES = new Map<string, string>([
  ['READONLY', 'READONLY'],
  ['NOREPLICAS', 'NOREPLICAS'],
  ['MASTERDOWN', 'MASTERDOWN'],
  ['LOADING', 'LOADING'],
  ['BUSY', 'BUSY'],
  ['NOSCRIPT', 'NOSCRIPT'],
  ['OOM', 'OOM'],
  ['NOAUTH', 'NOAUTH'],
  ['WRONGTYPE', 'WRONGTYPE'],
]);

/** The adapter's status when it sent nothing because no Sentinel confirmed the connected master. */
export const MASTER_UNCONFIRMED = 'MasterUnconfirmed';

/** The outcome of an error a Redis write met (pure). */
export function classifyRedisError(error: unknown): ErrorOutcome {
  if (!(error instanceof Error)) return { outcome: 'info', status: 'Error' };
  const msg = error.message;
  if (error.name === 'ReplyError') {
    const code = msg.split(/\s/, 1)[0];
    const refused = REFUSED_CODES.get(code);
    if (refused) return { outcome: 'fail', status: refused };
    return { outcome: 'info', status: code && /^[A-Z]+$/.test(code) ? code : 'ReplyError' };
  }
  if (msg.startsWith("Stream isn't writeable")) return { outcome: 'fail', status: 'NotConnected' };
  if (msg === MASTER_UNCONFIRMED) return { outcome: 'fail', status: MASTER_UNCONFIRMED };
  if (msg === 'Command timed out') return { outcome: 'info', status: 'Timeout' };
  if (msg === 'Connection is closed.') return { outcome: 'info', status: 'ConnectionClosed' };
  if (error.name === 'MaxRetriesPerRequestError') return { outcome: 'info', status: 'MaxRetries' };
  const code = (error as NodeJS.ErrnoException).code;
  return { outcome: 'info', status: typeof code === 'string' ? code : error.name || 'Error' };
}
