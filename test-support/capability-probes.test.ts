import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { capabilities, needs, NOT_RUN_MARK } from './capabilities.js';
import { locateSharedCases } from './capability-probes.js';

describe('locateSharedCases', () => {
  let top: string;
  let repo: string;
  beforeEach(() => {
    top = mkdtempSync(path.join(os.tmpdir(), 'zaris-certify-cases-'));
    repo = path.join(top, 'repo');
    mkdirSync(repo);
  });
  afterEach(() => rmSync(top, { recursive: true, force: true }));

  it('takes $ZARIS_CASES_DIR (relative to the checkout) when set', () => {
    mkdirSync(path.join(top, 'elsewhere'));
    expect(locateSharedCases({ ZARIS_CASES_DIR: '../elsewhere' }, repo)).toEqual({ dir: path.join(top, 'elsewhere'), reason: null });
  });

  it('refuses, one line, a $ZARIS_CASES_DIR that is not a folder (a mistake, not a skip)', () => {
    writeFileSync(path.join(top, 'file'), '');
    expect(() => locateSharedCases({ ZARIS_CASES_DIR: path.join(top, 'missing') }, repo)).toThrow(/^ZARIS_CASES_DIR=.*missing is not a folder/);
    expect(() => locateSharedCases({ ZARIS_CASES_DIR: path.join(top, 'file') }, repo)).toThrow(/is not a folder/);
  });

  it('else ../shared/cases beside the checkout, else the reason to skip', () => {
    expect(locateSharedCases({}, repo)).toEqual({ dir: null, reason: `no shared cases: neither $ZARIS_CASES_DIR nor ${path.join(top, 'shared', 'cases')} exists` });
    mkdirSync(path.join(top, 'shared', 'cases'), { recursive: true });
    expect(locateSharedCases({ ZARIS_CASES_DIR: '' }, repo)).toEqual({ dir: path.join(top, 'shared', 'cases'), reason: null });
  });
});

describe('needs (capabilities decided once by global-setup)', () => {
  it('skips with the reason in the title exactly when the capability is missing', () => {
    const caps = capabilities();
    for (const name of ['iptables', 'docker', 'tmpfs', 'sharedCases', 'targetRuntime', 'etcd', 'redis', 'chromium'] as const) {
      const n = needs(name);
      expect(n.reason).toBe(caps[name]);
      expect(n.skip).toBe(caps[name] !== null);
      expect(n.title('t')).toBe(caps[name] === null ? 't' : `t ${NOT_RUN_MARK}${caps[name]}]`);
    }
    expect(caps.casesDir === null).toBe(caps.sharedCases !== null);
  });
});
