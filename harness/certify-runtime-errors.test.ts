/**
 * Runs the world fails (issue 22), on real node processes: errors injected into the process
 * runtime itself (runtime/injected-runtime-errors.ts) at a partition, a restart, the cluster's
 * start. A transient failure is retried and the run goes on; one that stays ends the run cleanly:
 * the fault phase stops, the cluster heals, every key is read back, the ledger is sealed and
 * verified, and the verdict is INCONCLUSIVE with the error as the reason (results.json, junit.xml,
 * report.html), exit 2; nothing of the run is left (node processes, iptables chains). Through the
 * built CLI too: no stack trace on stderr, and a harness bug still exits 3 in one line.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { needs } from '../test-support/capabilities.js';
import { certify } from './certify.js';
import type { CertifyOptions } from './certify/options.js';
import { INJECT_ENV, parseInjections } from './runtime/injected-runtime-errors.js';
import { hasStackTrace, ledgerEvents, leftovers, missingReports, runTagOf } from './test-support/run-leftovers.js';

const cli = path.resolve('dist/harness/cli.js');
const net = needs('iptables');
const runsDir = mkdtempSync(path.join(os.tmpdir(), 'zaris-certify-run-errors-'));
afterAll(() => rmSync(runsDir, { recursive: true, force: true }));

const base: CertifyOptions = {
  durationMs: 10_000,
  seed: 3,
  runtime: 'process',
  faults: ['kill'],
  faultsExplicit: true,
  beyondBudget: false,
  runsDir,
  rate: 500,
  writersPerStore: 2,
  keysPerWriter: 4,
  escalationTimeoutMs: 10_000,
  runtimeBackoff: { initialDelayMs: 20, maxDelayMs: 100 },
};

async function expectNothingLeft(runDir: string, harnessPid: number): Promise<void> {
  expect(await leftovers({ runTag: runTagOf(runDir), harnessPid })).toEqual({ processes: [], chains: [], containers: [], networks: [] });
}

describe('certify when the process runtime fails (injected errors)', () => {
  it.skipIf(net.skip)(net.title('a partition refused for good ends the fault phase at once: healed, read back, verified, INCONCLUSIVE with the reason'), async () => {
    const lines: string[] = [];
    const out = await certify({ ...base, durationMs: 20_000, faults: ['partition'], injectRuntimeErrors: parseInjections('partition@1'), log: (l) => lines.push(l) });
    const r = out.results!;
    expect(out.exitCode, lines.join('\n')).toBe(2);
    expect(r.verdict).toBe('INCONCLUSIVE');
    expect(r.inconclusiveReason).toMatch(/^runtime error: partition: process runtime: partition failed: refused for good \(injected, attempt 1\)/);
    expect(missingReports(out.runDir)).toEqual([]);
    expect(readFileSync(path.join(out.runDir, 'report.html'), 'utf8')).toContain('Why inconclusive: runtime error: partition: process runtime: partition failed');
    expect(readFileSync(path.join(out.runDir, 'junit.xml'), 'utf8')).toContain('INCONCLUSIVE: runtime error: partition');
    // the error is in the ledger, the phase ended right after it (not at its 20 s), every key was read
    const [err] = ledgerEvents(out.runDir, 'runtime-error');
    expect(err.detail).toMatchObject({ op: 'partition', source: 'runtime', attempts: 1, transient: false });
    const heal = ledgerEvents(out.runDir, 'phase').find((e) => e.detail.phase === 'heal')!;
    const faults = ledgerEvents(out.runDir, 'phase').find((e) => e.detail.phase === 'faults')!;
    expect(heal.tMs - err.tMs).toBeLessThan(5_000);
    expect(heal.tMs - faults.tMs).toBeLessThan(20_000);
    expect(r.counts.acknowledged).toBeGreaterThan(100);
    expect(r.summary.violation).toBe(0);
    expect(lines.some((l) => /^final reads: \d+ keys/.test(l))).toBe(true);
    await expectNothingLeft(out.runDir, process.pid);
  }, 120_000);

  it('a transient failure of a kill is retried and the run goes on; each retry is in the ledger', async () => {
    const out = await certify({ ...base, injectRuntimeErrors: parseInjections('kill@1:transient*2') });
    const r = out.results!;
    const retries = ledgerEvents(out.runDir, 'runtime-retry');
    expect(retries.map((e) => [e.detail.op, e.detail.attempt])).toEqual([
      [expect.stringMatching(/^kill n\d$/), 1],
      [expect.stringMatching(/^kill n\d$/), 2],
    ]);
    expect(retries[0].detail.error).toMatch(/read init-p: connection reset by peer \(injected\)$/);
    expect(ledgerEvents(out.runDir, 'runtime-error')).toEqual([]);
    expect(r.faults.kill).toBeGreaterThanOrEqual(1);
    expect(r.inconclusiveReason ?? '').not.toMatch(/runtime error/);
    expect([0, 2]).toContain(out.exitCode);
    expect(missingReports(out.runDir)).toEqual([]);
    await expectNothingLeft(out.runDir, process.pid);
  }, 120_000);

  it('a node that cannot be restarted: the fault phase ends, the heal says so, the keys are read back, INCONCLUSIVE', async () => {
    const out = await certify({ ...base, injectRuntimeErrors: parseInjections('restart@1:transient*100') });
    const r = out.results!;
    expect(out.exitCode).toBe(2);
    expect(r.inconclusiveReason).toMatch(/^runtime error: restart n\d: process runtime: restart in n\d failed \(exit 126\): OCI runtime exec failed: .* \(4 attempts\); heal failed: restart n\d: /);
    expect(ledgerEvents(out.runDir, 'runtime-retry').length).toBeGreaterThanOrEqual(3);
    expect(missingReports(out.runDir)).toEqual([]);
    await expectNothingLeft(out.runDir, process.pid);
  }, 180_000);

  it('a paused node that cannot be resumed: its pause stays on record until it is killed and restarted at the heal, INCONCLUSIVE (never a loss blamed on the store)', async () => {
    const out = await certify({ ...base, durationMs: 20_000, seed: 7, faults: ['pause'], injectRuntimeErrors: parseInjections('resume@1') });
    const r = out.results!;
    expect(out.exitCode).toBe(2);
    expect(r.summary.violation).toBe(0);
    expect(r.inconclusiveReason).toMatch(/^runtime error: resume n\d: process runtime: resume in n\d failed: refused for good \(injected, attempt 1\)/);
    // the pause's row (reopened when its resume failed, ended at the heal) and the kill that replaced it
    expect(r.faults.pause).toBe(1);
    expect(r.faults.kill).toBe(1);
    expect(ledgerEvents(out.runDir, 'fault-undo-failed').map((e) => e.detail.kind)).toEqual(['pause']);
    expect(missingReports(out.runDir)).toEqual([]);
    await expectNothingLeft(out.runDir, process.pid);
  }, 180_000);

  it('a cluster that will not start: INCONCLUSIVE with the reason, the reports written, nothing left', async () => {
    const out = await certify({ ...base, injectRuntimeErrors: parseInjections('start') });
    const r = out.results!;
    expect(out.exitCode).toBe(2);
    expect(r.inconclusiveReason).toBe('the run was interrupted; runtime error: cluster start: process runtime: start failed: refused for good (injected, attempt 1); no fault was injected; no write was acknowledged');
    expect(missingReports(out.runDir)).toEqual([]);
    expect(ledgerEvents(out.runDir, 'run-error')).toHaveLength(1);
    await expectNothingLeft(out.runDir, process.pid);
  }, 60_000);
});

describe('the CLI when the runtime fails', () => {
  it('ends INCONCLUSIVE (exit 2) with its reports and without a stack trace', async () => {
    const child = execa(process.execPath, [cli, 'certify', '--runtime', 'process', '--faults', 'kill', '--duration', '10s', '--seed', '4', '--runs-dir', runsDir, '--rate', '500', '--writers', '2', '--keys', '4'], {
      reject: false,
      env: { [INJECT_ENV]: 'restart@1' },
    });
    const res = await child;
    expect(res.exitCode, res.stderr).toBe(2);
    expect(hasStackTrace(res.stderr), res.stderr).toBe(false);
    const runDir = res.stdout.split('\n')[0];
    expect(res.stdout).toMatch(/^INCONCLUSIVE .*\(runtime error: restart n\d: process runtime: restart in n\d failed: refused for good \(injected, attempt 1\); heal failed: /m);
    expect(missingReports(runDir)).toEqual([]);
    await expectNothingLeft(runDir, child.pid!);
  }, 120_000);

  it('a harness bug exits 3 in one line, the run\'s files kept, nothing left', async () => {
    const child = execa(process.execPath, [cli, 'certify', '--runtime', 'process', '--faults', 'kill', '--duration', '10s', '--seed', '4', '--runs-dir', runsDir, '--rate', '500', '--writers', '2', '--keys', '4'], {
      reject: false,
      env: { [INJECT_ENV]: 'kill:bug' },
    });
    const res = await child;
    expect(res.exitCode, res.stderr).toBe(3);
    expect(hasStackTrace(res.stderr), res.stderr).toBe(false);
    const last = res.stderr.trim().split('\n').pop();
    expect(last).toMatch(/^zaris-certify: harness error: injected harness bug: kill in n\d \(attempt 1\)$/);
    const kept = /the run's files are kept in (\S+)/.exec(res.stderr)?.[1];
    expect(kept).toBeDefined();
    expect(existsSync(path.join(kept!, 'ledger.sqlite'))).toBe(true);
    await expectNothingLeft(kept!, child.pid!);
  }, 120_000);

  it('refuses a bad injection in one line (exit 64) before starting anything', async () => {
    const res = await execa(process.execPath, [cli, 'certify', '--runtime', 'process', '--runs-dir', runsDir], { reject: false, env: { [INJECT_ENV]: 'partiton@2' } });
    expect(res.exitCode).toBe(64);
    expect(res.stderr).toBe(`zaris-certify: ${INJECT_ENV}: "partiton@2" names no runtime call; expected <call>[@<n>][:permanent|transient[*<k>]|bug] with <call> one of kill, stop, restart, pause, resume, partition, cut-client, heal, set-clock, start, any`);
  });
});
