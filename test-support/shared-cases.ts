/**
 * The shared cases for the `*.cases.test.ts` conformance suites (the only tests that may read
 * them, HELPERS.md): `$ZARIS_CASES_DIR`, else `../shared/cases` beside the checkout, as decided
 * once per run by test-support/global-setup.ts. Where neither exists the suites are skipped, and
 * the run says so in one loud line at its start and in the NOT-run list at its end.
 *
 * ```ts
 * const cases = sharedCases();
 * const file = cases.json<{ cases: RetryCase[] }>('client-retry.json', { cases: [] });
 * describe.skipIf(cases.skip)(cases.title('client-retry.json cases (seed 000)'), () => {
 *   it('has cases', () => expect(file.cases.length).toBeGreaterThan(0));
 *   it.each(file.cases.map((c) => [c.name, c] as const))('%s', ...);
 * });
 * ```
 * Keep at least one plain `it` in the skipped suite (it.each over no cases makes no test), so
 * that the skip shows in the counts.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { capabilities, needs, type Need } from './capabilities.js';

/** The shared cases of this run; see the module comment. */
export interface SharedCases extends Need {
  /** The absolute cases folder, or null when the suites are skipped. */
  dir: string | null;
  /**
   * The absolute path of `rel` (e.g. `verifier/lost-ack.json`) in the cases folder.
   * @throws Error when there is no cases folder (call it only inside a test that is not skipped).
   */
  file(rel: string): string;
  /**
   * `rel` parsed as JSON, or `whenSkipped` when there is no cases folder (for building test
   * tables at module level).
   * @throws Error when the folder exists and the file is missing or not JSON (a loud failure).
   */
  json<T>(rel: string, whenSkipped: T): T;
}

/** The shared cases of this run (decided once per run by global-setup). */
export function sharedCases(): SharedCases {
  const need = needs('sharedCases');
  const dir = capabilities().casesDir;
  const file = (rel: string): string => {
    if (dir === null) throw new Error(`shared case ${rel}: ${need.reason}`);
    return path.join(dir, rel);
  };
  return {
    ...need,
    dir,
    file,
    json: <T>(rel: string, whenSkipped: T): T => (dir === null ? whenSkipped : (JSON.parse(readFileSync(file(rel), 'utf8')) as T)),
  };
}
