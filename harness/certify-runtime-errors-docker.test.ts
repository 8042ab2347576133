/**
 * Runs the world fails (issue 22) on the docker runtime: errors injected into the docker runtime
 * itself, the kind `docker exec` gives when it races runc (exit 126, `read init-p: connection reset
 * by peer`). A transient one is retried and the run goes on; one that stays ends the run cleanly,
 * INCONCLUSIVE with the reason and its reports, no stack trace, and no container or network of the
 * run left. Needs a Docker engine and the node image's base (test-support/capabilities.ts); without
 * them it is NOT run, and says why.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { needs } from '../test-support/capabilities.js';
import { certify } from './certify.js';
import { INJECT_ENV, parseInjections } from './runtime/injected-runtime-errors.js';
import { hasStackTrace, ledgerEvents, leftovers, missingReports, runTagOf, violationReport } from './test-support/run-leftovers.js';

const cli = path.resolve('dist/harness/cli.js');
const engine = needs('docker');

describe.skipIf(engine.skip)(engine.title('certify when the docker runtime fails (injected errors)'), () => {
  const runsDir = mkdtempSync(path.join(os.tmpdir(), 'zaris-certify-run-errors-docker-'));
  afterAll(() => rmSync(runsDir, { recursive: true, force: true }));

  it('the CLI: a kill retried twice goes through, a restart that keeps failing ends the run INCONCLUSIVE (exit 2), no stack trace, nothing left', async () => {
    const child = execa(process.execPath, [cli, 'certify', '--runtime', 'docker', '--faults', 'kill', '--duration', '20s', '--seed', '3', '--runs-dir', runsDir, '--rate', '400', '--writers', '2', '--keys', '4'], {
      reject: false,
      env: { [INJECT_ENV]: 'kill@1:transient*2,restart@1:transient*100' },
    });
    const res = await child;
    expect(res.exitCode, res.stderr).toBe(2);
    expect(hasStackTrace(res.stderr), res.stderr).toBe(false);
    const runDir = res.stdout.split('\n')[0];
    expect(res.stdout).toMatch(/^INCONCLUSIVE .*\(runtime error: restart n\d: docker runtime: restart in n\d failed \(exit 126\): OCI runtime exec failed: .* \(4 attempts\); heal failed: restart n\d: /m);
    expect(missingReports(runDir)).toEqual([]);
    const retries = ledgerEvents(runDir, 'runtime-retry').map((e) => `${String(e.detail.op).replace(/ n\d$/, '')} ${e.detail.attempt}`);
    // the kill's two retries, then the restart's three, in the phase and again at the heal
    expect(retries).toEqual(['kill 1', 'kill 2', 'restart 1', 'restart 2', 'restart 3', 'restart 1', 'restart 2', 'restart 3']);
    expect(await leftovers({ runTag: runTagOf(runDir), harnessPid: child.pid!, docker: true })).toEqual({ processes: [], chains: [], containers: [], networks: [] });
  }, 420_000);

  it('a partition whose removal keeps failing (the exec race of issue 22): the cut stays on record until the heal removes it, INCONCLUSIVE, nothing left', async () => {
    const lines: string[] = [];
    const out = await certify({
      durationMs: 20_000,
      seed: 3,
      runtime: 'docker',
      faults: ['partition'],
      faultsExplicit: true,
      beyondBudget: false,
      runsDir,
      rate: 400,
      writersPerStore: 2,
      keysPerWriter: 4,
      escalationTimeoutMs: 10_000,
      runtimeBackoff: { initialDelayMs: 20, maxDelayMs: 100 },
      injectRuntimeErrors: parseInjections('partition@2:transient*100'),
      log: (l) => lines.push(l),
    });
    const r = out.results!;
    // a FAILED verdict here names its findings (a violation on a 20 s run is a finding about the
    // store or the verifier, not a flake to retry)
    const verdictOf = `${r.verdict} ${JSON.stringify(r.summary)} (run ${out.runDir})\n${r.verdict === 'FAILED' ? violationReport(out.runDir) : ''}`;
    expect(out.exitCode, `${lines.join('\n')}\n${verdictOf}`).toBe(2);
    expect(r.inconclusiveReason).toMatch(/^runtime error: partition: docker runtime: partition failed \(exit 126\): OCI runtime exec failed: .*read init-p: connection reset by peer \(injected\) \(4 attempts\)/);
    expect(missingReports(out.runDir)).toEqual([]);
    expect(ledgerEvents(out.runDir, 'fault-undo-failed')).toHaveLength(1);
    expect(ledgerEvents(out.runDir, 'healed')).toHaveLength(1);
    expect(await leftovers({ runTag: runTagOf(out.runDir), harnessPid: process.pid, docker: true })).toEqual({ processes: [], chains: [], containers: [], networks: [] });
  }, 420_000);
});
