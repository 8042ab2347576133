import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { scheduleFromJson, scheduleToJson, validateSchedule } from '../nemesis/schedule.js';
import { compileScenario, describeExpectation, estimateEnd, loadScenario, parseScenario, ScenarioError, scenarioRecord } from './scenario.js';
import { judgeScenario, scenarioExitCode } from './expectation.js';
import { SCENARIO_SCHEMA } from './scenario-schema.js';
import { REPO_ROOT } from '../../test-support/capability-probes.js';

const ROOT = REPO_ROOT;
const LIB = path.join(ROOT, 'scenarios');

const ok = `
nodes: 3
expect: CERTIFIED
steps:
  - name: cut
    fault: partition
    target: active of sync3/0 as A
    at: 2s
    duration: 12s
  - name: kill
    fault: kill
    target: active of sync3/0 other than A
    after: step cut ended
    duration: 3s
`;

/** The one-line error a scenario text gives. */
function errorOf(text: string): string {
  try {
    parseScenario(text, 'bad.yaml');
  } catch (e) {
    expect(e).toBeInstanceOf(ScenarioError);
    expect((e as Error).message).not.toContain('\n');
    return (e as Error).message;
  }
  throw new Error('expected the scenario to be refused');
}

describe('scenario files (harness/scenario)', () => {
  it('parses a scenario into steps the executor plays: roles, bindings, triggers, times', () => {
    const sc = parseScenario(ok, 'x.yaml');
    expect(sc.name).toBe('x');
    expect(sc.nodes).toBe(3);
    expect(sc.stores.map((s) => s.name)).toEqual(['sync3', 'async3', 'rf1']);
    expect(sc.expect).toEqual({ verdict: 'CERTIFIED' });
    expect(sc.faults).toEqual([
      { kind: 'partition', topology: 'isolate', target: { role: 'active', store: 'sync3', partition: 0 }, atMs: 2000, durationMs: 12000, name: 'cut', bind: 'A' },
      { kind: 'kill', target: { role: 'active', store: 'sync3', partition: 0 }, except: ['A'], atMs: 0, durationMs: 3000, name: 'kill', after: { event: 'ended', fault: 0, delayMs: 0, waitMs: 60000, onMiss: 'skip' } },
    ]);
    const s = compileScenario(sc, 42);
    expect(s.seed).toBe(42);
    expect(s.scenario).toBe('x');
    expect(s.tailMs).toBe(10_000);
    // the estimate: the kill starts when the cut ends (14 s) and lasts 3 s
    expect(estimateEnd(sc.faults, 10_000)).toBe(17_000);
    expect(s.durationMs).toBe(17_000 + 90_000);
    // what the ledger stores, replay reads back unchanged
    expect(scheduleFromJson(scheduleToJson(s))).toEqual(s);
  });

  it('every scenario of the library parses, compiles to a valid schedule, and says its pattern, expected outcome and why', () => {
    const files = readdirSync(LIB).filter((f) => f.endsWith('.yaml'));
    expect(files.length).toBeGreaterThanOrEqual(12);
    for (const f of files) {
      const sc = loadScenario(path.join(LIB, f));
      expect(sc.name).toBe(f.replace(/\.yaml$/, ''));
      validateSchedule(compileScenario(sc, 1));
      const header = readFileSync(path.join(LIB, f), 'utf8').split('\n').filter((l) => l.startsWith('#')).join('\n');
      expect(header, f).toMatch(/^# Pattern \d+: /);
      expect(header, f).toMatch(/# Expected: (CERTIFIED|FAILED)/);
      expect(header.length, f).toBeGreaterThan(200);
    }
  });

  it('scenarios/scenario.schema.json is the schema the parser checks against', () => {
    expect(JSON.parse(readFileSync(path.join(LIB, 'scenario.schema.json'), 'utf8'))).toEqual(JSON.parse(JSON.stringify(SCENARIO_SCHEMA)));
  });

  it('refuses malformed scenarios in one line naming the step and the field', () => {
    const step = (extra: string): string => `nodes: 3\nexpect: CERTIFIED\nsteps:\n  - name: s1\n    fault: kill\n    target: leader as L\n    duration: 2s\n  - name: s2\n${extra}`;
    const cases: Array<[string, string]> = [
      // an unknown role
      [step('    fault: kill\n    target: follower of sync3/0\n    duration: 2s\n'), 'scenario bad.yaml: step "s2" (#2), target: unknown role "follower of sync3/0" (roles: leader, random, node <id>, active of <store>/<p>, replica of <store>/<p>, preferred primary of <store>/<p>, catching-up, outside (a node outside the member set), member (a member that may leave), or a name bound earlier with "as NAME")'],
      // a step after an unknown event
      [step('    fault: kill\n    target: L\n    after: restarted L\n    duration: 2s\n'), 'scenario bad.yaml: step "s2" (#2), after: unknown event "restarted L" (events: caught-up <node>, promoted <store>/<p>, handoff-started [<store>/<p>] [to <node>], suspected <node>, step <name> ended, step <name> started)'],
      // after a step that is not written above
      [step('    fault: kill\n    target: L\n    after: step s9 ended\n    duration: 2s\n'), 'scenario bad.yaml: step "s2" (#2), after: no step "s9" before this one (a step can wait only for one written above it)'],
      // a negative duration
      [step('    fault: kill\n    target: L\n    duration: -3s\n'), 'scenario bad.yaml: step "s2" (#2), duration: must be a duration of zero or more, such as 500ms, 12s or 2m, got "-3s"'],
      [step('    fault: kill\n    target: L\n    duration: 0s\n'), 'scenario bad.yaml: step "s2" (#2), duration: must be above zero, got "0s"'],
      // a name not bound before
      [step('    fault: kill\n    target: B\n    duration: 2s\n'), 'scenario bad.yaml: step "s2" (#2), target: unknown role "B": not a role, nor a name bound by an earlier step (roles: leader, random, node <id>, active of <store>/<p>, replica of <store>/<p>, preferred primary of <store>/<p>, catching-up, outside (a node outside the member set), member (a member that may leave), or a name bound earlier with "as NAME")'],
      [step('    fault: pause\n    duration: 2s\n'), 'scenario bad.yaml: step "s2" (#2), target: missing (who the fault hits, e.g. "active of sync3/0 as A")'],
      [step('    fault: kill\n    target: L\n    duration: 2s\n    clock: { jump: 3s }\n'), 'scenario bad.yaml: step "s2" (#2), clock: only for clock faults'],
      [step('    fault: kill\n    target: L\n    duration: 2s\n    colour: red\n'), 'scenario bad.yaml: step "s2" (#2): unknown field "colour"'],
      [step('    fault: explode\n    target: L\n    duration: 2s\n'), 'scenario bad.yaml: step "s2" (#2), fault: must be one of "kill", "stop", "pause", "partition", "power", "clock", "client-cut", "handoff", "regenerate", "join", "leave", "rebalance", got "explode"'],
      [step('    fault: clock\n    target: L\n    clock: { jump: 1500ms }\n    duration: 2s\n'), 'scenario bad.yaml: step "s2" (#2), clock.jump: must be whole seconds, not zero, within a day, got "1500ms"'],
      [step('    fault: handoff\n    partition: rf1/0\n    to: L\n'), 'scenario bad.yaml: step "s2" (#2), partition: rf1 has one copy: nothing to hand off or keep'],
      [step('    fault: kill\n    target: node n2\n    duration: 2s\n    delay: 1s\n'), 'scenario bad.yaml: step "s2" (#2), delay: only for steps with "after"'],
      [step('    name: s1\n    fault: kill\n    target: L\n    duration: 2s\n'), 'scenario bad.yaml: not valid YAML: Map keys must be unique'],
      [step('    fault: kill\n    target: active of sync3/3\n    duration: 2s\n'), 'scenario bad.yaml: step "s2" (#2), target: sync3 has partitions 0..2 in a 3-node cluster, not 3'],
      [step('    fault: power\n    target: leader\n    duration: 2s\n'), 'scenario bad.yaml: step "s2" (#2), count: a power failure of 3 of 3 nodes leaves no majority up, beyond the fault budget: set "beyond-budget: true" (or count: 1)'],
      [step('    fault: kill\n    target: node n2 as L\n    duration: 2s\n'), 'scenario bad.yaml: step "s2" (#2), target: "as L": L is already bound by an earlier step'],
      // a sixth node in a five-node cluster
      ['nodes: 5\nexpect: CERTIFIED\nsteps:\n  - name: k\n    fault: kill\n    target: node n6\n    duration: 2s\n', 'scenario bad.yaml: step "k" (#1), target: node n6 is not in a 5-node cluster (n1..n5)'],
      ['nodes: 5\nexpect: CERTIFIED\nsteps:\n  - fault: kill\n    target: leader\n    after: caught-up n6\n    duration: 2s\n', 'scenario bad.yaml: step (#1), after: node n6 is not in a 5-node cluster (n1..n5)'],
      ['nodes: 4\nexpect: CERTIFIED\nsteps:\n  - fault: kill\n    target: leader\n    duration: 2s\n', 'scenario bad.yaml: nodes: must be one of 3, 5, got 4'],
      ['nodes: 3\nexpect: MAYBE\nsteps:\n  - fault: kill\n    target: leader\n    duration: 2s\n', 'scenario bad.yaml: expect: must be CERTIFIED, FAILED, INCONCLUSIVE, or { verdict, allow: [rf1, async-ack, beyond-budget] }, got "MAYBE"'],
      ['nodes: 3\nsteps:\n  - fault: kill\n    target: leader\n    duration: 2s\n', 'scenario bad.yaml: expect: missing'],
      ['nodes: 3\nexpect: CERTIFIED\nsteps: []\n', 'scenario bad.yaml: steps: must NOT have fewer than 1 items'],
      ['- 1\n- 2\n', 'scenario bad.yaml: must be a YAML mapping (nodes, expect, steps, ...)'],
    ];
    for (const [text, message] of cases) expect(errorOf(text)).toBe(message);
  });

  it('never throws anything but a one-line ScenarioError on arbitrary text (property)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (s) => {
        try {
          parseScenario(s, 'p.yaml');
        } catch (e) {
          expect(e).toBeInstanceOf(ScenarioError);
          expect((e as Error).message).not.toContain('\n');
        }
      }),
      { numRuns: 300 },
    );
  });

  it('judges a run against the expectation: verdict, allowed classes, skipped steps; and the exit code', () => {
    const rec = scenarioRecord(parseScenario(ok.replace('expect: CERTIFIED', 'expect: { verdict: CERTIFIED, allow: [async-ack] }'), 'x.yaml'));
    expect(describeExpectation(rec.expect)).toBe('CERTIFIED (allow async-ack)');
    expect(judgeScenario(rec, 'CERTIFIED', { rf1: 0, 'async-ack': 3 }, []).held).toBe(true);
    expect(judgeScenario(rec, 'CERTIFIED', { rf1: 2, 'async-ack': 0 }, []).reasons).toEqual(['2 rf1 losses, which the scenario does not allow']);
    expect(judgeScenario(rec, 'FAILED', {}, [{ step: 'kill', reason: 'promoted sync3/0 did not happen within 60000 ms' }]).reasons).toEqual([
      'verdict FAILED, expected CERTIFIED',
      'step "kill" did not run: promoted sync3/0 did not happen within 60000 ms',
    ]);
    expect([scenarioExitCode(true, 0), scenarioExitCode(true, 1), scenarioExitCode(false, 0), scenarioExitCode(false, 1), scenarioExitCode(false, 2)]).toEqual([0, 0, 1, 1, 2]);
  });

  it('make certify SCENARIO=<malformed>: one line, exit 64, nothing started (no run directory, no node)', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'zaris-certify-scenario-'));
    try {
      const bad = path.join(dir, 'bad.yaml');
      writeFileSync(bad, 'nodes: 5\nexpect: CERTIFIED\nsteps:\n  - name: k\n    fault: kill\n    target: node n6\n    duration: 2s\n');
      const runs = path.join(dir, 'runs');
      const r = spawnSync(process.execPath, [path.join(ROOT, 'dist/harness/cli.js'), 'certify', '--scenario', bad, '--runs-dir', runs, '--runtime', 'process'], { encoding: 'utf8' });
      expect(r.status).toBe(64);
      expect(r.stderr).toBe(`zaris-certify: scenario ${bad}: step "k" (#1), target: node n6 is not in a 5-node cluster (n1..n5)\n`);
      expect(existsSync(runs)).toBe(false);
      const clash = spawnSync(process.execPath, [path.join(ROOT, 'dist/harness/cli.js'), 'certify', '--scenario', path.join(LIB, 'flapping-halves.yaml'), '--nodes', '5', '--runs-dir', runs], { encoding: 'utf8' });
      expect(clash.status).toBe(64);
      expect(clash.stderr).toBe('zaris-certify: --scenario names its own cluster, faults and timings: drop --nodes\n');
      expect(existsSync(runs)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});


describe('membership steps (issue 14)', () => {
  it('join / leave name a node (the spare too), rebalance none; one request each; a spare is added by default', () => {
    const sc = parseScenario(`
nodes: 3
expect: CERTIFIED
steps:
  - name: in
    fault: join
    target: node n4
    at: 1s
  - name: out
    fault: leave
    target: member as M
    after: step in ended
  - name: re
    fault: rebalance
    after: step out ended
    delay: 2s
  - name: back
    fault: join
    target: M
    after: step re ended
  - name: hit
    fault: kill
    target: node n4
    at: 1s
    duration: 2s
`, 'm.yaml');
    expect(sc.spares).toBe(1);
    expect(sc.faults.map((f) => [f.kind, f.target, f.durationMs])).toEqual([
      ['join', { role: 'node', node: 'n4' }, 0],
      ['leave', { role: 'member' }, 0],
      ['rebalance', { role: 'leader' }, 0],
      ['join', { role: 'bound', name: 'M' }, 0],
      ['kill', { role: 'node', node: 'n4' }, 2000],
    ]);
    expect(sc.faults[1].bind).toBe('M');
    const s = compileScenario(sc, 3);
    expect(s.kinds).toEqual(['kill', 'join', 'leave', 'rebalance']);
    expect(s.nodeCount).toBe(3);
    expect(scheduleFromJson(scheduleToJson(s))).toEqual(s);
    // without membership steps there is no spare, so n4 is no node of the cluster; spares: 2 makes n5 one
    expect(parseScenario('nodes: 3\nexpect: CERTIFIED\nsteps:\n  - fault: kill\n    target: node n1\n    duration: 1s\n').spares).toBe(0);
    expect(parseScenario('nodes: 3\nspares: 2\nexpect: CERTIFIED\nsteps:\n  - fault: join\n    target: node n5\n').faults[0].target).toEqual({ role: 'node', node: 'n5' });
  });

  it('refuses what does not fit a membership step, in one line', () => {
    const head = 'nodes: 3\nexpect: CERTIFIED\nsteps:\n';
    expect(errorOf(`${head}  - fault: rebalance\n    target: node n1\n`)).toBe('scenario bad.yaml: step (#1), target: only for faults on a node (a handoff names its node with "to", a regeneration or rebalance none)');
    expect(errorOf(`${head}  - fault: join\n    target: node n4\n    duration: 2s\n`)).toBe('scenario bad.yaml: step (#1), duration: only for faults that last (a handoff, regeneration, join, leave or rebalance is one request)');
    expect(errorOf(`${head}  - fault: leave\n    partition: sync3/0\n    target: node n1\n`)).toBe('scenario bad.yaml: step (#1), partition: only for handoff and regenerate');
    expect(errorOf(`${head}  - fault: join\n`)).toMatch(/^scenario bad.yaml: step \(#1\), target: missing/);
    expect(errorOf(`${head}  - fault: join\n    target: node n5\n`)).toBe('scenario bad.yaml: step (#1), target: node n5 is not in a 4-node cluster (n1..n4)');
    expect(errorOf('nodes: 3\nspares: 4\nexpect: CERTIFIED\nsteps:\n  - fault: rebalance\n')).toMatch(/^scenario bad.yaml: spares/);
  });
});
