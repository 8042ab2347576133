/**
 * Faults whose undo failed (issue 22): the nemesis records a fault's end BEFORE it undoes it
 * (resume, restart, the grudge's removal, the client cut's, the clock's restore), as DESIGN.md §3
 * asks; when the runtime then fails that undo for good, the fault goes on although its row says
 * it ended. The ledger must not say so: the fault is recorded again, from the failure on, as a
 * row of the same kind and nodes that stays open (detail `continues`: the row it continues,
 * `undoFailed`: the error), until {@link Nemesis.healAll} undoes it (that row's end recorded
 * first, again) or the run ends with it in effect. The verifier then sees a paused node paused,
 * a cut link cut, a crashed node down, for as long as they were.
 */
import type { Grudge } from '../runtime/runtime.js';
import type { FaultRecorder } from './nemesis.js';
import type { RecordedKind } from './schedule.js';

/** A fault in effect although its earlier row was ended: its open continuing row. */
export interface StuckFault {
  /** The continuing row (open). */
  id: number;
  kind: RecordedKind;
  /** The node (crash, pause, clock, client cut) or the nodes cut off (partition). */
  nodes: string[];
  /** The schedule index of the fault. */
  index: number;
  /** Partitions: the nodes that cannot reach a majority. */
  isolated?: string[];
  /** Partitions: the grudge still installed. */
  grudge?: Grudge;
}

/** The faults whose undo failed, each with its open continuing row. */
export class StuckFaults {
  private readonly stuck: StuckFault[] = [];

  constructor(private readonly recorder: Pick<FaultRecorder, 'faultStart' | 'faultEnd' | 'faultEffective'>) {}

  /**
   * Row `was` (of fault `index`) was ended but its undo failed with `error`: records the fault
   * again, open, from now (in effect at once: faultEffective too).
   * @returns the continuing row's id.
   */
  goesOn(was: { id: number; kind: RecordedKind; nodes: string[]; isolated?: string[]; grudge?: Grudge }, index: number, nowMs: number, error: unknown): number {
    const why = (error instanceof Error ? error.message : String(error)).split('\n')[0];
    const id = this.recorder.faultStart({
      kind: was.kind,
      nodes: was.nodes,
      target: `continues:${was.id}`,
      plannedMs: nowMs,
      ...(was.isolated ? { isolated: was.isolated } : {}),
      detail: JSON.stringify({ index, continues: was.id, undoFailed: why, ...(was.grudge ? { grudge: was.grudge } : {}) }),
    });
    this.recorder.faultEffective?.(id);
    this.add({ id, kind: was.kind, nodes: was.nodes, index, ...(was.isolated ? { isolated: was.isolated } : {}), ...(was.grudge ? { grudge: was.grudge } : {}) });
    return id;
  }

  /** Keeps an open row already recorded (a crash that replaces a pause that could not be undone). */
  add(s: StuckFault): void {
    this.stuck.push(s);
  }

  /**
   * Takes the stuck faults of the given kinds (and, when given, on `node`), recording each one's
   * end: the caller undoes them right after, and calls {@link goesOn} again for any that fails.
   */
  endAll(kinds: readonly RecordedKind[], node?: string): StuckFault[] {
    const out = this.stuck.filter((s) => kinds.includes(s.kind) && (node === undefined || s.nodes.includes(node)));
    for (const s of out) {
      this.stuck.splice(this.stuck.indexOf(s), 1);
      this.recorder.faultEnd(s.id);
    }
    return out;
  }

  /** How many stuck faults are in effect. */
  get size(): number {
    return this.stuck.length;
  }
}
