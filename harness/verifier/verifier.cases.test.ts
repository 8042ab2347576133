import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { analyzeHistoryFile } from '../commands/analyze.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const casesDir = join(process.env.ZARIS_CASES_DIR ? resolve(process.env.ZARIS_CASES_DIR) : resolve(repoRoot, '../shared/cases'), 'verifier');

interface ExpectedFinding {
  class: string;
  kind: string;
  store: string;
  key: string;
  write: string;
}
interface Case {
  name: string;
  why: string;
  history: unknown;
  expected: { verdict: string; findings: ExpectedFinding[] };
}

const files = readdirSync(casesDir).filter((f) => f.endsWith('.json')).sort();
const work = mkdtempSync(join(tmpdir(), 'zaris-certify-cases-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const canon = (f: ExpectedFinding): string => JSON.stringify([f.class, f.kind, f.store, f.key, f.write]);

describe('verifier cases (shared/cases/verifier), through analyze --history', () => {
  it('finds the cases folder', () => {
    expect(files.length).toBeGreaterThan(0);
  });

  it.each(files)('%s', (file) => {
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
});
