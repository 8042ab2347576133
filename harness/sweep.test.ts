import { execa } from 'execa';
import { mkdir, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTempDir, markedPid, sweepLeftovers, tempDirSweeper, type Sweeper } from './sweep.js';

let root: string; // a private stand-in for os.tmpdir()
let deadPid: number;

beforeAll(async () => {
  root = await makeTempDir('sweep-test'); // pid-marked: swept after a crash of this suite
  deadPid = Number((await execa('sh', ['-c', 'echo $$'])).stdout.trim()); // that shell has exited
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const HOUR = 3_600_000;

describe('sweepLeftovers', () => {
  it('removes only makeTempDir-named folders of dead owners; keeps live owners, unmarked folders of any age, files and other names', async () => {
    const now = Date.now();
    const old = new Date(now - HOUR);
    const mk = async (name: string, age?: Date): Promise<void> => {
      await mkdir(join(root, name));
      await writeFile(join(root, name, 'x'), 'x');
      if (age) await utimes(join(root, name), age, age);
    };
    await mk(`zaris-certify-run-p${deadPid}-abcDE1`);
    await mk(`zaris-certify-run-p${process.pid}-abcDE2`, old); // ours, even if old
    // a user's checkout or notes: never a leftover, however old (a sweep once deleted a clone)
    await mk('zaris-certify', old);
    await mk('zaris-certify-old', old);
    await mk(`zaris-certify-fresh-p${deadPid}`, old); // not the exact makeTempDir shape
    await mk('other-old', old);
    await writeFile(join(root, 'zaris-certify-file'), 'x');
    await utimes(join(root, 'zaris-certify-file'), old, old);
    const own = await makeTempDir('unit', root);

    const res = await sweepLeftovers({ sweepers: [tempDirSweeper], tmpDir: root, runStartedAtMs: now });
    expect(res).toHaveLength(1);
    expect(res[0].error).toBeUndefined();
    expect(res[0].removed).toEqual([join(root, `zaris-certify-run-p${deadPid}-abcDE1`)]);
    expect((await readdir(root)).sort()).toEqual(
      ['other-old', 'zaris-certify', 'zaris-certify-file', 'zaris-certify-old', `zaris-certify-fresh-p${deadPid}`, `zaris-certify-run-p${process.pid}-abcDE2`, own.slice(root.length + 1)].sort(),
    );
  });

  it('one failing sweeper does not stop the others; the error is one line', async () => {
    const ran: string[] = [];
    const bad: Sweeper = {
      name: 'bad',
      sweep: async () => {
        throw new Error('engine not answering\nstack...');
      },
    };
    const good: Sweeper = {
      name: 'good',
      sweep: async (ctx) => {
        ran.push(ctx.tmpDir);
        return ['thing'];
      },
    };
    const res = await sweepLeftovers({ sweepers: [bad, good], tmpDir: root });
    expect(res).toEqual([
      { sweeper: 'bad', removed: [], error: 'engine not answering' },
      { sweeper: 'good', removed: ['thing'] },
    ]);
    expect(ran).toEqual([root]);
  });

  it('the default list sweeps iptables filter chains, the targets\' nat chains and temporary folders', async () => {
    const res = await sweepLeftovers({ tmpDir: root });
    expect(res.map((r) => r.sweeper)).toEqual(['iptables', 'iptables-nat', 'temp-dirs']);
    expect(res.every((r) => r.error === undefined)).toBe(true);
  });

  it('reads owner marks and validates labels', async () => {
    expect(markedPid('zaris-certify-run-p1234-x9z')).toBe(1234);
    expect(markedPid('zaris-certify-p77-abcd')).toBe(77);
    expect(markedPid('zaris-certify-old')).toBeNull();
    const d = await makeTempDir('lbl', root);
    expect(d.startsWith(join(root, `zaris-certify-lbl-p${process.pid}-`))).toBe(true);
    await expect(makeTempDir('Bad Label', root)).rejects.toThrow('must be 1-24 characters of [a-z0-9-]');
  });
});
