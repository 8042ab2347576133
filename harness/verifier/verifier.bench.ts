/**
 * Verifier benchmark (DESIGN.md §8: >= 1,000,000 ledger writes/s, 10 M in <= 10 s).
 *
 *   node dist/harness/verifier/verifier.bench.js [WRITES]      (or ZARIS_BENCH_WRITES=N)
 *
 * A child process builds a synthetic ledger of WRITES writes (default 10,000,000) with the real
 * schema in a temporary folder: 3 stores (sync3, async3, rf1) x 3 partitions on 3 nodes, keys of
 * 20 writes each interleaved in time at 30,000 writes/s, a put/cas/create/delete mix with ~94%
 * ok, ~2% fail, ~4% info outcomes, strictly increasing versions, 300 faults, runtime-map samples
 * every 500 ms per partition, and final reads equal to each key's last acknowledged state except
 * for 1 key in 10,000 whose last ack is lost. This process then opens the ledger and times
 * verifyLedger alone, so peakRssMb is the verifier's. Prints one JSON line on stdout:
 *   {"writes":N,"keys":K,"findings":F,"verifierWritesPerSec":…,"verifySeconds":…,"peakRssMb":…}
 * The temporary folder is removed on exit, failure or signal.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { LEDGER_DDL, META, SCHEMA_VERSION } from '../../ledger/schema.js';
import { verifyLedger } from './verifier.js';

const WRITES_PER_KEY = 20;
const WRITES_PER_SEC = 30_000;
/** 1 key in LOSS_EVERY has its last acknowledged write missing from the final read. */
const LOSS_EVERY = 10_000;
const NODES = ['n1', 'n2', 'n3'];
const STORES = [
  { name: 'sync3', rf: 3, mode: 'sync' },
  { name: 'async3', rf: 3, mode: 'async' },
  { name: 'rf1', rf: 1, mode: 'sync' },
];

function parseCount(text: string | undefined): number {
  const n = Number(text ?? 10_000_000);
  if (!Number.isSafeInteger(n) || n < WRITES_PER_KEY) {
    process.stderr.write(`verifier.bench: WRITES must be an integer >= ${WRITES_PER_KEY}, got ${text}\n`);
    process.exit(64);
  }
  return n;
}

/** Builds the synthetic ledger at `path` (run in a child process). */
function generate(path: string, writes: number): void {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  for (const ddl of LEDGER_DDL) db.exec(ddl);
  const keys = Math.ceil(writes / WRITES_PER_KEY);
  const durationMs = Math.ceil((writes / WRITES_PER_SEC) * 1000);
  db.transaction(() => {
    const meta = db.prepare('INSERT INTO meta (key, value) VALUES (?, ?)');
    meta.run(META.schemaVersion, String(SCHEMA_VERSION));
    meta.run(META.status, 'complete');
    meta.run(META.runtime, 'process');
    meta.run(META.seed, '42');
    meta.run(META.durationMs, String(durationMs));
    NODES.forEach((n, i) => db.prepare('INSERT INTO nodes VALUES (?, ?, ?, ?, 1)').run(n, `127.0.0.${11 + i}`, 7000 + i, 7100 + i));
    for (const s of STORES) {
      db.prepare('INSERT INTO stores VALUES (?, ?, ?, 64)').run(s.name, s.rf, s.mode);
      for (let p = 0; p < 3; p++) {
        const replicas = Array.from({ length: s.rf }, (_, k) => NODES[(p + k) % 3]);
        db.prepare('INSERT INTO partitions VALUES (?, ?, ?)').run(s.name, p, JSON.stringify(replicas));
      }
    }
    // key k: store k % 3, partition (k / 3) % 3
    db.exec(`WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ${keys})
      INSERT INTO keys SELECT x, CASE x % 3 WHEN 0 THEN 'sync3' WHEN 1 THEN 'async3' ELSE 'rf1' END, 'k' || x, (x / 3) % 3, x % 64 FROM c`);
    // rows are generated in (key, seq) order; write seq of key k is the x-th of the run,
    // x = (seq - 1) * keys + (k - 1), invoked at x / rate; op and outcome from a hash of x;
    // version = seq (strictly increasing)
    db.exec(`WITH RECURSIVE c(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM c WHERE x < ${writes - 1})
      INSERT INTO writes
      SELECT k, seq,
        CASE WHEN h % 100 < 70 THEN 'put' WHEN h % 100 < 80 THEN 'cas' WHEN h % 100 < 85 THEN 'create' ELSE 'delete' END,
        t, t + 2 + (h % 7),
        CASE WHEN h % 50 = 7 THEN 'fail' WHEN h % 25 = 3 THEN 'info' ELSE 'ok' END,
        CASE WHEN h % 50 = 7 THEN 'Conflict' WHEN h % 25 = 3 THEN 'Unavailable' ELSE 'Ok' END,
        1 + (h % 3),
        CASE WHEN h % 50 = 7 OR h % 25 = 3 THEN NULL ELSE 'n' || (1 + (k / 3) % 3) END,
        CASE WHEN h % 50 = 7 OR h % 25 = 3 THEN NULL ELSE 1 END,
        CASE WHEN h % 50 = 7 OR h % 25 = 3 THEN NULL ELSE seq END,
        CASE WHEN h % 50 = 7 OR h % 25 = 3 THEN NULL ELSE x END,
        CASE WHEN h % 50 = 7 OR h % 25 = 3 THEN NULL WHEN k % 3 = 1 THEN 'async' ELSE 'sync' END,
        NULL, NULL, NULL
      FROM (SELECT k, seq, x, (x * 1.0 / ${WRITES_PER_SEC}) * 1000 AS t, ((x * 2654435761) % 4294967296) / 7 AS h
            FROM (SELECT 1 + y / ${WRITES_PER_KEY} AS k, 1 + y % ${WRITES_PER_KEY} AS seq,
                         (y % ${WRITES_PER_KEY}) * ${keys} + y / ${WRITES_PER_KEY} AS x FROM (SELECT x AS y FROM c)))`);
    // 300 faults over the run, evenly spaced: kill, stop, pause, partition in turn, each over
    // within 40% of the spacing (at most 2 s), kill/stop caught up 10% of the spacing later
    const faults = db.prepare('INSERT INTO faults (id, kind, nodes, start_ms, end_ms, caught_up_ms) VALUES (?, ?, ?, ?, ?, ?)');
    const kinds = ['kill', 'stop', 'pause', 'partition'];
    const spacing = durationMs / 300;
    for (let i = 0; i < 300; i++) {
      const start = Math.round((i + 0.5) * spacing);
      const end = start + Math.round(Math.min(2000, spacing * 0.4));
      const kind = kinds[i % 4];
      faults.run(i + 1, kind, JSON.stringify([NODES[i % 3]]), start, end, kind === 'kill' || kind === 'stop' ? end + Math.round(spacing * 0.1) : null);
    }
    db.exec(`WITH RECURSIVE c(t) AS (SELECT 0 UNION ALL SELECT t + 500 FROM c WHERE t < ${durationMs})
      INSERT INTO samples (t_ms, store, partition, active, epoch, health, replicated_revision) SELECT c.t, s.name, p.partition, 'n' || (1 + p.partition), 1, 'Healthy', CAST(c.t * 10 AS INTEGER)
      FROM c, stores s JOIN partitions p ON p.store = s.name`);
    // final reads: the key's last acknowledged state; for 1 key in LOSS_EVERY the state before it
    db.exec(`CREATE TEMP TABLE last_ok AS SELECT key_id, MAX(seq) FILTER (WHERE outcome = 'ok') AS s FROM writes GROUP BY key_id`);
    db.exec(`UPDATE temp.last_ok SET s = (SELECT MAX(seq) FROM writes w WHERE w.key_id = last_ok.key_id AND w.outcome = 'ok' AND w.seq < last_ok.s)
             WHERE key_id % ${LOSS_EVERY} = 0`);
    db.exec(`INSERT INTO final_reads (key_id, value, value_key_id, value_seq, unreadable, t_ms)
      SELECT l.key_id,
        CASE WHEN w.op IS NOT 'delete' AND w.seq IS NOT NULL THEN 'w' || l.key_id || '.' || w.seq END,
        CASE WHEN w.op IS NOT 'delete' AND w.seq IS NOT NULL THEN l.key_id END,
        CASE WHEN w.op IS NOT 'delete' AND w.seq IS NOT NULL THEN w.seq END, 0, ${durationMs}
      FROM temp.last_ok l LEFT JOIN writes w ON w.key_id = l.key_id AND w.seq = l.s`);
  })();
  db.close();
}

function main(): void {
  if (process.argv[2] === '--generate') {
    generate(process.argv[3], parseCount(process.argv[4]));
    return;
  }
  const writes = parseCount(process.argv[2] ?? process.env.ZARIS_BENCH_WRITES);
  const dir = mkdtempSync(join(tmpdir(), 'zaris-certify-bench-'));
  const cleanup = (): void => rmSync(dir, { recursive: true, force: true });
  process.on('exit', cleanup);
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.on(sig, () => {
      cleanup();
      process.exit(130);
    });
  }
  const path = join(dir, 'ledger.sqlite');
  const t0 = performance.now();
  execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--generate', path, String(writes)], { stdio: ['ignore', 'ignore', 'inherit'] });
  process.stderr.write(`built a ledger of ${writes} writes (${(statSync(path).size / 1e6).toFixed(0)} MB) in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);

  const db = new Database(path, { fileMustExist: true });
  try {
    const start = performance.now();
    const v = verifyLedger(db);
    const seconds = (performance.now() - start) / 1000;
    const findings = Object.values(v.summary).reduce((a, b) => a + b, 0);
    if (v.counts.attempted !== writes) throw new Error(`verifier counted ${v.counts.attempted} writes, expected ${writes}`);
    process.stderr.write(`verified ${writes} writes of ${v.keys} keys in ${seconds.toFixed(2)} s: ${v.verdict}, findings ${JSON.stringify(v.summary)}\n`);
    const out = {
      writes,
      keys: v.keys,
      findings,
      verifierWritesPerSec: Math.round(writes / seconds),
      verifySeconds: Number(seconds.toFixed(3)),
      peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
    };
    process.stdout.write(`${JSON.stringify(out)}\n`);
  } finally {
    db.close();
  }
}

main();
