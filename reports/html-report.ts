import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import type { FindingClass } from '../harness/verifier/verifier.js';
import { stallText } from '../harness/verifier/stalls.js';
import { META } from '../ledger/schema.js';
import { uplotAssets } from './chart-script.js';
import { CLASS_HELP } from './finding-groups.js';
import { classSection, readFindingsSection, runtimeMapSection } from './finding-sections.js';
import type { HtmlSection } from './html-kit.js';
import { esc, fmtMs, htmlTable, metaValue, reportContext } from './html-kit.js';
import { incidentsSection } from './incidents-section.js';
import type { Results } from './results.js';
import { contractSection } from './contract-section.js';
import { countsSection, runSection } from './run-sections.js';
import { chartsSection, epochHistorySection, faultTimelineSection, retriesSection } from './timeline-sections.js';
import { whatHappened } from './what-happened.js';

export type { HtmlSection, ReportContext } from './html-kit.js';
export { esc } from './html-kit.js';
export { scopeHtml } from './run-sections.js';
export { DrillDetails, evidenceText, FAULT_WINDOW_MS, WRITES_PER_KEY } from './drill-down.js';
export { CLASS_HELP, DRILL_DOWN_PER_CLASS, INCIDENTS_DRILLED } from './finding-groups.js';
export { partitionEvidenceText } from './finding-sections.js';

const VERDICT_TEXT: Readonly<Record<string, string>> = {
  CERTIFIED: 'No acknowledged write was lost beyond what the store\'s contract allows, every key was verified, and faults were really injected.',
  FAILED: 'At least one violation: an acknowledged write lost, or a value that should not exist. See the incidents below.',
  INCONCLUSIVE: 'No violation was found, but the run cannot certify the store.',
};

/** The availability line of the banner (issue 11): stalls fail it, apart from the durability verdict. */
function availabilityHtml(r: Results): string {
  const a = r.availability;
  if (a === undefined || !a.measured) return '';
  if (a.stalls.length === 0) return `<p>Availability OK: no node silent and no partition Unavailable longer than ${esc(fmtMs(a.boundMs))} ms with no fault touching it.</p>`;
  return `<p class="reason"><a href="#stalls">Availability FAILED: ${esc(a.stalls.length)} stall${a.stalls.length === 1 ? '' : 's'}; the first: ${esc(stallText(a.stalls[0]))}.</a></p>`;
}

/**
 * The verdict banner (verdict, exit code, what happened with the first violation, the reasons),
 * then the findings by class in one line that opens into how to read each class.
 */
const verdictSection: HtmlSection = {
  id: 'verdict',
  title: 'Verdict',
  render: ({ db, results: r }) => {
    const shrunkText = metaValue(db, META.shrunk);
    let shrunk = '';
    if (shrunkText !== null) {
      try {
        const sh = JSON.parse(shrunkText) as { file: string; faults: string[]; replays: number };
        shrunk = `<p class="reason">Shrunk by make shrink (${esc(sh.replays)} replays) to ${esc(sh.faults.length)} fault${sh.faults.length === 1 ? '' : 's'} (${esc(sh.faults.join('; '))}): scenario <code>${esc(sh.file)}</code></p>`;
      } catch {
        shrunk = '';
      }
    }
    const reason = r.inconclusiveReason === undefined ? '' : `<p class="reason">Why inconclusive: ${esc(r.inconclusiveReason)}</p>`;
    // a self-test run (BUG=, issue 12): the store was broken on purpose, said where the verdict is read
    const bug = r.selfTestBug === undefined ? '' : `<p class="reason">Self-test run: the store ran with the deliberate bug ${esc(r.selfTestBug)} (BUG=${esc(r.selfTestBug)}); the verdict must be FAILED</p>`;
    const sc = r.scenario;
    const expected = sc ? `${sc.expected.verdict}${sc.expected.allow === undefined ? '' : sc.expected.allow.length === 0 ? ' (no allowed losses)' : ` (allow ${sc.expected.allow.join(', ')})`}` : '';
    const scenario = sc
      ? `<p class="reason">Scenario <b>${esc(sc.name)}</b> (${esc(sc.file)}) expected ${esc(expected)}: ${sc.held ? '<b>held</b>' : `<b>did not hold</b>: ${esc(sc.reasons.join('; '))}`}</p>`
      : '';
    const what = whatHappened(r);
    const firstHtml = what.firstViolation === null ? '' : ` <a href="#incident-${esc(what.firstViolation.incident)}">${esc(what.firstViolation.sentence)}</a>`;
    const rows = (Object.keys(CLASS_HELP) as FindingClass[]).map((c) => [{ html: `<a href="#class-${esc(c)}">${esc(c)}</a>` }, r.summary[c], CLASS_HELP[c]]);
    const counts = (Object.keys(CLASS_HELP) as FindingClass[]).map((c) => `${esc(r.summary[c])} ${esc(c)}`).join(' · ');
    return `<div class="banner b-${esc(r.verdict)}"><p class="verdict">${esc(r.verdict)} <span class="exit">exit code ${esc(r.exitCode)}</span></p>
<p>${esc(VERDICT_TEXT[r.verdict] ?? '')}</p>
<p class="summary">${esc(what.text)}${firstHtml}</p>${reason}${bug}${scenario}${shrunk}${availabilityHtml(r)}</div>
<details class="classes"><summary>Findings by class: ${counts} (what each class means)</summary>
${htmlTable(['class', 'findings', 'what it means'], rows)}
</details>`;
  },
};

/**
 * The report's sections, in order: the verdict (with what happened and how to read each class),
 * the incidents, then the charts over time and the fault timeline (so that both are within two
 * screens of the top), the run, the counts, one section per class (violations first, then the
 * read and runtime-map findings, rf1, async-ack, beyond-budget, info), the per-partition epoch
 * history and client attempts by status.
 */
export const HTML_SECTIONS: HtmlSection[] = [
  verdictSection,
  incidentsSection,
  chartsSection,
  faultTimelineSection,
  runSection,
  contractSection,
  countsSection,
  classSection('violation'),
  readFindingsSection,
  runtimeMapSection,
  classSection('rf1'),
  classSection('async-ack'),
  classSection('beyond-budget'),
  classSection('info'),
  epochHistorySection,
  retriesSection,
];

const STYLE = `body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;max-width:1500px}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top}
th{background:#f3f3f3}table.num td{text-align:right}table.num td:first-child{text-align:left}
.banner{padding:.6em 1em;border-radius:6px;margin:.5em 0;color:#fff}.banner p{margin:.3em 0}
.b-CERTIFIED{background:#1e7b34}.b-FAILED{background:#b00020}.b-INCONCLUSIVE{background:#b86e00}
.verdict{font-size:2em;font-weight:bold}.exit{font-size:.5em;opacity:.85}.reason{font-size:1.2em;font-weight:bold}
.howto{color:#444;font-style:italic}
tr.named,span.named{background:#ffe3e3}tr.read,span.read{background:#e3f0ff}details{margin:.3em 0}summary{cursor:pointer}
pre,code{font:12px ui-monospace,monospace;white-space:pre-wrap}nav{position:sticky;top:0;background:#fff;padding:.3em 0;border-bottom:1px solid #ddd;z-index:10}nav a{margin-right:1em}
ol.trace{margin:0;padding-left:1.2em;font:12px ui-monospace,monospace}ul.fo{margin:0;padding-left:1.1em}.sub{color:#777;font-size:.85em}
.h-Healthy{color:#1e7b34}.h-Degraded,.h-Recovering{color:#b86e00;font-weight:bold}.h-Unavailable{color:#b00020;font-weight:bold}
.k{font-weight:bold;padding:0 .3em}.sw{display:inline-block;width:1.6em;height:.9em;margin:0 .3em 0 .8em;border:1px solid #bbb;vertical-align:middle}
section{scroll-margin-top:2.5em}td:first-child{white-space:nowrap}
.story{font-weight:bold}.banner a{color:#fff}.summary{font-size:1.05em;max-width:75em}
ul.keys{list-style:none;padding:0;margin:.3em 0}ul.keys li{display:inline-block;margin:0 1.4em .15em 0;font:12px ui-monospace,monospace}.more{color:#444}details.group>summary,details.more-incidents>summary,details.classes>summary{font-weight:bold}.c-violation{color:#b00020;font-weight:bold}.chart{margin:.4em 0 1em}.chart-info{font-size:12px;color:#444;min-height:1.3em}.nodata{color:#777}`;

/**
 * Renders the self-contained report.html (DESIGN.md §6): no external resource (the uPlot chart
 * library and its stylesheet are inlined), every string from the store or the ledger escaped
 * with escape-html. Sections come from `sections` (default {@link HTML_SECTIONS}); they share
 * one {@link ReportContext} (and its memo) per page. The per-class sections drill down into the
 * first {@link DRILL_DOWN_PER_CLASS} keys: the key's latest writes with attempts and readable
 * traces, the faults and runtime-map changes around the ack, the final read and the verifier's
 * evidence. A pure function of the ledger and the results (no clock): the same ledger and
 * results give the same bytes.
 * @throws Error when the uPlot package cannot be read (see uplotAssets).
 */
export function renderHtmlReport(db: Database.Database, results: Results, sections: readonly HtmlSection[] = HTML_SECTIONS): string {
  const ctx = reportContext(db, results);
  const nav = sections.map((s) => `<a href="#${esc(s.id)}">${esc(s.nav ?? s.title.split(' (')[0])}</a>`).join('');
  const body = sections.map((s) => `<section id="${esc(s.id)}">\n<h2>${esc(s.title)}</h2>\n${s.render(ctx)}\n</section>`).join('\n');
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>zaris-certify: ${esc(results.target ? `${results.target.name}: ` : '')}${esc(results.verdict)}</title>
<style>${uplotAssets().css}</style>
<style>${STYLE}</style></head>
<body><h1>zaris-certify report${results.target ? `: ${esc(results.target.version)}` : ''}</h1><nav>${nav}</nav>
${body}
</body></html>
`;
}

/**
 * Writes `<dir>/report.html` (rendered in full first, then a temporary file and a rename: never
 * half-written; the temporary file is removed when writing fails).
 * @returns the file's path.
 * @throws Error when rendering fails or the directory cannot be written.
 */
export function writeHtmlReport(db: Database.Database, results: Results, dir: string): string {
  const path = join(dir, 'report.html');
  const html = renderHtmlReport(db, results);
  try {
    writeFileSync(`${path}.tmp`, html);
    renameSync(`${path}.tmp`, path);
  } catch (e) {
    rmSync(`${path}.tmp`, { force: true });
    throw e;
  }
  return path;
}
