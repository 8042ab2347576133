/**
 * Whose error is it (DESIGN.md §5 exit codes; issue 22): an error of the world outside the harness
 * (a runtime, a target, the Docker engine) ends a run INCONCLUSIVE with the error as the reason,
 * after a bounded retry where it is transient; a programming error of the harness ends it with
 * exit 3. This module draws that line; fault-tolerant-runtime.ts applies it to every runtime call.
 *
 * The rules:
 * - a harness bug is a programming error: TypeError, ReferenceError, SyntaxError, RangeError,
 *   EvalError or an assertion (`ERR_ASSERTION`), wherever it was thrown; nothing else is one;
 * - a {@link WorldError} is what a runtime, target or engine call failed with, as the
 *   fault-tolerant runtime (or a cluster start that never came up) rethrows it; every other error
 *   that reaches the end of a run is treated as a harness bug;
 * - transient (worth a retry): see {@link isTransientError}.
 */

/** Where a world error came from: the runtime (processes, iptables), the target's nodes, the Docker engine. */
export type WorldSource = 'runtime' | 'target' | 'engine';

/** What a {@link WorldError} says about the failed call. */
export interface WorldErrorInfo {
  source: WorldSource;
  /** The call that failed, as a phrase: `partition`, `restart n2`, `cluster start`. */
  op: string;
  /** Attempts made (1 = not retried). */
  attempts: number;
  /** The last attempt's error was transient (the retries ran out), not a permanent refusal. */
  transient: boolean;
  /** The error of the last attempt. */
  cause?: unknown;
}

/**
 * An error of the world outside the harness: a runtime, target or engine call that failed for
 * good (permanently, or transiently on every attempt). The message is one line:
 * `<op>: <the last error's first line>[ (N attempts)]`. A run that meets one ends INCONCLUSIVE.
 */
export class WorldError extends Error {
  readonly source: WorldSource;
  readonly op: string;
  readonly attempts: number;
  readonly transient: boolean;

  constructor(message: string, info: WorldErrorInfo) {
    super(message, info.cause === undefined ? undefined : { cause: info.cause });
    this.name = 'WorldError';
    this.source = info.source;
    this.op = info.op;
    this.attempts = info.attempts;
    this.transient = info.transient;
  }
}

/** Is `e` a {@link WorldError} (also across module copies: by name)? */
export function isWorldError(e: unknown): e is WorldError {
  return e instanceof WorldError || (e instanceof Error && e.name === 'WorldError' && typeof (e as Partial<WorldError>).op === 'string');
}

const PROGRAMMING_ERRORS = new Set(['TypeError', 'ReferenceError', 'SyntaxError', 'RangeError', 'EvalError', 'AssertionError']);

/**
 * Is `e` a programming error of the harness (a bug: exit 3), never retried and never blamed on
 * the world? TypeError, ReferenceError, SyntaxError, RangeError, EvalError, or a node:assert failure.
 */
export function isHarnessBug(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  return PROGRAMMING_ERRORS.has(e.name) || (e as NodeJS.ErrnoException).code === 'ERR_ASSERTION';
}

/** Socket and process error codes of a call that may well succeed when made again. */
const TRANSIENT_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EAI_AGAIN', 'EAGAIN', 'EBUSY', 'ENOTCONN', 'ESOCKETTIMEDOUT', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT']);

/**
 * Messages of failures that a second attempt usually does not meet (each seen in the wild):
 * - runc's exec race under load: `OCI runtime exec failed: exec failed: unable to start container
 *   process: read init-p: connection reset by peer` (docker exec exits 126);
 * - the engine's socket dropped or refused: `socket hang up`, `connection reset by peer`,
 *   `Cannot connect to the Docker daemon`, `unexpected EOF`;
 * - the engine answering 5xx: dockerode's `(HTTP code 500) server error - ...`, `(HTTP code 503) ...`;
 * - a call that timed out (execa's `timed out after`, an exec timeout, `i/o timeout`,
 *   `context deadline exceeded`);
 * - iptables waiting on the xtables lock or a kernel busy: `Resource temporarily unavailable`,
 *   `Another app is currently holding the xtables lock`.
 */
const TRANSIENT_MESSAGE =
  /read init-p|connection reset by peer|OCI runtime (exec|start) failed|socket hang up|Cannot connect to the Docker daemon|\(HTTP code 5\d\d\)|timed? ?out|i\/o timeout|context deadline exceeded|Resource temporarily unavailable|xtables lock|unexpected EOF|\bECONNRESET\b|\bEPIPE\b|\bETIMEDOUT\b|\bECONNREFUSED\b/i;

/**
 * Is `e` transient: a runtime, target or engine failure a second attempt of the same call usually
 * does not meet? True for a socket error code ({@link TRANSIENT_CODES}), an engine answer 5xx
 * (`statusCode` >= 500, dockerode), an execa timeout (`timedOut`), or a message naming one of
 * the failures listed at {@link TRANSIENT_MESSAGE} (also inside a wrapped message such as
 * `docker runtime: partition in n1 failed (exit 126): OCI runtime exec failed: ...`). Never for a
 * harness bug ({@link isHarnessBug}) or a {@link WorldError} (its retries are over).
 */
export function isTransientError(e: unknown): boolean {
  if (!(e instanceof Error) || isHarnessBug(e) || isWorldError(e)) return false;
  const x = e as Error & { code?: unknown; statusCode?: unknown; timedOut?: unknown };
  if (typeof x.code === 'string' && TRANSIENT_CODES.has(x.code)) return true;
  if (typeof x.statusCode === 'number' && x.statusCode >= 500 && x.statusCode <= 599) return true;
  if (x.timedOut === true) return true;
  return TRANSIENT_MESSAGE.test(e.message);
}

/** The first line of an error's message (its text when it is not an Error). */
export function firstLine(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  return text.split('\n')[0].trim();
}

/** Does the error come from the Docker engine (its HTTP answer or its socket)? */
function fromEngine(e: unknown): boolean {
  const x = e as { statusCode?: unknown; message?: unknown };
  return typeof x?.statusCode === 'number' || /HTTP code \d{3}|docker\.sock|Docker daemon/i.test(String(x?.message ?? ''));
}

/**
 * Wraps the final error of a runtime or target call as a {@link WorldError} (`source` becomes
 * `engine` when the error is the Docker engine's own answer). A harness bug is returned as it is.
 */
export function worldErrorOf(e: unknown, info: Omit<WorldErrorInfo, 'cause' | 'transient'>): unknown {
  if (isHarnessBug(e) || isWorldError(e)) return e;
  const transient = isTransientError(e);
  const tries = info.attempts > 1 ? ` (${info.attempts} attempts)` : '';
  return new WorldError(`${info.op}: ${firstLine(e)}${tries}`, { ...info, source: info.source === 'runtime' && fromEngine(e) ? 'engine' : info.source, transient, cause: e });
}

/**
 * The one-line reason a run ended INCONCLUSIVE for a world error (results.json
 * `inconclusiveReason`, the report's banner): `runtime error: <op>: <message>`, `target error: ...`,
 * `Docker engine error: ...`.
 */
export function worldErrorReason(e: WorldError): string {
  const what = e.source === 'engine' ? 'Docker engine error' : `${e.source} error`;
  return `${what}: ${firstLine(e)}`;
}
