import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['nodes/**/*.test.ts', 'harness/**/*.test.ts', 'ledger/**/*.test.ts', 'reports/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // multi-process and container suites start real processes; keep the two cores from thrashing
    maxWorkers: 2,
  },
});
