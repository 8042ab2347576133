import { mkdirSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { CertifyOutcome } from '../certify.js';
import type { CertifyOptions } from '../certify/options.js';
import { describeExpectation, loadScenario, type Scenario } from '../scenario/scenario.js';
import { UsageError } from '../usage-error.js';

/** One row of `make scenarios` (runs/scenarios.json `scenarios[]`). */
export interface ScenarioRow {
  name: string;
  file: string;
  expected: string;
  /** CERTIFIED, FAILED, INCONCLUSIVE, or ERROR (the harness failed: see `reasons`). */
  verdict: string;
  held: boolean;
  /** Findings per class that appeared (violation, rf1, async-ack, beyond-budget), zero classes left out. */
  classes: Record<string, number>;
  seconds: number;
  runDir: string | null;
  reasons: string[];
}

/** runs/scenarios.json. */
export interface ScenariosReport {
  startedAt: string;
  runtime: string;
  scenarios: ScenarioRow[];
  held: number;
  failed: number;
}

/** Every scenario file of a folder (`*.yaml`, sorted), filtered by a name substring. */
export function scenarioFiles(dir: string, only?: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir).filter((f) => f.endsWith('.yaml') || f.endsWith('.yml'));
  } catch (e) {
    throw new UsageError(`scenarios: cannot read ${dir} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  const picked = names.filter((f) => !only || only.split(',').some((o) => f.includes(o.trim()))).sort();
  if (picked.length === 0) throw new UsageError(`scenarios: no scenario file in ${dir}${only ? ` matches ONLY=${only}` : ''}`);
  return picked.map((f) => path.join(dir, f));
}

/** The table `make scenarios` prints: one line per scenario. */
export function formatTable(rows: readonly ScenarioRow[]): string {
  const head = ['scenario', 'expected', 'verdict', 'held', 'classes seen', 'seconds'];
  const cells = rows.map((r) => [r.name, r.expected, r.verdict, r.held ? 'yes' : 'NO', Object.entries(r.classes).map(([k, v]) => `${k} ${v}`).join(', ') || '-', r.seconds.toFixed(0)]);
  const width = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (c: string[]): string => c.map((x, i) => (i === c.length - 1 ? x.padStart(width[i]) : x.padEnd(width[i]))).join('  ');
  return [line(head), line(width.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n');
}

/**
 * `make scenarios` (issue 13): plays every scenario of `dir` one after another (one run at a time),
 * prints a table (scenario, expected, verdict, held, classes seen, seconds) and writes
 * `<runsDir>/scenarios.json`. Every file is parsed first: a malformed one stops everything before
 * any run (UsageError, exit 64).
 * @returns the report; the caller exits non-zero when `failed > 0`.
 */
export async function runScenarios(o: {
  dir: string;
  only?: string;
  base: Omit<CertifyOptions, 'scenario' | 'durationMs' | 'faults' | 'faultsExplicit' | 'beyondBudget' | 'escalationTimeoutMs' | 'seed'> & { seed?: number };
  certify: (opts: CertifyOptions) => Promise<CertifyOutcome>;
  print: (line: string) => void;
}): Promise<ScenariosReport> {
  const files = scenarioFiles(o.dir, o.only);
  const parsed: Scenario[] = files.map((f) => loadScenario(f));
  const report: ScenariosReport = { startedAt: new Date().toISOString(), runtime: o.base.runtime, scenarios: [], held: 0, failed: 0 };
  for (const [i, sc] of parsed.entries()) {
    o.print(`[${i + 1}/${parsed.length}] ${sc.name}: expected ${describeExpectation(sc.expect)} ...`);
    const t0 = performance.now();
    const row: ScenarioRow = { name: sc.name, file: sc.file, expected: describeExpectation(sc.expect), verdict: 'ERROR', held: false, classes: {}, seconds: 0, runDir: null, reasons: [] };
    try {
      const out = await o.certify({ ...o.base, scenario: sc, durationMs: sc.maxDurationMs, faults: [], faultsExplicit: true, beyondBudget: sc.beyondBudget, escalationTimeoutMs: sc.escalationTimeoutMs, seed: o.base.seed ?? 1 });
      row.runDir = out.runDir;
      const r = out.results;
      if (r) {
        row.verdict = r.verdict;
        for (const [k, v] of Object.entries(r.summary)) if (k !== 'info' && v > 0) row.classes[k] = v;
        row.held = r.scenario?.held ?? false;
        row.reasons = r.scenario?.reasons ?? ['no scenario verdict in results.json'];
        if (r.inconclusiveReason) row.reasons.push(`inconclusive: ${r.inconclusiveReason}`);
      } else row.reasons = ['no results'];
    } catch (e) {
      row.reasons = [`harness error: ${(e as Error).message.split('\n')[0]}`];
    }
    row.seconds = (performance.now() - t0) / 1000;
    if (row.held) report.held++;
    else report.failed++;
    report.scenarios.push(row);
    o.print(`    ${row.verdict}, expectation ${row.held ? 'held' : `did NOT hold: ${row.reasons.join('; ')}`} (${row.seconds.toFixed(0)} s, ${row.runDir ?? 'no run'})`);
    if (o.base.signal?.aborted) break;
  }
  mkdirSync(o.base.runsDir, { recursive: true });
  const file = path.join(o.base.runsDir, 'scenarios.json');
  writeFileSync(`${file}.tmp`, `${JSON.stringify(report, null, 2)}\n`);
  renameSync(`${file}.tmp`, file);
  o.print('');
  o.print(formatTable(report.scenarios));
  o.print(`${report.held} of ${report.scenarios.length} scenarios held their expectation; ${file}`);
  return report;
}
