/**
 * Verifier benchmark (DESIGN.md §8: >= 2,500,000 ledger writes/s, 10 M in <= 4 s, reads checked
 * too; issue 10: at least 1,700,000 with reads checked).
 *
 *   node dist/harness/verifier/verifier.bench.js [WRITES]      (or ZARIS_BENCH_WRITES=N)
 *
 * A child process builds a synthetic ledger of WRITES writes (default 10,000,000) with the real
 * schema in a temporary folder, judged by the v2 rules: 3 stores (sync3, async3, rf1) x 3
 * partitions on 3 nodes, keys of 20 writes each interleaved in time at 30,000 writes/s, a
 * put/cas/create/delete mix with ~94% ok, ~2% fail, ~4% info outcomes, strictly increasing
 * versions, sync RF3 acks on 2 or 3 copies, 300 faults, runtime-map samples every 500 ms per
 * partition (the merged view and each node's own entry, with in-sync sets and revisions), reads
 * at 10% of the writes (each 10 ms after a write completed, returning the key's last
 * acknowledged state; 1 read in 100,000 returns the value before it: a stale read, on a key of the
 * sync store, whose missed write no loss rule could excuse), and final
 * reads equal to each key's last acknowledged state except for 1 key in 10,000 whose last ack is
 * lost. This process then opens the ledger and times verifyLedger alone (the calling thread and
 * its scan worker), so peakRssMb is the verifier's. Prints one JSON line on stdout:
 *   {"writes":N,"reads":R,"keys":K,"findings":F,"verifierWritesPerSec":…,"verifySeconds":…,
 *    "cpuSeconds":…,"peakRssMb":…}
 * The temporary folder is removed on exit, failure or signal.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { applySchema, META, SCHEMA_VERSION } from '../../ledger/schema.js';
import { verifyLedger } from './verifier.js';

const WRITES_PER_KEY = 20;
const WRITES_PER_SEC = 30_000;
/** 1 key in LOSS_EVERY has its last acknowledged write missing from the final read. */
const LOSS_EVERY = 10_000;
/** 1 write in READ_EVERY is followed by a read of its key. */
const READ_EVERY = 10;
/** 1 read in STALE_EVERY returns the value before the last acknowledged one. */
const STALE_EVERY = 100_000;

/**
 * The write period (in writes) of the stale reads: 1 read in STALE_EVERY, but at least ten over
 * the ledger, so a smaller bench (1,000,000 writes) plants stale reads past a key's first write
 * too (with one period over the whole ledger its only stale read fell on a key's first write, a
 * delete, where the value before is the same absent one: no stale read, and the bench stopped).
 */
function stalePeriod(writes: number): number {
  return Math.max(READ_EVERY * 100, Math.min(STALE_EVERY * READ_EVERY, Math.floor(writes / 10 / READ_EVERY) * READ_EVERY));
}
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
  applySchema(db);
  const keys = Math.ceil(writes / WRITES_PER_KEY);
  const durationMs = Math.ceil((writes / WRITES_PER_SEC) * 1000);
  db.transaction(() => {
    const meta = db.prepare('INSERT INTO meta (key, value) VALUES (?, ?)');
    meta.run(META.schemaVersion, String(SCHEMA_VERSION));
    meta.run(META.status, 'complete');
    meta.run(META.runtime, 'process');
    meta.run(META.seed, '42');
    meta.run(META.durationMs, String(durationMs));
    meta.run(META.rules, 'zaris-history/2');
    meta.run(META.runConfig, JSON.stringify({ beyondBudget: false, asyncLagMaxMs: 1000, leaseMs: 2500, selfTestBug: null }));
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
      INSERT INTO writes (key_id, seq, op, invoke_ms, complete_ms, outcome, status, attempts, ack_node, ack_epoch, ack_version, ack_revision, ack_mode, trace, wid, ack_copies)
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
        NULL, NULL,
        CASE WHEN h % 50 = 7 OR h % 25 = 3 THEN NULL WHEN k % 3 = 0 THEN 2 + (h % 2) ELSE 1 END
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
    // samples: the merged view and each replica's own entry, in sync, every member at the revision
    db.exec(`WITH RECURSIVE c(t) AS (SELECT 0 UNION ALL SELECT t + 500 FROM c WHERE t < ${durationMs})
      INSERT INTO samples (t_ms, store, partition, active, epoch, health, replicated_revision, node, in_sync, revisions)
      SELECT c.t, s.name, p.partition, 'n' || (1 + p.partition), 1, 'Healthy', CAST(c.t * 10 AS INTEGER), v.node, p.replicas,
        (SELECT json_group_object(j.value, CAST(c.t * 10 AS INTEGER)) FROM json_each(p.replicas) j)
      FROM c, stores s JOIN partitions p ON p.store = s.name
      JOIN (SELECT NULL AS node UNION ALL SELECT 'n1' UNION ALL SELECT 'n2' UNION ALL SELECT 'n3') v
      WHERE v.node IS NULL OR EXISTS (SELECT 1 FROM json_each(p.replicas) j WHERE j.value = v.node)
      ORDER BY c.t`);
    // reads: 10 ms after 1 write in READ_EVERY completed, the key's last acknowledged state
    // (absent after a delete); 1 in STALE_EVERY the acknowledged state before it
    // (in the clustered reads table, as a seal of rows leaves them: rid the order recorded)
    db.exec(`INSERT INTO reads (key_id, invoke_ms, rid, complete_ms, outcome, node, value, value_key_id, value_seq, kind)
      SELECT key_id, invoke_ms, row_number() OVER (ORDER BY invoke_ms, key_id), complete_ms, outcome, node, value, value_key_id, value_seq, kind FROM (
      SELECT key_id, complete_ms + 10 AS invoke_ms, complete_ms + 12 AS complete_ms, 'ok' AS outcome, 'n' || (1 + (key_id / 3) % 3) AS node,
        CASE WHEN vseq IS NULL OR vop = 'delete' THEN NULL ELSE 'w' || key_id || '.' || vseq END AS value,
        CASE WHEN vseq IS NULL OR vop = 'delete' THEN NULL ELSE key_id END AS value_key_id,
        CASE WHEN vseq IS NULL OR vop = 'delete' THEN NULL ELSE vseq END AS value_seq,
        CASE WHEN seq % 2 = 0 THEN 'get' ELSE 'getMany' END AS kind
      FROM (
        SELECT r.key_id, r.seq, r.complete_ms, v.seq AS vseq, v.op AS vop FROM (
          SELECT w.key_id, w.seq, w.complete_ms, w.x,
            (SELECT MAX(p.seq) FROM writes p WHERE p.key_id = w.key_id AND p.seq <= w.seq AND p.outcome = 'ok'
               AND ((w.x - 20) % ${stalePeriod(writes)} <> 0 OR p.seq < (SELECT MAX(q.seq) FROM writes q WHERE q.key_id = w.key_id AND q.seq <= w.seq AND q.outcome = 'ok'))) AS lseq
          FROM (SELECT key_id, seq, complete_ms, (seq - 1) * ${keys} + (key_id - 1) AS x FROM writes WHERE complete_ms IS NOT NULL) w
          WHERE w.x % ${READ_EVERY} = 0) r
        LEFT JOIN writes v ON v.key_id = r.key_id AND v.seq = r.lseq))
      ORDER BY key_id, invoke_ms`);
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
    const cpu0 = process.cpuUsage();
    const v = verifyLedger(db);
    const seconds = (performance.now() - start) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const findings = Object.values(v.summary).reduce((a, b) => a + b, 0);
    if (v.counts.attempted !== writes) throw new Error(`verifier counted ${v.counts.attempted} writes, expected ${writes}`);
    if (v.rules !== 'zaris-history/2') throw new Error(`the bench ledger was judged by ${v.rules}, not v2`);
    const kinds = Object.fromEntries(Object.entries(v.kinds).filter(([, n]) => n > 0));
    process.stderr.write(`verified ${writes} writes and ${v.reads} reads of ${v.keys} keys in ${seconds.toFixed(2)} s: ${v.verdict}, findings ${JSON.stringify(v.summary)} ${JSON.stringify(kinds)}\n`);
    if (!v.kinds['stale-read']) throw new Error('the bench ledger has stale reads: the verifier found none');
    const out = {
      writes,
      reads: v.reads,
      keys: v.keys,
      findings,
      verifierWritesPerSec: Math.round(writes / seconds),
      verifySeconds: Number(seconds.toFixed(3)),
      cpuSeconds: Number(((cpu.user + cpu.system) / 1e6).toFixed(3)),
      peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
    };
    process.stdout.write(`${JSON.stringify(out)}\n`);
  } finally {
    db.close();
  }
}

main();
