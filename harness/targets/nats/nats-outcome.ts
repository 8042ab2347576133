/**
 * The outcome rules of the NATS JetStream client (`nats` 2.29, nats.js) for a publish with
 * acknowledgement: which errors mean "definitely not stored" (`fail`) and which leave the publish
 * indeterminate (`info`). The rule is the harness's (DESIGN.md §4): `fail` only when the message
 * surely never entered the stream; when unsure, `info` (a wrong `fail` hides a loss).
 *
 * Sources: nats.js `ErrorCode` and `checkJsErrorCode` (jetstream/jsutil); nats-server 2.9
 * (server/jetstream_cluster.go `processClusteredInboundMsg`, server/stream.go
 * `processJetStreamMsg`): a stream's subjects are subscribed by its leader only, and a PubAck, or an
 * error in its place, is sent by the leader after it applied (or refused) the message.
 * - `503` without a JetStream API error: "no responders", nobody subscribed to the subject (the
 *   stream has no leader at that instant): nothing received the message: `fail`, and safe to retry;
 * - a JetStream API error in the response (`api_error`, e.g. 10060 expected stream, 10071 wrong
 *   last sequence, 503 JetStream temporarily unavailable): the leader refused the message and
 *   stored nothing: `fail`;
 * - `TIMEOUT`: the request may have been stored and its PubAck lost, or be stored later (a
 *   message nats.js buffered while reconnecting is sent after the reconnect): `info`, retried with
 *   the same `Nats-Msg-Id` (the stream drops a repeat inside its duplicate window);
 * - `CONNECTION_CLOSED`, `CANCELLED`, `DISCONNECT` and anything else: `info`.
 */
import type { ErrorOutcome } from '../target.js';

/** What the rules read of an error: nats.js `NatsError` has `code` and, for JetStream API errors, `api_error`. */
interface NatsLikeError {
  code?: unknown;
  api_error?: { code?: unknown; err_code?: unknown; description?: unknown };
}

/** The named indeterminate codes (status names only; the outcome is info). */
const NAMED_INFO: ReadonlyMap<string, string> = new Map([
  ['TIMEOUT', 'Timeout'],
  ['CONNECTION_CLOSED', 'ConnectionClosed'],
  ['CANCELLED', 'Cancelled'],
  ['DISCONNECT', 'Disconnect'],
  ['CONNECTION_DRAINING', 'ConnectionDraining'],
]);

/**
 * The outcome of an error a JetStream publish met (pure). A non-object is info (`Error`).
 * Status names: `NoResponders`, `JS<err_code>` (e.g. `JS10060`; `JSError` when the server gave no
 * err_code), `Timeout`, `ConnectionClosed`, `Cancelled`, `Disconnect`, `ConnectionDraining`, else
 * the error's code or `Error`.
 */
export function classifyNatsError(error: unknown): ErrorOutcome {
  if (error === null || typeof error !== 'object') return { outcome: 'info', status: 'Error' };
  const e = error as NatsLikeError;
  if (e.api_error !== undefined && e.api_error !== null && typeof e.api_error === 'object') {
    const ec = e.api_error.err_code;
    return { outcome: 'fail', status: typeof ec === 'number' && Number.isInteger(ec) ? `JS${ec}` : 'JSError' };
  }
  const code = typeof e.code === 'string' ? e.code : null;
  if (code === '503') return { outcome: 'fail', status: 'NoResponders' };
  const named = code === null ? undefined : NAMED_INFO.get(code);
  if (named !== undefined) return { outcome: 'info', status: named };
  return { outcome: 'info', status: code !== null && /^[A-Za-z0-9_]{1,40}$/.test(code) ? code : 'Error' };
}

/** Outcomes after which the adapter tries again (same Nats-Msg-Id) while its deadline allows. */
export function natsRetryable(o: ErrorOutcome): boolean {
  return o.status === 'NoResponders' || o.status === 'Timeout';
}
