import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteLedger } from '../../ledger/sqlite-ledger.js';
import { META } from '../../ledger/schema.js';
import { FIXTURES, ISSUE_10, type Fixture, type FixtureFinding } from '../../ledger/test-support/fixtures.js';
import { analyzeHistoryFile, analyzeRunDir } from '../commands/analyze.js';
import { exportRun } from '../commands/export.js';
import { LedgerFileError } from '../commands/run-ledger.js';

const work = mkdtempSync(join(tmpdir(), 'zaris-certify-fixtures-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

const canon = (f: FixtureFinding): string => JSON.stringify([f.class, f.kind, f.store, f.key, f.write, f.partition ?? null, f.read ?? null]);

function analyse(f: Fixture): { dir: string; results: ReturnType<typeof analyzeHistoryFile> } {
  const file = join(work, `${f.name}.json`);
  writeFileSync(file, JSON.stringify(f.history));
  const dir = join(work, f.name);
  return { dir, results: analyzeHistoryFile(file, dir) };
}

describe('the SQL verifier on the fixtures, through analyze --history', () => {
  it.each(FIXTURES.map((f) => [f.name, f] as const))('%s', (_name, f) => {
    const { results } = analyse(f);
    expect(results.verdict, f.why).toBe(f.verdict);
    expect(results.exitCode).toBe({ CERTIFIED: 0, FAILED: 1, INCONCLUSIVE: 2 }[f.verdict]);
    expect(results.findings.map(canon).sort(), f.why).toEqual(f.findings.map(canon).sort());
    if (f.reason !== undefined) expect(results.inconclusiveReason).toBe(f.reason);
    expect(results.rules).toBe(f.history.format);
  });
});

describe('issue 10: the small inputs that came out wrong', () => {
  it('an async3 owner that never lost ownership: its lost write is a violation, and the evidence says why', () => {
    const { dir, results } = analyse(ISSUE_10.ownerNeverLost);
    expect(results.verdict).toBe('FAILED');
    const html = readFileSync(join(dir, 'report.html'), 'utf8');
    expect(html).toContain('its owner neither crashed nor lost the partition to another node at a higher epoch');
  });

  it('a run the harness never finished: its export, analysed, is INCONCLUSIVE with the reason carried through', () => {
    const run = join(work, 'died-run');
    mkdirSync(run);
    const ledger = new SqliteLedger(join(run, 'ledger.sqlite'));
    ledger.setMeta(META.status, 'running');
    ledger.setMeta(META.inconclusiveReason, 'harness error: out of memory');
    ledger.registerTopology({
      nodes: ['n1', 'n2', 'n3'].map((id, i) => ({ id, host: '127.0.0.1', clientPort: 7000 + i, clusterPort: 7100 + i, preferredPrimary: i === 0 })),
      stores: [{ name: 'sync3', replicationFactor: 3, ackMode: 'sync', segments: 1 }],
      partitions: [{ store: 'sync3', partition: 0, replicas: ['n1', 'n2', 'n3'] }],
    });
    ledger.registerKeys([{ keyId: 1, store: 'sync3', key: 'k1', partition: 0, writer: 0 }]);
    const { w } = ledger.invoke(1, 1, 'put', 10);
    ledger.complete(w, { completeMs: 12, outcome: 'ok', status: 'Ok', attempts: 1, ack: { node: 'n1', epoch: 1, version: 1, revision: 1, ackMode: 'sync', copies: 3 } });
    const f = ledger.faultStart({ kind: 'kill', nodes: ['n2'], startMs: 20 });
    ledger.faultEffective(f, 21);
    ledger.faultEnd(f, 40);
    ledger.finalRead(1, 'w1.1', { keyId: 1, seq: 1 }, false, 50);
    ledger.close();
    const direct = analyzeRunDir(run);
    const reason = 'the run did not finish (its harness stopped before the end phase); harness error: out of memory';
    expect([direct.verdict, direct.inconclusiveReason]).toEqual(['INCONCLUSIVE', reason]);
    const history = JSON.parse(readFileSync(exportRun(run), 'utf8')) as { format: string; run: Record<string, unknown> };
    expect(history.format).toBe('zaris-history/2');
    expect(history.run).toMatchObject({ status: 'running', inconclusiveReason: 'harness error: out of memory' });
    const again = analyzeHistoryFile(join(run, 'history.json'), join(work, 'died-run-again'));
    expect([again.verdict, again.inconclusiveReason]).toEqual(['INCONCLUSIVE', reason]);
  });

  it("an INCONCLUSIVE run's junit.xml has a failing test case", () => {
    const { dir } = analyse(ISSUE_10.nothingAcknowledged);
    const xml = readFileSync(join(dir, 'junit.xml'), 'utf8');
    expect(xml).toMatch(/<testcase classname="zaris-certify.verdict" name="certified">\s*<failure type="INCONCLUSIVE" message="INCONCLUSIVE: no write was acknowledged">/);
    expect(xml).toMatch(/<testsuites name="zaris-certify" tests="\d+" failures="1"/);
  });

  it('a broken ledger file given to analyze is a harness error: exit 3, one line', () => {
    const run = join(work, 'broken-run');
    mkdirSync(run);
    writeFileSync(join(run, 'ledger.sqlite'), 'this is not a database, just text that is long enough to look like a file');
    expect(() => analyzeRunDir(run)).toThrow(LedgerFileError);
    let status = 0;
    let stderr = '';
    try {
      execFileSync(process.execPath, [join(repoRoot, 'dist/harness/cli.js'), 'analyze', run], { stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (e) {
      status = (e as { status: number }).status;
      stderr = String((e as { stderr: Buffer }).stderr);
    }
    expect(status).toBe(3);
    expect(stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(stderr).toMatch(/^zaris-certify: harness error: .*broken-run\/ledger\.sqlite is not a zaris-certify ledger/);
  });
});
