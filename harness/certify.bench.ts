import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { certify } from './certify.js';
import type { CertifyOptions } from './certify/options.js';
import { ratioStats, roundOrder } from './bench-stats.js';

/**
 * `make bench` (DESIGN.md §7, §8), on the process runtime:
 * - acknowledged writes/s, unthrottled, three stores, no faults, ledger on and ledger off in
 *   BENCH_ROUNDS interleaved rounds (default 7; which side runs first alternates); the ledger-on/off
 *   ratio of each round, their median, quartiles, range and relative spread (bench-stats.ts);
 * - the harness's RSS during the ledger-on runs, sampled every 250 ms: at each quarter of the
 *   fault phase (flat: no growth with duration) and its peak (the end-of-run seal included);
 * - kill -9 of active owners to the first acknowledged write on their partitions: p50 over a 60 s
 *   kill-only run at the default rate (3,000 writes/s), in a child of its own, with the harness's
 *   RSS at each quarter of it and its peak (`harnessRssMbDefaultRate`: the figure §8 bounds for a
 *   certify run; `harnessPeakRssMb` is the unthrottled runs' peak, sized by their allocation rate);
 * - the verifier's writes/s on a synthetic ledger of 2 M writes (its own benchmark, in a child).
 * Prints each figure on stderr, writes runs/bench.json and prints it on stdout.
 * Env: BENCH_SECONDS (default 20), BENCH_WRITERS (writers per store, default 48; 8 slots each),
 * BENCH_ROUNDS (default 7).
 */
/** RSS of this process sampled every 250 ms while `run` goes: its value at each quarter of the run and its peak, MB. */
async function sampleRss<T>(run: () => Promise<T>): Promise<{ out: T; peakRssMb: number; quarters: number[] }> {
  let peak = 0;
  const rss: Array<[number, number]> = [];
  const t0 = Date.now();
  const sampler = setInterval(() => {
    const r = process.memoryUsage().rss / 1024 / 1024;
    rss.push([Date.now() - t0, r]);
    if (r > peak) peak = r;
  }, 250);
  const out = await run();
  clearInterval(sampler);
  const last = rss[rss.length - 1]?.[0] ?? 1;
  const quarters = [0.25, 0.5, 0.75, 1].map((q) => Math.round(rss.filter(([t]) => t <= q * last).pop()?.[1] ?? 0));
  return { out, peakRssMb: Math.round(peak), quarters };
}

/** One throughput run in this process (a child of the bench): prints its figures as JSON. */
async function oneRun(mode: 'on' | 'off', base: CertifyOptions): Promise<void> {
  const { out, peakRssMb, quarters } = await sampleRss(() => certify({ ...base, ledgerOff: mode === 'off' }));
  process.stdout.write(`${JSON.stringify({ ackedPerSec: out.ackedPerSec, peakRssMb, quarters })}\n`);
}

/**
 * The kill run in this process (a child of the bench): 60 s at the default rate (3,000 writes/s),
 * kill -9 of active owners, verified; prints the failover times, the verdict and the RSS (the
 * figure DESIGN.md §8 bounds for a certify run, at the rate certify runs at) as JSON.
 */
async function killRun(base: CertifyOptions): Promise<void> {
  const { out, peakRssMb, quarters } = await sampleRss(() => certify({ ...base, durationMs: 60_000, faults: ['kill'], rate: 3000, writersPerStore: 8, keysPerWriter: 16, skipVerify: false }));
  process.stdout.write(`${JSON.stringify({ failoverMs: out.failoverMs, verdict: out.results?.verdict ?? null, peakRssMb, quarters })}\n`);
}

async function main(): Promise<void> {
  const seconds = Number(process.env.BENCH_SECONDS ?? 20);
  const writers = Number(process.env.BENCH_WRITERS ?? 48);
  const runsDir = path.resolve('runs', 'bench-runs');
  const base: CertifyOptions = { durationMs: seconds * 1000, seed: 7, runtime: 'process', faults: [], faultsExplicit: true, beyondBudget: false, runsDir, rate: 0, writersPerStore: writers, keysPerWriter: 8, escalationTimeoutMs: 10_000, skipVerify: true };
  if (process.argv[2] === '--one') return oneRun(process.argv[3] === 'off' ? 'off' : 'on', base);
  if (process.argv[2] === '--kills') return killRun(base);
  rmSync(runsDir, { recursive: true, force: true });
  mkdirSync(runsDir, { recursive: true });
  const log = (l: string): void => {
    process.stderr.write(`bench: ${l}\n`);
  };
  // every throughput run in a process of its own: RSS is one run's, as in `make certify`
  const self = fileURLToPath(import.meta.url);
  const child = async (mode: 'on' | 'off'): Promise<{ ackedPerSec: number; peakRssMb: number; quarters: number[] }> => {
    const r = await execa(process.execPath, [self, '--one', mode], { env: process.env });
    return JSON.parse(r.stdout.trim().split('\n').pop()!) as { ackedPerSec: number; peakRssMb: number; quarters: number[] };
  };
  const rounds = Number(process.env.BENCH_ROUNDS ?? 7);
  if (!Number.isSafeInteger(rounds) || rounds < 1) throw new Error(`BENCH_ROUNDS must be a positive integer, got ${process.env.BENCH_ROUNDS}`);
  let peakRss = 0;
  const onRates: number[] = [];
  const offRates: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const got: Partial<Record<'on' | 'off', { ackedPerSec: number; peakRssMb: number; quarters: number[] }>> = {};
    for (const mode of roundOrder(round)) got[mode] = await child(mode);
    const on = got.on!;
    const off = got.off!;
    onRates.push(on.ackedPerSec);
    offRates.push(off.ackedPerSec);
    peakRss = Math.max(peakRss, on.peakRssMb);
    log(`round ${round + 1}/${rounds} (${roundOrder(round).join(' then ')}): ledger on ${on.ackedPerSec.toFixed(0)}/s, off ${off.ackedPerSec.toFixed(0)}/s, ratio ${(on.ackedPerSec / off.ackedPerSec).toFixed(3)}; ledger-on harness RSS at each quarter of the run ${on.quarters.join(' / ')} MB (peak ${on.peakRssMb}); ledger off peak ${off.peakRssMb} MB`);
  }
  const st = ratioStats(onRates, offRates);
  const onMed = st.onMedian;
  log(
    `ledger on ${st.onMedian.toFixed(0)} / off ${st.offMedian.toFixed(0)} acknowledged writes/s (medians of ${rounds} rounds); ledger-on/off ratio: median ${st.median.toFixed(3)}, quartiles ${st.q1.toFixed(3)}-${st.q3.toFixed(3)}, range ${st.min.toFixed(3)}-${st.max.toFixed(3)} (spread ${(st.relativeSpread * 100).toFixed(0)}% of the median); harness peak RSS ${peakRss} MB`,
  );

  const kr = await execa(process.execPath, [self, '--kills'], { env: process.env });
  const kills = JSON.parse(kr.stdout.trim().split('\n').pop()!) as { failoverMs: number[]; verdict: string | null; peakRssMb: number; quarters: number[] };
  const f = [...kills.failoverMs].sort((a, b) => a - b);
  const p50 = f.length ? f[Math.floor(f.length / 2)] : null;
  log(`kill -9 of an active owner -> first acknowledged write on its partitions: n=${f.length}, p50 ${p50} ms, max ${f[f.length - 1] ?? null} ms (verdict ${kills.verdict})`);
  log(`harness RSS at the default rate (3,000 writes/s, kills, verified): at each quarter of the 60 s run ${kills.quarters.join(' / ')} MB (peak ${kills.peakRssMb}, the seal and verification included)`);

  const benchFile = fileURLToPath(new URL('./verifier/verifier.bench.js', import.meta.url));
  const vr = await execa(process.execPath, [benchFile, String(2_000_000)]);
  const v = JSON.parse(vr.stdout.trim().split('\n').pop()!) as { writes: number; verifierWritesPerSec: number };
  log(`verifier: ${v.verifierWritesPerSec.toFixed(0)} writes/s over ${v.writes} writes`);
  const out = {
    ackedWritesPerSec: Math.round(onMed),
    ledgerOnOffRatio: Math.round(st.median * 1000) / 1000,
    ledgerOnOffRatioSpread: { rounds, min: Math.round(st.min * 1000) / 1000, q1: Math.round(st.q1 * 1000) / 1000, q3: Math.round(st.q3 * 1000) / 1000, max: Math.round(st.max * 1000) / 1000, relative: Math.round(st.relativeSpread * 1000) / 1000 },
    ledgerOffWritesPerSec: Math.round(st.offMedian),
    verifierWritesPerSec: Math.round(v.verifierWritesPerSec),
    harnessPeakRssMb: Math.round(peakRss),
    harnessRssMbDefaultRate: { quarters: kills.quarters, peak: kills.peakRssMb },
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
