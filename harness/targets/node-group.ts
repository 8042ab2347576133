/**
 * The processes of a node found by its group id (process runtime). Every process of a node runs
 * under the node's own group id (loopback-snat.ts nodeGid), and so do the processes they start,
 * also those that leave the tree: Patroni starts the postmaster in a session of its own through a
 * process that exits, so the postmaster is re-parented to init and a signal to Patroni's pid never
 * reaches it. A node is a machine: kill, stop, pause and resume reach every live process of its group.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Pids of the live (not zombie) processes whose real group id is `gid`, from /proc (empty without /proc). */
export function groupPids(gid: number): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const out: number[] = [];
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const status = readFileSync(`/proc/${e}/status`, 'utf8');
      const g = /^Gid:\s+(\d+)/m.exec(status);
      const state = /^State:\s+(\S)/m.exec(status);
      if (g && Number(g[1]) === gid && state?.[1] !== 'Z' && state?.[1] !== 'X') out.push(Number(e));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** Sends `signal` to every live process of group `gid` but those in `except`; returns the pids signalled. Never throws. */
export function signalGroup(gid: number, signal: NodeJS.Signals, except: readonly number[] = []): number[] {
  const sent: number[] = [];
  for (const pid of groupPids(gid)) {
    if (except.includes(pid) || pid === process.pid) continue;
    try {
      process.kill(pid, signal);
      sent.push(pid);
    } catch {
      // gone meanwhile
    }
  }
  return sent;
}

/** SIGKILLs every process of group `gid` and waits (polling every 20 ms, at most `timeoutMs`) until none is left alive. */
export async function killGroup(gid: number, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (signalGroup(gid, 'SIGKILL').length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
}
