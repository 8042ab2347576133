/**
 * The ledger the harness writes during a run (DESIGN.md §4): the Ledger interface, the rows it
 * records, and the no-op ledger (SQLite: sqlite-ledger.ts; on a worker thread: worker-ledger.ts).
 */
import type { WriteInfo } from '../nodes/client-protocol.js';

/** A recorded invoke: its write number, and the commit to wait for before sending (shared by a batch). */
export interface Invoked {
  w: number;
  committed: Promise<void>;
}

/** A write's operation as the ledger names it. */
export type WriteOp = 'put' | 'cas' | 'create' | 'delete';
/** Jepsen's outcomes: acknowledged, definitely not applied, indeterminate. */
export type Outcome = 'ok' | 'fail' | 'info';

/** What the harness learned when a write completed. */
export interface WriteCompletion {
  completeMs: number;
  outcome: Outcome;
  /** Final status name (KvStatus name or transport error kind). */
  status: string;
  attempts: number;
  /**
   * Present on ok only (DESIGN.md §2: what an Ok write response carries). `copies`: how many
   * copies held the write when it was acknowledged, the active included (CONTRACT.md, store).
   */
  ack?: Omit<WriteInfo, 'partition' | 'copies'> & { copies?: number };
  /** JSON attempt trace, stored when there was more than one attempt or no ack. */
  trace?: string;
}

/** A fault as recorded before it takes effect (DESIGN.md §4). */
export interface FaultStart {
  /** kill, stop, pause, partition; clock and client-cut (issue 13; history-format.md counts them only where a rule says "any kind"). */
  kind: 'kill' | 'stop' | 'pause' | 'partition' | 'clock' | 'client-cut';
  nodes: string[];
  /** Partition faults: the nodes that cannot reach a majority of the nodes while it lasts. */
  isolated?: string[];
  target?: string;
  plannedMs?: number;
  startMs: number;
  detail?: unknown;
}

/**
 * One runtime-map sample row (history-format.md v2 `ownership[]`). Without `node` (or with null)
 * it is the harness's merged view; with a node, that node's own committed entry.
 */
export interface SampleRow {
  store: string;
  partition: number;
  active: string | null;
  epoch: number;
  health: string;
  replicatedRevision: number;
  /** The node whose own committed entry this row is; null/absent = the merged view. */
  node?: string | null;
  /** The partition's in-sync members (the active included); absent = unknown. */
  inSync?: string[];
  /** node -> the last revision that node reported holding; absent = unknown. */
  revisions?: Record<string, number>;
  /** The partition's replicas in the partition map of that moment; absent = as at the start. */
  replicas?: string[];
}

/**
 * One node's line of a runtime-map sample (issue 11, stall findings): did it answer the
 * harness's metadata request, and its own event-loop delay (metadata `loop`, ms; null when it did
 * not answer or does not measure).
 */
export interface NodeSampleRow {
  node: string;
  answered: boolean;
  loopMaxMs: number | null;
  loopP99Ms: number | null;
}

/** How a read was made (history-format.ts: a single get, one key of a batch get, a probe of one replica). */
export type { ReadKind } from './history-format.js';
import type { ReadKind } from './history-format.js';

/**
 * One read the workload made during the run (history-format.md v2 `reads[]`; CONTRACT.md
 * "Ledger"). A batch get is one record per key, sharing invokeMs and completeMs.
 */
export interface ReadRecord {
  keyId: number;
  /** ms: when the read was sent. */
  invokeMs: number;
  /** ms: when its outcome was known. */
  completeMs: number;
  /** ok: the value is `value`; fail / info: no value. */
  outcome: Outcome;
  /** The node that answered (null: unknown / none). */
  node: string | null;
  /** The write id read; null = the key was absent (and always null unless outcome is ok). */
  value: string | null;
  kind: ReadKind;
}

/** One per-second figure row (stats table). */
export interface StatsRow {
  tS: number;
  store: string;
  acked: number;
  failed: number;
  indeterminate: number;
  p50Ms: number | null;
  p95Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
  statuses: Record<string, number>;
}

/** A key the workload will write. */
export interface KeyRow {
  keyId: number;
  store: string;
  key: string;
  partition: number;
  writer: number;
}

/**
 * The ledger the harness writes during a run (DESIGN.md §4). Two implementations: the SQLite
 * ledger and a no-op one (the benchmark's "ledger off" side).
 */
export interface Ledger {
  setMeta(key: string, value: string): void;
  registerTopology(t: {
    nodes: Array<{ id: string; host: string; clientPort: number; clusterPort: number; preferredPrimary: boolean }>;
    stores: Array<{ name: string; replicationFactor: number; ackMode: string; segments: number }>;
    partitions: Array<{ store: string; partition: number; replicas: string[] }>;
  }): void;
  registerKeys(keys: KeyRow[]): void;
  /** Queues one new key (committed with the batch that holds its first invoke, or before). */
  addKey(k: KeyRow): void;
  /** Keys with key_id > afterKeyId, in key order, at most `limit` (paging; [] when the ledger is off). */
  keysPage(afterKeyId: number, limit: number): KeyRow[];
  /**
   * Records a write before it is sent: returns the write's number w (which its completion names)
   * and a promise that resolves once the row is committed (durable). The write must not be sent
   * before it resolves; it rejects when the commit failed (nothing of that batch is recorded).
   */
  invoke(keyId: number, seq: number, op: WriteOp, invokeMs: number): Invoked;
  /** Records the outcome of write w (group-committed within ~50 ms). */
  complete(w: number, c: WriteCompletion): void;
  /**
   * Records a read the workload made (non-blocking, packed like complete(); group-committed
   * within ~50 ms). Reads are moved into the clustered `reads` table by the seal.
   */
  read(r: ReadRecord): void;
  /** Moves the appended writes into the clustered `writes` table (end of run). */
  seal(): void;
  /** Records a fault start; committed before it returns (so before the fault takes effect). Returns its id. */
  faultStart(f: FaultStart): number;
  /** Records when the runtime call applying a fault returned (the fault surely in effect). */
  faultEffective(id: number, ms: number): void;
  /**
   * Records the end of a fault (restart, resume, heal); committed before it returns. `null`
   * removes a recorded end: the undo failed and the fault is in effect again (it ends later).
   */
  faultEnd(id: number, endMs: number | null): void;
  /** Records when a restarted node was back in sync. */
  faultCaughtUp(id: number, ms: number): void;
  sample(tMs: number, rows: SampleRow[]): void;
  /** Records, per node, whether it answered the sample's metadata request and its event-loop delay. */
  nodeSample(tMs: number, rows: NodeSampleRow[]): void;
  finalRead(keyId: number, value: string | null, resolved: { keyId: number; seq: number } | null, unreadable: boolean, tMs: number): void;
  stats(row: StatsRow): void;
  event(tMs: number, kind: string, detail?: unknown): void;
  /** Commits everything queued. */
  flush(): void;
  close(): void;
}

/** The no-op ledger: the "ledger off" side of the benchmark's on/off ratio. */
export class NullLedger implements Ledger {
  setMeta(): void {}
  registerTopology(): void {}
  registerKeys(): void {}
  addKey(): void {}
  keysPage(): KeyRow[] {
    return [];
  }
  private w = 0;
  private static readonly done = Promise.resolve();
  invoke(): Invoked {
    return { w: ++this.w, committed: NullLedger.done };
  }
  seal(): void {}
  complete(): void {}
  read(): void {}
  faultStart(): number {
    return 0;
  }
  faultEnd(): void {}
  faultEffective(): void {}
  faultCaughtUp(): void {}
  sample(): void {}
  nodeSample(): void {}
  finalRead(): void {}
  stats(): void {}
  event(): void {}
  flush(): void {}
  close(): void {}
}
