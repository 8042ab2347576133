import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { verifyLedger } from '../harness/verifier/verifier.js';
import { LEDGER_DDL, writeId } from '../ledger/schema.js';
import { renderHtmlReport } from './html-report.js';
import { buildResults } from './results.js';

/**
 * Report benchmark (the brief's "report size and render time"): renders report.html
 * - from a stored run's ledger (argument RUN_DIR, default runs/latest; copied to a temporary
 *   folder first, since verification rewrites the findings table), and
 * - from a synthetic 4-hour ledger: 14,400 s x 3 stores of stats, runtime-map samples every
 *   250 ms for 9 partitions (518,400 rows), a fault every 4 s (3,600) with failover events,
 *   2,000 rf1 losses to drill into;
 * and prints, per ledger, the page size (bytes) and the render time (ms, best and median of
 * RENDERS renders, default 3; verification not included) as one JSON line on stdout. Times are
 * wall-clock (performance.now()); nothing is written outside a temporary folder named
 * zaris-certify-*, removed on exit.
 */
const RENDERS = Math.max(1, Number(process.env.RENDERS ?? 3));

interface Figure {
  bytes: number;
  renderMsBest: number;
  renderMsMedian: number;
  rows: Record<string, number>;
}

function measure(db: Database.Database): Figure {
  const results = buildResults(db, verifyLedger(db));
  const times: number[] = [];
  let html = '';
  for (let i = 0; i < RENDERS; i++) {
    const t0 = performance.now();
    const next = renderHtmlReport(db, results);
    times.push(performance.now() - t0);
    if (i > 0 && next !== html) throw new Error('two renders of the same ledger differ');
    html = next;
  }
  times.sort((a, b) => a - b);
  const count = (t: string): number => db.prepare(`SELECT COUNT(*) FROM ${t}`).pluck().get() as number;
  return {
    bytes: Buffer.byteLength(html),
    renderMsBest: Math.round(times[0]),
    renderMsMedian: Math.round(times[Math.floor(times.length / 2)]),
    rows: { stats: count('stats'), samples: count('samples'), faults: count('faults'), events: count('events'), findings: count('findings') },
  };
}

/**
 * Builds the synthetic 4-hour ledger described above at `path` (a new file).
 * @returns the open ledger (the caller closes it).
 */
export function synthetic4h(path: string): Database.Database {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  for (const ddl of LEDGER_DDL) db.exec(ddl);
  const seconds = 4 * 3600;
  const stores = [['sync3', 3, 'sync'], ['async3', 3, 'async'], ['rf1', 1, 'sync']] as const;
  const nodes = ['n1', 'n2', 'n3'];
  db.transaction(() => {
    const meta = db.prepare('INSERT INTO meta (key, value) VALUES (?, ?)');
    meta.run('schema_version', '1');
    meta.run('status', 'complete');
    meta.run('seed', '4242');
    meta.run('runtime', 'process');
    meta.run('duration_ms', String(seconds * 1000));
    meta.run('schedule_digest', 'f'.repeat(64));
    meta.run('versions', JSON.stringify({ node: process.version, zarisCertify: 'bench' }));
    meta.run('run_config', JSON.stringify({ durationMs: seconds * 1000, seed: 4242, runtime: 'process', runtimeReason: 'process: synthetic', faults: ['kill', 'stop', 'pause', 'partition'], rate: 3000 }));
    nodes.forEach((n, i) => db.prepare('INSERT INTO nodes VALUES (?, ?, ?, ?, 1)').run(n, `127.0.0.${11 + i}`, 7000 + i, 8000 + i));
    for (const [name, rf, mode] of stores) {
      db.prepare('INSERT INTO stores VALUES (?, ?, ?, 64)').run(name, rf, mode);
      for (let p = 0; p < 3; p++) db.prepare('INSERT INTO partitions VALUES (?, ?, ?)').run(name, p, JSON.stringify(nodes.slice(p).concat(nodes.slice(0, p)).slice(0, rf)));
    }
    const stats = db.prepare('INSERT INTO stats VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
    for (let t = 0; t < seconds; t++) {
      for (const [name] of stores) {
        const hit = t % 4 === 1;
        stats.run(t, name, hit ? 400 + (t % 97) : 1000 + (t % 113), hit ? 30 : 0, hit ? 1 : 0, 1.5 + (t % 7) / 10, 5 + (t % 11), 9 + (t % 13), hit ? 900 + (t % 400) : 20 + (t % 17),
          JSON.stringify(hit ? { Ok: 400, Unavailable: 20 + (t % 5), ConnectRefused: 10, Timeout: t % 3 } : { Ok: 1000 }));
      }
    }
    const sample = db.prepare('INSERT INTO samples (t_ms, store, partition, active, epoch, health, replicated_revision) VALUES (?, ?, ?, ?, ?, ?, ?)');
    const epoch = new Map<string, number>();
    for (let ms = 0; ms < seconds * 1000; ms += 250) {
      for (const [name] of stores) {
        for (let p = 0; p < 3; p++) {
          const k = `${name}/${p}`;
          const fault = Math.floor(ms / 4000);
          const e = fault + 1;
          if (epoch.get(k) !== e && (fault + p) % 3 === 0) epoch.set(k, e);
          const failedOver = ms % 4000 >= 1000 && ms % 4000 < 2500 && (fault + p) % 3 === 0;
          sample.run(ms, name, p, failedOver ? nodes[(p + 1) % 3] : nodes[p], epoch.get(k) ?? 1, failedOver ? 'Degraded' : 'Healthy', Math.floor(ms / 10));
        }
      }
    }
    const fault = db.prepare('INSERT INTO faults (kind, nodes, target, planned_ms, start_ms, end_ms, caught_up_ms, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
    const event = db.prepare('INSERT INTO events VALUES (?, ?, ?)');
    const kinds = ['kill', 'stop', 'pause', 'partition'];
    event.run(100, 'phase', '{"phase":"faults"}');
    for (let i = 0; i < seconds / 4; i++) {
      const kind = kinds[i % 4];
      const start = i * 4000 + 1000;
      const node = nodes[i % 3];
      const id = fault.run(kind, JSON.stringify([node]), 'random', start - 5, start, start + 1500, kind === 'kill' || kind === 'stop' ? start + 1800 : null, JSON.stringify({ index: i, node })).lastInsertRowid as number;
      if (kind === 'kill' || kind === 'stop') {
        for (const [name] of stores.slice(0, 2)) event.run(start + 900, 'failover', JSON.stringify({ faultId: id, store: name, partition: i % 3, node: nodes[(i + 1) % 3], from: node, ms: 800 + (i % 500) }));
      }
    }
    event.run(seconds * 1000 + 100, 'phase', '{"phase":"heal"}');
    event.run(seconds * 1000 + 3000, 'phase', '{"phase":"final-reads"}');
    event.run(seconds * 1000 + 3500, 'phase', '{"phase":"done"}');
    // 2,000 rf1 keys whose last acknowledged write was lost to a kill of their only holder (n1)
    const key = db.prepare('INSERT INTO keys VALUES (?, ?, ?, ?, ?)');
    const write = db.prepare("INSERT INTO writes (key_id, seq, op, invoke_ms, complete_ms, outcome, status, attempts, ack_node, ack_epoch, ack_version, ack_revision, ack_mode) VALUES (?, ?, 'put', ?, ?, 'ok', 'Ok', 1, 'n1', 1, ?, ?, 'sync')");
    const read = db.prepare('INSERT INTO final_reads VALUES (?, ?, ?, ?, 0, ?)');
    for (let k = 1; k <= 2000; k++) {
      key.run(k, 'rf1', `key-${k}`, 0, k % 32);
      const t = (k % 3000) * 4000 + 200; // just before a kill of n1 (fault index 3 x j)
      for (let seq = 1; seq <= 3; seq++) write.run(k, seq, t - 30 + seq * 10, t - 25 + seq * 10, seq, k * 10 + seq);
      read.run(k, writeId(k, 1), k, 1, seconds * 1000 + 3200);
    }
  })();
  return db;
}

function main(): void {
  const runDir = resolve(process.argv[2] ?? 'runs/latest');
  const tmp = mkdtempSync(join(tmpdir(), 'zaris-certify-report-bench-'));
  const cleanup = (): void => rmSync(tmp, { recursive: true, force: true });
  process.once('SIGINT', () => {
    cleanup();
    process.exit(130);
  });
  try {
    const out: Record<string, unknown> = {};
    if (existsSync(join(runDir, 'ledger.sqlite'))) {
      const copy = join(tmp, 'run.sqlite');
      copyFileSync(join(runDir, 'ledger.sqlite'), copy);
      const db = new Database(copy);
      try {
        out.run = { dir: runDir, ...measure(db) };
      } finally {
        db.close();
      }
      process.stderr.write(`report bench: ${runDir}: ${JSON.stringify(out.run)}\n`);
    } else {
      process.stderr.write(`report bench: ${runDir} has no ledger.sqlite; stored run skipped\n`);
    }
    const t0 = performance.now();
    const db = synthetic4h(join(tmp, 'synthetic-4h.sqlite'));
    process.stderr.write(`report bench: synthetic 4-hour ledger built in ${Math.round(performance.now() - t0)} ms\n`);
    try {
      out.synthetic4h = measure(db);
      out.synthetic4hPeakRssMb = Math.round(process.memoryUsage().rss / 1024 / 1024);
    } finally {
      db.close();
    }
    process.stderr.write(`report bench: synthetic 4 h: ${JSON.stringify(out.synthetic4h)}\n`);
    process.stdout.write(`${JSON.stringify(out)}\n`);
  } finally {
    cleanup();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  try {
    main();
  } catch (e) {
    process.stderr.write(`report bench failed: ${(e as Error).message.split('\n')[0]}\n`);
    process.exit(1);
  }
}
