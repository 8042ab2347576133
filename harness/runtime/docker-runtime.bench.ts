import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_MAX_FRAME_BYTES, DEFAULT_TIMING } from '../../nodes/cluster-config.js';
import { ensureNodeImage, repoRootFrom } from '../docker/node-image.js';
import { DockerRuntime, type DockerRuntimeOptions } from './docker-runtime.js';

/**
 * `node dist/harness/runtime/docker-runtime.bench.js [repeats]` (default 3): the docker runtime's
 * cluster start-up with the node image cached (DESIGN.md §8: 3 nodes up in <= 15 s), plus one
 * kill + restart and close. Runs the store node (dist/nodes/node-main.js) when it is built,
 * else the stand-in (harness/runtime/test-support/stand-in-node.mjs); the JSON says which.
 * Prints one JSON line on stdout; times are wall milliseconds from the call to its resolution.
 */
async function main(): Promise<void> {
  const repeats = Number(process.argv[2] ?? '3');
  if (!Number.isInteger(repeats) || repeats < 1 || repeats > 20) throw new Error('repeats must be an integer from 1 to 20');
  const repoRoot = repoRootFrom(import.meta.url);
  const image = (await ensureNodeImage({ repoRoot, log: (l) => process.stderr.write(`bench: ${l}\n`) })).image;
  const realNode = existsSync(join(repoRoot, 'dist', 'nodes', 'node-main.js'));
  const standIn = join(repoRoot, 'harness', 'runtime', 'test-support', 'stand-in-node.mjs');
  const inImage = '/opt/zaris-certify/test-support/stand-in-node.mjs';
  const opts: DockerRuntimeOptions = realNode
    ? { image }
    : { image, files: [{ source: standIn, target: inImage }], nodeCommand: (id, cfg) => ['node', inImage, '--config', cfg, '--id', id] };
  const up: number[] = [];
  const restart: number[] = [];
  const close: number[] = [];
  for (let i = 0; i < repeats; i++) {
    const runDir = mkdtempSync(join(tmpdir(), 'zaris-certify-bench-'));
    const rt = new DockerRuntime(opts);
    try {
      let t = performance.now();
      await rt.start({
        runDir,
        nodeIds: ['n1', 'n2', 'n3'],
        template: {
          cluster: 'bench',
          stores: [{ name: 'sync3', replicationFactor: 3, ackMode: 'sync', segments: 64 }],
          timing: { ...DEFAULT_TIMING },
          maxFrameBytes: DEFAULT_MAX_FRAME_BYTES,
          multiKeyLongTailRetryThresholdsMs: '',
        },
      });
      up.push(performance.now() - t);
      t = performance.now();
      await rt.kill('n2');
      await rt.restart('n2');
      restart.push(performance.now() - t);
    } finally {
      const t = performance.now();
      await rt.close();
      close.push(performance.now() - t);
      rmSync(runDir, { recursive: true, force: true });
    }
    process.stderr.write(`bench: run ${i + 1}: cluster up ${up[i]?.toFixed(0)} ms, kill+restart ${restart[i]?.toFixed(0)} ms, close ${close[i].toFixed(0)} ms\n`);
  }
  const stats = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return { p50: Math.round(s[Math.floor((s.length - 1) / 2)]), max: Math.round(s[s.length - 1]), samples: xs.map(Math.round) };
  };
  const out = { runtime: 'docker', node: realNode ? 'node-main' : 'stand-in', nodes: 3, image, clusterUpMs: stats(up), killRestartMs: stats(restart), closeMs: stats(close) };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`docker-runtime.bench: ${(e as Error).message}\n`);
  process.exit(1);
});
