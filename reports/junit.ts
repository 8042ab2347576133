import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import xmlbuilder from 'xmlbuilder';
import { FINDING_CLASSES } from '../harness/verifier/verifier.js';
import type { FindingClass } from '../harness/verifier/verifier.js';
import type { ResultFinding, Results } from './results.js';
import { stallText } from '../harness/verifier/stalls.js';

/** Findings listed in one failure's text (the rest are in results.json and the ledger). */
export const JUNIT_FINDINGS_LISTED = 50;

const CLASS_TEXT: Readonly<Record<FindingClass, string>> = {
  violation: 'acknowledged writes lost or values that should not exist (violations)',
  rf1: 'losses allowed by replication factor 1 (holder crashed after the ack)',
  'async-ack': 'losses allowed by async acknowledgement (owner gone before replication)',
  'beyond-budget': 'losses with every replica down at once (nemesis past the fault budget)',
  info: 'indeterminate writes recovered, keys unverified',
};

function findingLine(f: ResultFinding): string {
  if (f.key === null) return `${f.kind} ${f.store} partition ${f.partition ?? '?'}`;
  if (f.read !== undefined) return `${f.kind} ${f.store}/${f.key} ${f.write ?? '(absent)'} (read ${f.read})`;
  return `${f.kind} ${f.store}/${f.key} ${f.write ?? ''}`;
}

function listing(findings: readonly ResultFinding[], total: number): string {
  const shown = findings.slice(0, JUNIT_FINDINGS_LISTED).map(findingLine);
  if (total > shown.length) shown.push(`... ${total - shown.length} more (results.json lists up to 1,000 per class; the ledger holds all)`);
  return shown.join('\n');
}

/**
 * junit.xml for CI (DESIGN.md §6): a suite "verdict" with one test case that passes only when
 * the run is CERTIFIED (an INCONCLUSIVE run fails it with its reason, so that a CI job reading
 * junit never sees green for a run that certifies nothing); a suite "stores" with a test case
 * per store, failing when the store has violations; and a suite "classes" with a test case per
 * finding class, the `violation` case failing when there is any; the other classes pass and say
 * their count in system-out; a suite "availability" with one test case failing on any stall
 * (results.json `availability`, issue 11), apart from the verdict. The verdict, exit code and inconclusive reason are also properties
 * of the root. Text and attributes are escaped by xmlbuilder (characters XML cannot carry become
 * U+FFFD). Pure: the same results give the same bytes.
 */
export function buildJunitXml(results: Results): string {
  const storeFailures = results.stores.filter((s) => s.summary.violation > 0).length;
  const classFailures = results.summary.violation > 0 ? 1 : 0;
  const verdictFailures = results.verdict === 'CERTIFIED' ? 0 : 1;
  const stalls = results.availability?.stalls ?? [];
  const availabilityFailures = stalls.length > 0 ? 1 : 0;
  const root = xmlbuilder.create('testsuites', { version: '1.0', encoding: 'UTF-8', invalidCharReplacement: '\uFFFD' }).att({
    name: 'zaris-certify',
    tests: 1 + results.stores.length + FINDING_CLASSES.length + 1,
    failures: verdictFailures + storeFailures + classFailures + availabilityFailures,
    errors: 0,
  });
  const props = root.ele('properties');
  props.ele('property', { name: 'verdict', value: results.verdict });
  props.ele('property', { name: 'exitCode', value: String(results.exitCode) });
  if (results.inconclusiveReason !== undefined) props.ele('property', { name: 'inconclusiveReason', value: results.inconclusiveReason });

  const verdict = root.ele('testsuite', { name: 'verdict', tests: 1, failures: verdictFailures, errors: 0, skipped: 0 });
  const vc = verdict.ele('testcase', { classname: 'zaris-certify.verdict', name: 'certified' });
  if (results.verdict === 'INCONCLUSIVE') {
    vc.ele('failure', { type: 'INCONCLUSIVE', message: `INCONCLUSIVE: ${results.inconclusiveReason ?? 'the run cannot certify the store'}` }, 'No violation was found, but the run cannot certify the store (exit code 2).');
  } else if (results.verdict === 'FAILED') {
    const n = results.summary.violation;
    vc.ele('failure', { type: 'FAILED', message: `FAILED: ${n} violation${n === 1 ? '' : 's'}` }, listing(results.findings.filter((f) => f.class === 'violation'), n));
  }

  const stores = root.ele('testsuite', { name: 'stores', tests: results.stores.length, failures: storeFailures, errors: 0, skipped: 0 });
  for (const s of results.stores) {
    const tc = stores.ele('testcase', { classname: 'zaris-certify.stores', name: s.name });
    if (s.summary.violation > 0) {
      const mine = results.findings.filter((f) => f.class === 'violation' && f.store === s.name);
      tc.ele('failure', { type: 'violation', message: `${s.summary.violation} violation${s.summary.violation === 1 ? '' : 's'} in store ${s.name}` }, listing(mine, s.summary.violation));
    }
    tc.ele('system-out', {}, FINDING_CLASSES.map((c) => `${c}: ${s.summary[c]}`).join(', ') + `; acknowledged: ${s.acknowledged}`);
  }

  const classes = root.ele('testsuite', { name: 'classes', tests: FINDING_CLASSES.length, failures: classFailures, errors: 0, skipped: 0 });
  for (const c of FINDING_CLASSES) {
    const tc = classes.ele('testcase', { classname: 'zaris-certify.classes', name: c });
    const n = results.summary[c];
    const mine = results.findings.filter((f) => f.class === c);
    if (c === 'violation' && n > 0) {
      tc.ele('failure', { type: 'violation', message: `${n} violation${n === 1 ? '' : 's'}` }, listing(mine, n));
    } else {
      tc.ele('system-out', {}, n === 0 ? `0 ${CLASS_TEXT[c]}` : `${n} ${CLASS_TEXT[c]}\n${listing(mine, n)}`);
    }
  }

  // issue 11: stalls fail availability (their own case), apart from the durability verdict
  const availability = root.ele('testsuite', { name: 'availability', tests: 1, failures: availabilityFailures, errors: 0, skipped: 0 });
  const ac = availability.ele('testcase', { classname: 'zaris-certify.availability', name: 'no-stalls' });
  const a = results.availability;
  if (stalls.length > 0) {
    const shown = stalls.slice(0, JUNIT_FINDINGS_LISTED).map(stallText);
    if (stalls.length > shown.length) shown.push(`... ${stalls.length - shown.length} more in results.json`);
    ac.ele('failure', { type: 'stall', message: `${stalls.length} stall${stalls.length === 1 ? '' : 's'} longer than ${a?.boundMs ?? '?'} ms with no fault touching them` }, shown.join('\n'));
  } else {
    ac.ele('system-out', {}, a === undefined || !a.measured ? 'not measured (no per-node samples in the ledger)' : `no node silent and no partition Unavailable longer than ${a.boundMs} ms with no fault touching it`);
  }
  return `${root.end({ pretty: true })}\n`;
}

/**
 * Writes `<dir>/junit.xml` (temporary file, then rename).
 * @returns the file's path.
 */
export function writeJunitXml(results: Results, dir: string): string {
  const path = join(dir, 'junit.xml');
  writeFileSync(`${path}.tmp`, buildJunitXml(results));
  renameSync(`${path}.tmp`, path);
  return path;
}
