/**
 * The disk guard on a real, small disk (issue 11): a run whose run directory lives on a 96 MB
 * tmpfs, mostly filled beforehand, is ended by the guard before the disk fills: the fault phase
 * stops long before its 10 minutes, the cluster heals, every key is read, the ledger is sealed and
 * verified, and the verdict is INCONCLUSIVE with the guard's reason. Nothing is left behind: no
 * node process, no open file on the tmpfs (it unmounts), and the disk never filled.
 * Mounting a tmpfs needs root; elsewhere this test is NOT run, and says why.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { needs } from '../test-support/capabilities.js';
import { countWrites } from '../ledger/key-log.js';
import { certify } from './certify.js';
import { freeBytes } from './disk-guard.js';
import { listNodeProcesses } from './runtime/process-sweeper.js';

const MB = 1024 * 1024;
const tmpfs = needs('tmpfs');

describe.skipIf(tmpfs.skip)(tmpfs.title('a run on a nearly full disk (a 96 MB tmpfs)'), () => {
  let mountDir = '';
  let mounted = false;

  beforeAll(async () => {
    mountDir = mkdtempSync(path.join(os.tmpdir(), `zaris-certify-diskfull-p${process.pid}-`));
    await execa('mount', ['-t', 'tmpfs', '-o', 'size=96m', 'zaris-certify-diskfull', mountDir]);
    mounted = true;
    // leave 40 MB: the guard (floor 8 MB + twice the ledger + its growth) trips at a ledger of ~10 MB
    const filler = (await freeBytes(mountDir)) - 40 * MB;
    writeFileSync(path.join(mountDir, 'filler'), Buffer.alloc(filler));
  });

  afterAll(async () => {
    if (mounted) await execa('umount', ['-l', mountDir], { reject: false });
    if (mountDir && existsSync(mountDir)) rmdirSync(mountDir);
  });

  it('ends the run cleanly before the disk fills: healed, read, sealed, verified, INCONCLUSIVE with the reason', async () => {
    const runsDir = path.join(mountDir, 'runs');
    const lines: string[] = [];
    let minFree = Infinity;
    const watching = setInterval(() => {
      freeBytes(mountDir).then((f) => (minFree = Math.min(minFree, f)), () => undefined);
    }, 100);
    const t0 = performance.now();
    let out;
    try {
      out = await certify({
        durationMs: 600_000,
        seed: 21,
        runtime: 'process',
        faults: ['kill'],
        faultsExplicit: true,
        beyondBudget: false,
        runsDir,
        rate: 0, // as fast as it goes: the ledger grows by MBs per second
        writersPerStore: 8,
        keysPerWriter: 8,
        escalationTimeoutMs: 10_000,
        diskGuard: { floorBytes: 8 * MB, checkEveryMs: 250 },
        log: (l) => lines.push(l),
      });
    } finally {
      clearInterval(watching);
    }
    const wallMs = performance.now() - t0;
    const r = out.results!;
    console.log(`${lines.filter((l) => /^(disk guard|ledger|final reads)/.test(l)).join('\n')}\nlowest free space seen: ${(minFree / MB).toFixed(1)} MB; ${(wallMs / 1000).toFixed(1)} s in all`);
    expect(out.exitCode, lines.join('\n')).toBe(2);
    expect(r.verdict).toBe('INCONCLUSIVE');
    expect(r.inconclusiveReason).toMatch(/disk guard: \d+ MB free on the run directory's file system, the end phase needs \d+ MB/);
    expect(r.summary.violation).toBe(0);
    expect(r.counts.acknowledged).toBeGreaterThan(1_000);
    expect(lines.some((l) => l.startsWith('disk guard: '))).toBe(true);
    expect(lines.some((l) => /^final reads: \d+ keys/.test(l))).toBe(true);

    // the ledger is whole: sealed, complete, the guard's stop recorded, every key read
    const db = new Database(path.join(out.runDir, 'ledger.sqlite'), { readonly: true, fileMustExist: true });
    try {
      const meta = (k: string): string | undefined => (db.prepare('SELECT value FROM meta WHERE key = ?').pluck().get(k) as string | undefined);
      expect(meta('status')).toBe('complete');
      expect(meta('inconclusive_reason')).toMatch(/^disk guard: /);
      expect(db.prepare('SELECT count(*) FROM write_batches').pluck().get()).toBe(0);
      // sealed: the writes in their packed form (key_log), or rows of an older ledger
      expect(countWrites(db)).toBeGreaterThan(1_000);
      // ended by the guard, not by its 10-minute fault phase: the heal began right after the guard's stop
      const at = (sql: string): number => db.prepare(sql).pluck().get() as number;
      const faultsAt = at("SELECT t_ms FROM events WHERE kind = 'phase' AND detail LIKE '%\"faults\"%'");
      const guardAt = at("SELECT t_ms FROM events WHERE kind = 'disk-guard'");
      const healAt = at("SELECT t_ms FROM events WHERE kind = 'phase' AND detail LIKE '%\"heal\"%'");
      expect(db.prepare("SELECT count(*) FROM events WHERE kind = 'disk-guard'").pluck().get()).toBe(1);
      expect(guardAt).toBeGreaterThan(faultsAt);
      expect(healAt).toBeGreaterThanOrEqual(guardAt);
      expect(healAt).toBeLessThan(faultsAt + 600_000);
      const keys = db.prepare('SELECT count(*) FROM keys').pluck().get() as number;
      expect(db.prepare('SELECT count(*) FROM final_reads').pluck().get()).toBe(keys);
    } finally {
      db.close();
    }
    for (const f of ['results.json', 'junit.xml', 'report.html']) expect(existsSync(path.join(out.runDir, f)), f).toBe(true);
    expect(JSON.parse(readFileSync(path.join(out.runDir, 'results.json'), 'utf8')).verdict).toBe('INCONCLUSIVE');
    // the disk never filled
    expect(minFree).toBeGreaterThan(0);
    expect(await freeBytes(mountDir)).toBeGreaterThan(0);

    // nothing left behind: no node process of this harness, nothing holding the tmpfs open
    expect(listNodeProcesses().filter((p) => p.ppid === process.pid)).toEqual([]);
    expect(readdirSync(runsDir).sort()).toEqual([path.basename(out.runDir), 'latest'].sort());
    const um = await execa('umount', [mountDir], { reject: false });
    expect(um.exitCode, um.stderr).toBe(0);
    mounted = false;
  }, 360_000);
});
