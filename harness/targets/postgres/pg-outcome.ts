/**
 * The outcome rules of the PostgreSQL client (pg 8) for the adapter's write, one autocommit
 * upsert: `fail` only when the write surely was not applied, `info` when it may have been.
 *
 * - No connection (the pool could not connect, the adapter knew no leader): nothing was sent: fail.
 * - An ERROR the server returned for the statement (SQLSTATE, severity ERROR): the statement is
 *   its own transaction and an error aborts it before its commit: fail. Among them 25006
 *   (read_only_sql_transaction: a replica, or a primary Patroni demoted), 57P03 (starting up),
 *   53300 (too many connections), 40001 / 40P01.
 * - A FATAL or PANIC (57P01 administrator shutdown, 57P02 crash shutdown, ...): the server ends
 *   the connection, possibly after the commit (PostgreSQL ends a backend waiting for its
 *   synchronous standby with "the transaction has already committed locally"): info.
 * - The connection lost mid-statement ("Connection terminated unexpectedly", ECONNRESET), the
 *   adapter's query timeout, anything unknown: info.
 */
import type { ErrorOutcome } from '../target.js';

/** The adapter's status when it knew no leader to send to (nothing was sent). */
export const NO_LEADER = 'NoLeader';
/** The adapter's status when the connection to the leader could not be made (nothing was sent). */
export const NO_CONNECTION = 'NoConnection';

/** Marks an error met before the statement was sent (connecting), so it is classed fail. */
export class NotSentError extends Error {
  constructor(
    readonly status: string,
    readonly reason?: unknown,
  ) {
    super(status);
    this.name = 'NotSentError';
  }
}

const NAMED: Record<string, string> = {
  '25006': 'ReadOnly',
  '57P03': 'CannotConnectNow',
  '53300': 'TooManyConnections',
  '40001': 'SerializationFailure',
  '40P01': 'Deadlock',
  '57P01': 'AdminShutdown',
  '57P02': 'CrashShutdown',
  '57014': 'QueryCanceled',
};

/** The outcome of an error a PostgreSQL write met (pure). */
export function classifyPgError(error: unknown): ErrorOutcome {
  if (error instanceof NotSentError) return { outcome: 'fail', status: error.status };
  if (!(error instanceof Error)) return { outcome: 'info', status: 'Error' };
  const e = error as Error & { code?: unknown; severity?: unknown };
  if (typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code) && typeof e.severity === 'string') {
    const status = NAMED[e.code] ?? `SQLSTATE-${e.code}`;
    return { outcome: e.severity === 'ERROR' ? 'fail' : 'info', status };
  }
  if (e.message === 'Query read timeout') return { outcome: 'info', status: 'Timeout' };
  if (/Connection terminated/.test(e.message)) return { outcome: 'info', status: 'ConnectionLost' };
  if (typeof e.code === 'string') return { outcome: 'info', status: e.code };
  return { outcome: 'info', status: e.name || 'Error' };
}
