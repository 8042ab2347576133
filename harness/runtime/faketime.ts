/**
 * Clock faults through libfaketime (Debian's `libfaketime`, issue 13): every node of a run that
 * may get clock faults starts with libfaketime preloaded and a timestamp file of its own, which
 * the harness rewrites to change the node's clock while it runs. Both runtimes use this module:
 * the process runtime preloads the host's library, the docker runtime the image's (the node
 * image links it at {@link IMAGE_LIBFAKETIME}) and bind-mounts the folder of timestamp files.
 *
 * libfaketime cannot move a node's wall clock and its monotonic clock independently (an offset
 * applies to both unless monotonic faking is off for the whole process, and a rate change without
 * FAKETIME_XRESET rescales the time since the process started). So each node gets one
 * {@link ClockMode} for the whole run, chosen at cluster start:
 * - `wall`: FAKETIME_DONT_FAKE_MONOTONIC=1. Only CLOCK_REALTIME is faked: the wall clock jumps
 *   by whole seconds, back or forward; the monotonic clock (what timers, leases and timeouts use)
 *   is untouched.
 * - `monotonic`: FAKETIME_XRESET=1. Both clocks run at a rate (0.5 = half speed, 2 = twice as
 *   fast); XRESET makes a rate change take effect from now on, without a jump, but only for a
 *   process that reads its wall clock as often as its monotonic clock: libfaketime re-anchors
 *   every clock at the last wall-clock value it handed out, so a process that mostly reads its
 *   monotonic clock is thrown back by the time since its last wall-clock read and its timers stall
 *   (measured: 8-20 s). The store node keeps that reading fresh (nodes/node-clock.ts; tested in
 *   faketime-node-clock.test.ts). No offsets: a monotonic clock never goes back, and a forward
 *   leap is not offered.
 *
 * The library re-reads the timestamp file at most once per FAKETIME_CACHE_DURATION (1 s; its
 * check has whole-second granularity, so a change is in effect {@link CLOCK_EFFECT_MS} after the
 * file is written at the latest). Reading the file on every clock call (FAKETIME_NO_CACHE) costs
 * about 9 µs per call here, against 0.26 µs cached: too slow for a store node.
 *
 * Leftovers: the timestamp files live in a folder made by makeTempDir (`zaris-certify-clock-
 * p<pid>-XXXXXX`), removed at close and swept after a crash. Preloading the library directly (not
 * through the `faketime` wrapper) creates no shared memory in /dev/shm.
 */
import { existsSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempDir } from '../sweep.js';

/** How a node's clock can be faulted for the whole run (see the module comment). */
export type ClockMode = 'wall' | 'monotonic';

/**
 * A node's clock setting. `offsetMs`: how far the wall clock is moved (whole seconds; `wall`
 * nodes only). `rate`: how fast both clocks run (`monotonic` nodes only; 1 = normal).
 */
export interface ClockSetting {
  offsetMs: number;
  rate: number;
}

/** The setting of an unfaulted clock. */
export const NORMAL_CLOCK: ClockSetting = Object.freeze({ offsetMs: 0, rate: 1 });

/** Slowest and fastest rate a clock fault may set. */
export const MIN_CLOCK_RATE = 0.25;
export const MAX_CLOCK_RATE = 4;
/** Largest wall-clock jump, ms (a day). */
export const MAX_CLOCK_OFFSET_MS = 86_400_000;

/** libfaketime's cache of the timestamp file, seconds (FAKETIME_CACHE_DURATION). */
export const CLOCK_CACHE_S = 1;
/**
 * A written setting is in effect at the latest this long after the write, ms: libfaketime
 * re-reads when the whole seconds since its last read exceed the cache duration (up to 2 s).
 */
export const CLOCK_EFFECT_MS = 2_100;

/** Where the node image links libfaketime (nodes/Dockerfile). */
export const IMAGE_LIBFAKETIME = '/usr/local/lib/zaris-certify/libfaketime.so.1';
/** Where the docker runtime mounts the folder of timestamp files inside every node container. */
export const CONTAINER_CLOCK_DIR = '/run/zaris-certify-clock';

/**
 * The host's libfaketime (`/usr/lib/<triplet>/faketime/libfaketime.so.1` of Debian's package),
 * or null when it is not installed.
 */
export function findHostLibfaketime(): string | null {
  let dirs: string[];
  try {
    dirs = readdirSync('/usr/lib');
  } catch {
    return null;
  }
  for (const d of dirs.sort()) {
    const p = join('/usr/lib', d, 'faketime', 'libfaketime.so.1');
    if (existsSync(p)) return p;
  }
  return null;
}

/** The one-line reason clock faults cannot run on this host's processes, or null when they can. */
export function hostClockFaultsUnavailable(): string | null {
  return findHostLibfaketime() === null ? 'clock faults need libfaketime (apt-get install -y libfaketime)' : null;
}

/**
 * Checks a setting against a node's mode.
 * @throws RangeError (one line) when the setting does not fit the mode or its range.
 */
export function checkClockSetting(mode: ClockMode, s: ClockSetting): void {
  if (!Number.isFinite(s.offsetMs) || !Number.isFinite(s.rate)) throw new RangeError(`clock: offset and rate must be finite numbers`);
  if (mode === 'wall') {
    if (s.rate !== 1) throw new RangeError(`clock: a wall-mode node only jumps (rate must be 1, got ${s.rate})`);
    if (s.offsetMs % 1000 !== 0 || Math.abs(s.offsetMs) > MAX_CLOCK_OFFSET_MS) {
      throw new RangeError(`clock: a wall-clock jump is whole seconds within ±${MAX_CLOCK_OFFSET_MS / 1000} s, got ${s.offsetMs} ms`);
    }
  } else {
    if (s.offsetMs !== 0) throw new RangeError(`clock: a monotonic-mode node only changes rate (offset must be 0, got ${s.offsetMs} ms)`);
    if (!(s.rate >= MIN_CLOCK_RATE && s.rate <= MAX_CLOCK_RATE)) throw new RangeError(`clock: rate must be within ${MIN_CLOCK_RATE}..${MAX_CLOCK_RATE}, got ${s.rate}`);
  }
}

/**
 * The timestamp-file text of a setting, in libfaketime's relative format: `+30s x1`, `-5s x1`,
 * `+0 x0.5`. Rates print with up to 3 decimals and a `.` (the nodes run with LC_NUMERIC=C).
 * @throws RangeError as {@link checkClockSetting}.
 */
export function faketimeSpec(mode: ClockMode, s: ClockSetting): string {
  checkClockSetting(mode, s);
  const secs = Math.round(s.offsetMs / 1000);
  const offset = secs === 0 ? '+0' : `${secs > 0 ? '+' : '-'}${Math.abs(secs)}s`;
  const rate = Number(s.rate.toFixed(3)).toString();
  return `${offset} x${rate}\n`;
}

/**
 * The environment that preloads libfaketime for a node in `mode`, reading `timestampFile`.
 * `library` is the path of libfaketime.so.1 as the node sees it.
 */
export function faketimeEnv(library: string, timestampFile: string, mode: ClockMode): Record<string, string> {
  return {
    LD_PRELOAD: library,
    FAKETIME_TIMESTAMP_FILE: timestampFile,
    FAKETIME_CACHE_DURATION: String(CLOCK_CACHE_S),
    LC_NUMERIC: 'C',
    ...(mode === 'wall' ? { FAKETIME_DONT_FAKE_MONOTONIC: '1' } : { FAKETIME_XRESET: '1' }),
  };
}

/**
 * The default mode of each node: alternating by position, `monotonic` first (n1 monotonic, n2
 * wall, n3 monotonic, ...), so that every cluster of 2 or more nodes has both.
 */
export function defaultClockModes(nodeIds: readonly string[]): Record<string, ClockMode> {
  return Object.fromEntries(nodeIds.map((id, i) => [id, i % 2 === 0 ? 'monotonic' : 'wall']));
}

/**
 * The host folder of a run's timestamp files: one `<node>.rc` per node, written atomically
 * (write a temporary file, rename), so libfaketime never reads half a line.
 */
export class ClockFiles {
  private closed = false;
  private readonly settings = new Map<string, ClockSetting>();

  private constructor(
    /** The host folder. */
    readonly dir: string,
    readonly modes: Readonly<Record<string, ClockMode>>,
  ) {}

  /**
   * Makes the folder (`zaris-certify-clock-p<pid>-XXXXXX` in the temp folder) and writes a normal
   * setting for every node.
   */
  static async create(modes: Readonly<Record<string, ClockMode>>): Promise<ClockFiles> {
    const dir = await makeTempDir('clock');
    const files = new ClockFiles(dir, { ...modes });
    for (const id of Object.keys(modes)) files.write(id, NORMAL_CLOCK);
    return files;
  }

  /** The file name of a node's timestamp file (inside {@link dir}, or the container's folder). */
  static fileName(nodeId: string): string {
    return `${nodeId}.rc`;
  }

  /** The node's current setting. @throws Error for an unknown node. */
  setting(nodeId: string): ClockSetting {
    const s = this.settings.get(nodeId);
    if (s === undefined) throw new Error(`clock: unknown node "${nodeId}"`);
    return s;
  }

  /**
   * Writes a node's setting (it takes effect within {@link CLOCK_EFFECT_MS}).
   * @throws RangeError for a setting that does not fit the node's mode; Error for an unknown
   * node or after close().
   */
  write(nodeId: string, s: ClockSetting): void {
    if (this.closed) throw new Error('clock: the clock files are closed');
    const mode = this.modes[nodeId];
    if (mode === undefined) throw new Error(`clock: unknown node "${nodeId}"`);
    const text = faketimeSpec(mode, s);
    const path = join(this.dir, ClockFiles.fileName(nodeId));
    const tmp = `${path}.tmp`;
    writeFileSync(tmp, text);
    renameSync(tmp, path);
    this.settings.set(nodeId, { offsetMs: s.offsetMs, rate: s.rate });
  }

  /** Removes the folder. Safe to call twice. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    rmSync(this.dir, { recursive: true, force: true });
  }
}
