import type { FindingClass } from '../harness/verifier/verifier.js';
import { FINDING_CLASSES } from '../ledger/history-findings.js';
import { fmtClock } from './html-kit.js';
import { firstViolationIncident, firstViolationSentence } from './incident-text.js';
import type { Results } from './results.js';

/**
 * The run told in one paragraph, for the top of the report: what ran, the faults by kind, the
 * failovers measured, the writes, the findings by class and incident, and the first violation.
 * A pure function of results.json (DESIGN.md §7), so re-analysis gives the same words.
 */

/** Fault kinds as a reader says them: [one, many]; a kind not listed reads "<kind> fault(s)". */
const FAULT_WORDS: Readonly<Record<string, readonly [string, string]>> = {
  kill: ['kill', 'kills'],
  stop: ['stop', 'stops'],
  pause: ['pause', 'pauses'],
  partition: ['partition', 'partitions'],
  clock: ['clock fault', 'clock faults'],
  'client-cut': ['client cut', 'client cuts'],
};

/** Classes as a reader says them: [one, many]. */
const CLASS_WORDS: Readonly<Record<FindingClass, readonly [string, string]>> = {
  violation: ['violation', 'violations'],
  rf1: ['rf1 loss (allowed)', 'rf1 losses (allowed)'],
  'async-ack': ['async-ack loss (allowed)', 'async-ack losses (allowed)'],
  'beyond-budget': ['beyond-budget loss (allowed)', 'beyond-budget losses (allowed)'],
  info: ['info finding (no loss)', 'info findings (no loss)'],
};

const count = (n: number): string => n.toLocaleString('en-US');
const plural = (n: number, w: readonly [string, string]): string => `${count(n)} ${n === 1 ? w[0] : w[1]}`;

/** The paragraph: `text` (plain, to be escaped) and the first violation (null when none), which the page links to its incident. */
export interface WhatHappened {
  text: string;
  firstViolation: { incident: number; sentence: string } | null;
}

/**
 * What happened in the run, from its results: e.g. "The fault phase ran 1:30.0 against zaris
 * 0.1.0 on the process runtime (seed 1). The nemesis injected 12 faults: 4 kills, 2 stops, .... 5 failovers were
 * measured (a killed or stopped owner to the first acknowledged write on its partition): p50
 * 812 ms, max 1,930 ms. 103,264 writes were acknowledged, 52 failed and 12 ended indeterminate.
 * The verifier found 429 findings in 18 incidents: 40 violations, 389 rf1 losses (allowed)."
 * Facts a ledger does not hold (an imported history has no runtime or duration) are left out; a
 * self-test bug is not repeated here (the banner says it in a line of its own).
 */
export function whatHappened(r: Results): WhatHappened {
  const out: string[] = [];
  const ran: string[] = [];
  if (r.durationMs !== null) ran.push(`The fault phase ran ${fmtClock(r.durationMs)}`);
  if (r.target) ran.push(`against ${r.target.version}`);
  if (r.runtime !== null) ran.push(`on the ${r.runtime} runtime`);
  if (ran.length > 0) {
    if (r.durationMs === null) ran.unshift('The run was');
    const seed = r.seed === null ? '' : ` (seed ${r.seed})`;
    out.push(`${ran.join(' ')}${seed}.`);
  }
  const faults = Object.entries(r.faults).filter(([, n]) => n > 0);
  const total = faults.reduce((s, [, n]) => s + n, 0);
  out.push(
    total === 0
      ? 'No fault was injected.'
      : `The nemesis injected ${plural(total, ['fault', 'faults'])}: ${faults.map(([k, n]) => plural(n, FAULT_WORDS[k] ?? [`${k} fault`, `${k} faults`])).join(', ')}.`,
  );
  const f = r.failover;
  if (f.count > 0) {
    out.push(
      `${plural(f.count, ['failover was', 'failovers were'])} measured (a killed or stopped owner to the first acknowledged write on its partition): p50 ${count(Math.round(f.p50Ms))} ms, max ${count(Math.round(f.maxMs))} ms.`,
    );
  } else if ((r.faults.kill ?? 0) + (r.faults.stop ?? 0) > 0) {
    out.push('No failover was measured.');
  }
  const c = r.counts;
  out.push(`${plural(c.acknowledged, ['write was', 'writes were'])} acknowledged, ${count(c.failed)} failed and ${count(c.indeterminate)} ended indeterminate.`);
  const findings = FINDING_CLASSES.reduce((s, k) => s + (r.summary[k] ?? 0), 0);
  const incidents = (r.incidents ?? []).length;
  out.push(
    findings === 0
      ? 'The verifier found nothing to report.'
      : `The verifier found ${plural(findings, ['finding', 'findings'])}${incidents > 0 ? ` in ${plural(incidents, ['incident', 'incidents'])}` : ''}: ${FINDING_CLASSES.filter((k) => (r.summary[k] ?? 0) > 0)
          .map((k) => plural(r.summary[k], CLASS_WORDS[k]))
          .join(', ')}.`,
  );
  const first = firstViolationIncident(r.incidents ?? []);
  const sentence = firstViolationSentence(r.incidents ?? []);
  return { text: out.join(' '), firstViolation: first === undefined || sentence === null ? null : { incident: first.id, sentence } };
}
