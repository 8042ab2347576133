/**
 * `make bench-seal [DURATION=4h] [RATE=3000] [LOSS_EVERY=N]` (DESIGN.md §8: seal + verify + report
 * at the end of a 4-hour run at the default rate in <= 2 min, and a run with many findings must
 * not take minutes more; issue 11: the ledger under 100 bytes per write). `make bench-endphase`
 * is the one with many findings: 40 minutes at 3,000 writes/s, LOSS_EVERY=1 (~44,000 rf1 and
 * ~2,000 async-ack losses, a few hundred violations; synthetic-run.ts `lossEvery`).
 *
 * A child process writes a synthetic run's ledger as the harness leaves it before the seal
 * (synthetic-run.ts: the worker ledger's packed batches, keys, samples, faults, stats, final
 * reads, at RATE writes/s for DURATION) into a temporary folder; this process then times, as
 * `make certify` does at its end, the seal (ledger/seal.ts: into a new file renamed over the old),
 * the verification and the reports (results.json, junit.xml, report.html), and prints the
 * ledger's size before and after the seal with the biggest tables (SQLite's dbstat), each phase's
 * seconds and the peak RSS. Last line on stdout, JSON:
 *   {"writes","reads","keys","packDuringRunCpuSeconds","packCpuMicrosPerWrite","hotBytes",
 *    "hotBytesPerWrite","sealedBytes","sealedBytesPerWrite","sealSeconds","verifySeconds",
 *    "reportSeconds","totalSeconds","verdict","findings","peakRssMb","loadAvg"}
 * (findings: per class; verifySeconds and reportSeconds with them are the end phase's figures).
 * The generator packs the batches while it writes the run, as the ledger's worker does during a
 * real run (its CPU time is packDuringRunCpuSeconds); the seal then packs what is left.
 * Env: BENCH_SEAL_KEEP=dir keeps (and reuses) the generated ledger in dir.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import ms from 'ms';
import { sealLedgerFile } from '../ledger/seal.js';
import { writeHtmlReport } from '../reports/html-report.js';
import { writeJunitXml } from '../reports/junit.js';
import { buildResults, writeResultsJson } from '../reports/results.js';
import { ledgerBytes } from './disk-guard.js';
import { writeSyntheticRun } from './synthetic-run.js';
import { verifyLedger } from './verifier/verifier.js';

function fail(message: string): never {
  process.stderr.write(`seal.bench: ${message}\n`);
  process.exit(64);
}

/** Tables by size (dbstat), the biggest first: "name MB" pairs. */
function tableSizes(path: string, top = 6): string {
  const db = new Database(path, { readonly: true });
  try {
    const rows = db.prepare('SELECT name, SUM(pgsize) AS bytes FROM dbstat GROUP BY name ORDER BY bytes DESC LIMIT ?').all(top) as Array<{ name: string; bytes: number }>;
    const free = (db.pragma('freelist_count', { simple: true }) as number) * (db.pragma('page_size', { simple: true }) as number);
    return `${rows.map((r) => `${r.name} ${(r.bytes / 1e6).toFixed(1)}`).join(', ')}${free > 0 ? `, free pages ${(free / 1e6).toFixed(1)}` : ''} (MB)`;
  } finally {
    db.close();
  }
}

function main(): void {
  if (process.argv[2] === '--generate') {
    const [path, duration, rate, lossEvery] = process.argv.slice(3);
    const t0 = performance.now();
    const r = writeSyntheticRun({ path, durationMs: Number(duration), rate: Number(rate), lossEvery: Number(lossEvery), progress: (f) => process.stderr.write(`seal.bench: generating ${(f * 100).toFixed(0)}%\r`) });
    process.stderr.write(`seal.bench: generated ${r.writes} writes, ${r.reads} reads, ${r.keys} keys in ${((performance.now() - t0) / 1000).toFixed(0)} s\n`);
    process.stdout.write(`${JSON.stringify(r)}\n`);
    return;
  }
  const durationText = process.env.DURATION ?? process.argv[2] ?? '4h';
  const durationMs = ms(durationText as ms.StringValue);
  if (typeof durationMs !== 'number' || !(durationMs >= 10_000)) fail(`DURATION must be a duration of at least 10s, got ${durationText}`);
  const rate = Number(process.env.RATE ?? process.argv[3] ?? 3000);
  if (!Number.isInteger(rate) || rate < 1) fail(`RATE must be a positive integer, got ${process.env.RATE}`);
  const lossEvery = Number(process.env.LOSS_EVERY || 0);
  if (!Number.isInteger(lossEvery) || lossEvery < 0) fail(`LOSS_EVERY must be a non-negative integer (0: no allowed losses), got ${process.env.LOSS_EVERY}`);

  const dir = mkdtempSync(join(tmpdir(), 'zaris-certify-bench-seal-'));
  const cleanup = (): void => rmSync(dir, { recursive: true, force: true });
  process.on('exit', cleanup);
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => process.exit(130));
  const run = join(dir, 'run');
  mkdirSync(run);
  const path = join(run, 'ledger.sqlite');
  const keep = process.env.BENCH_SEAL_KEEP;
  const kept = keep === undefined ? null : join(keep, `hot-${durationMs}-${rate}${lossEvery > 0 ? `-loss${lossEvery}` : ''}.sqlite`);
  let counts: { writes: number; reads: number; keys: number; packCpuMs: number };
  if (kept !== null && existsSync(kept) && existsSync(`${kept}.json`)) {
    copyFileSync(kept, path);
    counts = JSON.parse(execFileSync('cat', [`${kept}.json`], { encoding: 'utf8' })) as typeof counts;
  } else {
    const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--generate', path, String(durationMs), String(rate), String(lossEvery)], { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
    counts = JSON.parse(out.trim().split('\n').pop()!) as typeof counts;
    if (kept !== null) {
      mkdirSync(keep!, { recursive: true });
      copyFileSync(path, kept);
      execFileSync('sh', ['-c', `printf '%s' '${JSON.stringify(counts)}' > '${kept}.json'`]);
    }
  }
  const hotBytes = ledgerBytes(run);
  process.stderr.write(`seal.bench: packing while the run was written took ${(counts.packCpuMs / 1000).toFixed(1)} CPU s (${((counts.packCpuMs * 1000) / counts.writes).toFixed(2)} µs per write)\n`);
  process.stderr.write(`seal.bench: ${counts.writes} writes (${durationText} at ${rate}/s), ${counts.reads} reads, ${counts.keys} keys; before the seal ${(hotBytes / 1e6).toFixed(0)} MB = ${(hotBytes / counts.writes).toFixed(1)} B/write: ${tableSizes(path)}\n`);

  const t0 = performance.now();
  sealLedgerFile(path);
  const t1 = performance.now();
  const sealedBytes = statSync(path).size;
  process.stderr.write(`seal.bench: sealed in ${((t1 - t0) / 1000).toFixed(1)} s: ${(sealedBytes / 1e6).toFixed(0)} MB = ${(sealedBytes / counts.writes).toFixed(1)} B/write: ${tableSizes(path)}\n`);
  const db = new Database(path, { fileMustExist: true });
  let verdict: string;
  let findings: Record<string, number>;
  let t2: number;
  let t3: number;
  try {
    const v = verifyLedger(db);
    t2 = performance.now();
    if (v.counts.attempted !== counts.writes) throw new Error(`the verifier counted ${v.counts.attempted} writes, ${counts.writes} were recorded`);
    const results = buildResults(db, v);
    writeResultsJson(results, run);
    writeJunitXml(results, run);
    writeHtmlReport(db, results, run);
    t3 = performance.now();
    verdict = v.verdict;
    findings = { ...v.summary };
    const kinds = Object.fromEntries(Object.entries(v.kinds).filter(([, n]) => n > 0));
    const perStore = v.stores.map((st) => `${st.name} ${JSON.stringify(Object.fromEntries(Object.entries(st.summary).filter(([, n]) => n > 0)))}`).join(', ');
    process.stderr.write(`seal.bench: findings per store: ${perStore}\n`);
    process.stderr.write(`seal.bench: verified in ${((t2 - t1) / 1000).toFixed(1)} s (${v.verdict}, ${v.reads} reads checked, findings ${JSON.stringify(kinds)}); reports in ${((t3 - t2) / 1000).toFixed(1)} s (report.html ${(statSync(join(run, 'report.html')).size / 1e6).toFixed(1)} MB)\n`);
  } finally {
    db.close();
  }
  const out = {
    writes: counts.writes,
    reads: counts.reads,
    keys: counts.keys,
    packDuringRunCpuSeconds: Number((counts.packCpuMs / 1000).toFixed(1)),
    packCpuMicrosPerWrite: Number(((counts.packCpuMs * 1000) / counts.writes).toFixed(2)),
    hotBytes,
    hotBytesPerWrite: Number((hotBytes / counts.writes).toFixed(1)),
    sealedBytes,
    sealedBytesPerWrite: Number((sealedBytes / counts.writes).toFixed(1)),
    sealSeconds: Number(((t1 - t0) / 1000).toFixed(2)),
    verifySeconds: Number(((t2 - t1) / 1000).toFixed(2)),
    reportSeconds: Number(((t3 - t2) / 1000).toFixed(2)),
    totalSeconds: Number(((t3 - t0) / 1000).toFixed(2)),
    verdict,
    findings,
    peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
    loadAvg: loadavg().map((x) => Number(x.toFixed(2))),
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

main();
