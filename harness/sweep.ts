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
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pidAlive, sweepIptables } from './runtime/iptables.js';
import { sourceNatSweeper } from './targets/loopback-snat.js';

/** Prefix of every temporary folder (and chain, container, network) the harness creates. */
export const LEFTOVER_PREFIX = 'zaris-certify';


/** What a sweeper gets. */
export interface SweepContext {
  /** Wall-clock start of the current run, ms since the epoch (Date.now()); leftovers are older. */
  runStartedAtMs: number;
  /** The folder holding temporary folders (os.tmpdir() unless a test overrides it). */
  tmpDir: string;
  /** The current process id (its own leftovers are never swept). */
  pid: number;
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

/** The exact name {@link makeTempDir} gives: `zaris-certify-<label>-p<pid>-<6 mkdtemp characters>`. */
const MARKED_TEMP_DIR = /^zaris-certify-[a-z0-9-]{1,24}-p(\d{1,10})-[A-Za-z0-9]{6}$/;

/**
 * Folders in ctx.tmpDir named exactly as {@link makeTempDir} names them, whose owner pid is dead
 * (never this process's). Anything else is left alone, whatever its name or age: a user's
 * `/tmp/zaris-certify` checkout is not a leftover (a fresh-clone test lost one to an older rule).
 */
export const tempDirSweeper: Sweeper = {
  name: 'temp-dirs',
  async sweep(ctx: SweepContext): Promise<string[]> {
    const removed: string[] = [];
    for (const entry of await readdir(ctx.tmpDir, { withFileTypes: true })) {
      const m = MARKED_TEMP_DIR.exec(entry.name);
      if (!entry.isDirectory() || !m) continue;
      const path = join(ctx.tmpDir, entry.name);
      const pid = Number(m[1]);
      const doomed = pid !== ctx.pid && !pidAlive(pid);
      if (!doomed) continue;
      await rm(path, { recursive: true, force: true });
      removed.push(path);
    }
    return removed;
  },
};

/**
 * The sweepers run by default, in order: filter chains, the targets' nat chains (their source-NAT
 * rules, targets/loopback-snat.ts), temporary folders. Append new kinds of leftovers here.
 */
export const DEFAULT_SWEEPERS: readonly Sweeper[] = [iptablesSweeper, sourceNatSweeper, tempDirSweeper];

/** Options of {@link sweepLeftovers}; every field has a default. */
export interface SweepOptions {
  sweepers?: readonly Sweeper[];
  /** Default Date.now(). */
  runStartedAtMs?: number;
  /** Default os.tmpdir(). */
  tmpDir?: string;
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
