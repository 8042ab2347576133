/**
 * The words of a history's judgement, shared by both verifiers and the reports: finding classes
 * and kinds in report order, the verdict, a finding's and a judgement's shapes, the reasons' texts.
 */
/** Finding classes, in report order (DESIGN.md §5, history-format.md). */
export const FINDING_CLASSES = ['violation', 'rf1', 'async-ack', 'beyond-budget', 'info'] as const;
/** violation, or one of the losses the store's contract allows, or info (recovered, unverified). */
export type FindingClass = (typeof FINDING_CLASSES)[number];

/** A key's own finding kinds, in the order the v2 rules try them ("first that applies"). */
export const KEY_FINDING_KINDS = [
  'unverified',
  'unexpected',
  'lost',
  'phantom',
  'under-replicated-ack',
  'ack-not-from-active',
  'version-regression',
  'recovered',
] as const;
/** Read findings (v2): at most one per key, besides the key's own finding. */
export const READ_FINDING_KINDS = ['unexpected-read', 'phantom-read', 'stale-read'] as const;
/** Findings of the runtime map (v2): at most one per partition and kind. */
export const PARTITION_FINDING_KINDS = ['epoch-conflict', 'epoch-regression', 'false-healthy', 'replication-lag'] as const;
/** Every finding kind, in report order. */
export const FINDING_KINDS = [...KEY_FINDING_KINDS, ...READ_FINDING_KINDS, ...PARTITION_FINDING_KINDS] as const;
/** Any finding kind. */
export type FindingKind = (typeof FINDING_KINDS)[number];
/** A key's own finding kind. */
export type KeyFindingKind = (typeof KEY_FINDING_KINDS)[number];
/** A read finding kind. */
export type ReadFindingKind = (typeof READ_FINDING_KINDS)[number];
/** A partition finding kind. */
export type PartitionFindingKind = (typeof PARTITION_FINDING_KINDS)[number];

/** The run's verdict (DESIGN.md §5). */
export type Verdict = 'CERTIFIED' | 'FAILED' | 'INCONCLUSIVE';

/**
 * One finding as history-format.md's `expected` lists it. A key finding: `key`, and `write` (the
 * named write's id; '' for an unverified key with no acknowledged write). A read finding also
 * `read` (the read's id), `write` being the value read (null: absent). A partition finding:
 * `partition`, with `key` and `write` null.
 */
export interface RuleFinding {
  class: FindingClass;
  kind: FindingKind;
  store: string;
  key: string | null;
  write: string | null;
  partition?: number;
  read?: string;
}

/** The judgement of a history. */
export interface Judgement {
  verdict: Verdict;
  /** Key findings by key (first appearance in writes, then final reads), then read, then partition findings. */
  findings: RuleFinding[];
  /** Why the run is INCONCLUSIVE, in the verifier's words and order; [] for another verdict. */
  reasons: string[];
}

/** The reason texts the verdict gives (shared with the SQL verifier so both say the same). */
export const REASONS = {
  interrupted: 'the run was interrupted',
  running: 'the run did not finish (its harness stopped before the end phase)',
  unverified: (n: number): string => `${n} key${n === 1 ? '' : 's'} unverified`,
  noFaults: 'no fault was injected',
  nothingAcknowledged: 'no write was acknowledged',
  selfTest: (bug: string): string => `a self-test run (store started with the bug ${bug}) must come out FAILED, and the bug never showed`,
} as const;

/** What a lost write's class rests on (the SQL verifier's findings.detail carries the same). */
export interface LossEvidence {
  cls: FindingClass;
  /** rf1 / async-ack by crash: the crash. */
  crash?: { fault: string; node: string; at: number };
  /** async-ack: when the takeover happened, and by what. */
  takeoverMs?: number;
  /** async-ack by a sample: the node that took over. */
  takeoverNode?: string;
  /** async-ack: the fault that disrupted replication within the lag bound. */
  disruptedBy?: string;
  /** async-ack by a chained takeover: the holders of the write that took over and lost the partition in turn (ms). */
  via?: Array<{ node: string; fromMs: number; lostMs: number }>;
  /** beyond-budget: the instant every replica was down (or out of sync). */
  allDownMs?: number;
}
