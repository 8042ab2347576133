import { readdirSync, readFileSync } from 'node:fs';
import type { Sweeper } from '../sweep.js';

/** A node process the harness started: its pid, parent pid and run tag. */
export interface NodeProcessInfo {
  pid: number;
  ppid: number;
  runTag: string;
}

/**
 * Lists node processes started by a zaris-certify harness (`node-main.js ... --run <tag>`) from
 * /proc. Linux only; returns [] where /proc is missing.
 */
export function listNodeProcesses(): NodeProcessInfo[] {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return [];
  }
  const out: NodeProcessInfo[] = [];
  for (const p of pids) {
    try {
      const argv = readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0');
      const entry = argv.findIndex((a) => a.endsWith('node-main.js'));
      const run = argv.indexOf('--run');
      if (entry < 0 || run < 0 || !argv[run + 1]) continue;
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      out.push({ pid: Number(p), ppid, runTag: argv[run + 1] });
    } catch {
      // the process ended while we looked
    }
  }
  return out;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Sweeps node processes whose harness is gone (a crashed run): their parent died, so they were
 * re-parented (to init or a subreaper that is not a harness). A node whose parent harness lives is
 * never touched, so concurrent runs and test files leave each other alone.
 */
export const nodeProcessSweeper: Sweeper = {
  name: 'node-processes',
  async sweep(ctx) {
    const removed: string[] = [];
    for (const n of listNodeProcesses()) {
      if (n.ppid === ctx.pid) continue;
      let parentIsHarness = false;
      if (n.ppid > 1 && alive(n.ppid)) {
        try {
          const pargv = readFileSync(`/proc/${n.ppid}/cmdline`, 'utf8');
          parentIsHarness = pargv.includes('node');
        } catch {
          parentIsHarness = false;
        }
      }
      if (parentIsHarness) continue;
      try {
        process.kill(n.pid, 'SIGKILL');
        removed.push(`pid ${n.pid} (run ${n.runTag})`);
      } catch {
        // already gone
      }
    }
    return removed;
  },
};
