/**
 * What a finished certify run left (tests of how runs end, issue 22): its files, its ledger's
 * events, and anything of it still alive on the machine (node processes, iptables chains,
 * containers, networks). Only the run's own things are looked at: other runs on the machine
 * are none of a test's business.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { execa } from 'execa';
import { listNodeProcesses } from '../runtime/process-sweeper.js';

/** The report files every run that ended with a verdict writes. */
export const REPORT_FILES = ['results.json', 'junit.xml', 'report.html'] as const;

/** The report files missing from a run directory. */
export function missingReports(runDir: string): string[] {
  return REPORT_FILES.filter((f) => !existsSync(path.join(runDir, f)));
}

/** The run tag of a run (from its cluster.json: `zaris-<tag>`), or null when it has none. */
export function runTagOf(runDir: string): string | null {
  const file = path.join(runDir, 'cluster.json');
  if (!existsSync(file)) return null;
  const cluster = (JSON.parse(readFileSync(file, 'utf8')) as { cluster?: string }).cluster;
  return typeof cluster === 'string' && cluster.startsWith('zaris-') ? cluster.slice('zaris-'.length) : null;
}

/** The ledger's events of one kind, in time order, their detail parsed. */
export function ledgerEvents(runDir: string, kind: string): Array<{ tMs: number; detail: Record<string, unknown> }> {
  const db = new Database(path.join(runDir, 'ledger.sqlite'), { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare('SELECT t_ms AS tMs, detail FROM events WHERE kind = ? ORDER BY t_ms, rowid').all(kind) as Array<{ tMs: number; detail: string | null }>;
    return rows.map((r) => ({ tMs: r.tMs, detail: r.detail ? (JSON.parse(r.detail) as Record<string, unknown>) : {} }));
  } finally {
    db.close();
  }
}

/**
 * For a test's failure message: the run's violations (up to `max`) with the verifier's reason
 * (`why`) and the loss evidence, and its faults with their start, effective and end times (ms), as
 * lines of text. Reads the sealed ledger; '' when it has none of these.
 */
export function violationReport(runDir: string, max = 5): string {
  const db = new Database(path.join(runDir, 'ledger.sqlite'), { readonly: true, fileMustExist: true });
  try {
    const v = db.prepare("SELECT kind, store, key, write, detail FROM findings WHERE class = 'violation' ORDER BY rowid LIMIT ?").all(max) as Array<Record<string, string | null>>;
    const f = db.prepare('SELECT id, kind, nodes, isolated, start_ms, effective_ms, end_ms FROM faults ORDER BY id').all() as Array<Record<string, unknown>>;
    return [...v.map((r) => `violation ${r.kind} ${r.store}/${r.key} ${r.write}: ${r.detail}`), ...f.map((r) => `fault ${JSON.stringify(r)}`)].join('\n');
  } finally {
    db.close();
  }
}

/**
 * What is left of a run on this machine: node processes started with its tag, iptables chains of
 * its harness process (`zaris-certify-p<harnessPid>-*`, filter and nat tables), and, with docker,
 * containers and networks carrying its tag. Empty lists when nothing is left.
 */
export async function leftovers(o: { runTag: string | null; harnessPid: number; docker?: boolean }): Promise<{ processes: number[]; chains: string[]; containers: string[]; networks: string[] }> {
  const processes = o.runTag === null ? [] : listNodeProcesses().filter((p) => p.runTag === o.runTag).map((p) => p.pid);
  const chains: string[] = [];
  for (const table of ['filter', 'nat']) {
    const r = await execa('iptables', ['-w', '10', '-t', table, '-S'], { reject: false });
    if (r.exitCode !== 0) continue;
    for (const line of r.stdout.split('\n')) if (line.startsWith('-N ') && line.includes(`zaris-certify-p${o.harnessPid}-`)) chains.push(`${table}:${line.slice(3)}`);
  }
  let containers: string[] = [];
  let networks: string[] = [];
  if (o.docker && o.runTag !== null) {
    const lines = (s: string): string[] => s.split('\n').filter((l) => l.trim() !== '');
    containers = lines((await execa('docker', ['ps', '-a', '--filter', `label=zaris-certify.run=${o.runTag}`, '--format', '{{.Names}}'])).stdout);
    networks = lines((await execa('docker', ['network', 'ls', '--filter', `name=zaris-certify-${o.runTag}`, '--format', '{{.Name}}'])).stdout);
  }
  return { processes, chains, containers, networks };
}

/** No stack trace in a process's error output: no `    at fn (file:line)` frame, no `Error:` line of Node's. */
export function hasStackTrace(stderr: string): boolean {
  return /^\s+at .+(\(|:\d+:\d+)/m.test(stderr) || /^(Uncaught )?[A-Za-z]*Error: /m.test(stderr);
}
