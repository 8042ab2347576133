/**
 * The record of a whole-store final read (a stream target's: harness/targets/target.ts
 * {@link FinalReadback}): its ledger event and its one-line description, shared by the run's log,
 * results.json and the report.
 */
import type { FinalReadback } from './target.js';

/** The ledger event of a whole-store final read (its {@link FinalReadback}); results.json `readback`. */
export const FINAL_READBACK_EVENT = 'final-readback';

/**
 * One line on a whole-store read, e.g. `stream read back whole: 1,200 of 1,200 messages (sequences
 * 1..1,200), 1,198 keys, 2 duplicates, 0 anomalies, in 1.3 s; each node's copy: n1 1,200 (last
 * 1,200), n2 1,200 (last 1,200), n3 no answer`, followed by `(COPIES DISAGREE: n1 differ from the
 * leader's)` when a node's own copy is not the leader's.
 */
export function describeReadback(r: FinalReadback): string {
  const n = (x: number): string => x.toLocaleString('en-US');
  const replicas = Object.entries(r.replicas)
    .map(([node, v]) => `${node} ${v === null ? 'no answer' : `${n(v.messages)} (last ${n(v.lastSeq)})`}`)
    .join(', ');
  const differ = replicasDisagree(r);
  return `stream read back ${r.complete ? 'whole' : `INCOMPLETE (${r.reason ?? '?'})`}: ${n(r.read)} of ${n(r.stream.messages)} messages (sequences ${n(r.stream.firstSeq)}..${n(r.stream.lastSeq)}), ${n(r.keys)} keys, ${n(r.duplicates)} duplicates, ${n(r.anomalies)} anomalies, in ${(r.ms / 1000).toFixed(1)} s; each node's copy: ${replicas || 'not asked'}${differ.length > 0 ? ` (COPIES DISAGREE: ${differ.join(', ')} differ from the leader's)` : ''}`;
}

/** The nodes whose own copy (messages or last sequence) differs from the stream the leader reported; nodes that did not answer are left out. */
export function replicasDisagree(r: FinalReadback): string[] {
  return Object.entries(r.replicas)
    .filter(([, v]) => v !== null && (v.messages !== r.stream.messages || v.lastSeq !== r.stream.lastSeq))
    .map(([node]) => node);
}

