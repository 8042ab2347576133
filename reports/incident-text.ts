import type { FindingKind } from '../ledger/history-findings.js';
import { FINDING_CLASSES } from '../ledger/history-findings.js';
import { fmtClock } from './html-kit.js';
import type { Incident, IncidentCause } from './incidents.js';

/**
 * Incidents (reports/incidents.ts) told in words: the one line the report lists per incident,
 * its cause, and the sentence on the first violation that the verdict banner and the run's
 * "what happened" summary end with. Times are run time (m:ss.s, h:mm:ss.s past an hour).
 */

const sec = (ms: number | null | undefined): string => (typeof ms === 'number' ? fmtClock(ms) : '?');
const owner = (s: { active: string | null; epoch: number } | null | undefined): string => (s === null || s === undefined ? '?' : `${s.active ?? '(none)'}@e${s.epoch}`);

/** Each finding kind as a reader says it: [one, many] (history-format.md v2 names the kinds). */
export const KIND_WORDS: Readonly<Record<FindingKind, readonly [string, string]>> = {
  lost: ['lost acknowledged write', 'lost acknowledged writes'],
  unexpected: ['final read of a value never written', 'final reads of a value never written'],
  phantom: ['final read of a failed write', 'final reads of failed writes'],
  recovered: ['recovered indeterminate write', 'recovered indeterminate writes'],
  unverified: ['unverified key', 'unverified keys'],
  'version-regression': ['version going backwards', 'versions going backwards'],
  'under-replicated-ack': ['sync ack on fewer than two copies', 'sync acks on fewer than two copies'],
  'ack-not-from-active': ["ack from a node that was not the epoch's active", "acks from nodes that were not the epoch's active"],
  'stale-read': ['stale read', 'stale reads'],
  'phantom-read': ['read of a failed write', 'reads of failed writes'],
  'unexpected-read': ['read of a value never written', 'reads of values never written'],
  'epoch-conflict': ['two actives at one epoch', 'epochs with two actives'],
  'epoch-regression': ['epoch going back', 'epochs going back'],
  'false-healthy': ['Healthy with a replica out of sync', 'Healthy states with a replica out of sync'],
  'replication-lag': ['async replica left behind', 'async replicas left behind'],
};

/** `n` findings of a kind in words: "3 lost acknowledged writes"; the kind's own name when unknown. */
export function kindInWords(kind: string, n: number): string {
  const w = (KIND_WORDS as Record<string, readonly [string, string] | undefined>)[kind];
  return `${n.toLocaleString('en-US')} ${w === undefined ? kind : w[n === 1 ? 0 : 1]}`;
}

/** What an incident's findings are: "1388 lost (1388 violation)". */
function whatText(inc: Incident): string {
  const kinds = Object.entries(inc.kinds)
    .map(([k, n]) => `${n} ${k}`)
    .join(', ');
  const classes = FINDING_CLASSES.filter((c) => (inc.classes[c] ?? 0) > 0)
    .map((c) => `${inc.classes[c]} ${c}`)
    .join(', ');
  return `${kinds} (${classes})`;
}

/** The incident's cause in words ("missing after the crash of n1 (fault f2 at 0:05.0)"). */
export function causeText(c: IncidentCause): string {
  switch (c.kind) {
    case 'crash':
      return `missing after the crash of ${c.node ?? '?'} (fault ${c.fault ?? '?'} at ${sec(c.atMs)})`;
    case 'ownership-change':
      return `missing after the ownership change to ${c.node ?? '(none)'} at epoch ${c.epoch ?? '?'} (${sec(c.atMs)})`;
    case 'epoch':
      return `acknowledged by ${c.node ?? '?'} at epoch ${c.epoch ?? '?'}`;
    case 'runtime-map':
      return `the runtime map itself (${c.findingKind ?? '?'} at ${sec(c.atMs)})`;
    default:
      return 'with no crash or ownership change after them';
  }
}

/**
 * An incident in one line: store/partition, what, the cause, the window of the acks (reads,
 * samples), the fault before it, the runtime-map transition.
 */
export function incidentLine(inc: Incident): string {
  const where = `${inc.store}/${inc.partition ?? '?'}`;
  const window = inc.windowMs === null ? '' : sec(inc.windowMs.from) === sec(inc.windowMs.to) ? `; at ${sec(inc.windowMs.from)}` : `; from ${sec(inc.windowMs.from)} to ${sec(inc.windowMs.to)}`;
  const fault = inc.faultBefore === null ? '; no fault before' : `; fault before: ${inc.faultBefore.fault} ${inc.faultBefore.kind} of ${inc.faultBefore.nodes.join(', ')} at ${sec(inc.faultBefore.startMs)}`;
  const t = inc.transition;
  const map =
    t === null ? '' : t.to === null ? `; runtime map stayed ${owner(t.from)}` : `; runtime map ${owner(t.from)} → ${owner(t.to)} at ${sec(t.to.atMs)}`;
  return `#${inc.id} ${where}: ${whatText(inc)}, ${causeText(inc.cause)}${window}${fault}${map}`;
}

/** The first incident with a violation (by first instant: incidents are in that order), or undefined. */
export function firstViolationIncident(incidents: readonly Incident[]): Incident | undefined {
  return incidents.find((i) => (i.classes.violation ?? 0) > 0);
}

/**
 * The first violation incident in one sentence, its kinds in words: "First violation (incident
 * #2): 3 violations (3 lost acknowledged writes) of sync3/0 between 0:04.1 and 0:04.9, missing
 * after the crash of n1 (fault f2 at 0:05.0); the runtime map went n1@e3 → n2@e4 at 0:06.0." An
 * incident that also holds findings of other classes says "35 violations among 53 findings (49 lost
 * acknowledged writes, 4 stale reads)": its kinds are counted over all of its findings.
 * Null when no incident holds a violation.
 */
export function firstViolationSentence(incidents: readonly Incident[]): string | null {
  const first = firstViolationIncident(incidents);
  if (first === undefined) return null;
  const n = first.classes.violation ?? 0;
  const kinds = Object.entries(first.kinds).map(([k, count]) => kindInWords(k, count ?? 0)).join(', ');
  const window = first.windowMs === null ? '' : sec(first.windowMs.from) === sec(first.windowMs.to) ? ` at ${sec(first.windowMs.from)}` : ` between ${sec(first.windowMs.from)} and ${sec(first.windowMs.to)}`;
  const t = first.transition;
  const map = t?.to ? `; the runtime map went ${owner(t.from)} → ${owner(t.to)} at ${sec(t.to.atMs)}` : '';
  const what = n === first.count ? `${n} violation${n === 1 ? '' : 's'} (${kinds})` : `${n} violation${n === 1 ? '' : 's'} among ${first.count} findings (${kinds})`;
  return `First violation (incident #${first.id}): ${what} of ${first.store}/${first.partition ?? '?'}${window}, ${causeText(first.cause)}${map}.`;
}
