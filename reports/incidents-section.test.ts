import type Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { verifyLedger } from '../harness/verifier/verifier.js';
import type { History } from '../ledger/history-format.js';
import { importHistory } from '../ledger/history-import.js';
import { INCIDENTS_FIXTURE, w } from '../ledger/test-support/fixtures.js';
import { classGroups } from './finding-groups.js';
import { reportContext } from './html-kit.js';
import { renderHtmlReport } from './html-report.js';
import { incidentsSection, INCIDENTS_SHOWN } from './incidents-section.js';
import { buildResults, type Results } from './results.js';
import { section } from './test-support/report-ledger.js';

const open: Database.Database[] = [];
afterEach(() => {
  while (open.length > 0) open.pop()!.close();
});

/** The incidents fixture with 30 more sync3 keys acked by n1 at epoch 3 before its kill (x00 hostile): incident #2 then holds 33 violations. */
function manyLosses(): { db: Database.Database; results: Results } {
  const h = JSON.parse(JSON.stringify(INCIDENTS_FIXTURE.history)) as History;
  for (let i = 0; i < 30; i++) {
    const key = i === 0 ? '<x00>' : `x${String(i).padStart(2, '0')}`;
    // acked at 4125, 4135, ... 4415 ms: between b1 (4104) and b3 (4904); b2 (4404) falls after x27
    h.writes.push(w(`x${i}`, 'sync3', key, 1, 4121 + i * 10, 4125 + i * 10, 'ok', { epoch: 3 }));
    h.finalReads.push({ store: 'sync3', key, value: null });
  }
  const db = importHistory(h, ':memory:');
  open.push(db);
  return { db, results: buildResults(db, verifyLedger(db)) };
}

describe('the incidents section', () => {
  it('lists an incident\'s first 20 findings, violations first then by time, escaped, then how many more and where', () => {
    const { db, results } = manyLosses();
    const two = results.incidents[1];
    expect([two.id, two.count, two.cause.kind]).toEqual([2, 33, 'crash']);
    expect(two.firstFindings.map((f) => f.key)).toEqual(['b1', '<x00>', ...Array.from({ length: 18 }, (_, i) => `x${String(i + 1).padStart(2, '0')}`)]);
    const html = section(renderHtmlReport(db, results), 'incidents');
    const inc = html.slice(html.indexOf('<details id="incident-2">'), html.indexOf('</details>', html.indexOf('<details id="incident-2">')));
    expect(inc).toContain('<p>The first 20 of 33 findings (violations first, then by time):</p>\n<ul class="keys"><li class="key c-violation">lost — sync3/b1 — b1</li><li class="key c-violation">lost — sync3/&lt;x00&gt; — x0</li>');
    expect(inc.match(/<li class="key/g)).toHaveLength(20);
    expect(inc).toContain('<p class="more">13 more: the full list is in results.json, the findings with <code>"incident": 2</code>.</p>');
    // and results.json holds those 33 with the incident's id
    expect(results.findings.filter((f) => f.incident === 2)).toHaveLength(33);
    // the rf1 incident (a1, a2) lists both; a one-finding incident lists nothing (its drill-down shows the key)
    expect(html).toContain('<p>Its 2 findings (violations first, then by time):</p>\n<ul class="keys"><li class="key c-rf1">lost — rf1/a1 — a1</li><li class="key c-rf1">lost — rf1/a2 — a2</li></ul>');
    const three = html.slice(html.indexOf('<details id="incident-3">'), html.indexOf('</details>', html.indexOf('<details id="incident-3">')));
    expect(three).not.toContain('<ul class="keys">');
    expect(three).toContain('Key sync3/d1 (stale-read, violation, read r1)');
  });

  it('shows the first 20 incidents, the rest behind one line that counts those with violations', () => {
    const { db, results } = manyLosses();
    // 28 incidents: the fixture's 4, seven times over, renumbered
    const incidents = Array.from({ length: 7 }, (_, k) => results.incidents.map((i) => ({ ...i, id: k * 4 + i.id, line: `#${k * 4 + i.id} ${i.line.split(' ').slice(1).join(' ')}` }))).flat();
    const html = incidentsSection.render(reportContext(db, { ...results, incidents }));
    expect(INCIDENTS_SHOWN).toBe(20);
    const more = html.indexOf('<details class="more-incidents">');
    expect(html.slice(0, more).match(/<details id="incident-/g)).toHaveLength(20);
    // incidents 21..28: three of every four hold violations (all but the rf1 losses)
    expect(html.slice(more)).toMatch(/^<details class="more-incidents"><summary>8 more incidents \(6 with violations\)<\/summary>\n<details id="incident-21">/);
    expect(html.slice(more).match(/<details id="incident-/g)).toHaveLength(8);
  });
});

describe('the class sections', () => {
  it('group the keys by incident, collapsed, at most 20 listed each, the rest counted with where to find them', () => {
    const { db, results } = manyLosses();
    const groups = classGroups(results, 'violation');
    // the stale read has its own section; b1..b3 and x00..x29 in #2, c1 in #4 (after the ownership change to n3)
    expect(groups.map((g) => [g.incident, g.held, g.listed.length])).toEqual([[2, 33, 20], [4, 1, 1]]);
    expect(groups.flatMap((g) => g.listed.map((x) => x.drilled))).toEqual(Array(21).fill(true));
    const v = section(renderHtmlReport(db, results), 'class-violation');
    expect(v).toContain('<p>34 findings, grouped by incident.');
    expect(v).toContain('<details class="group"><summary>#2 sync3/0: 33 violation findings, missing after the crash of n1 (fault f2 at 0:05.0)</summary>');
    expect(v).toContain('<details class="group"><summary>#4 sync3/0: 1 violation finding, missing after the ownership change to n3 at epoch 5 (0:09.0)</summary>');
    // in results.json's order (natural key order: b1 b2 b3, then x01 ...; the 5-character <x00> after x29)
    expect([...v.matchAll(/<details><summary>lost — sync3\/([^ ]+) — /g)].map((m) => m[1]).slice(0, 5)).toEqual(['b1', 'b2', 'b3', 'x01', 'x02']);
    expect(v).not.toContain('<x00>');
    expect(v).toContain('<p class="more">13 more: results.json, the violation findings with <code>"incident": 2</code>.</p>');
    expect(v).not.toContain('<details open');
  });

  it('drill down into at most 100 keys of a class', () => {
    const { results } = manyLosses();
    // 8 incidents of 20 listed keys each: the first 100 drilled
    const findings = results.findings.filter((f) => f.class === 'violation' && f.kind === 'lost');
    const many = { ...results, findings: Array.from({ length: 8 }, (_, k) => findings.slice(0, 20).map((f) => ({ ...f, incident: k + 1 }))).flat() };
    const groups = classGroups(many, 'violation');
    expect(groups.map((g) => g.listed.filter((x) => x.drilled).length)).toEqual([20, 20, 20, 20, 20, 0, 0, 0]);
  });
});
