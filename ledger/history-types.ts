/**
 * The neutral history format's shapes (shared/cases/history-format.md): the version tags, the
 * records of a run (stores, partitions, faults, ownership samples, writes and their acks, final
 * reads, reads, stalls) and the error a bad history is reported by. Types and constant lists only;
 * reading a history is history-validate.ts. Times are milliseconds since the run started.
 */
import type { Contract } from './contract.js';

/** The `format` tag of a version-1 history. */
export const HISTORY_FORMAT_V1 = 'zaris-history/1';
/** The `format` tag of a version-2 history (the one `export` writes). */
export const HISTORY_FORMAT_V2 = 'zaris-history/2';
/** The format tags this code reads. */
export type HistoryFormat = typeof HISTORY_FORMAT_V1 | typeof HISTORY_FORMAT_V2;
/** The format `export` writes. */
export const HISTORY_FORMAT: HistoryFormat = HISTORY_FORMAT_V2;

/** put, cas (put with ifMatchVersion), create (put with ifAbsent), delete. */
export type WriteOp = 'put' | 'cas' | 'create' | 'delete';
/** Jepsen's outcomes: ok (acknowledged), fail (definitely not applied), info (indeterminate). */
export type Outcome = 'ok' | 'fail' | 'info';
/**
 * kill and stop lose the node's memory; pause and partition do not. v2 extension kinds (the
 * harness's nemesis): `clock` (a node's clock stepped or running fast or slow) and `client-cut`
 * (the harness's client cut from a node while the nodes still reach each other); neither loses
 * memory nor cuts a node off from the others: the rules count them only as faults in effect.
 */
export type FaultKind = 'kill' | 'stop' | 'pause' | 'partition' | 'clock' | 'client-cut';
/** How a store acknowledges writes (DESIGN.md §2 "Replication"). */
export type AckMode = 'sync' | 'async';

/** Every write op, in the order error messages list them. */
export const WRITE_OPS: readonly WriteOp[] = ['put', 'cas', 'create', 'delete'];
/** Every outcome, in the order error messages list them. */
export const OUTCOMES: readonly Outcome[] = ['ok', 'fail', 'info'];
/** The fault kinds of v1, in the order error messages list them. */
export const FAULT_KINDS_V1: readonly FaultKind[] = ['kill', 'stop', 'pause', 'partition'];
/** Every fault kind of v2 (v1's and the extension kinds), in the order error messages list them. */
export const FAULT_KINDS: readonly FaultKind[] = [...FAULT_KINDS_V1, 'clock', 'client-cut'];
/** v2 `run.status`: complete, running (the harness died) or interrupted. */
export type RunStatus = 'complete' | 'running' | 'interrupted';
/** Every run status, in the order error messages list them. */
export const RUN_STATUSES: readonly RunStatus[] = ['complete', 'running', 'interrupted'];
/** v2 extension `reads[].kind`: a single get, one key of a batch get, a probe of one replica. */
export type ReadKind = 'get' | 'getMany' | 'probe';
/** Every read kind, in the order error messages list them. */
export const READ_KINDS: readonly ReadKind[] = ['get', 'getMany', 'probe'];

/** One store (keyspace). */
export interface HistoryStore {
  name: string;
  /** Copies of each partition, >= 1. */
  replicationFactor: number;
  ackMode: AckMode;
}

/** One partition of one store in the partition map at the start of the run. */
export interface HistoryPartition {
  store: string;
  /** 0-based partition index within the store. */
  partition: number;
  /** Node ids holding the partition, preferred primary first. */
  replicas: string[];
}

/** One injected fault. */
export interface HistoryFault {
  id: string;
  kind: FaultKind;
  /** The nodes hit (for `partition`: the nodes cut off from the rest). */
  nodes: string[];
  /** ms since the run started. */
  start: number;
  /** ms; restart (kill/stop), resume (pause) or heal (partition). Absent or null: never ended. */
  end?: number | null;
  /** ms; kill/stop only: when the restarted node was back in sync (it holds nothing before). */
  caughtUp?: number | null;
  /** v2, ms: when the fault had taken effect (the runtime call returned); absent = `start`. */
  effective?: number;
  /** v2, partition faults: the nodes that cannot reach a majority while it lasts (absent: `nodes`). */
  isolated?: string[];
}

/** One runtime-map sample of one partition, as the harness polled it. */
export interface HistoryOwnership {
  /** ms since the run started. */
  t: number;
  store: string;
  partition: number;
  /** The active owner; null when the partition had none (Unavailable). */
  active: string | null;
  epoch: number;
  /** Healthy, Degraded, Recovering, Unavailable (free text: histories from elsewhere may differ). */
  health: string;
  /** The highest op-log revision seen replicated to the in-sync replicas. */
  replicatedRevision: number;
  /** v2: the node whose own committed entry the sample is; absent = the harness's merged view. */
  node?: string;
  /** v2: the in-sync members (the active included); absent = unknown. */
  inSync?: string[];
  /** v2: node -> the last revision that member reported holding; absent = unknown. */
  revisions?: Record<string, number>;
  /** v2: the partition's replicas in the partition map of that moment; absent = `partitions[]`. */
  replicas?: string[];
}

/** What an acknowledged (`ok`) write's response carried. */
export interface HistoryAck {
  /** The node that acknowledged. */
  node: string;
  epoch: number;
  /** The key's version after the write. */
  version: number;
  /** The op-log revision of the write in its segment. */
  revision: number;
  /** What the response said; v2 rules ignore it (the store's configured mode decides). */
  ackMode: AckMode;
  /** v2: for a sync ack, how many in-sync copies (the active included) had applied it. */
  copies?: number;
}

/** One write; a key's writes are ordered by `seq` and never overlap in time. */
export interface HistoryWrite {
  /** The write id: the value a put stores, which a final read names. Unique within its key. */
  id: string;
  store: string;
  key: string;
  partition: number;
  /** 1-based order of the key's writes. */
  seq: number;
  op: WriteOp;
  /** ms: when the write was sent. */
  invoke: number;
  /** ms: when its outcome was known; may be absent or null only for `info`. */
  complete?: number | null;
  outcome: Outcome;
  /** Present exactly when outcome is `ok`. */
  ack?: HistoryAck;
  /** Extension: the last status name the client saw (e.g. "Ok", "Unavailable"). */
  status?: string;
  /** Extension: how many attempts the client made. */
  attempts?: number;
  /** Extension: the client's attempt trace, as text (JSON from the harness). */
  trace?: string;
}

/** The final read of one key after the run healed. */
export interface HistoryFinalRead {
  store: string;
  key: string;
  /** The id of the write whose value was read; null when the key was absent. */
  value: string | null;
  /** true when the final read never succeeded (then `value` is null). */
  unreadable?: boolean;
}

/** v2: one read the workload made during the run (a batch get is one entry per key). */
export interface HistoryRead {
  /** Unique among the history's reads. */
  id: string;
  store: string;
  key: string;
  /** ms: when the read was sent. */
  invoke: number;
  /** ms: when its outcome was known; may be absent only for `info`. */
  complete?: number;
  /** ok: the value is `value`; fail / info: no value. */
  outcome: Outcome;
  /** The node that answered; null when unknown. */
  node: string | null;
  /** The id of the write read; null = absent (always null unless `ok`). */
  value: string | null;
  /** Extension: how the read was made. */
  kind?: ReadKind;
}

/** v2: the run's record (history-format.md v2 `run`). */
export interface HistoryRun {
  status: RunStatus;
  /** Why the harness says the run cannot certify; null when it says nothing. */
  inconclusiveReason: string | null;
  /** The nemesis was allowed past the fault budget. */
  beyondBudget: boolean;
  /** ms: how long the store may keep an acknowledged async write unreplicated when nothing disrupts replication. */
  asyncLagMaxMs: number;
  /** ms: the longest time an owner cut off from a majority may go on acknowledging; absent/null unknown. */
  leaseMs?: number | null;
  /** The deliberate store bug of a self-test run, or null. */
  selfTestBug: string | null;
  /** Extension: the contract the store declares (ledger/contract.ts); absent: the rules to the letter. */
  contract?: Contract;
}

/**
 * A whole history document, v1 or v2. `run` and `reads` are present exactly in v2 (the parser
 * fills `reads` with [] when a v2 file has none); the v2-only fields of faults, samples and acks
 * are kept only from a v2 file (a v1 file is read as v1: they are ignored there).
 */
export interface History {
  format: HistoryFormat;
  /** v2 only. */
  run?: HistoryRun;
  nodes: string[];
  stores: HistoryStore[];
  partitions: HistoryPartition[];
  faults: HistoryFault[];
  ownership: HistoryOwnership[];
  writes: HistoryWrite[];
  /** v2 only. */
  reads?: HistoryRead[];
  finalReads: HistoryFinalRead[];
  /**
   * v2 extension: stretches the harness observed a node not running (silent to its requests, or
   * its own event loop blocked at least 500 ms; ledger/node-stalls.ts), closed [start, end] in ms.
   * The replication-lag rule does not judge a window one of them meets. Absent: none observed.
   */
  stalls?: HistoryStall[];
}

/** v2 extension `stalls[]`: a node observed not running over [start, end], ms. */
export interface HistoryStall {
  node: string;
  start: number;
  end: number;
}

/** A history that is not valid; the message is one line naming the bad field. */
export class HistoryFormatError extends Error {
  override name = 'HistoryFormatError';
}
