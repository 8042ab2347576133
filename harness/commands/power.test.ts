import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildResults } from '../../reports/results.js';
import { importHistory } from '../../ledger/history-import.js';
import { historyOf } from '../../ledger/test-support/fixtures.js';
import { sealLedger } from '../../ledger/seal.js';
import type { CertifyOutcome } from '../certify.js';
import type { CertifyOptions } from '../certify/options.js';
import { buildCli } from '../cli.js';
import { parseFaults } from '../nemesis/schedule.js';
import { verifyLedger } from '../verifier/verifier.js';
import { aggregatePower, firstViolationMs, median, parsePowerOnly, runPower, secondsToViolationOfRun, type PowerRun } from './power.js';

/** A run directory holding a verified ledger imported from a fixture history (a real ledger, real findings). */
function fixtureRun(runsDir: string, name: string, fixture: string): CertifyOutcome {
  const runDir = path.join(runsDir, name);
  mkdirSync(runDir, { recursive: true });
  const db = importHistory(historyOf(fixture), path.join(runDir, 'ledger.sqlite'));
  try {
    const results = buildResults(db, verifyLedger(db));
    return { runDir, exitCode: results.exitCode, results, ackedPerSec: 0, failoverMs: [], runtime: 'process' };
  } finally {
    db.close();
  }
}

describe('make power (harness/commands/power.ts)', () => {
  it('dates the first violation of a verified ledger by what shows it', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'zaris-certify-power-'));
    try {
      // a lost sync write acknowledged at 205 ms
      expect(secondsToViolationOfRun(fixtureRun(dir, 'lost', 'lost-sync').runDir)).toBe(0.205);
      // the same once sealed (what every certify run leaves: no writes rows, the findings say when)
      const sealed = importHistory(historyOf('lost-sync'), ':memory:');
      verifyLedger(sealed);
      sealLedger(sealed);
      // (an imported history is not packed by sealLedger: drop its hot rows as a seal does)
      sealed.prepare('DELETE FROM writes').run();
      expect(sealed.prepare('SELECT COUNT(*) FROM writes').pluck().get()).toBe(0);
      expect(firstViolationMs(sealed)).toBe(205);
      sealed.close();
      // stale, phantom and unexpected reads completing at 302 ms
      expect(secondsToViolationOfRun(fixtureRun(dir, 'reads', 'v2-reads').runDir)).toBe(0.302);
      // an epoch conflict seen in a sample at 100 ms comes before an ack-not-from-active at 104 ms
      expect(secondsToViolationOfRun(fixtureRun(dir, 'map', 'v2-runtime-map').runDir)).toBe(0.1);
      // no violation: no time
      expect(secondsToViolationOfRun(fixtureRun(dir, 'clean', 'clean-sync').runDir)).toBeNull();
      // allowed losses only (async-ack) are no violation either
      const allowed = importHistory(historyOf('v2-async-ack-allowed'), ':memory:');
      verifyLedger(allowed);
      expect(firstViolationMs(allowed)).toBeNull();
      allowed.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('medians and aggregates: FAILED runs counted, the median over the failed runs, the correct store without a median', () => {
    expect(median([])).toBeNull();
    expect(median([5])).toBe(5);
    expect(median([9, 1, 4])).toBe(4);
    expect(median([4, 1, 9, 2])).toBe(3);
    const r = (bug: PowerRun['bug'], verdict: string, s: number | null): PowerRun => ({ bug, seed: 1, preset: 'random', verdict, secondsToViolation: s, runDir: null });
    const report = aggregatePower(
      [r('fencing-off-by-one', 'FAILED', 12.34), r('fencing-off-by-one', 'CERTIFIED', null), r('fencing-off-by-one', 'FAILED', 40), r('catchup-skips-last-op', 'INCONCLUSIVE', null), r('none', 'CERTIFIED', null), r('none', 'FAILED', 3)],
      ['fencing-off-by-one', 'catchup-skips-last-op'],
    );
    expect(report).toEqual({
      'fencing-off-by-one': { runs: 3, failed: 2, medianSecondsToViolation: 26.2 },
      'catchup-skips-last-op': { runs: 1, failed: 0, medianSecondsToViolation: null },
      none: { runs: 2, failed: 1 },
    });
  });

  it('runs every bug, then the correct store, RUNS times each, one at a time, with seeds seed+i and the presets; writes power.json exactly and prints the table', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'zaris-certify-power-'));
    try {
      const seen: CertifyOptions[] = [];
      let running = 0;
      // a fake certify: fencing-off-by-one always fails (a lost write), catchup-skips-last-op fails
      // on its second seed only (stale reads), the correct store never; one harness error
      const certify = async (o: CertifyOptions): Promise<CertifyOutcome> => {
        expect(running).toBe(0);
        running++;
        await new Promise((r) => setTimeout(r, 5));
        running--;
        seen.push(o);
        const name = `${o.selfTestBug ?? 'none'}-${o.seed}`;
        if (o.selfTestBug === 'fencing-off-by-one') return fixtureRun(dir, name, 'lost-sync');
        if (o.selfTestBug === 'catchup-skips-last-op') {
          if (o.seed === 8) throw new Error('nodes did not start\nstack');
          return fixtureRun(dir, name, o.seed === 7 ? 'v2-reads' : 'clean-sync');
        }
        return fixtureRun(dir, name, 'clean-sync');
      };
      const lines: string[] = [];
      const { report, runs, file } = await runPower({
        runs: 3,
        seconds: 60,
        seed: 6,
        mix: 'preset',
        bugs: ['fencing-off-by-one', 'catchup-skips-last-op'],
        base: { runtime: 'process', runsDir: dir, rate: 10, writersPerStore: 1, keysPerWriter: 1, escalationTimeoutMs: 10_000 },
        certify,
        print: (l) => lines.push(l),
      });
      expect(seen.map((o) => [o.selfTestBug ?? 'none', o.seed, o.faultPreset, o.durationMs])).toEqual([
        ['fencing-off-by-one', 6, 'fencing', 60_000],
        ['fencing-off-by-one', 7, 'fencing', 60_000],
        ['fencing-off-by-one', 8, 'fencing', 60_000],
        ['catchup-skips-last-op', 6, 'catch-up', 60_000],
        ['catchup-skips-last-op', 7, 'catch-up', 60_000],
        ['catchup-skips-last-op', 8, 'catch-up', 60_000],
        // the correct store under the bugs' presets in turn
        ['none', 6, 'fencing', 60_000],
        ['none', 7, 'catch-up', 60_000],
        ['none', 8, 'fencing', 60_000],
      ]);
      expect(seen.every((o) => o.beyondBudget === false && o.runsDir === dir)).toBe(true);
      const expected = {
        'fencing-off-by-one': { runs: 3, failed: 3, medianSecondsToViolation: 0.2 },
        'catchup-skips-last-op': { runs: 3, failed: 1, medianSecondsToViolation: 0.3 },
        none: { runs: 3, failed: 0 },
      };
      expect(report).toEqual(expected);
      expect(file).toBe(path.join(dir, 'power.json'));
      expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(expected);
      expect(runs.find((r) => r.bug === 'catchup-skips-last-op' && r.seed === 8)).toMatchObject({ verdict: 'ERROR', error: 'nodes did not start' });
      const table = lines.slice(lines.indexOf('') + 1).join('\n').split('\n');
      expect(table[0]).toMatch(/^bug\s+faults\s+FAILED runs \(of 60 s\)\s+median s to 1st violation\s+per run/);
      expect(table[2]).toMatch(/^fencing-off-by-one\s+preset:fencing\s+3 \/ 3\s+0\.2\s+FAILED 0\.2; FAILED 0\.2; FAILED 0\.2$/);
      expect(table[3]).toMatch(/^catchup-skips-last-op\s+preset:catch-up\s+1 \/ 3\s+0\.3\s+CERTIFIED; FAILED 0\.3; ERROR$/);
      expect(table[4]).toMatch(/^none \(correct store\)\s+preset:fencing, preset:catch-up\s+0 \/ 3\s+CERTIFIED; CERTIFIED; CERTIFIED$/);
      expect(table[5]).toBe(`wrote ${file}`);
      expect(lines).toContain('    ERROR: harness error: nodes did not start (no run)');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('JOBS=3 keeps three runs under way at once, starts them in plan order, and reports as one at a time would', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'zaris-certify-power-'));
    try {
      let running = 0;
      let peak = 0;
      const started: string[] = [];
      const certify = async (o: CertifyOptions): Promise<CertifyOutcome> => {
        const name = `${o.selfTestBug ?? 'none'}-${o.seed}`;
        started.push(name);
        running++;
        peak = Math.max(peak, running);
        // later runs end sooner: completion order differs from plan order
        await new Promise((r) => setTimeout(r, 40 - 3 * started.length));
        running--;
        return fixtureRun(dir, name, o.selfTestBug === 'fencing-off-by-one' && o.seed !== 2 ? 'lost-sync' : 'clean-sync');
      };
      const base = { runtime: 'process' as const, runsDir: dir, rate: 10, writersPerStore: 1, keysPerWriter: 1, escalationTimeoutMs: 10_000 };
      const go = (jobs: number) => runPower({ runs: 3, seconds: 60, seed: 1, mix: 'preset', jobs, bugs: ['fencing-off-by-one', 'catchup-skips-last-op'], base, certify, print: () => undefined });
      const par = await go(3);
      expect(peak).toBe(3);
      expect(started).toEqual(['fencing-off-by-one-1', 'fencing-off-by-one-2', 'fencing-off-by-one-3', 'catchup-skips-last-op-1', 'catchup-skips-last-op-2', 'catchup-skips-last-op-3', 'none-1', 'none-2', 'none-3']);
      expect(par.runs.map((r) => `${r.bug}-${r.seed}`)).toEqual(started);
      expect(par.report).toEqual({
        'fencing-off-by-one': { runs: 3, failed: 2, medianSecondsToViolation: 0.2 },
        'catchup-skips-last-op': { runs: 3, failed: 0, medianSecondsToViolation: null },
        none: { runs: 3, failed: 0 },
      });
      peak = 0;
      started.length = 0;
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir);
      const seq = await go(1);
      expect(peak).toBe(1);
      expect(seq.report).toEqual(par.report);
      // an interrupt starts no more runs; the ones under way end and are counted
      const ac = new AbortController();
      started.length = 0;
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir);
      const cut = runPower({ runs: 3, seconds: 60, seed: 1, mix: 'preset', jobs: 2, bugs: ['fencing-off-by-one'], base: { ...base, signal: ac.signal }, certify, print: () => undefined });
      ac.abort();
      const got = await cut;
      expect(started).toEqual(['fencing-off-by-one-1', 'fencing-off-by-one-2']);
      expect(got.runs).toHaveLength(2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('--only runs the bugs named, and the correct store only when none is named (under those bugs\' presets, or every bug\'s)', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'zaris-certify-power-'));
    try {
      const seen: Array<[string, number, string | undefined]> = [];
      const certify = async (o: CertifyOptions): Promise<CertifyOutcome> => {
        seen.push([o.selfTestBug ?? 'none', o.seed, o.faultPreset]);
        return fixtureRun(dir, `${o.selfTestBug ?? 'none'}-${o.seed}-${seen.length}`, 'clean-sync');
      };
      const base = { runtime: 'process' as const, runsDir: dir, rate: 10, writersPerStore: 1, keysPerWriter: 1, escalationTimeoutMs: 10_000 };
      const go = (only: string) => runPower({ runs: 2, seconds: 60, seed: 1, mix: 'preset', only: parsePowerOnly(only), base, certify, print: () => undefined });
      const a = await go('catchup-skips-last-op,no-possession-proof');
      expect(seen).toEqual([
        ['no-possession-proof', 1, 'promotion'],
        ['no-possession-proof', 2, 'promotion'],
        ['catchup-skips-last-op', 1, 'catch-up'],
        ['catchup-skips-last-op', 2, 'catch-up'],
      ]);
      expect(a.report.none).toEqual({ runs: 0, failed: 0 });
      seen.length = 0;
      await go('fencing-off-by-one, none');
      expect(seen).toEqual([
        ['fencing-off-by-one', 1, 'fencing'],
        ['fencing-off-by-one', 2, 'fencing'],
        ['none', 1, 'fencing'],
        ['none', 2, 'fencing'],
      ]);
      seen.length = 0;
      const c = await go('none');
      expect(seen).toEqual([
        ['none', 1, 'promotion'],
        ['none', 2, 'lease'],
      ]);
      expect(Object.keys(c.report)).toEqual(['none']);
      expect(() => parsePowerOnly('none,fencing')).toThrow('--only: unknown name "fencing" (choose from lose-on-promotion, ');
      expect(() => parsePowerOnly(' , ')).toThrow(/^--only is empty/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('MIX=default runs every bug and the correct store under the mix make certify plays without FAULTS= (every kind, the random preset, not explicit)', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'zaris-certify-power-'));
    try {
      const seen: CertifyOptions[] = [];
      const certify = async (o: CertifyOptions): Promise<CertifyOutcome> => {
        seen.push(o);
        return fixtureRun(dir, `${o.selfTestBug ?? 'none'}-${o.seed}-${seen.length}`, 'clean-sync');
      };
      const base = { runtime: 'process' as const, runsDir: dir, rate: 10, writersPerStore: 1, keysPerWriter: 1, escalationTimeoutMs: 10_000 };
      const lines: string[] = [];
      await runPower({ runs: 2, seconds: 60, seed: 4, mix: 'default', only: parsePowerOnly('stale-owner-acks,none'), base, certify, print: (l) => lines.push(l) });
      const certifyDefault = parseFaults('all');
      expect(seen.map((o) => [o.selfTestBug ?? 'none', o.seed, o.faultPreset, o.faults, o.faultsExplicit])).toEqual([
        ['stale-owner-acks', 4, certifyDefault.preset, certifyDefault.kinds, false],
        ['stale-owner-acks', 5, certifyDefault.preset, certifyDefault.kinds, false],
        ['none', 4, certifyDefault.preset, certifyDefault.kinds, false],
        ['none', 5, certifyDefault.preset, certifyDefault.kinds, false],
      ]);
      expect(lines[0]).toBe('[1/4] BUG=stale-owner-acks seed 4 default mix, 60 s ...');
      expect(lines.join('\n').split('\n').find((l) => l.startsWith('stale-owner-acks'))).toMatch(/^stale-owner-acks\s+default\s+0 \/ 2/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a bad --runs or --seconds in one line (exit 64 through the CLI)', async () => {
    for (const args of [['--runs', '0'], ['--runs', 'ten'], ['--seconds', '-5'], ['--seconds', '1.5'], ['--mix', 'some']]) {
      let err: unknown;
      try {
        await buildCli().parseAsync(['power', ...args], { from: 'user' });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(CommanderError);
      expect((err as CommanderError).message).not.toContain('\n');
      expect((err as CommanderError).message).toContain(args[0]);
    }
  });

  it('the power command: a bad --runs or --seconds exits 64 with one line, before any run', () => {
    const root = path.resolve(__dirname, '../..');
    for (const [v, val, want] of [
      ['RUNS', '0', /--runs must be an integer from 1/],
      ['SECONDS', 'soon', /--seconds must be an integer from 1/],
    ] as const) {
      let status = 0;
      let stderr = '';
      try {
        execFileSync('node', ['dist/harness/cli.js', 'power', v === 'RUNS' ? '--runs' : '--seconds', val, '--runs-dir', '/nonexistent/never'], { cwd: root, stdio: 'pipe' });
      } catch (e) {
        status = (e as { status: number }).status;
        stderr = String((e as { stderr: Buffer }).stderr);
      }
      expect(status).toBe(64);
      expect(stderr).toMatch(want);
      expect(stderr.trim().split('\n')).toHaveLength(1);
    }
  });
});
