import type { FindingClass } from '../harness/verifier/verifier.js';
import { PARTITION_FINDING_KINDS, READ_FINDING_KINDS } from '../ledger/history-findings.js';
import { INCIDENT_FINDINGS_LISTED } from './incidents.js';
import type { ResultFinding, Results } from './results.js';

/**
 * What the report's finding sections show of results.json's findings, and how much of it
 * (DESIGN.md §6): the classes' titles and how to read each, and the per-key lists grouped by
 * incident and capped, so that a run with hundreds of lost keys still reads in one screen.
 */

/** Keys listed inline per incident, in the incidents section and in each class section. */
export const KEYS_LISTED_PER_INCIDENT = INCIDENT_FINDINGS_LISTED;
/** Keys drilled down per class section (those listed beyond it are lines without drill-down). */
export const DRILL_DOWN_PER_CLASS = 100;
/** Incidents drilled down (the rest are listed as lines). */
export const INCIDENTS_DRILLED = 100;

/** Each class's section title. */
export const CLASS_TITLES: Readonly<Record<FindingClass, string>> = {
  violation: 'Violations',
  rf1: 'RF1 losses (allowed: replication factor 1, holder crashed after the ack)',
  'async-ack': 'Async-ack losses (allowed: owner gone before the revision was replicated)',
  'beyond-budget': 'Beyond-budget losses (every replica down at once)',
  info: 'Info (recovered indeterminate writes, unverified keys)',
};

/** How to read each class (DESIGN.md §5), one line each, shown in the verdict and class sections. */
export const CLASS_HELP: Readonly<Record<FindingClass, string>> = {
  violation:
    'An acknowledged write is missing from the final read (lost) and no allowance below explains it, or the final read holds a value never written (unexpected) or of a write that definitely failed (phantom), a sync ack at RF > 1 named fewer than two copies (under-replicated-ack), an ack came from a node that was not the active of its epoch (ack-not-from-active), acknowledged versions went backwards (version regression); or a read during the run, or the runtime map itself, broke the rules (their own sections below): a bug in the store.',
  rf1: 'A lost acknowledged write of a store with replication factor 1 whose holding node crashed (kill or stop) after the ack: the only copy was in memory. Allowed by the contract.',
  'async-ack':
    "A lost write of an async store whose owner crashed, or lost the partition to another node at a higher epoch, before the node that took over held it, with replication disrupted by a fault within the lag bound after the ack, the owner touched by a fault before the takeover, within its lease and not already deposed. Allowed by the contract (the async-acknowledgement window); each names the fault and the node that took over.",
  'beyond-budget':
    'A lost write whose partition had every replica down (crashed, or restarted and not yet back in sync) or out of the in-sync set at the ack, at one instant after the ack; allowed only in a run whose nemesis may go past the fault budget.',
  info: 'Not losses: indeterminate writes (timed out, transport failure) whose value the final read found (recovered), and keys that could not be verified (unverified).',
};

/** Read finding kinds (their own section). */
export const READ_KINDS: ReadonlySet<string> = new Set(READ_FINDING_KINDS);
/** Runtime-map finding kinds (their own section). */
export const PARTITION_KINDS: ReadonlySet<string> = new Set(PARTITION_FINDING_KINDS);

/** A key's own finding (not a read's, not the runtime map's). */
export const isKeyFinding = (f: ResultFinding): boolean => !READ_KINDS.has(f.kind) && !PARTITION_KINDS.has(f.kind);

/** The run's findings of some kinds (results.json `kinds`). */
export function kindTotal(r: Results, kinds: ReadonlySet<string>): number {
  let n = 0;
  for (const [k, v] of Object.entries(r.kinds ?? {})) if (kinds.has(k)) n += v;
  return n;
}

/** One incident's share of a class section: the findings listed inline and how many results.json holds. */
export interface ClassGroup {
  /** The incident's id; null for findings results.json does not tag (none in a run built by buildResults). */
  incident: number | null;
  /** Listed inline: at most {@link KEYS_LISTED_PER_INCIDENT}, in results.json order. */
  listed: Array<{ finding: ResultFinding; drilled: boolean }>;
  /** The class's findings of this incident that results.json holds. */
  held: number;
}

/**
 * A class section's key findings grouped by incident (incident order; untagged last), each
 * group's list capped at {@link KEYS_LISTED_PER_INCIDENT}; the first {@link DRILL_DOWN_PER_CLASS}
 * listed over the whole class are drilled down. From results.json's findings (at most 1,000 per
 * class), so a pure function of the results.
 */
export function classGroups(r: Results, cls: FindingClass): ClassGroup[] {
  const groups = new Map<number | null, ClassGroup>();
  for (const f of r.findings) {
    if (f.class !== cls || !isKeyFinding(f)) continue;
    const id = f.incident ?? null;
    let g = groups.get(id);
    if (g === undefined) groups.set(id, (g = { incident: id, listed: [], held: 0 }));
    g.held++;
    if (g.listed.length < KEYS_LISTED_PER_INCIDENT) g.listed.push({ finding: f, drilled: false });
  }
  const ordered = [...groups.values()].sort((a, b) => (a.incident ?? Infinity) - (b.incident ?? Infinity));
  let drilled = 0;
  for (const g of ordered) {
    for (const x of g.listed) {
      if (drilled === DRILL_DOWN_PER_CLASS) break;
      x.drilled = true;
      drilled++;
    }
  }
  return ordered;
}
