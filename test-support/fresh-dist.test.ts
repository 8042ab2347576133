import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isCompiledSource, staleDistReason } from './fresh-dist.js';

describe('staleDistReason (tests never run a stale dist/)', () => {
  let root: string;
  const put = (rel: string, atSec: number): void => {
    const f = path.join(root, rel);
    mkdirSync(path.dirname(f), { recursive: true });
    writeFileSync(f, '');
    utimesSync(f, atSec, atSec);
  };
  beforeEach(() => {
    root = mkdtempSync(path.join(os.tmpdir(), 'zaris-certify-fresh-dist-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('compiles what the Makefile compiles: sources, not tests or test-support', () => {
    expect(isCompiledSource('harness/certify.ts')).toBe(true);
    expect(isCompiledSource('harness/certify.test.ts')).toBe(false);
    expect(isCompiledSource('harness/test-support/process-cluster.ts')).toBe(false);
    expect(isCompiledSource('nodes/Dockerfile')).toBe(false);
  });

  it('is stale when never built, or when a source or tsconfig is newer than the stamp', () => {
    put('harness/a.ts', 1_000);
    put('tsconfig.json', 1_000);
    expect(staleDistReason(root)).toBe('dist/.built is missing (never built)');
    put('dist/.built', 2_000);
    expect(staleDistReason(root)).toBeNull();
    put('nodes/sub/b.ts', 3_000);
    expect(staleDistReason(root)).toBe(`${path.join('nodes', 'sub', 'b.ts')} is newer than the last build`);
    put('dist/.built', 4_000);
    put('tsconfig.build.json', 5_000);
    expect(staleDistReason(root)).toBe('tsconfig.build.json is newer than the last build');
  });

  it('is not made stale by tests or test-support files', () => {
    put('harness/a.ts', 1_000);
    put('dist/.built', 2_000);
    put('harness/a.test.ts', 3_000);
    put('harness/test-support/helper.ts', 3_000);
    put('test-support/global-setup.ts', 3_000);
    expect(staleDistReason(root)).toBeNull();
  });
});
