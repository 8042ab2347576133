/**
 * The outcome rules of the etcd v3 client (issue 15): which errors of a write mean "definitely not
 * applied" (`fail`) and which leave it indeterminate (`info`). The rule of thumb is Jepsen's: a
 * write is `fail` only when it surely never entered the Raft log; anything that may have been
 * proposed (timeouts, a lost connection, a stopping server, an error we do not know) is `info`.
 *
 * Sources (etcd 3.4 server, etcdserver/v3_server.go and api/v3rpc/rpctypes; grpc-js):
 * - `No connection established`: grpc-js failed the call while picking a connection (the channel
 *   was in TRANSIENT_FAILURE), before anything was sent;
 * - `raft proposal dropped`: raft refused the proposal (no leader known), nothing appended;
 * - `etcdserver: no leader`, `too many requests`, `request is too large`, `not capable`,
 *   `mvcc: database space exceeded` / `no space`: refused before proposing, or not applied;
 * - `request timed out` (all variants), `server stopped`, `leader changed`, DEADLINE_EXCEEDED,
 *   CANCELLED, other UNAVAILABLE, UNKNOWN, INTERNAL: the proposal may be committed: `info`.
 */
import type { ErrorOutcome } from '../target.js';

/** Definite failures: a marker in the error's message and the status name the ledger records. */
const DEFINITE: ReadonlyArray<readonly [string, string]> = [
  ['No connection established', 'NoConnection'],
  ['raft proposal dropped', 'ProposalDropped'],
  ['etcdserver: no leader', 'NoLeader'],
  ['etcdserver: too many requests', 'TooManyRequests'],
  ['etcdserver: request is too large', 'RequestTooLarge'],
  ['etcdserver: not capable', 'NotCapable'],
  ['database space exceeded', 'NoSpace'],
  ['etcdserver: no space', 'NoSpace'],
];

/** Indeterminate errors with a name of their own (status names only; the outcome is info). */
const NAMED_INFO: ReadonlyArray<readonly [RegExp, string]> = [
  [/DEADLINE_EXCEEDED|deadline exceeded/i, 'DeadlineExceeded'],
  [/request timed out/, 'RequestTimedOut'],
  [/server stopped/, 'ServerStopped'],
  [/leader changed/, 'LeaderChanged'],
  [/CANCELLED/, 'Cancelled'],
  [/UNAVAILABLE/, 'Unavailable'],
];

/**
 * The outcome of an error an etcd write met (pure). `ClientClosedError` (the adapter was closed
 * before the call started) is a definite failure; a non-Error value is info.
 */
export function classifyEtcdError(error: unknown): ErrorOutcome {
  if (!(error instanceof Error)) return { outcome: 'info', status: 'Error' };
  if (error.name === 'ClientClosedError') return { outcome: 'fail', status: 'ClientClosed' };
  const msg = error.message;
  for (const [marker, status] of DEFINITE) if (msg.includes(marker)) return { outcome: 'fail', status };
  for (const [re, status] of NAMED_INFO) if (re.test(msg)) return { outcome: 'info', status };
  return { outcome: 'info', status: error.name && error.name !== 'Error' ? error.name : 'Error' };
}

/** Errors after which another member may be tried: the call surely never left the client. */
export function etcdNotSent(o: ErrorOutcome): boolean {
  return o.status === 'NoConnection';
}
