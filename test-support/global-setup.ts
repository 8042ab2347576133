/**
 * vitest's globalSetup (vitest.config.ts), once per `vitest run`, before any test file:
 * 1. dist/ fresh (built through `make build`, or the run refused with one line): the
 *    multi-process tests run compiled files and must never run stale ones;
 * 2. the capabilities decided once (iptables, Docker engine and node image, tmpfs, shared cases)
 *    and provided to the test files (test-support/capabilities.ts);
 * 3. one loud line per missing capability, naming the tests that will NOT run and why
 *    (test-support/not-run-reporter.ts lists them again at the end).
 */
import type { TestProject } from 'vitest/node';
import { NEEDED_FOR, probeCapabilities, REPO_ROOT, type Capabilities, type CapabilityName } from './capability-probes.js';
import { ensureFreshDist } from './fresh-dist.js';

/** Runs before every test file; throws (one line) to refuse the run. */
export default async function setup(project: TestProject): Promise<void> {
  let built: string;
  let caps: Capabilities;
  try {
    built = await ensureFreshDist(REPO_ROOT);
    caps = await probeCapabilities();
  } catch (e) {
    // one line, no stack trace: vitest prints the error of a failing globalSetup as it is
    const err = new Error(`refusing to run the tests: ${(e as Error).message}`);
    err.stack = err.message;
    throw err;
  }
  if (built !== 'dist/ is up to date') process.stdout.write(`test setup: ${built}\n`);
  project.provide('zarisCapabilities', caps);
  for (const name of Object.keys(NEEDED_FOR) as CapabilityName[]) {
    const why = caps[name];
    if (why !== null) process.stdout.write(`*** NOT RUN here: ${NEEDED_FOR[name]}: ${why} ***\n`);
  }
}
