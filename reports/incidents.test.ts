import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { verifyLedger } from '../harness/verifier/verifier.js';
import { importHistory } from '../ledger/history-import.js';
import { INCIDENTS_FIXTURE } from '../ledger/test-support/fixtures.js';
import { renderHtmlReport } from './html-report.js';
import { buildIncidents, firstViolationSentence } from './incidents.js';
import { buildResults } from './results.js';

const work = mkdtempSync(join(tmpdir(), 'zaris-certify-incidents-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const open: Database.Database[] = [];
afterEach(() => {
  while (open.length > 0) open.pop()!.close();
});
let n = 0;

function verified(): Database.Database {
  const db = importHistory(JSON.parse(JSON.stringify(INCIDENTS_FIXTURE.history)), join(work, `i${++n}.sqlite`));
  open.push(db);
  const v = verifyLedger(db);
  expect(v.verdict).toBe(INCIDENTS_FIXTURE.verdict);
  const found = db.prepare('SELECT class, kind, store, key, write, read FROM findings ORDER BY store, key').all();
  expect(found).toHaveLength(INCIDENTS_FIXTURE.findings.length);
  return db;
}

describe('incidents', () => {
  it('groups the findings by store, partition and the crash or ownership change after which the writes were missing', () => {
    const list = buildIncidents(verified());
    expect(list.map((i) => [i.id, i.store, i.partition, i.cause.kind, i.count])).toEqual([
      [1, 'rf1', 0, 'crash', 2],
      [2, 'sync3', 0, 'crash', 3],
      [3, 'sync3', 0, 'ownership-change', 1],
      [4, 'sync3', 0, 'ownership-change', 1],
    ]);
    const [rf1, crash, stale, owner] = list;
    // rf1: allowed, after the kill of n1; the runtime map of rf1/0 never changed
    expect(rf1.class).toBe('rf1');
    expect(rf1.classes).toEqual({ rf1: 2 });
    expect(rf1.cause).toMatchObject({ kind: 'crash', node: 'n1', fault: 'f2', atMs: 5012 });
    expect(rf1.windowMs).toEqual({ from: 4004, to: 4504 });
    expect(rf1.faultBefore).toMatchObject({ fault: 'f1', kind: 'pause', nodes: ['n3'], startMs: 1000 });
    expect(rf1.transition).toEqual({ from: { active: 'n1', epoch: 1 }, to: null });
    // sync3: three violations after the same crash, one line
    expect(crash).toMatchObject({ class: 'violation', classes: { violation: 3 }, kinds: { lost: 3 }, windowMs: { from: 4104, to: 4904 } });
    expect(crash.cause).toMatchObject({ kind: 'crash', node: 'n1', fault: 'f2', faultId: 2, atMs: 5012 });
    expect(crash.transition).toEqual({ from: { active: 'n1', epoch: 3 }, to: { active: 'n2', epoch: 4, atMs: 6000 } });
    expect(crash.example).toEqual({ class: 'violation', kind: 'lost', key: 'b1', write: 'b1' });
    expect(crash.line).toBe(
      '#2 sync3/0: 3 lost (3 violation), missing after the crash of n1 (fault f2 at 0:05.0); from 0:04.1 to 0:04.9; fault before: f1 pause of n3 at 0:01.0; runtime map n1@e3 → n2@e4 at 0:06.0',
    );
    // the stale read: in epoch 4, which n2 took at 6,000 ms, after the kill of n1
    expect(stale.kinds).toEqual({ 'stale-read': 1 });
    expect(stale.cause).toMatchObject({ kind: 'ownership-change', node: 'n2', epoch: 4, atMs: 6000 });
    expect(stale.windowMs).toEqual({ from: 7500, to: 7500 });
    expect(stale.faultBefore).toMatchObject({ fault: 'f2', kind: 'kill' });
    // the map at the cause: just before n2's epoch 4 was sampled, then n2@e4
    expect(stale.transition).toEqual({ from: { active: 'n1', epoch: 3 }, to: { active: 'n2', epoch: 4, atMs: 6000 } });
    expect(stale.example).toEqual({ class: 'violation', kind: 'stale-read', key: 'd1', write: 'd1.1', read: 'r1' });
    // c1: no crash of its acking node n2, missing after the ownership change to n3
    expect(owner.cause).toMatchObject({ kind: 'ownership-change', node: 'n3', epoch: 5, atMs: 9000 });
    expect(owner.windowMs).toEqual({ from: 8004, to: 8004 });
    expect(owner.transition).toEqual({ from: { active: 'n2', epoch: 4 }, to: { active: 'n3', epoch: 5, atMs: 9000 } });
  });

  it('the verdict banner names the first violation incident in one sentence; results.json carries them; each line opens into one key', () => {
    const db = verified();
    const results = buildResults(db, verifyLedger(db));
    expect(results.incidents).toHaveLength(4);
    expect(results.incidents.reduce((s, i) => s + i.count, 0)).toBe(INCIDENTS_FIXTURE.findings.length);
    const sentence = firstViolationSentence(results.incidents);
    expect(sentence).toBe(
      'First violation (incident #2): 3 violations (3 lost acknowledged writes) of sync3/0 between 0:04.1 and 0:04.9, missing after the crash of n1 (fault f2 at 0:05.0); the runtime map went n1@e3 → n2@e4 at 0:06.0.',
    );
    const html = renderHtmlReport(db, results);
    const banner = html.slice(html.indexOf('<div class="banner'), html.indexOf('</div>', html.indexOf('<div class="banner')));
    expect(banner).toContain('<a href="#incident-2">First violation (incident #2): 3 violations (3 lost acknowledged writes) of sync3/0');
    const section = html.slice(html.indexOf('<section id="incidents">'), html.indexOf('</section>', html.indexOf('<section id="incidents">')));
    expect(section).toContain('4 incidents of 7 findings.');
    expect(section.match(/<details id="incident-\d">/g)).toHaveLength(4);
    // incident 2 drills into b1: its write row and the faults around its ack
    const two = section.slice(section.indexOf('<details id="incident-2">'), section.indexOf('</details>', section.indexOf('<details id="incident-2">')));
    expect(two).toContain('Key sync3/b1 (lost, violation)');
    expect(two).toContain('<td>b1</td><td>put</td>');
  });

  it('a certified run with allowed losses only has no violation sentence', () => {
    const h = JSON.parse(JSON.stringify(INCIDENTS_FIXTURE.history));
    h.stores = h.stores.filter((s: { name: string }) => s.name === 'rf1');
    h.partitions = h.partitions.filter((s: { store: string }) => s.store === 'rf1');
    h.ownership = h.ownership.filter((s: { store: string }) => s.store === 'rf1');
    h.writes = h.writes.filter((s: { store: string }) => s.store === 'rf1');
    h.reads = [];
    h.finalReads = h.finalReads.filter((s: { store: string }) => s.store === 'rf1');
    const db = importHistory(h, join(work, `c${++n}.sqlite`));
    open.push(db);
    const results = buildResults(db, verifyLedger(db));
    expect(results.verdict).toBe('CERTIFIED');
    expect(results.incidents.map((i) => [i.class, i.count, i.cause.kind])).toEqual([['rf1', 2, 'crash']]);
    expect(firstViolationSentence(results.incidents)).toBeNull();
    expect(renderHtmlReport(db, results)).not.toContain('First violation');
  });
});
