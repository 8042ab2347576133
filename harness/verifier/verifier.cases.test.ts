import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateHistory } from '../../ledger/history-format.js';
import { judgeHistory } from '../../ledger/history-rules.js';
import { analyzeHistoryFile } from '../commands/analyze.js';

/**
 * The conformance suite: every case of shared/cases/verifier (zaris-history/1 and /2), through
 * `analyze --history` (the SQL verifier) and through the reference model
 * (ledger/history-rules.ts): verdict, exit code and the exact set of findings. The only test
 * that reads the shared cases ($ZARIS_CASES_DIR, else ../shared/cases from the repository root).
 */
const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const casesRoot = process.env.ZARIS_CASES_DIR ? resolve(process.env.ZARIS_CASES_DIR) : resolve(repoRoot, '../shared/cases');
const casesDir = join(casesRoot, 'verifier');
const missing = existsSync(casesDir) ? null : `the verifier cases are NOT checked: no ${casesDir} (set ZARIS_CASES_DIR to the shared cases folder)`;
if (missing !== null) console.warn(`verifier.cases.test.ts: ${missing}`);

interface ExpectedFinding {
  class: string;
  kind: string;
  store: string;
  key: string | null;
  write: string | null;
  partition?: number;
  read?: string;
}
interface Case {
  name: string;
  why: string;
  history: unknown;
  expected: { verdict: string; findings: ExpectedFinding[] };
}

const files = missing === null ? readdirSync(casesDir).filter((f) => f.endsWith('.json')).sort() : [];
let work = '';

const canon = (f: ExpectedFinding): string => JSON.stringify([f.class, f.kind, f.store, f.key, f.write, f.partition ?? null, f.read ?? null]);

describe.skipIf(missing !== null)(`verifier cases (shared/cases/verifier)${missing === null ? '' : ` [NOT RUN: ${missing}]`}`, () => {
  // made only when the suite runs (a skipped suite leaves no folder behind)
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'zaris-certify-cases-'));
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('finds the cases folder', () => {
    expect(files.length).toBeGreaterThan(0);
  });

  it.each(files)('%s, through analyze --history', (file) => {
    const c = JSON.parse(readFileSync(join(casesDir, file), 'utf8')) as Case;
    const dir = join(work, c.name);
    const historyFile = join(work, `${c.name}.history.json`);
    writeFileSync(historyFile, JSON.stringify(c.history));
    const results = analyzeHistoryFile(historyFile, dir);
    const written = JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8')) as { verdict: string; exitCode: number; findings: ExpectedFinding[] };
    expect(written).toEqual(JSON.parse(JSON.stringify(results)));
    expect(written.verdict, c.why).toBe(c.expected.verdict);
    expect(written.exitCode).toBe({ CERTIFIED: 0, FAILED: 1, INCONCLUSIVE: 2 }[c.expected.verdict]);
    expect(written.findings.map(canon).sort(), c.why).toEqual(c.expected.findings.map(canon).sort());
  });

  it.each(files)('%s, by the reference model', (file) => {
    const c = JSON.parse(readFileSync(join(casesDir, file), 'utf8')) as Case;
    const j = judgeHistory(validateHistory(c.history));
    expect(j.verdict, c.why).toBe(c.expected.verdict);
    expect(j.findings.map(canon).sort(), c.why).toEqual(c.expected.findings.map(canon).sort());
  });
});
