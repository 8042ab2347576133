import { describe, expect, it } from 'vitest';
import { NOT_RUN_MARK } from './capabilities.js';
import { closingLine, notRunLines, reasonOf } from './not-run-reporter.js';

describe('the NOT-run report', () => {
  it('reads the reason from the marker that capabilities.ts puts in a skipped title', () => {
    expect(reasonOf(`iptables partitions > can change iptables here ${NOT_RUN_MARK}partitions need CAP_NET_ADMIN (run as root)]`)).toBe('partitions need CAP_NET_ADMIN (run as root)');
    // the marker on a describe title propagates to its tests' full names
    expect(reasonOf(`docker runtime ${NOT_RUN_MARK}no Docker engine answers (start dockerd)] > starts three nodes`)).toBe('no Docker engine answers (start dockerd)');
    expect(reasonOf('a plain it.skip')).toMatch(/^skipped with no reason given/);
  });

  it('groups skipped tests by reason, most first, with files and counts', () => {
    const m = (r: string): string => `t ${NOT_RUN_MARK}${r}]`;
    const lines = notRunLines(
      [
        { file: 'b.test.ts', fullName: m('no engine') },
        { file: 'a.test.ts', fullName: m('no engine') },
        { file: 'a.test.ts', fullName: m('no engine') },
        { file: 'c.test.ts', fullName: m('no iptables') },
        { file: 'd.test.ts', fullName: 'x' },
      ],
      40,
    );
    expect(lines).toEqual([
      'NOT run: 5 of 40 tests, skipped:',
      '  3 because no engine: a.test.ts (2), b.test.ts (1)',
      '  1 because no iptables: c.test.ts (1)',
      '  1 because skipped with no reason given (it.skip, todo, or a filter): d.test.ts (1)',
    ]);
  });

  it('says so when every test ran, and when none did', () => {
    expect(notRunLines([], 12)).toEqual(['NOT run: none (all 12 tests ran)']);
    expect(notRunLines([], 0)).toEqual(['NOT run: every test (no test ran)']);
  });

  it('ends with the plain closing line CI reads', () => {
    expect(closingLine({ passed: 590, failed: 2, skipped: 17 })).toBe('tests: 590 passed, 2 failed, 17 skipped');
  });
});
