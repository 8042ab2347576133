import type Database from 'better-sqlite3';
import { hasTable } from './key-log.js';

export { stalledDuring } from './intervals.js';

/**
 * The shortest event-loop block (ms) that counts as a node observed not running, for the
 * replication-lag rule: a node whose own loop was blocked this long could not ship or apply
 * replication for that long, whatever the store's code does (CPU starvation on a loaded machine
 * looks like this). Half of Zaris's 1,000 ms lag bound.
 */
export const STALL_EXCUSE_LOOP_MS = 500;

/**
 * A stretch during which the harness observed a node not running (history extension `stalls`,
 * zaris-history/2): from the first of its samples it did not answer to its next answer, or the
 * stretch its own event loop reported blocked (at least {@link STALL_EXCUSE_LOOP_MS}). Times in
 * run ms, closed [start, end].
 */
export interface NodeStall {
  node: string;
  start: number;
  end: number;
}

/**
 * The stretches each node was observed not running, from the ledger's `node_samples` (one line
 * per node per runtime-map sample: answered 0/1, loop_max_ms the longest event-loop delay of the
 * node's rolling window): per node, a silent stretch runs from its first unanswered sample to its
 * next answered one (to its last sample when it never answered again); a blocked stretch is
 * [t - loop, t] for each new loop figure (a value differing from the node's previous one) of at
 * least `minLoopMs`, started no earlier than the node's previous answer. Overlapping or touching
 * stretches of one node are merged. Faults are not taken out: a killed or paused node is silent
 * too, and a fault excuses what it touches anyway. A ledger without `node_samples` (an older
 * harness, another target) has none.
 * @returns stalls sorted by node, then start.
 */
export function observedNodeStalls(db: Database.Database, minLoopMs = STALL_EXCUSE_LOOP_MS): NodeStall[] {
  if (!hasTable(db, 'node_samples')) return [];
  const nodes = db.prepare('SELECT DISTINCT node FROM node_samples ORDER BY node').pluck().all() as string[];
  const lines = db.prepare('SELECT t_ms, answered, loop_max_ms FROM node_samples WHERE node = ? ORDER BY t_ms, rowid').raw(true);
  const out: NodeStall[] = [];
  for (const node of nodes) {
    const list: Array<[number, number]> = [];
    let since: number | null = null;
    let last = -Infinity;
    let prevLoop: number | null = null;
    let prevAnswered = -Infinity;
    for (const [t, answered, loop] of lines.iterate(node) as IterableIterator<[number, number, number | null]>) {
      last = t;
      if (answered === 0) {
        if (since === null) since = t;
        continue;
      }
      if (since !== null) list.push([since, t]);
      since = null;
      if (loop !== null) {
        if (loop >= minLoopMs && loop !== prevLoop) list.push([Math.max(t - loop, prevAnswered), t]);
        prevLoop = loop;
      }
      prevAnswered = t;
    }
    if (since !== null) list.push([since, last]);
    list.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    const merged: Array<[number, number]> = [];
    for (const [a, b] of list) {
      const top = merged[merged.length - 1];
      if (top !== undefined && a <= top[1]) top[1] = Math.max(top[1], b);
      else merged.push([a, b]);
    }
    for (const [start, end] of merged) out.push({ node, start, end });
  }
  return out;
}

/**
 * Writes stalls into a ledger's `node_samples` so that {@link observedNodeStalls} reads them back
 * (history import): per stall, an unanswered sample at its start and an answered one (no loop
 * figure) at its end, one node's overlapping stretches merged first. Creates nothing else.
 */
export function insertNodeStalls(db: Database.Database, stalls: readonly NodeStall[]): void {
  const ins = db.prepare('INSERT INTO node_samples (t_ms, node, answered, loop_max_ms, loop_p99_ms) VALUES (?, ?, ?, NULL, NULL)');
  // one node's stretches merged first: overlapping ones would otherwise read back shorter
  const sorted = [...stalls].sort((a, b) => (a.node < b.node ? -1 : a.node > b.node ? 1 : 0) || a.start - b.start);
  const merged: NodeStall[] = [];
  for (const s of sorted) {
    const top = merged[merged.length - 1];
    if (top !== undefined && top.node === s.node && s.start <= top.end) top.end = Math.max(top.end, s.end);
    else merged.push({ ...s });
  }
  for (const s of merged) {
    ins.run(s.start, s.node, 0);
    ins.run(s.end, s.node, 1);
  }
}
