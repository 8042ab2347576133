/**
 * The process runtime's spare nodes (issue 14) on real processes (stand-in nodes started exactly
 * as store nodes are): a spare is written into the cluster config with `"spare": true` and no
 * preferred primary, started, killed and restarted like every node.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterConfig } from '../../nodes/cluster-config.js';
import { ProcessRuntime } from './process-runtime.js';
import { standInRequest } from './test-support/stand-in-client.js';
import { standInTemplate } from './test-support/stand-in-template.js';

const STAND_IN = fileURLToPath(new URL('./test-support/stand-in-node.mjs', import.meta.url));

const template = standInTemplate('process-spares-test');

describe('process runtime: spare nodes (issue 14)', () => {
  let rt: ProcessRuntime;
  let runDir: string;
  beforeAll(async () => {
    runDir = mkdtempSync(join(tmpdir(), 'zaris-certify-spares-test-'));
    rt = new ProcessRuntime({ runTag: `s${process.pid}`, nodeEntry: STAND_IN });
    await rt.start({ runDir, nodeIds: ['n1', 'n2', 'n3', 'n4'], spares: ['n4'], template });
  }, 30_000);
  afterAll(async () => {
    await rt?.close();
    if (runDir) rmSync(runDir, { recursive: true, force: true });
  });

  it('writes the spare into the config the nodes read, starts it, and kills and restarts it like any node', async () => {
    const written = JSON.parse(readFileSync(join(runDir, 'cluster.json'), 'utf8')) as ClusterConfig;
    expect(written.nodes.map((n) => [n.id, n.preferredPrimary, (n as { spare?: boolean }).spare ?? false])).toEqual([
      ['n1', true, false],
      ['n2', true, false],
      ['n3', true, false],
      ['n4', false, true],
    ]);
    expect(rt.nodeIds()).toEqual(['n1', 'n2', 'n3', 'n4']);
    const boot = (await standInRequest(rt.clientEndpoint('n4'), 'PING', 2_000))!;
    expect(boot).toMatch(/^PONG n4 [0-9a-f]{12}$/);
    await rt.kill('n4');
    expect(rt.isUp('n4')).toBe(false);
    await rt.restart('n4');
    const again = (await standInRequest(rt.clientEndpoint('n4'), 'PING', 2_000))!;
    expect(again).toMatch(/^PONG n4 [0-9a-f]{12}$/);
    expect(again).not.toBe(boot);
  }, 30_000);
});
