import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['nodes/**/*.test.ts', 'harness/**/*.test.ts', 'ledger/**/*.test.ts', 'reports/**/*.test.ts', 'test-support/**/*.test.ts', '.github/**/*.test.ts'],
    // once per run: dist/ built fresh (or the run refused), the machine's capabilities decided and
    // provided to the test files, a loud line per capability missing (test-support/global-setup.ts)
    globalSetup: ['./test-support/global-setup.ts'],
    // every run ends with what was NOT run and why, and a plain closing line
    reporters: ['default', './test-support/not-run-reporter.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // multi-process and container suites start real processes; keep the two cores from thrashing
    maxWorkers: 2,
  },
});
