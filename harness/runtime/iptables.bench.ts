/**
 * How long a loopback partition takes to install and to heal (real iptables; root needed).
 * Run: `npx tsc -p tsconfig.build.json && node dist/harness/runtime/iptables.bench.js`.
 * Prints one JSON line on stdout: { openMs, applyP50Ms, applyMaxMs, healP50Ms, healMaxMs, closeMs, rounds }.
 * Everything it creates is removed on exit and on failure.
 */
import { performance } from 'node:perf_hooks';
import { halves, isolate } from '../nemesis/grudge.js';
import { createPrng } from '../nemesis/prng.js';
import { IptablesPartitioner } from './iptables.js';

const ROUNDS = 40;

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}

async function main(): Promise<void> {
  const nodes = ['n1', 'n2', 'n3', 'n4', 'n5'];
  const net = `127.78.${process.pid % 250}`;
  const addresses = Object.fromEntries(nodes.map((n, i) => [n, `${net}.${i + 1}`]));
  const t0 = performance.now();
  const p = await IptablesPartitioner.open({ addresses });
  const openMs = performance.now() - t0;
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.once(sig, () => {
      p.closeSync();
      process.exit(130);
    });
  }
  const apply: number[] = [];
  const heal: number[] = [];
  let closeMs = 0;
  try {
    const rng = createPrng(1);
    for (let i = 0; i < ROUNDS; i++) {
      const g = i % 2 === 0 ? halves(nodes, rng).grudge : isolate(nodes, rng.pick(nodes)).grudge;
      let t = performance.now();
      await p.apply(g);
      apply.push(performance.now() - t);
      t = performance.now();
      await p.heal();
      heal.push(performance.now() - t);
    }
  } finally {
    const t = performance.now();
    await p.close();
    closeMs = performance.now() - t;
  }
  const r = (x: number): number => Math.round(x * 10) / 10;
  process.stderr.write(`iptables: ${ROUNDS} apply/heal rounds on a 5-node grudge (chain ${p.chain}, removed)\n`);
  process.stdout.write(
    `${JSON.stringify({ openMs: r(openMs), applyP50Ms: r(quantile(apply, 0.5)), applyMaxMs: r(Math.max(...apply)), healP50Ms: r(quantile(heal, 0.5)), healMaxMs: r(Math.max(...heal)), closeMs: r(closeMs), rounds: ROUNDS })}\n`,
  );
}

main().catch((e: unknown) => {
  process.stderr.write(`iptables bench: ${(e instanceof Error ? e.message : String(e)).split('\n')[0]}\n`);
  process.exit(3);
});
