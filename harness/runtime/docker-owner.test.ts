import { spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { ownerAlive, ownerToken, processStartTicks } from './docker-owner.js';

describe('owner tokens', () => {
  it('name this host, this pid and its start time', () => {
    const t = ownerToken();
    expect(t).toBe(`${hostname()}:${process.pid}:${processStartTicks(process.pid)}`);
    expect(t).toMatch(/:\d+:\d+$/);
    expect(ownerAlive(t)).toBe(true);
  });

  it('count a finished process, a reused pid, a missing or malformed token as dead', () => {
    const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
    const pid = Number(String(child.stdout));
    expect(ownerAlive(`${hostname()}:${pid}:1`)).toBe(false);
    expect(ownerAlive(`${hostname()}:${process.pid}:${Number(processStartTicks(process.pid)) + 1}`)).toBe(false);
    expect(ownerAlive(undefined)).toBe(false);
    expect(ownerAlive('garbage')).toBe(false);
  });

  it('count an owner on another host as alive (it cannot be checked from here)', () => {
    expect(ownerAlive(`not-${hostname()}:1:1`)).toBe(true);
  });
});
