/**
 * The nightly soak workflow (issue 11), read as GitHub reads it (YAML 1.2, the `yaml` package) and
 * checked step by step; its shell steps are syntax-checked with `bash -n`, and the two that decide
 * what the morning brings (packaging the run directory, the verdict's exit code) are run here on a
 * made-up run directory.
 */
import { execa } from 'execa';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';

interface Step {
  name?: string;
  id?: string;
  uses?: string;
  run?: string;
  if?: string;
  with?: Record<string, unknown>;
  env?: Record<string, string>;
}
interface Job {
  'runs-on': string;
  'timeout-minutes'?: number;
  needs?: string | string[];
  env?: Record<string, string>;
  steps: Step[];
}
interface Workflow {
  name: string;
  on: {
    schedule: Array<{ cron: string }>;
    workflow_dispatch: { inputs: Record<string, { default?: string; type?: string; options?: string[]; required?: boolean }> };
  };
  permissions: Record<string, string>;
  jobs: Record<string, Job>;
}

const file = fileURLToPath(new URL('./nightly-soak.yml', import.meta.url));
const wf = parse(readFileSync(file, 'utf8')) as Workflow;
const soak = wf.jobs.soak;
const sim = wf.jobs.sim;
const power = wf.jobs.power;

/** The index of the one step matching `pred` (fails when none or several match). */
function stepIndex(job: Job, what: string, pred: (s: Step) => boolean): number {
  const found = job.steps.map((s, i) => (pred(s) ? i : -1)).filter((i) => i >= 0);
  expect(found, `exactly one step: ${what}`).toHaveLength(1);
  return found[0];
}
const runs = (re: RegExp) => (s: Step): boolean => typeof s.run === 'string' && re.test(s.run);
const uses = (prefix: string) => (s: Step): boolean => typeof s.uses === 'string' && s.uses.startsWith(`${prefix}@`);

describe('nightly-soak.yml', () => {
  it('runs nightly (cron) and on demand with a duration (default 4h) and a runtime', () => {
    expect(wf.on.schedule).toHaveLength(1);
    const fields = wf.on.schedule[0].cron.trim().split(/\s+/);
    expect(fields).toHaveLength(5);
    expect(fields.slice(2)).toEqual(['*', '*', '*']); // every day
    const inputs = wf.on.workflow_dispatch.inputs;
    expect(inputs.duration.default).toBe('4h');
    expect(inputs.runtime.default).toBe('auto');
    expect(inputs.runtime.options).toEqual(['auto', 'process', 'docker']);
    // a scheduled run has no inputs: the job's defaults must say the same
    expect(soak.env?.DURATION).toBe("${{ inputs.duration || '4h' }}");
    expect(soak.env?.RUNTIME).toBe("${{ inputs.runtime || 'auto' }}");
    expect(wf.permissions.checks).toBe('write');
  });

  it('installs Node 20, then docker.io and debootstrap only where missing, then make image, then make certify with the inputs', () => {
    const node = stepIndex(soak, 'setup-node', uses('actions/setup-node'));
    expect(String(soak.steps[node].with?.['node-version'])).toBe('20');
    const install = stepIndex(soak, 'Debian packages', runs(/apt-get install/));
    const script = soak.steps[install].run!;
    expect(script).toMatch(/command -v docker\b.*\|\| missing\+=\(docker\.io\)/);
    expect(script).toMatch(/command -v debootstrap\b.*\|\| missing\+=\(debootstrap\)/);
    const image = stepIndex(soak, 'make image', runs(/\bmake image\b/));
    const certify = stepIndex(soak, 'make certify', runs(/\bmake certify\b/));
    expect(soak.steps[certify].run).toContain('make certify DURATION="$DURATION" RUNTIME="$RUNTIME"');
    expect(node).toBeLessThan(install);
    expect(install).toBeLessThan(image);
    expect(image).toBeLessThan(certify);
    // long enough for a 4-hour fault phase and its end, within GitHub's 6-hour limit
    expect(soak['timeout-minutes']).toBeGreaterThanOrEqual(300);
    expect(soak['timeout-minutes']).toBeLessThanOrEqual(360);
  });

  it('packages and uploads the run directory, publishes junit.xml and decides the verdict, whatever the outcome', () => {
    const certify = stepIndex(soak, 'make certify', runs(/\bmake certify\b/));
    const pack = stepIndex(soak, 'package', runs(/runs\/latest/));
    const upload = stepIndex(soak, 'upload-artifact', uses('actions/upload-artifact'));
    const junit = stepIndex(soak, 'junit check', uses('mikepenz/action-junit-report'));
    const verdict = stepIndex(soak, 'verdict', runs(/exit "\$code"/));
    for (const i of [pack, upload, junit, verdict]) {
      expect(soak.steps[i].if, soak.steps[i].name).toBe('always()');
      expect(i).toBeGreaterThan(certify);
    }
    expect(pack).toBeLessThan(upload);
    expect(upload).toBeLessThan(verdict);
    for (const f of ['report.html', 'results.json', 'junit.xml', 'ledger.sqlite']) expect(soak.steps[pack].run).toContain(f);
    expect(soak.steps[upload].with?.path).toBe('${{ env.ARTIFACT_DIR }}');
    expect(soak.steps[junit].with?.report_paths).toBe('${{ env.ARTIFACT_DIR }}/junit.xml');
    // only the verdict step may end the job green or red: nothing swallows a failure
    for (const s of soak.steps) expect((s as Record<string, unknown>)['continue-on-error'], s.name).toBeUndefined();
  });

  it('runs make sim RUNS=5000 beside the soak (another job, not after it)', () => {
    expect(Object.keys(wf.jobs).sort()).toEqual(['power', 'sim', 'soak']);
    stepIndex(sim, 'make sim', runs(/^make sim RUNS=5000$/m));
    expect(String(sim.steps[stepIndex(sim, 'setup-node', uses('actions/setup-node'))].with?.['node-version'])).toBe('20');
    expect(sim.needs).toBeUndefined();
  });

  it('runs the short form of make power (one 60 s run per bug and of the correct store) beside the soak, as root, and keeps power.json', () => {
    const make = stepIndex(power, 'make power', runs(/\bmake power RUNS=/));
    expect(power.steps[make].run).toBe('sudo -E env "PATH=$PATH" make power RUNS=1 SECONDS=60 RUNTIME=process');
    expect(power.needs).toBeUndefined();
    expect(String(power.steps[stepIndex(power, 'setup-node', uses('actions/setup-node'))].with?.['node-version'])).toBe('20');
    const upload = stepIndex(power, 'upload-artifact', uses('actions/upload-artifact'));
    expect(power.steps[upload].if).toBe('always()');
    expect(power.steps[upload].with?.path).toBe('runs/power.json');
    expect(upload).toBeGreaterThan(make);
    // 9 runs of about 2 minutes, one at a time
    expect(power['timeout-minutes']).toBeGreaterThanOrEqual(40);
    // not in make test: the Makefile's test target runs no power
    const makefile = readFileSync(fileURLToPath(new URL('../../Makefile', import.meta.url)), 'utf8');
    const testRecipe = makefile.slice(makefile.indexOf('\ntest:'), makefile.indexOf('\n\n', makefile.indexOf('\ntest:')));
    expect(testRecipe).not.toMatch(/power/);
  });

  it('the power summary step prints power.json as a table, and notes a missing file without failing', async () => {
    const summary = power.steps[stepIndex(power, 'summary', runs(/power\.json/))].run!;
    const cwd = mkdtempSync(path.join(os.tmpdir(), 'zaris-certify-power-wf-'));
    try {
      const sum = path.join(cwd, 'summary.md');
      let r = await execa('bash', ['-c', summary], { cwd, reject: false, env: { GITHUB_STEP_SUMMARY: sum } });
      expect(r.exitCode).toBe(0);
      expect(readFileSync(sum, 'utf8')).toContain('no runs/power.json');
      mkdirSync(path.join(cwd, 'runs'));
      writeFileSync(path.join(cwd, 'runs', 'power.json'), JSON.stringify({ 'fencing-off-by-one': { runs: 1, failed: 1, medianSecondsToViolation: 41.5 }, none: { runs: 1, failed: 0 } }));
      r = await execa('bash', ['-c', summary], { cwd, reject: false, env: { GITHUB_STEP_SUMMARY: sum } });
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.stdout.split('\n')).toEqual(['| bug | FAILED runs | median s to first violation |', '|---|---|---|', '| fencing-off-by-one | 1 / 1 | 41.5 |', '| none | 0 / 1 | - |']);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });

  it('every shell step is valid bash', async () => {
    for (const job of [soak, sim, power]) {
      for (const s of job.steps.filter((x) => x.run !== undefined)) {
        // ${{ … }} is replaced by GitHub before bash sees the script
        const script = s.run!.replace(/\$\{\{[^}]*\}\}/g, 'X');
        const r = await execa('bash', ['-n', '-c', script], { reject: false });
        expect(r.exitCode, `${s.name}: ${r.stderr}`).toBe(0);
      }
    }
  });
});

describe('nightly-soak.yml scripts, run on a made-up run directory', () => {
  const top = mkdtempSync(path.join(os.tmpdir(), 'zaris-certify-workflow-'));
  afterAll(() => rmSync(top, { recursive: true, force: true }));
  const script = (re: RegExp): string => soak.steps[stepIndex(soak, String(re), runs(re))].run!;
  const packageScript = script(/runs\/latest/);
  const verdictScript = script(/exit "\$code"/);

  /** A checkout folder with runs/<dir> (the given results) and runs/latest pointing at it. */
  function checkout(name: string, results: object | null): { cwd: string; ledger: Buffer } {
    const cwd = path.join(top, name);
    const run = path.join(cwd, 'runs', '20261130T010000Z-42');
    mkdirSync(path.join(run, 'nodes'), { recursive: true });
    const ledger = randomBytes(200_000);
    writeFileSync(path.join(run, 'ledger.sqlite'), ledger);
    writeFileSync(path.join(run, 'report.html'), '<html>report</html>');
    writeFileSync(path.join(run, 'junit.xml'), '<testsuites/>');
    writeFileSync(path.join(run, 'nodes', 'n1.log'), 'n1 log\n');
    if (results) writeFileSync(path.join(run, 'results.json'), JSON.stringify(results));
    symlinkSync(path.basename(run), path.join(cwd, 'runs', 'latest'));
    return { cwd, ledger };
  }
  const bash = (cwd: string, body: string) =>
    execa('bash', ['-c', body], { cwd, reject: false, env: { ARTIFACT_DIR: 'soak-artifact', GITHUB_STEP_SUMMARY: path.join(cwd, 'summary.md') } });

  it('packages report.html, results.json, junit.xml, the node logs and the ledger gzipped', async () => {
    const { cwd, ledger } = checkout('packaged', { verdict: 'CERTIFIED', exitCode: 0 });
    const r = await bash(cwd, packageScript);
    expect(r.exitCode, r.stderr).toBe(0);
    const out = path.join(cwd, 'soak-artifact');
    expect(readdirSync(out).sort()).toEqual(['junit.xml', 'ledger.sqlite.gz', 'nodes', 'report.html', 'results.json']);
    expect(gunzipSync(readFileSync(path.join(out, 'ledger.sqlite.gz'))).equals(ledger)).toBe(true);
    expect(readFileSync(path.join(out, 'nodes', 'n1.log'), 'utf8')).toBe('n1 log\n');
  });

  it('the verdict step exits with the CLI exit code of results.json (0, 1, 2), 3 without one', async () => {
    for (const [verdict, exitCode] of [
      ['CERTIFIED', 0],
      ['FAILED', 1],
      ['INCONCLUSIVE', 2],
    ] as const) {
      const { cwd } = checkout(`v${exitCode}`, { verdict, exitCode });
      await bash(cwd, packageScript);
      const r = await bash(cwd, verdictScript);
      expect(r.exitCode, r.stdout + r.stderr).toBe(exitCode);
      expect(r.stdout).toContain(`zaris-certify: ${verdict} (exit ${exitCode})`);
      expect(readFileSync(path.join(cwd, 'summary.md'), 'utf8')).toContain(verdict);
    }
    const { cwd } = checkout('no-results', null);
    await bash(cwd, packageScript);
    expect((await bash(cwd, verdictScript)).exitCode).toBe(3);
  });

  it('a run that never started leaves a note, and the verdict is a harness error', async () => {
    const cwd = path.join(top, 'no-run');
    mkdirSync(cwd);
    const p = await bash(cwd, packageScript);
    expect(p.exitCode).toBe(0);
    expect(readFileSync(path.join(cwd, 'soak-artifact', 'NO-RUN.txt'), 'utf8')).toMatch(/did not start/);
    expect((await bash(cwd, verdictScript)).exitCode).toBe(3);
  });
});
