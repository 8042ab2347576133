/**
 * A vitest reporter (vitest.config.ts, beside the default one) that ends EVERY run, passed or
 * failed, with what was NOT run and why: the skipped tests grouped by the reason in their title
 * (`[NOT RUN: <reason>]`, test-support/capabilities.ts), a skip without a stated reason listed as
 * such; then one plain closing line `tests: N passed, N failed, N skipped` (the form CI reads).
 */
import path from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

/** One skipped test: where, and why. */
export interface SkippedTest {
  /** The test file, relative to the root. */
  file: string;
  fullName: string;
}

/** Counts of a finished run. */
export interface RunCounts {
  passed: number;
  failed: number;
  skipped: number;
}

const MARK = '[NOT RUN: ';
const NO_REASON = 'skipped with no reason given (it.skip, todo, or a filter)';

/** The reason carried by a skipped test's full name, or the no-reason text. */
export function reasonOf(fullName: string): string {
  const at = fullName.indexOf(MARK);
  if (at < 0) return NO_REASON;
  const end = fullName.indexOf(']', at + MARK.length);
  return fullName.slice(at + MARK.length, end < 0 ? undefined : end);
}

/**
 * The report's lines: a heading with the count, then one line per reason (most tests first) with
 * the files and their skipped counts; or one line saying every test ran.
 */
export function notRunLines(skipped: SkippedTest[], total: number): string[] {
  if (total === 0) return ['NOT run: every test (no test ran)'];
  if (skipped.length === 0) return [`NOT run: none (all ${total} tests ran)`];
  const byReason = new Map<string, Map<string, number>>();
  for (const s of skipped) {
    const r = reasonOf(s.fullName);
    const files = byReason.get(r) ?? new Map<string, number>();
    files.set(s.file, (files.get(s.file) ?? 0) + 1);
    byReason.set(r, files);
  }
  const sum = (m: Map<string, number>): number => [...m.values()].reduce((a, b) => a + b, 0);
  const lines = [`NOT run: ${skipped.length} of ${total} tests, skipped:`];
  for (const [reason, files] of [...byReason].sort((a, b) => sum(b[1]) - sum(a[1]) || a[0].localeCompare(b[0]))) {
    const where = [...files].sort((a, b) => a[0].localeCompare(b[0])).map(([f, n]) => `${f} (${n})`).join(', ');
    lines.push(`  ${sum(files)} because ${reason}: ${where}`);
  }
  return lines;
}

/** The plain closing line. */
export function closingLine(c: RunCounts): string {
  return `tests: ${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped`;
}

/** The reporter; see the module comment. */
export default class NotRunReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const skipped: SkippedTest[] = [];
    const counts: RunCounts = { passed: 0, failed: 0, skipped: 0 };
    let brokenFiles = 0;
    for (const m of testModules) {
      const file = path.relative(process.cwd(), m.moduleId);
      let n = 0;
      for (const t of m.children.allTests()) {
        n++;
        const state = t.result().state;
        if (state === 'passed') counts.passed++;
        else if (state === 'failed') counts.failed++;
        else if (state === 'skipped') {
          counts.skipped++;
          skipped.push({ file, fullName: t.fullName });
        }
      }
      // a file that failed before defining its tests (an error at import) counts as one failure
      if (n === 0 && m.state() === 'failed') brokenFiles++;
    }
    counts.failed += brokenFiles;
    const total = counts.passed + counts.failed + counts.skipped;
    const out = ['', ...notRunLines(skipped, total)];
    if (brokenFiles > 0) out.push(`${brokenFiles} test file(s) failed before defining any test (counted as failed)`);
    out.push(closingLine(counts));
    process.stdout.write(`${out.join('\n')}\n`);
  }
}
