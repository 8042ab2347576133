import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { certify } from './certify.js';

/**
 * `make bench` (DESIGN.md §7, §8): measures, on the process runtime,
 * - acknowledged writes/s with the ledger on, unthrottled, three stores, no faults;
 * - the same with the ledger off, and the on/off ratio;
 * - the harness's peak RSS during the ledger-on run (sampled every 250 ms), start and end;
 * - kill -9 of active owners to the first acknowledged write on their partitions (p50);
 * - the verifier's writes/s on a synthetic ledger (its own benchmark, 2 M writes here).
 * Prints each figure and writes runs/bench.json. Env: BENCH_SECONDS (default 20).
 */
async function main(): Promise<void> {
  const seconds = Number(process.env.BENCH_SECONDS ?? 20);
  const runsDir = path.resolve('runs', 'bench-runs');
  rmSync(runsDir, { recursive: true, force: true });
  mkdirSync(runsDir, { recursive: true });
  const log = (l: string): void => {
    process.stderr.write(`bench: ${l}\n`);
  };
  const base = { seed: 7, runtime: 'process' as const, faultsExplicit: true, beyondBudget: false, runsDir, writersPerStore: 24, keysPerWriter: 8, escalationTimeoutMs: 10_000, log: () => undefined };

  let peakRss = 0;
  const rssAt: number[] = [];
  const sampler = setInterval(() => {
    const r = process.memoryUsage().rss / 1024 / 1024;
    rssAt.push(r);
    if (r > peakRss) peakRss = r;
  }, 250);
  const on = await certify({ ...base, durationMs: seconds * 1000, faults: [], rate: 0, skipVerify: true });
  clearInterval(sampler);
  log(`ledger on: ${on.ackedPerSec.toFixed(0)} acknowledged writes/s; harness RSS start ${rssAt[0]?.toFixed(0)} MB, end ${rssAt[rssAt.length - 1]?.toFixed(0)} MB, peak ${peakRss.toFixed(0)} MB`);
  const off = await certify({ ...base, durationMs: seconds * 1000, faults: [], rate: 0, ledgerOff: true, skipVerify: true });
  log(`ledger off: ${off.ackedPerSec.toFixed(0)} acknowledged writes/s; ratio ${(on.ackedPerSec / off.ackedPerSec).toFixed(3)}`);
  const kills = await certify({ ...base, durationMs: 60_000, faults: ['kill'], rate: 3000, writersPerStore: 8, keysPerWriter: 16 });
  const f = [...kills.failoverMs].sort((a, b) => a - b);
  const p50 = f.length ? f[Math.floor(f.length / 2)] : null;
  log(`kill -9 of an active owner -> first acknowledged write on its partitions: n=${f.length}, p50 ${p50} ms, max ${f[f.length - 1] ?? null} ms (verdict ${kills.results?.verdict})`);
  const benchFile = fileURLToPath(new URL('./verifier/verifier.bench.js', import.meta.url));
  const vr = await execa(process.execPath, [benchFile, String(2_000_000)]);
  const v = JSON.parse(vr.stdout.trim().split('\n').pop()!) as { writes: number; verifierWritesPerSec: number };
  log(`verifier: ${v.verifierWritesPerSec.toFixed(0)} writes/s over ${v.writes} writes`);
  const out = {
    ackedWritesPerSec: Math.round(on.ackedPerSec),
    ledgerOnOffRatio: Math.round((on.ackedPerSec / off.ackedPerSec) * 1000) / 1000,
    verifierWritesPerSec: Math.round(v.verifierWritesPerSec),
    harnessPeakRssMb: Math.round(peakRss),
    failoverP50Ms: p50,
  };
  writeFileSync(path.resolve('runs', 'bench.json'), JSON.stringify(out, null, 2) + '\n');
  rmSync(runsDir, { recursive: true, force: true });
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e: unknown) => {
  process.stderr.write(`bench failed: ${(e as Error).stack}\n`);
  process.exit(1);
});
