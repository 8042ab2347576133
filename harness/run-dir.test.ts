import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRunDir } from './certify/setup.js';

describe('createRunDir (harness/certify/setup.ts)', () => {
  it('never hands out a directory twice: same-second runs of one seed get -2, -3 (make power JOBS=4)', () => {
    const runs = mkdtempSync(path.join(os.tmpdir(), 'zaris-certify-rundir-'));
    try {
      const a = createRunDir(runs, '20261201T031500Z-1');
      writeFileSync(path.join(a, 'ledger.sqlite'), 'run a');
      const b = createRunDir(runs, '20261201T031500Z-1');
      const c = createRunDir(runs, '20261201T031500Z-1');
      expect([a, b, c].map((d) => path.basename(d))).toEqual(['20261201T031500Z-1', '20261201T031500Z-1-2', '20261201T031500Z-1-3']);
      expect(existsSync(path.join(b, 'ledger.sqlite'))).toBe(false);
      expect(path.isAbsolute(a)).toBe(true);
      // an error other than an existing name is thrown, not looped on
      expect(() => createRunDir(path.join(runs, 'missing-parent'), 'x')).toThrow(/ENOENT/);
    } finally {
      rmSync(runs, { recursive: true, force: true });
    }
  });
});
