import type { AllowedClass, Expectation, ScenarioRecord } from './scenario.js';

/** results.json `scenario` (issue 13): what the scenario expected and whether the run held to it. */
export interface ScenarioResult {
  name: string;
  file: string;
  expected: Expectation;
  /** The verdict was the expected one, only allowed classes in `allow` (when given) had findings, and every step ran. */
  held: boolean;
  /** Why it did not hold (empty when it held), one line each. */
  reasons: string[];
  /** Steps that never ran, with why (a trigger that never came, a budget that never allowed it, a role that never answered). */
  skipped: Array<{ step: string; reason: string }>;
}

/**
 * Judges a run against its scenario's expectation (pure).
 * @param summary findings per class of the run (results.json `summary`).
 */
export function judgeScenario(rec: ScenarioRecord, verdict: string, summary: Readonly<Record<string, number>>, skipped: ReadonlyArray<{ step: string; reason: string }>): ScenarioResult {
  const reasons: string[] = [];
  if (verdict !== rec.expect.verdict) reasons.push(`verdict ${verdict}, expected ${rec.expect.verdict}`);
  if (rec.expect.allow !== undefined) {
    for (const c of ['rf1', 'async-ack', 'beyond-budget'] as AllowedClass[]) {
      const n = summary[c] ?? 0;
      if (n > 0 && !rec.expect.allow.includes(c)) reasons.push(`${n} ${c} loss${n === 1 ? '' : 'es'}, which the scenario does not allow`);
    }
  }
  for (const s of skipped) reasons.push(`step "${s.step}" did not run: ${s.reason}`);
  return { name: rec.name, file: rec.file, expected: rec.expect, held: reasons.length === 0, reasons, skipped: [...skipped] };
}

/**
 * The exit code of a scenario run (docs/scenarios.md): 0 when the expectation held; otherwise the verdict's
 * code (1 FAILED, 2 INCONCLUSIVE), and 1 when the verdict itself was CERTIFIED.
 */
export function scenarioExitCode(held: boolean, verdictExitCode: number): number {
  if (held) return 0;
  return verdictExitCode === 0 ? 1 : verdictExitCode;
}
