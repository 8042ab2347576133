import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { groupPids, killGroup, signalGroup } from './node-group.js';
import { SETPRIV } from './installed.js';

const GID = 1_000_000_000 + 254 * 65536 + 253 * 256 + 7;
const root = process.getuid?.() === 0;

describe('the processes of a node, by its group id', () => {
  it.skipIf(!root)('finds a process that left the tree, stops and kills it (needs root for setpriv --regid)', async () => {
    // the shell starts a sleep in the background and exits: the sleep is re-parented, as Patroni's postmaster is
    const sh = spawn(SETPRIV, ['--regid', String(GID), '--clear-groups', '--', '/bin/sh', '-c', 'sleep 60 >/dev/null 2>&1 & echo $!'], { stdio: ['ignore', 'pipe', 'ignore'] });
    const pid = await new Promise<number>((resolve) => sh.stdout.once('data', (d: Buffer) => resolve(Number(String(d).trim()))));
    await new Promise((r) => sh.once('exit', r));
    try {
      expect(groupPids(GID)).toEqual([pid]);
      expect(signalGroup(GID, 'SIGSTOP')).toEqual([pid]);
      expect(signalGroup(GID, 'SIGCONT', [pid])).toEqual([]);
      signalGroup(GID, 'SIGCONT');
      await killGroup(GID, 2_000);
      expect(groupPids(GID)).toEqual([]);
    } finally {
      signalGroup(GID, 'SIGKILL');
    }
  });

  it('a group with no process: nothing found, nothing signalled', async () => {
    expect(groupPids(GID + 1)).toEqual([]);
    expect(signalGroup(GID + 1, 'SIGKILL')).toEqual([]);
    await killGroup(GID + 1, 100);
  });
});
