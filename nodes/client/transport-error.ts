/**
 * Typed transport failures of the Zaris client (seed 000, "The same exception path exists for
 * the transport-level failures that ownership churn also throws off").
 *
 * The connection layer throws a {@link TransportError} for every failure below the status
 * vocabulary: the request never got a status back. The retry loop refreshes the partition map
 * and retries on every kind; any other thrown value is not a TransportError and is rethrown at
 * once (seed 000, "a genuinely non-retryable exception ... is rethrown immediately").
 */

/**
 * Which transport failure happened (seed 000 names PartitionUnavailable, NodeUnavailable,
 * Transport, Socket and Timeout; ConnectRefused is the "never sent" connect failure).
 * - `PartitionUnavailable`: no node of the partition map can take the key's partition right now.
 * - `NodeUnavailable`: the chosen node is known down or its connection is closed.
 * - `Transport`: the connection failed mid-request (reset, framing error, closed while waiting).
 * - `Socket`: an OS socket error (EPIPE, ECONNRESET, EHOSTUNREACH ...).
 * - `Timeout`: no response within the per-request time.
 * - `ConnectRefused`: the TCP connect was refused; nothing was written.
 */
export type TransportErrorKind =
  | 'PartitionUnavailable'
  | 'NodeUnavailable'
  | 'Transport'
  | 'Socket'
  | 'Timeout'
  | 'ConnectRefused';

/** Every {@link TransportErrorKind}, in declaration order. */
export const TRANSPORT_ERROR_KINDS: readonly TransportErrorKind[] = Object.freeze([
  'PartitionUnavailable',
  'NodeUnavailable',
  'Transport',
  'Socket',
  'Timeout',
  'ConnectRefused',
] as const);

/**
 * Whether a kind, raised with no further information, may have had its request written:
 * true for Transport, Socket and Timeout (they normally happen while or after the frame was
 * written), false for ConnectRefused (nothing was written) and for PartitionUnavailable /
 * NodeUnavailable (normally raised while choosing a node, before anything was written).
 */
export function defaultMayHaveBeenSent(kind: TransportErrorKind): boolean {
  return kind === 'Transport' || kind === 'Socket' || kind === 'Timeout';
}

/** Options of {@link TransportError}. */
export interface TransportErrorOptions {
  /**
   * Whether the request may have reached the node (the frame was, or may have been, written).
   * Defaults to {@link defaultMayHaveBeenSent}(kind). Must be false for ConnectRefused.
   */
  mayHaveBeenSent?: boolean;
  /** Human message; defaults to a sentence naming the kind. */
  message?: string;
  /** The underlying error (e.g. the Node `SystemError`), kept as `cause`. */
  cause?: unknown;
}

/**
 * A transport failure: the request got no KvStatus back. Retried by the retry loop after a
 * partition map refresh (seed 000). `mayHaveBeenSent` tells the ledger whether the write is
 * indeterminate (`info`) rather than definitely not applied (`fail`) (DESIGN.md §2 "Client").
 *
 * @throws RangeError from the constructor when `kind` is not a TransportErrorKind, or when a
 *   ConnectRefused error is claimed to have been sent.
 */
export class TransportError extends Error {
  override readonly name = 'TransportError';
  /** Which failure happened. */
  readonly kind: TransportErrorKind;
  /** Whether the request may have been written to the node (and so may have been applied). */
  readonly mayHaveBeenSent: boolean;

  constructor(kind: TransportErrorKind, options: TransportErrorOptions = {}) {
    if (!(TRANSPORT_ERROR_KINDS as readonly string[]).includes(kind)) {
      throw new RangeError(`unknown transport error kind ${JSON.stringify(kind)}`);
    }
    const mayHaveBeenSent = options.mayHaveBeenSent ?? defaultMayHaveBeenSent(kind);
    if (kind === 'ConnectRefused' && mayHaveBeenSent) {
      throw new RangeError('a ConnectRefused transport error cannot have been sent');
    }
    super(
      options.message ?? `transport failure: ${kind}${mayHaveBeenSent ? ' (request may have been sent)' : ''}`,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.kind = kind;
    this.mayHaveBeenSent = mayHaveBeenSent;
  }
}

/** True when `e` is a {@link TransportError} (the retry loop's test for "retry after refresh"). */
export function isTransportError(e: unknown): e is TransportError {
  return e instanceof TransportError;
}
