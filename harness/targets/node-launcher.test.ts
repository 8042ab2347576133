import { describe, expect, it } from 'vitest';
import { parseLaunchSpec, userIds } from './node-launcher.js';

const spec = (processes: unknown[]): string => JSON.stringify({ node: 'n1', host: '10.0.0.2', cwd: '/data', readyTimeoutMs: 30_000, processes });

describe('node launcher spec', () => {
  it('takes a per-process ready bound and user (Patroni: 90 s, as postgres)', () => {
    const s = parseLaunchSpec(spec([
      { name: 'etcd', command: '/usr/bin/etcd', args: [], port: 2379 },
      { name: 'patroni', command: '/bin/sh', args: ['-c', 'x'], port: 8008, readyTimeoutMs: 90_000, user: 'postgres' },
    ]));
    expect(s.processes[1]).toMatchObject({ readyTimeoutMs: 90_000, user: 'postgres' });
    expect(s.processes[0].user).toBeUndefined();
  });

  it('refuses a bad bound or user name in one line', () => {
    expect(() => parseLaunchSpec(spec([{ name: 'p', command: '/x', args: [], port: 1, readyTimeoutMs: 0 }]))).toThrow(/^launch spec: process p: readyTimeoutMs must be a number above zero$/);
    expect(() => parseLaunchSpec(spec([{ name: 'p', command: '/x', args: [], port: 1, user: 'root; rm -rf /' }]))).toThrow(/^launch spec: process p: user must be a user name$/);
  });

  it("finds a user's uid and gid in /etc/passwd, and says when it is missing", () => {
    const passwd = 'root:x:0:0:root:/root:/bin/bash\npostgres:x:104:107:PostgreSQL administrator,,,:/var/lib/postgresql:/bin/bash\n';
    expect(userIds(passwd, 'postgres')).toEqual({ uid: 104, gid: 107 });
    expect(userIds(passwd, 'root')).toEqual({ uid: 0, gid: 0 });
    expect(() => userIds(passwd, 'redis')).toThrow(/^user redis is not in this image's \/etc\/passwd$/);
  });
});
