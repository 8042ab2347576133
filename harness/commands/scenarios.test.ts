import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CertifyOutcome } from '../certify.js';
import type { CertifyOptions } from '../certify/options.js';
import type { Results } from '../../reports/results.js';
import { UsageError } from '../usage-error.js';
import { runScenarios, scenarioFiles } from './scenarios.js';

const scenario = (expect: string): string => `nodes: 3\nexpect: ${expect}\nsteps:\n  - fault: kill\n    target: leader\n    at: 1s\n    duration: 2s\n`;

describe('make scenarios (harness/commands/scenarios.ts)', () => {
  it('plays every scenario once, in name order, prints the table, writes scenarios.json, counts what did not hold', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'zaris-certify-scenarios-'));
    try {
      const lib = path.join(dir, 'lib');
      const runs = path.join(dir, 'runs');
      mkdirSync(lib);
      writeFileSync(path.join(lib, 'b-held.yaml'), scenario('{ verdict: CERTIFIED, allow: [rf1] }'));
      writeFileSync(path.join(lib, 'a-failed.yaml'), scenario('CERTIFIED'));
      writeFileSync(path.join(lib, 'notes.txt'), 'not a scenario');
      const seen: CertifyOptions[] = [];
      const certify = async (o: CertifyOptions): Promise<CertifyOutcome> => {
        seen.push(o);
        const failed = o.scenario!.name === 'a-failed';
        const results = {
          verdict: failed ? 'FAILED' : 'CERTIFIED',
          summary: { violation: failed ? 3 : 0, rf1: 2, 'async-ack': 0, 'beyond-budget': 0, info: 5 },
          scenario: { name: o.scenario!.name, file: o.scenario!.file, expected: o.scenario!.expect, held: !failed, reasons: failed ? ['verdict FAILED, expected CERTIFIED'] : [], skipped: [] },
        } as unknown as Results;
        return { runDir: `/runs/${o.scenario!.name}`, exitCode: failed ? 1 : 0, results, ackedPerSec: 0, failoverMs: [], runtime: 'process' };
      };
      const lines: string[] = [];
      const report = await runScenarios({ dir: lib, base: { runtime: 'process', runsDir: runs, rate: 10, writersPerStore: 1, keysPerWriter: 1 }, certify, print: (l) => lines.push(l) });
      expect(seen.map((o) => o.scenario!.name)).toEqual(['a-failed', 'b-held']);
      expect(seen[0].faultsExplicit).toBe(true);
      expect(report.held).toBe(1);
      expect(report.failed).toBe(1);
      expect(report.scenarios.map((r) => [r.name, r.expected, r.verdict, r.held, r.classes])).toEqual([
        ['a-failed', 'CERTIFIED', 'FAILED', false, { violation: 3, rf1: 2 }],
        ['b-held', 'CERTIFIED (allow rf1)', 'CERTIFIED', true, { rf1: 2 }],
      ]);
      const json = JSON.parse(readFileSync(path.join(runs, 'scenarios.json'), 'utf8'));
      expect(json.scenarios).toHaveLength(2);
      const table = lines[lines.indexOf('') + 1].split('\n');
      expect(table[0]).toMatch(/^scenario\s+expected\s+verdict\s+held\s+classes seen\s+seconds$/);
      expect(table[2]).toMatch(/^a-failed\s+CERTIFIED\s+FAILED\s+NO\s+violation 3, rf1 2\s+\d+$/);
      expect(table[3]).toMatch(/^b-held\s+CERTIFIED \(allow rf1\)\s+CERTIFIED\s+yes\s+rf1 2\s+\d+$/);
      expect(lines[lines.length - 1]).toBe(`1 of 2 scenarios held their expectation; ${path.join(runs, 'scenarios.json')}`);
      expect(scenarioFiles(lib, 'held')).toEqual([path.join(lib, 'b-held.yaml')]);
      expect(() => scenarioFiles(lib, 'nothing')).toThrow(UsageError);
      // a malformed file stops everything before any run
      writeFileSync(path.join(lib, 'c-bad.yaml'), scenario('CERTIFIED').replace('nodes: 3', 'nodes: 7'));
      seen.length = 0;
      await expect(runScenarios({ dir: lib, base: { runtime: 'process', runsDir: runs, rate: 10, writersPerStore: 1, keysPerWriter: 1 }, certify, print: () => undefined })).rejects.toThrow(/c-bad.yaml: nodes: must be one of 3, 5, got 7/);
      expect(seen).toHaveLength(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
