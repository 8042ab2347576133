import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { needs } from '../../test-support/capabilities.js';
import { ensureBaseImage } from '../docker/base-image.js';
import { docker } from '../docker/docker-cli.js';
import { OWNER_LABEL, ownerAlive, ownerToken, RUN_LABEL } from './docker-owner.js';
import { sweepDockerLeftovers } from './docker-sweep.js';

// Container test: needs a Docker engine and the base image (present or makeable); without them
// it is NOT run, and says why.
const containers = needs('docker');

describe.skipIf(containers.skip)(containers.title('sweepDockerLeftovers'), () => {
  const tag = `sweeptest-${randomBytes(4).toString('hex')}`;
  const net = `zaris-certify-${tag}`;
  let image: string;

  beforeAll(async () => {
    image = (await ensureBaseImage()).image;
  });

  afterAll(async () => {
    await sweepDockerLeftovers({ runTag: tag });
  });

  it('removes what a crashed run left (network, running and paused containers) and keeps what a live run uses', async () => {
    // a "run" process that owns resources, then crashes
    const run = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    const crashed = ownerToken(run.pid!);
    const labels = (owner: string) => ['--label', 'zaris-certify=1', '--label', `${RUN_LABEL}=${tag}`, '--label', `${OWNER_LABEL}=${owner}`];
    const idle = ['node', '-e', 'setInterval(() => {}, 1000)'];
    try {
      await docker(['network', 'create', ...labels(crashed), net]);
      await docker(['run', '-d', '--name', `${net}-a`, ...labels(crashed), '--network', net, image, ...idle]);
      await docker(['run', '-d', '--name', `${net}-b`, ...labels(crashed), '--network', net, image, ...idle]);
      await docker(['pause', `${net}-b`]);
      await docker(['run', '-d', '--name', `${net}-live`, ...labels(ownerToken()), image, ...idle]);
    } finally {
      run.kill('SIGKILL');
      await new Promise((r) => run.once('exit', r));
    }
    expect(ownerAlive(crashed)).toBe(false);

    const swept = await sweepDockerLeftovers();
    // another suite's sweep may have removed some of them first: both are correct
    expect([`${net}-a`, `${net}-b`]).toEqual(expect.arrayContaining(swept.containers.filter((c) => c.startsWith(net))));
    expect(swept.containers).not.toContain(`${net}-live`);
    expect(await docker(['ps', '-a', '--format', '{{.Names}}', '--filter', `label=${RUN_LABEL}=${tag}`])).toBe(`${net}-live`);
    expect(await docker(['network', 'ls', '-q', '--filter', `name=${net}`])).toBe('');

    const mine = await sweepDockerLeftovers({ runTag: tag });
    expect(mine).toEqual({ containers: [`${net}-live`], networks: [], errors: [] });
    expect(await docker(['ps', '-a', '-q', '--filter', `label=${RUN_LABEL}=${tag}`])).toBe('');
  });
});
