/**
 * Property (issue 22): wherever an injected runtime error lands (which call: a kill, a restart, a
 * pause, a resume, a partition, the heal, the cluster's start, or any n-th call; transient k times
 * or permanent), a run on real node processes always ends with a verdict and its files
 * (results.json, junit.xml, report.html), exit 0 or 2, never a crash; a runtime call that failed
 * for good makes it INCONCLUSIVE with the reason; a transient failure the retries absorb leaves no
 * runtime error; and nothing of the run is left. Each case is a whole run (10-20 s of faults), so
 * only a few cases run each time: fast-check prints the seed of a failing one to replay it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { needs } from '../test-support/capabilities.js';
import { certify } from './certify.js';
import { formatInjections, type InjectableCall, type Injection } from './runtime/injected-runtime-errors.js';
import type { FaultKind } from './nemesis/schedule.js';
import { ledgerEvents, leftovers, missingReports, runTagOf } from './test-support/run-leftovers.js';

const net = needs('iptables');
const runsDir = mkdtempSync(path.join(os.tmpdir(), 'zaris-certify-run-errors-prop-'));
afterAll(() => rmSync(runsDir, { recursive: true, force: true }));

/** The retries of the fault-tolerant runtime (its default): a transient failure of at most this many attempts is absorbed. */
const RETRIES = 3;

/** Will the retries absorb this injection? Only a transient one of at most RETRIES attempts that spares the (unretried) start. */
function absorbed(i: Injection): boolean {
  const hitsStart = i.call === 'start' || (i.call === 'any' && i.nth === 1);
  return i.how === 'transient' && i.times <= RETRIES && !hitsStart;
}

/**
 * Where each call is made within 10-20 s of faults (seeds whose schedules hold the fault early):
 * the runs a call needs, so that an injection lands on a call the run really makes.
 */
function runFor(call: InjectableCall, partitions: boolean): { faults: FaultKind[]; durationMs: number; seed: number } {
  if (call === 'pause' || call === 'resume') return { faults: ['pause'], durationMs: 20_000, seed: 7 };
  if (call === 'partition') return { faults: ['partition'], durationMs: 15_000, seed: 3 };
  if (call === 'kill' || call === 'restart') return { faults: ['kill'], durationMs: 10_000, seed: 7 };
  // heal, start, any n-th call: kills (and partitions where iptables can cut links)
  return { faults: partitions ? ['kill', 'partition'] : ['kill'], durationMs: 15_000, seed: 3 };
}

describe('certify ends with a verdict and its files wherever a runtime error lands (process runtime)', () => {
  const calls: InjectableCall[] = ['kill', 'restart', 'pause', 'resume', 'heal', 'start', 'any', 'any', 'any', ...(net.skip ? [] : (['partition'] as const))];
  const title = `property over the call hit, its count and transient vs permanent${net.skip ? `; partitions left out: ${net.reason}` : ''}`;

  it(title, async () => {
    const injection = fc
      .record({ call: fc.constantFrom(...calls), nth: fc.integer({ min: 1, max: 4 }), how: fc.constantFrom<Injection['how']>('transient', 'permanent'), times: fc.integer({ min: 1, max: 6 }) })
      .map((i): Injection => ({ ...i, nth: i.call === 'heal' || i.call === 'start' ? 1 : i.nth, times: i.how === 'transient' ? i.times : 1 }));
    await fc.assert(
      fc.asyncProperty(injection, async (inj) => {
        const lines: string[] = [];
        const run = runFor(inj.call, !net.skip);
        const out = await certify({ ...run, runtime: 'process', faultsExplicit: true, beyondBudget: false, runsDir, rate: 400, writersPerStore: 2, keysPerWriter: 4, escalationTimeoutMs: 10_000, runtimeBackoff: { initialDelayMs: 20, maxDelayMs: 100 }, injectRuntimeErrors: [inj], log: (l) => lines.push(l) });
        const r = out.results;
        const context = `${formatInjections([inj])}: ${lines.slice(-8).join(' | ')}`;
        // a verdict, its exit code and its files: always
        expect(r, context).not.toBeNull();
        expect(['CERTIFIED', 'INCONCLUSIVE'], context).toContain(r!.verdict);
        expect(out.exitCode, context).toBe(r!.exitCode);
        expect(missingReports(out.runDir), context).toEqual([]);
        // a call that failed for good: INCONCLUSIVE, with the error as the reason
        const failed = ledgerEvents(out.runDir, 'runtime-error');
        console.log(`case ${formatInjections([inj])}: ${r!.verdict} (exit ${out.exitCode}), ${failed.length} runtime error(s), ${ledgerEvents(out.runDir, 'runtime-retry').length} retries${r!.inconclusiveReason ? `: ${r!.inconclusiveReason}` : ''}`);
        if (failed.length > 0) {
          expect(r!.verdict, context).toBe('INCONCLUSIVE');
          expect(r!.inconclusiveReason, context).toMatch(/(runtime error: |heal failed: )/);
        }
        if (absorbed(inj)) expect(failed, context).toEqual([]);
        // a permanent failure of a call every run makes (the start, the heal, its first fault) is never absorbed
        if (inj.how === 'permanent' && (inj.call === 'start' || inj.call === 'heal' || (inj.call === 'any' && inj.nth <= 2))) {
          expect(failed.length, context).toBeGreaterThan(0);
          expect(out.exitCode, context).toBe(2);
        }
        expect(await leftovers({ runTag: runTagOf(out.runDir), harnessPid: process.pid }), context).toEqual({ processes: [], chains: [], containers: [], networks: [] });
      }),
      { numRuns: 4 },
    );
  }, 900_000);
});
