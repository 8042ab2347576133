/**
 * Sweeping a crashed run's leftovers (DESIGN.md §7: everything the harness creates outside its
 * run directory carries the name `zaris-certify`). A list of independent sweepers, each for one
 * kind of leftover; `sweepLeftovers()` runs them all at the start of every run and at exit, and
 * one sweeper's failure never stops the others.
 *
 * Owner convention: a leftover whose name carries `-p<pid>-` belongs to that process and is kept
 * while the process is alive, so that two runs (or two test suites) on one machine never sweep
 * each other. Create temporary folders with {@link makeTempDir} to get the marker.
 *
 * To add a sweeper (processes, containers, networks), append it to {@link DEFAULT_SWEEPERS}.
 */
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pidAlive, sweepIptables } from './runtime/iptables.js';

/** Prefix of every temporary folder (and chain, container, network) the harness creates. */
export const LEFTOVER_PREFIX = 'zaris-certify';

/** Unmarked folders must be at least this much older than the run start to be swept, ms. */
export const DEFAULT_UNMARKED_GRACE_MS = 10 * 60_000;

/** What a sweeper gets. */
export interface SweepContext {
  /** Wall-clock start of the current run, ms since the epoch (Date.now()); leftovers are older. */
  runStartedAtMs: number;
  /** The folder holding temporary folders (os.tmpdir() unless a test overrides it). */
  tmpDir: string;
  /** The current process id (its own leftovers are never swept). */
  pid: number;
  /** See {@link DEFAULT_UNMARKED_GRACE_MS}. */
  unmarkedGraceMs: number;
}

/** One kind of leftover. `sweep` returns what it removed (names or paths); it may throw. */
export interface Sweeper {
  name: string;
  sweep(ctx: SweepContext): Promise<string[]>;
}

/** What one sweeper did: removed items, or the one-line error that stopped it. */
export interface SweepResult {
  sweeper: string;
  removed: string[];
  error?: string;
}

/** The owner pid marked in a leftover's name (`...-p<pid>-...`), or null when unmarked. */
export function markedPid(name: string): number | null {
  const m = /-p(\d{1,10})-/.exec(name);
  return m ? Number(m[1]) : null;
}

/**
 * Creates a temporary folder `<tmpdir>/zaris-certify-<label>-p<pid>-XXXXXX` (mkdtemp) that
 * sweeps leave alone while this process lives.
 * @throws RangeError when label is not 1-24 characters of [a-z0-9-]; the fs error otherwise.
 */
export async function makeTempDir(label: string, dir: string = tmpdir()): Promise<string> {
  if (!/^[a-z0-9-]{1,24}$/.test(label)) throw new RangeError(`temp folder label "${label}" must be 1-24 characters of [a-z0-9-]`);
  return mkdtemp(join(dir, `${LEFTOVER_PREFIX}-${label}-p${process.pid}-`));
}

/** iptables chains `zaris-certify*` whose owner is gone, and their jumps. Skipped without iptables. */
export const iptablesSweeper: Sweeper = {
  name: 'iptables',
  async sweep(): Promise<string[]> {
    try {
      return await sweepIptables();
    } catch (e) {
      // no iptables command, or no right to list it: this process could not have created chains
      if (/ENOENT|not found|Permission denied|must be root/i.test((e as Error).message)) return [];
      throw e;
    }
  },
};

/**
 * Folders `zaris-certify*` in ctx.tmpDir: a marked one when its owner pid is dead (never this
 * process's); an unmarked one when last modified more than unmarkedGraceMs before the run start.
 * Plain files and other names are left alone.
 */
export const tempDirSweeper: Sweeper = {
  name: 'temp-dirs',
  async sweep(ctx: SweepContext): Promise<string[]> {
    const removed: string[] = [];
    for (const entry of await readdir(ctx.tmpDir, { withFileTypes: true })) {
      if (!entry.isDirectory() || !entry.name.startsWith(LEFTOVER_PREFIX)) continue;
      const path = join(ctx.tmpDir, entry.name);
      const pid = markedPid(entry.name);
      let doomed: boolean;
      if (pid !== null) {
        doomed = pid !== ctx.pid && !pidAlive(pid);
      } else {
        const st = await stat(path).catch(() => null);
        doomed = st !== null && st.mtimeMs < ctx.runStartedAtMs - ctx.unmarkedGraceMs;
      }
      if (!doomed) continue;
      await rm(path, { recursive: true, force: true });
      removed.push(path);
    }
    return removed;
  },
};

/** The sweepers run by default, in order. Append new kinds of leftovers here. */
export const DEFAULT_SWEEPERS: readonly Sweeper[] = [iptablesSweeper, tempDirSweeper];

/** Options of {@link sweepLeftovers}; every field has a default. */
export interface SweepOptions {
  sweepers?: readonly Sweeper[];
  /** Default Date.now(). */
  runStartedAtMs?: number;
  /** Default os.tmpdir(). */
  tmpDir?: string;
  /** Default {@link DEFAULT_UNMARKED_GRACE_MS}. */
  unmarkedGraceMs?: number;
}

/**
 * Runs every sweeper (one after the other; a failing one is reported and the rest still run).
 * Never throws. Returns one result per sweeper, in order.
 */
export async function sweepLeftovers(opts: SweepOptions = {}): Promise<SweepResult[]> {
  const ctx: SweepContext = {
    runStartedAtMs: opts.runStartedAtMs ?? Date.now(),
    tmpDir: opts.tmpDir ?? tmpdir(),
    pid: process.pid,
    unmarkedGraceMs: opts.unmarkedGraceMs ?? DEFAULT_UNMARKED_GRACE_MS,
  };
  const out: SweepResult[] = [];
  for (const s of opts.sweepers ?? DEFAULT_SWEEPERS) {
    try {
      out.push({ sweeper: s.name, removed: await s.sweep(ctx) });
    } catch (e) {
      out.push({ sweeper: s.name, removed: [], error: (e instanceof Error ? e.message : String(e)).split('\n')[0] });
    }
  }
  return out;
}
