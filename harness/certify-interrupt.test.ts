import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { needs } from '../test-support/capabilities.js';
import { listNodeProcesses } from './runtime/process-sweeper.js';

const cli = path.resolve('dist/harness/cli.js');

async function iptablesRules(): Promise<string> {
  return (await execa('iptables', ['-S'], { reject: false })).stdout;
}

/**
 * Ctrl-C in the middle of a partition (issue 6): the harness heals, removes its iptables chain,
 * kills its node processes, and ends INCONCLUSIVE (exit 2); nothing of it is left behind.
 */
// a partition on the process runtime needs iptables (CAP_NET_ADMIN); without it this is NOT run
const net = needs('iptables');

describe.skipIf(net.skip)(net.title('certify interrupted by SIGINT while a partition is active'), () => {
  let runsDir = '';
  beforeAll(() => {
    runsDir = mkdtempSync(path.join(os.tmpdir(), 'zaris-certify-sigint-'));
  });
  afterAll(() => rmSync(runsDir, { recursive: true, force: true }));

  it('leaves no iptables rule and no node process, and says INCONCLUSIVE', async () => {
    const child = execa(process.execPath, [cli, 'certify', '--runtime', 'process', '--faults', 'partition', '--duration', '120s', '--seed', '5', '--runs-dir', runsDir, '--rate', '500'], { reject: false, all: true });
    const pid = child.pid!;
    // wait until the ledger shows a partition fault that has started and not ended
    let ledgerPath = '';
    const deadline = Date.now() + 90_000;
    let active = false;
    while (!active && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      const dirs = readdirSync(runsDir).filter((d) => d !== 'latest');
      if (dirs.length === 0) continue;
      ledgerPath = path.join(runsDir, dirs[0], 'ledger.sqlite');
      try {
        const db = new Database(ledgerPath, { readonly: true, fileMustExist: true });
        try {
          const row = db.prepare("SELECT count(*) AS n FROM faults WHERE kind = 'partition' AND end_ms IS NULL").get() as { n: number };
          active = row.n > 0;
        } finally {
          db.close();
        }
      } catch {
        // not created yet
      }
    }
    expect(active).toBe(true);
    expect(await iptablesRules()).toContain(`zaris-certify-p${pid}-`);
    expect(listNodeProcesses().filter((p) => p.ppid === pid)).toHaveLength(3);
    child.kill('SIGINT');
    const res = await child;
    expect(res.exitCode, res.all).toBe(2);
    expect(res.stdout).toMatch(/INCONCLUSIVE/);
    expect(await iptablesRules()).not.toContain(`zaris-certify-p${pid}-`);
    expect(listNodeProcesses().filter((p) => p.ppid === pid || p.ppid === 1)).toHaveLength(0);
  }, 150_000);
});
