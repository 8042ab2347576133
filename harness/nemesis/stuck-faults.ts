/**
 * Faults whose undo failed (issue 22): the nemesis records a fault's end BEFORE it undoes it
 * (resume, restart, the grudge's removal, the client cut's, the clock's restore), as DESIGN.md §3
 * asks; when the runtime then fails that undo for good, the fault goes on although its row says
 * it ended. The ledger must not say so: the row is reopened (its end removed: in effect, without
 * a gap, until further notice) and an event `fault-undo-failed` `{ id, index, error }` says why,
 * until {@link Nemesis.healAll} undoes the fault again (the row's end recorded first, again) or the
 * run ends with it in effect. The verifier then sees a paused node paused, a cut link cut, a
 * crashed node down, for as long as they were.
 */
import type { FaultRecorder } from './nemesis-types.js';
import type { RecordedKind } from './schedule.js';

/** A fault in effect although its end had been recorded: its reopened row. */
export interface StuckFault {
  /** The ledger row (reopened: no end). */
  id: number;
  kind: RecordedKind;
  /** The node (crash, pause, clock, client cut) or the nodes cut off (partition). */
  nodes: string[];
  /** The schedule index of the fault. */
  index: number;
}

/** The faults whose undo failed, each with its reopened row. */
export class StuckFaults {
  private readonly stuck: StuckFault[] = [];

  constructor(private readonly recorder: Pick<FaultRecorder, 'faultEnd' | 'faultReopen' | 'event'>) {}

  /** The undo of row `s.id` (its end recorded) failed with `error`: the row is reopened and kept. */
  goesOn(s: StuckFault, error: unknown): void {
    const why = (error instanceof Error ? error.message : String(error)).split('\n')[0];
    this.recorder.faultReopen(s.id);
    this.recorder.event('fault-undo-failed', JSON.stringify({ id: s.id, index: s.index, kind: s.kind, nodes: s.nodes, error: why }));
    this.add(s);
  }

  /** Keeps a row recorded open (a crash that replaces a pause that could not be undone). */
  add(s: StuckFault): void {
    this.stuck.push({ id: s.id, kind: s.kind, nodes: s.nodes, index: s.index });
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
