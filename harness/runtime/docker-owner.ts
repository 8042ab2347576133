import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';

/**
 * Ownership of docker resources: every container and network a run creates carries the label
 * `zaris-certify.owner=<host>:<pid>:<start>` naming the harness process that made it, so a
 * sweep removes what a crashed run left and never what a live run (another test suite on the
 * same engine) still uses.
 */

/** Label naming the run a resource belongs to (value: the run tag). */
export const RUN_LABEL = 'zaris-certify.run';
/** Label naming the process that created a resource (see ownerToken). */
export const OWNER_LABEL = 'zaris-certify.owner';
/** Label naming the node a container runs. */
export const NODE_LABEL = 'zaris-certify.node';

/**
 * A process's start time in clock ticks since boot (field 22 of /proc/PID/stat), or undefined
 * when the process does not exist (or /proc is not readable).
 */
export function processStartTicks(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // the command name (field 2) is in parentheses and may hold spaces: count after the last ')'
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return rest[19];
  } catch {
    return undefined;
  }
}

/** `<hostname>:<pid>:<start ticks>` of a process (default: this one). */
export function ownerToken(pid: number = process.pid): string {
  return `${hostname()}:${pid}:${processStartTicks(pid) ?? '0'}`;
}

/**
 * Whether the process named by an owner token still runs. A token of another host cannot be
 * checked and counts as alive (never remove what might be in use); a missing or malformed
 * token counts as dead. The start time guards against a reused pid.
 */
export function ownerAlive(token: string | undefined): boolean {
  if (token === undefined) return false;
  const m = /^(.*):(\d+):(\d+)$/.exec(token);
  if (!m) return false;
  if (m[1] !== hostname()) return true;
  const start = processStartTicks(Number(m[2]));
  return start !== undefined && start === m[3];
}
