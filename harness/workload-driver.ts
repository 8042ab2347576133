/**
 * The seam between the workload and the client under test (DESIGN.md §3 "Workload", "Targets"):
 * the workload decides what to write and read and records it in the ledger; a driver sends it
 * through a store's own client and says what came of it, in the ledger's terms (outcome
 * ok / fail / info, the attempt trace, the ack). Two drivers:
 * - {@link ZarisDriver}: the Zaris client library (seed 000 retries, seed 004 batch gets);
 * - targets/target-driver.ts: any target's client adapter (targets/target.ts `TargetClient`).
 * A driver never throws for the store's or the network's errors: they are outcomes.
 */
import type { AttemptTrace, RetryOutcome } from '../nodes/client/retry-loop.js';
import { TransportError } from '../nodes/client/transport-error.js';
import type { ReadResult, WriteResult, ZarisClient } from '../nodes/client/zaris-client.js';
import { BatchGetIncompleteError, type LongTailRetryResult } from '../nodes/multikey/long-tail-retry.js';
import { kvStatusName, KvStatus } from '../nodes/kv-status.js';
import type { Outcome, WriteCompletion, WriteOp } from '../ledger/ledger-writer.js';

/**
 * One attempt of a write as the ledger's attempt trace stores it (JSON, `writes.trace`): its number,
 * status name (`s`: a KvStatus name, a transport error kind, or a target client's status), the
 * node and epoch it went to, and its start and end on the run clock (ms, 3 decimals). `note`: what
 * the driver could not establish about it, in words (targets only).
 */
export interface TraceAttempt {
  n: number;
  s?: string;
  node?: string | null;
  e?: number;
  t0: number;
  t1: number;
  note?: string;
}

/** The outcome of one write (never thrown). */
export interface DriverWrite {
  outcome: Outcome;
  /** The final status name (the ledger's `status`). */
  status: string;
  /** Present exactly when `outcome` is ok: what the ack named (ledger `WriteCompletion.ack`). */
  ack?: NonNullable<WriteCompletion['ack']>;
  /** Every attempt, in order (at least one). */
  attempts: TraceAttempt[];
  /** A definite failure that says the workload's view of the key was stale (Conflict, NotFound). */
  staleView?: boolean;
}

/** The outcome of one single-key read: ok with a value id (null = absent), else fail / info. */
export interface DriverRead {
  outcome: Outcome;
  node: string | null;
  value: string | null;
  /** The name the per-second statuses count it under, e.g. `get:Ok`, `get:Timeout`. */
  statusName: string;
}

/** A batch read: the keys that were answered (value id or null = absent), and the statuses' name. */
export interface DriverBatch {
  answers: Map<string, { node: string | null; value: string | null }>;
  /** e.g. `getMany:Ok`, `getMany:long-tail-retry`, `getMany:incomplete`. */
  statusName: string;
  /**
   * The Zaris client only (seed 004): the server policy the batch ran under (its canonical table,
   * read before the request, or null when none was published) and the delay it captured (ms, null:
   * no lookup); absent when the request got no answer at all, and for targets.
   */
  policy?: { table: string | null; delayMs: number | null };
}

/** A write the workload asks for: `valueId` is the ledger's write id `w<key_id>.<seq>`. */
export interface DriverWriteRequest {
  store: string;
  key: string;
  op: WriteOp;
  valueId: string;
  /** cas: the version the last ack of the key named. */
  ifMatchVersion: number;
  /** The store's configured ack mode (the ack records it; the verifier never trusts a response's). */
  ackMode: 'sync' | 'async';
}

/** What the workload writes and reads through. */
export interface WorkloadDriver {
  /** Names the client under test for messages, e.g. `zaris client`, `etcd3 1.1.2`. */
  readonly driverName: string;
  write(req: DriverWriteRequest): Promise<DriverWrite>;
  read(store: string, key: string): Promise<DriverRead>;
  readMany(store: string, keys: readonly string[]): Promise<DriverBatch>;
}

/** Is `x` a {@link WorkloadDriver} (rather than a Zaris client)? */
export function isWorkloadDriver(x: unknown): x is WorkloadDriver {
  return typeof (x as WorkloadDriver | null)?.driverName === 'string';
}

/** ms rounded to 3 decimals (the trace's precision). */
export function round3(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}

function errorName(e: unknown): string {
  if (e && typeof e === 'object' && 'kind' in e) return String((e as { kind: string }).kind);
  return e instanceof Error ? e.name : typeof e;
}

/**
 * The value a Zaris read found, when the store answered it: Ok -> the value as text (the write id
 * the workload stored), NotFound -> null (absent); anything else is no answer.
 */
export function zarisReadAnswer(r: ReadResult | undefined): { node: string; value: string | null } | null {
  if (!r) return null;
  if (r.status === KvStatus.Ok) return { node: r.node, value: r.value ? r.value.toString('utf8') : null };
  if (r.status === KvStatus.NotFound) return { node: r.node, value: null };
  return null;
}

/** One Zaris attempt as the trace records it. */
function zarisAttempt(a: AttemptTrace): TraceAttempt {
  return { n: a.n, s: a.status !== undefined ? kvStatusName(a.status) : a.errorKind, node: a.node, e: a.epoch, t0: round3(a.startMs), t1: round3(a.endMs) };
}

/**
 * The Zaris client library as the workload's driver: puts (`ifAbsent` for create, `ifMatchVersion`
 * for cas), deletes, gets and seed 004 batch gets, each under the client's own retry rules; the
 * ledger outcome is the one the client's attempt trace implies (RetryOutcome.ledgerOutcome).
 */
export class ZarisDriver implements WorkloadDriver {
  readonly driverName = 'zaris client';

  constructor(readonly client: ZarisClient) {}

  async write(req: DriverWriteRequest): Promise<DriverWrite> {
    const value = Buffer.from(req.valueId);
    let outcome: RetryOutcome<WriteResult>;
    switch (req.op) {
      case 'create':
        outcome = await this.client.put(req.store, req.key, value, { ifAbsent: true });
        break;
      case 'cas':
        outcome = await this.client.put(req.store, req.key, value, { ifMatchVersion: req.ifMatchVersion });
        break;
      case 'delete':
        outcome = await this.client.delete(req.store, req.key);
        break;
      default:
        outcome = await this.client.put(req.store, req.key, value);
    }
    const r = outcome.result;
    const ledgerOutcome = outcome.ledgerOutcome;
    return {
      outcome: ledgerOutcome,
      status: r ? kvStatusName(r.status) : errorName(outcome.error),
      ...(ledgerOutcome === 'ok' && r ? { ack: { node: r.info.node, epoch: r.info.epoch, version: r.info.version, revision: r.info.revision, ackMode: r.info.ackMode, copies: r.info.copies } } : {}),
      attempts: outcome.attempts.map(zarisAttempt),
      ...(ledgerOutcome === 'fail' && r && (r.status === KvStatus.Conflict || r.status === KvStatus.NotFound) ? { staleView: true } : {}),
    };
  }

  async read(store: string, key: string): Promise<DriverRead> {
    const o = await this.client.get(store, key);
    const a = zarisReadAnswer(o.result);
    const statusName = `get:${o.result ? kvStatusName(o.result.status) : errorName(o.error)}`;
    if (a) return { outcome: 'ok', node: a.node, value: a.value, statusName };
    return { outcome: o.result === undefined && o.error instanceof TransportError ? 'info' : 'fail', node: o.result?.node ?? null, value: null, statusName };
  }

  async readMany(store: string, keys: readonly string[]): Promise<DriverBatch> {
    const table = this.client.policyState(store).serverPolicy()?.toString() ?? null;
    let res: LongTailRetryResult<ReadResult> | null = null;
    try {
      res = await this.client.getMany(store, [...keys]);
    } catch (e) {
      if (e instanceof BatchGetIncompleteError) res = (e as BatchGetIncompleteError<ReadResult>).partial;
    }
    const answers = new Map<string, { node: string | null; value: string | null }>();
    for (const k of keys) {
      const got = res?.answers.get(k);
      const a = got ? zarisReadAnswer(got.value) : null;
      if (a) answers.set(k, a);
    }
    const statusName = answers.size < keys.length ? 'getMany:incomplete' : res?.retryFired ? 'getMany:long-tail-retry' : 'getMany:Ok';
    return { answers, statusName, ...(res ? { policy: { table, delayMs: res.delayMs } } : {}) };
  }
}
