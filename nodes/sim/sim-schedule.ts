import { DEFAULT_MAX_FRAME_BYTES, DEFAULT_TIMING, SELF_TEST_BUGS, type ClusterConfig, type SelfTestBug, type StoreConfig, type TimingConfig } from '../cluster-config.js';

/**
 * A fault schedule for the deterministic failover simulation, as plain JSON data: what fast-check
 * generates, what a failing run prints, and what a regression test keeps (sim brief, issue 4).
 * Every time is virtual, in ms.
 */

/**
 * The cluster a schedule runs on:
 * - `n3`: 3 nodes; stores sync3 (RF3 sync), async3 (RF3 async), rf1 (RF1) (DESIGN.md §3 defaults).
 * - `n5`: 5 nodes; stores sync3 (RF3 sync) and async3 (RF3 async).
 * - `n3-rf2`: 3 nodes; stores sync2 (RF2 sync) and async2 (RF2 async).
 * - `n4-spare`: 3 voting nodes and a spare n4 (cluster-config.ts: outside the member set until a
 *   `join`); stores sync3 (RF3 sync), async2 (RF2 async), rf1 (RF1). For membership schedules.
 */
export type ClusterPreset = 'n3' | 'n5' | 'n3-rf2' | 'n4-spare';

/** Every preset, for generators. */
export const CLUSTER_PRESETS: readonly ClusterPreset[] = ['n3', 'n5', 'n3-rf2', 'n4-spare'];

/** Network behaviour (sim brief: delays, drops, reordering across links, FIFO per link). */
export interface NetParams {
  /** One-way delay of a node-to-node message, ms, uniform in [minDelayMs, maxDelayMs]. */
  minDelayMs: number;
  maxDelayMs: number;
  /**
   * Probability (0..1) that sending one node-to-node message resets its connection: the message
   * and everything still queued on that directed link are lost and both ends see the peer go down.
   * This is how a TCP connection loses messages (never one in the middle of a live stream).
   */
  resetProbability: number;
  /** One-way client-to-node delay, ms, uniform in [clientMinDelayMs, clientMaxDelayMs]. */
  clientMinDelayMs: number;
  clientMaxDelayMs: number;
  /**
   * Each directed node-to-node link's own extra delay, ms, fixed for the whole run: uniform in
   * [0, linkSkewMs] (hashed from the seed and the link, so it draws nothing from the run's random
   * stream). Some paths are slower than others, so the replicas of one active lag it by
   * different amounts. Absent: 0.
   */
  linkSkewMs?: number;
}

/** The simulated clients (DESIGN.md §3 "Workload": each key written by one writer, sequentially). */
export interface WorkloadParams {
  /** Writers per store; each owns `keysPerWriter` keys. */
  writersPerStore: number;
  keysPerWriter: number;
  /** Pause between two operations of one writer, ms, uniform in [thinkMinMs, thinkMaxMs]. */
  thinkMinMs: number;
  thinkMaxMs: number;
  /** Fraction (0..1) of operations that are reads (get) rather than writes. */
  readFraction: number;
  /** Fraction (0..1) of writes on a present key that are deletes. */
  deleteFraction: number;
  /** Client attempt budget (seed 000, maxAttempts). */
  maxAttempts: number;
  /** Per-attempt response timeout, ms (a timed-out write is `info`). */
  attemptTimeoutMs: number;
  /** Operation deadline from its first attempt, ms (seed 000, the second bound). */
  deadlineMs: number;
}

/**
 * Kinds of fault (DESIGN.md §3 "Nemesis"):
 * - `crash`: kill -9; the node is restarted (new incarnation, empty memory) after durationMs.
 * - `pause`: SIGSTOP for durationMs (no ticks, inbound messages wait), then SIGCONT.
 * - `isolate`: the target and every other node drop each other's messages.
 * - `isolate-in`: the target drops messages from every other node (one-way grudge).
 * - `isolate-out`: every other node drops the target's messages (one-way grudge).
 * - `split`: majority/minority halves; the minority is the target (and, on 5 nodes, the next node).
 * - `bridge`: the other nodes are split in two halves that only the target still connects.
 * - `strip`: kill every in-sync member of the target partition but one (the survivor property);
 *   they stay down until the final heal. durationMs is ignored.
 * - `link`: the target drops every message from `source` (one directed link cut, a one-way
 *   grudge between two nodes; the certify nemesis's one-way partition). Nothing else changes.
 * - `lag-crash`: an owner failing while its replicas hold different prefixes of its log (issue 12:
 *   the state a promotion must choose in). The heir of the target partition (its first in-sync
 *   member other than the active, in partition-map order: the one a tie goes to) is cut off
 *   (`isolate`) for durationMs; `lagMs` into the cut, while the other replicas still follow the
 *   active, the active crashes, and restarts `downMs` later. Within budget it waits, like a
 *   crash, until every partition is Healthy and nobody is down, and its crash is skipped if that
 *   no longer holds when it is due.
 * - `membership`: an admin request to the leader (issue 14): `op` join (the target node), leave
 *   (the target node) or rebalance; the leader then moves copies (core/migration-driver.ts). Asked
 *   again every POLL_MS while no leader is known, for up to durationMs; a refusal is a skip.
 */
export type FaultKind = 'crash' | 'pause' | 'isolate' | 'isolate-in' | 'isolate-out' | 'split' | 'bridge' | 'strip' | 'link' | 'lag-crash' | 'membership';

/** Every fault kind but `strip` (which only the survivor property uses) and `link` (only the one-way-cut family uses it). */
export const GENERAL_FAULT_KINDS: readonly FaultKind[] = ['crash', 'pause', 'isolate', 'isolate-in', 'isolate-out', 'split', 'bridge'];

/**
 * Whom a fault hits, resolved when it starts:
 * - `node`: the node at this index (mod the node count);
 * - `leader`: the current leader (index 0 when there is none);
 * - `active`: the active owner of the partition at this index (mod the partition count) in the
 *   order of the partition map (store by store); for `strip`, the partition itself;
 * - `other`: an assigned replica of the partition at this index that is neither its active owner
 *   nor the leader (the first such in map order; the first non-active replica when there is none);
 * - `async-active`: the active owner of a partition of an async store (where a deposed owner's
 *   acknowledgements and an owner's unstreamed tail live): the index-th (mod their count) of the
 *   async partitions whose active is up and not the leader (so that a leader outside the fault
 *   replaces it), or of every async partition when there is none; for `lag-crash`, that
 *   partition. On a cluster without an async store, as `active`.
 */
export type FaultTarget = { kind: 'node'; index: number } | { kind: 'leader' } | { kind: 'active'; partition: number } | { kind: 'other'; partition: number } | { kind: 'async-active'; index: number };

/** One fault of a schedule. */
export interface FaultStep {
  /** Start, ms after the workload started. */
  atMs: number;
  kind: FaultKind;
  target: FaultTarget;
  /** How long it lasts, ms (crash: time until the restart). */
  durationMs: number;
  /** strip: index (mod the in-sync count) of the in-sync member that survives. */
  survivor?: number;
  /** link: the node whose messages the target drops, resolved when the fault starts. */
  source?: FaultTarget;
  /**
   * crash, within budget: do not wait for every partition to be Healthy, only for nobody else to
   * be down and the map to name current incarnations (an owner killed while one-way cuts left its
   * partition Degraded is still one failure, inside the contract).
   */
  whileDegraded?: boolean;
  /** lag-crash: ms from the heir's cut to the active's crash (default half of durationMs). */
  lagMs?: number;
  /** lag-crash: ms the crashed active stays down (default 1,000). */
  downMs?: number;
  /** membership: the admin request (join / leave the target node, or rebalance). */
  op?: 'join' | 'leave' | 'rebalance';
}

/**
 * One simulation run, fully determined by these fields.
 * - `budget`: `within` keeps crashes inside the store's contract (a crash only while every
 *   partition is Healthy and no other node is down; held back until then, dropped if the workload
 *   ends first) and checks durability at the end; `beyond` crashes whenever told as long as a
 *   majority of the nodes keeps its memory, and checks the safety invariants only; `amnesia`
 *   crashes whenever told, even a majority at once, and checks only that the cluster comes back
 *   (every partition Healthy and served after the final heal) and the local read/ack rules: no
 *   memory-only store keeps its committed runtime map through the loss of a majority's memory.
 * - `survivorBoundMs`: with a `strip` fault, the time (default 10,000) within which the surviving
 *   in-sync member must serve the partition; the workload phase ends early once it does. A strip
 *   that cannot start early enough for its bound to fit in the workload phase is skipped.
 */
export interface SimSchedule {
  /** Seed of every random choice inside the run (delays, ticks, elections, client choices). */
  seed: number;
  cluster: ClusterPreset;
  budget: 'within' | 'beyond' | 'amnesia';
  /** Length of the workload-and-faults phase, ms. */
  workloadMs: number;
  /** Silence after suspicion before a silent owner is confirmed down, ms (seed 002; 10 s in production). */
  escalationTimeoutMs: number;
  net: NetParams;
  workload: WorkloadParams;
  faults: FaultStep[];
  survivorBoundMs?: number;
  /** Nodes start at random times within this window at boot, ms (default 50). */
  bootStaggerMs?: number;
  /** Every node runs with this deliberate bug (the harness's self-test bugs, cluster-config.ts). */
  selfTestBug?: SelfTestBug;
}

/** Store sets of the presets (segments kept small: snapshots are cheap, keys spread over every partition). */
const PRESET_STORES: Record<ClusterPreset, StoreConfig[]> = {
  n3: [
    { name: 'sync3', replicationFactor: 3, ackMode: 'sync', segments: 12 },
    { name: 'async3', replicationFactor: 3, ackMode: 'async', segments: 12 },
    { name: 'rf1', replicationFactor: 1, ackMode: 'sync', segments: 12 },
  ],
  n5: [
    { name: 'sync3', replicationFactor: 3, ackMode: 'sync', segments: 10 },
    { name: 'async3', replicationFactor: 3, ackMode: 'async', segments: 10 },
  ],
  'n3-rf2': [
    { name: 'sync2', replicationFactor: 2, ackMode: 'sync', segments: 12 },
    { name: 'async2', replicationFactor: 2, ackMode: 'async', segments: 12 },
  ],
  'n4-spare': [
    { name: 'sync3', replicationFactor: 3, ackMode: 'sync', segments: 12 },
    { name: 'async2', replicationFactor: 2, ackMode: 'async', segments: 12 },
    { name: 'rf1', replicationFactor: 1, ackMode: 'sync', segments: 12 },
  ],
};

/** Node count of a preset. */
export function presetNodeCount(p: ClusterPreset): number {
  return p === 'n5' ? 5 : p === 'n4-spare' ? 4 : 3;
}

/**
 * The failover timers of the simulation: DESIGN.md's test timers (seed 002's 10 s escalation cut
 * to `escalationTimeoutMs`), everything else as in {@link DEFAULT_TIMING} but eviction (20 s) and
 * the recovery cooldown (500 ms).
 */
export function simTiming(escalationTimeoutMs: number): TimingConfig {
  return { ...DEFAULT_TIMING, escalationTimeoutMs, evictionTimeoutMs: 20_000, recoveryCooldownMs: 500 };
}

/** The cluster config a schedule runs: nodes n1..nN (addresses are never dialled), the preset's stores. */
export function simClusterConfig(s: Pick<SimSchedule, 'cluster' | 'escalationTimeoutMs' | 'selfTestBug'>): ClusterConfig {
  const n = presetNodeCount(s.cluster);
  return {
    ...(s.selfTestBug ? { selfTestBug: s.selfTestBug } : {}),
    cluster: `sim-${s.cluster}`,
    nodes: Array.from({ length: n }, (_, i) => {
      const spare = s.cluster === 'n4-spare' && i === 3;
      return { id: `n${i + 1}`, host: `10.0.0.${i + 1}`, clientPort: 7000, clusterPort: 7100, preferredPrimary: !spare, ...(spare ? { spare: true } : {}) };
    }),
    stores: PRESET_STORES[s.cluster].map((st) => ({ ...st })),
    timing: simTiming(s.escalationTimeoutMs),
    maxFrameBytes: DEFAULT_MAX_FRAME_BYTES,
    multiKeyLongTailRetryThresholdsMs: '',
  };
}

/**
 * Checks a schedule's fields (a regression schedule typed by hand, or `--schedule` input).
 * @throws RangeError (one line) naming the first invalid field.
 */
export function validateSchedule(s: SimSchedule): SimSchedule {
  const bad = (what: string): never => {
    throw new RangeError(`sim schedule: ${what}`);
  };
  if (!Number.isInteger(s.seed)) bad('seed must be an integer');
  if (!CLUSTER_PRESETS.includes(s.cluster)) bad(`cluster must be one of ${CLUSTER_PRESETS.join(', ')}`);
  if (s.budget !== 'within' && s.budget !== 'beyond' && s.budget !== 'amnesia') bad('budget must be "within", "beyond" or "amnesia"');
  if (!(s.workloadMs > 0)) bad('workloadMs must be > 0');
  if (!(s.escalationTimeoutMs > 0)) bad('escalationTimeoutMs must be > 0');
  if (s.bootStaggerMs !== undefined && !(s.bootStaggerMs >= 0)) bad('bootStaggerMs must be >= 0');
  if (s.selfTestBug !== undefined && !SELF_TEST_BUGS.includes(s.selfTestBug)) bad(`selfTestBug must be one of ${SELF_TEST_BUGS.join(', ')}`);
  const n = s.net;
  if (!(n.minDelayMs >= 0 && n.maxDelayMs >= n.minDelayMs)) bad('net delays must satisfy 0 <= minDelayMs <= maxDelayMs');
  if (!(n.clientMinDelayMs >= 0 && n.clientMaxDelayMs >= n.clientMinDelayMs)) bad('client delays must satisfy 0 <= clientMinDelayMs <= clientMaxDelayMs');
  if (!(n.resetProbability >= 0 && n.resetProbability < 1)) bad('resetProbability must be in [0, 1)');
  if (n.linkSkewMs !== undefined && !(n.linkSkewMs >= 0)) bad('linkSkewMs must be >= 0');
  const w = s.workload;
  if (!(Number.isInteger(w.writersPerStore) && w.writersPerStore >= 0)) bad('writersPerStore must be an integer >= 0');
  if (!(Number.isInteger(w.keysPerWriter) && w.keysPerWriter >= 1)) bad('keysPerWriter must be an integer >= 1');
  if (!(w.thinkMinMs >= 0 && w.thinkMaxMs >= w.thinkMinMs)) bad('think times must satisfy 0 <= thinkMinMs <= thinkMaxMs');
  if (!(w.readFraction >= 0 && w.readFraction <= 1 && w.deleteFraction >= 0 && w.deleteFraction <= 1)) bad('fractions must be in [0, 1]');
  if (!(Number.isInteger(w.maxAttempts) && w.maxAttempts >= 1)) bad('maxAttempts must be an integer >= 1');
  if (!(w.attemptTimeoutMs > 0 && w.deadlineMs > 0)) bad('attemptTimeoutMs and deadlineMs must be > 0');
  for (const f of s.faults) {
    if (!(f.atMs >= 0 && f.durationMs >= 0)) bad('fault times must be >= 0');
    if (![...GENERAL_FAULT_KINDS, 'strip', 'link', 'lag-crash', 'membership'].includes(f.kind)) bad(`unknown fault kind "${f.kind}"`);
    if (f.kind === 'membership' && f.op !== 'join' && f.op !== 'leave' && f.op !== 'rebalance') bad('a membership fault needs op join, leave or rebalance');
    if (f.kind === 'link' && !f.source) bad('a link fault needs a source');
    if (!((f.lagMs ?? 0) >= 0 && (f.downMs ?? 0) >= 0)) bad('lagMs and downMs must be >= 0');
    const t = f.target as { kind: string };
    if (!['node', 'leader', 'active', 'other', 'async-active'].includes(t.kind)) bad(`unknown fault target "${t.kind}"`);
  }
  return s;
}
