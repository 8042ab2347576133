import type Database from 'better-sqlite3';
import { KeyLogReader } from '../ledger/key-log.js';
import { DrillDetails, drillDown } from './drill-down.js';
import { INCIDENTS_DRILLED } from './finding-groups.js';
import { findingLabel, partitionEvidenceText } from './finding-sections.js';
import type { HtmlSection } from './html-kit.js';
import { esc, parseJson } from './html-kit.js';
import type { Incident } from './incidents.js';
import type { ResultFinding, Results } from './results.js';

/**
 * The report's incidents section (DESIGN.md §6, reports/incidents.ts): every finding grouped by
 * what lost it, one line each, right under the verdict. Each line opens into the incident's first
 * findings (at most 20, violations first, the rest counted and found in results.json by their `incident`) and one
 * key's drill-down. The first {@link INCIDENTS_SHOWN} lines are shown; the rest wait behind one
 * line, so that the charts stay near the top of a run with hundreds of incidents.
 */

/** Incident lines shown before the "N more incidents" line. */
export const INCIDENTS_SHOWN = 20;

const INCIDENTS_HELP =
  'Every finding (all classes) grouped by what lost it: its store and partition, and the crash or ownership change after which the writes were missing (read findings: the ownership change that put the partition at the epoch the read saw; acks that are no loss: the node and epoch that acknowledged; runtime-map findings: their kind). One line each: the findings, the cause, the window of the lost acks, the last fault before it, the runtime-map transition. Each opens into its first keys and one key\'s writes.';

function incidentDrill(db: Database.Database, inc: Incident, keyLog: KeyLogReader, details: DrillDetails): string {
  const e = inc.example;
  if (e.key === null) {
    const d = db.prepare('SELECT detail FROM findings WHERE kind = ? AND store = ? AND partition IS ? AND key IS NULL LIMIT 1').pluck().get(e.kind, inc.store, inc.partition) as string | undefined;
    return `<p class="story">${esc(partitionEvidenceText(e.kind, (parseJson(d) ?? {}) as Record<string, unknown>))}</p>`;
  }
  const f: ResultFinding = { class: e.class, kind: e.kind, store: inc.store, key: e.key, write: e.write };
  return `<p>Key ${esc(inc.store)}/${esc(e.key)} (${esc(e.kind)}, ${esc(e.class)}${e.read === undefined ? '' : `, read ${esc(e.read)}`}):</p>\n${drillDown(db, f, keyLog, details)}`;
}

/**
 * An incident's first findings as a list (at most 20), then how many more and where they are:
 * results.json's findings with its id, or, past results.json's 1,000 per class, the ledger's
 * findings table. `held`: how many of its findings results.json holds.
 */
export function incidentFindingsHtml(inc: Incident, held: number): string {
  const listed = inc.firstFindings ?? [];
  if (listed.length === 0 || inc.count === 1) return '';
  const items = listed.map((f) => `<li class="key c-${esc(f.class)}">${findingLabel(inc.store, f)}</li>`);
  const rest = inc.count - listed.length;
  const where =
    held >= inc.count
      ? `the full list is in results.json, the findings with <code>"incident": ${esc(inc.id)}</code>`
      : `results.json holds ${esc(held)} of the ${esc(inc.count)} (the findings with <code>"incident": ${esc(inc.id)}</code>; at most 1,000 per class), the ledger's findings table all of them`;
  const more = rest > 0 ? `\n<p class="more">${esc(rest)} more: ${where}.</p>` : '';
  const first = rest > 0 ? `The first ${listed.length} of ${inc.count} findings (violations first, then by time):` : `Its ${listed.length} findings (violations first, then by time):`;
  return `<p>${esc(first)}</p>\n<ul class="keys">${items.join('')}</ul>${more}`;
}

/** How many of each incident's findings results.json holds (its findings' `incident`). */
function heldByIncident(r: Results): Map<number, number> {
  const m = new Map<number, number>();
  for (const f of r.findings) if (f.incident !== undefined) m.set(f.incident, (m.get(f.incident) ?? 0) + 1);
  return m;
}

/** The incidents, one line each (see the module comment). */
export const incidentsSection: HtmlSection = {
  id: 'incidents',
  title: 'Incidents (findings grouped by what lost them)',
  render: ({ db, results: r, memo }) => {
    const list = r.incidents ?? [];
    const help = `<p class="howto">${esc(INCIDENTS_HELP)}</p>`;
    if (list.length === 0) return `${help}\n<p>None.</p>`;
    const keyLog = memo('key-log', () => new KeyLogReader(db));
    const details = memo('drill-details', () => new DrillDetails(db, r));
    const held = heldByIncident(r);
    const items = list.map((inc, i) => {
      const head = `<span class="c-${esc(inc.class)}">${esc(inc.line)}</span>`;
      return i < INCIDENTS_DRILLED
        ? `<details id="incident-${esc(inc.id)}"><summary>${head}</summary>\n${incidentFindingsHtml(inc, held.get(inc.id) ?? 0)}\n${incidentDrill(db, inc, keyLog, details)}\n</details>`
        : `<div class="plain" id="incident-${esc(inc.id)}">${head}</div>`;
    });
    const shown = items.slice(0, INCIDENTS_SHOWN).join('\n');
    const rest = list.length - INCIDENTS_SHOWN;
    const hidden =
      rest <= 0
        ? ''
        : `\n<details class="more-incidents"><summary>${esc(rest)} more incident${rest === 1 ? '' : 's'} (${esc(list.slice(INCIDENTS_SHOWN).filter((i) => (i.classes.violation ?? 0) > 0).length)} with violations)</summary>\n${items.slice(INCIDENTS_SHOWN).join('\n')}\n</details>`;
    return `${help}\n<p>${esc(list.length)} incident${list.length === 1 ? '' : 's'} of ${esc(list.reduce((n, i) => n + i.count, 0))} findings.</p>\n${shown}${hidden}`;
  },
};
