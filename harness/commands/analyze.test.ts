import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { historyOf } from '../../ledger/test-support/fixtures.js';
import { UsageError } from '../usage-error.js';
import { analyzeHistoryFile, analyzeRunDir } from './analyze.js';
import { exportRun } from './export.js';
import { LedgerFileError } from './run-ledger.js';

const work = mkdtempSync(join(tmpdir(), 'zaris-certify-analyze-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function historyFile(fixtureName: string): string {
  const file = join(work, `${fixtureName}.history.json`);
  writeFileSync(file, JSON.stringify(historyOf(fixtureName)));
  return file;
}

const OUTPUTS = ['results.json', 'junit.xml', 'report.html'];
const read = (dir: string): string[] => OUTPUTS.map((f) => readFileSync(join(dir, f), 'utf8'));

describe('analyzeHistoryFile', () => {
  it('imports, verifies and writes the three outputs beside the ledger', () => {
    const out = join(work, 'mixed');
    const r = analyzeHistoryFile(historyFile('mixed-run'), out);
    expect(r.verdict).toBe('FAILED');
    for (const f of [...OUTPUTS, 'ledger.sqlite']) expect(existsSync(join(out, f)), f).toBe(true);
    expect(JSON.parse(readFileSync(join(out, 'results.json'), 'utf8'))).toEqual(JSON.parse(JSON.stringify(r)));
    // a second analysis into the same folder replaces the ledger and reproduces every byte
    const before = read(out);
    analyzeHistoryFile(historyFile('mixed-run'), out);
    expect(read(out)).toEqual(before);
  });

  it('turns user mistakes into one-line UsageErrors', () => {
    const missing = join(work, 'nope.json');
    expect(() => analyzeHistoryFile(missing, join(work, 'o1'))).toThrow(new UsageError(`cannot read history file ${missing}: ENOENT`));
    const notJson = join(work, 'bad.json');
    writeFileSync(notJson, '{"format": "zaris-history/1",');
    expect(() => analyzeHistoryFile(notJson, join(work, 'o2'))).toThrow(UsageError);
    expect(() => analyzeHistoryFile(notJson, join(work, 'o2'))).toThrow(/^.*bad\.json: not valid JSON: /);
    const invalid = join(work, 'invalid.json');
    const h = historyOf('clean-sync') as unknown as { writes: { outcome: string }[] };
    h.writes[1].outcome = 'maybe';
    writeFileSync(invalid, JSON.stringify(h));
    expect(() => analyzeHistoryFile(invalid, join(work, 'o3'))).toThrow(new UsageError(`${invalid}: writes[1].outcome must be ok, fail or info`));
    expect(existsSync(join(work, 'o3'))).toBe(false);
  });
});

describe('analyzeRunDir', () => {
  it('re-verifies a stored run from its ledger alone, byte for byte', () => {
    const out = join(work, 'rerun');
    const first = analyzeHistoryFile(historyFile('v2-async-ack-allowed'), out);
    const before = read(out);
    for (const f of OUTPUTS) rmSync(join(out, f));
    expect(analyzeRunDir(out)).toEqual(first);
    expect(read(out)).toEqual(before);
  });

  it('says what is wrong with the directory', () => {
    const missing = join(work, 'no-such-run');
    expect(() => analyzeRunDir(missing)).toThrow(new UsageError(`run directory ${missing} does not exist`));
    const empty = join(work, 'empty-run');
    mkdirSync(empty);
    expect(() => analyzeRunDir(empty)).toThrow(new UsageError(`${empty} has no ledger.sqlite: not a run directory`));
    const junk = join(work, 'junk-run');
    mkdirSync(junk);
    writeFileSync(join(junk, 'ledger.sqlite'), 'this is not a database, just text that is long enough to look like a file');
    // a ledger file that is not one is a harness error (exit 3), not a bad argument
    expect(() => analyzeRunDir(junk)).toThrow(LedgerFileError);
    expect(() => analyzeRunDir(junk)).toThrow(/is not a zaris-certify ledger/);
  });
});

describe('exportRun', () => {
  it('writes <dir>/history.json, whose analysis reproduces the run results', () => {
    const out = join(work, 'to-export');
    analyzeHistoryFile(historyFile('v2-beyond-budget-allowed'), out);
    const file = exportRun(out);
    expect(file).toBe(join(out, 'history.json'));
    const again = join(work, 're-imported');
    analyzeHistoryFile(file, again);
    expect(readFileSync(join(again, 'results.json'), 'utf8')).toBe(readFileSync(join(out, 'results.json'), 'utf8'));
    const other = join(work, 'elsewhere.json');
    expect(exportRun(out, other)).toBe(other);
    expect(readFileSync(other, 'utf8')).toBe(readFileSync(file, 'utf8'));
    expect(() => exportRun(join(work, 'missing-run'))).toThrow(UsageError);
  });
});

describe('UsageError', () => {
  it('keeps its message on one line', () => {
    expect(new UsageError('bad\nthing\r\n here').message).toBe('bad thing here');
  });
});
