import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { distPath } from './dist-path.js';
import { MAX_SPARES, spareIdsOf } from './certify/plan.js';
import { UsageError } from './usage-error.js';

describe('certify: spare nodes (issue 14, SPARES=)', () => {
  it('one spare after the voters when membership changes are planned, none otherwise; SPARES= sets the count', () => {
    expect(spareIdsOf(3, undefined, true)).toEqual(['n4']);
    expect(spareIdsOf(5, undefined, true)).toEqual(['n6']);
    expect(spareIdsOf(3, undefined, false)).toEqual([]);
    expect(spareIdsOf(3, 2, true)).toEqual(['n4', 'n5']);
    expect(spareIdsOf(3, 1, false)).toEqual(['n4']);
    expect(spareIdsOf(3, 0, false)).toEqual([]);
    expect(spareIdsOf(5, MAX_SPARES, true)).toEqual(['n6', 'n7', 'n8']);
  });
  it('refuses SPARES=0 with membership changes and a count out of range, in one line (a usage error)', () => {
    expect(() => spareIdsOf(3, 0, true)).toThrow(new UsageError('membership changes need a spare node to join (SPARES=0 given): use SPARES=1 or drop membership from FAULTS'));
    expect(() => spareIdsOf(3, 4, true)).toThrow(new UsageError('SPARES must be 0 to 3, got 4'));
    expect(() => spareIdsOf(3, -1, false)).toThrow(UsageError);
    expect(() => spareIdsOf(3, 1.5, false)).toThrow(UsageError);
  });
});

describe('make certify with membership and SPARES=0 (the built CLI)', () => {
  it('is refused in one line, exit 64, before anything starts (no run directory)', async () => {
    const runs = mkdtempSync(path.join(tmpdir(), 'zaris-spares-'));
    try {
      const r = await execa('node', [distPath(import.meta.url, 'harness/cli.js'), 'certify', '--faults', 'kill,membership', '--spares', '0', '--duration', '10s', '--runtime', 'process', '--runs-dir', runs], { reject: false, timeout: 60_000 });
      expect([r.exitCode, String(r.stderr).trim()]).toEqual([64, 'zaris-certify: membership changes need a spare node to join (SPARES=0 given): use SPARES=1 or drop membership from FAULTS']);
      expect(readdirSync(runs)).toEqual([]);
    } finally {
      rmSync(runs, { recursive: true, force: true });
    }
  }, 60_000);
});
