/**
 * The probes behind test-support/capabilities.ts, run once per `vitest run` by
 * test-support/global-setup.ts in vitest's main process (this file imports nothing of vitest).
 */
import { execa } from 'execa';
import { existsSync, mkdtempSync, rmdirSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The capabilities a test may need. */
export type CapabilityName = 'iptables' | 'docker' | 'tmpfs' | 'sharedCases' | 'targetRuntime' | 'etcd' | 'redis' | 'chromium' | 'nats' | 'patroni';

/**
 * Per capability: null when this machine has it, else the one-line reason it does not (what is
 * missing and how to get it). `casesDir` is the absolute shared cases folder when there is one.
 */
export interface Capabilities {
  /** iptables usable: the command installed and CAP_NET_ADMIN (partition tests on loopback). */
  iptables: string | null;
  /** A Docker engine answers and the node image exists or can be made (debootstrap, root). */
  docker: string | null;
  /** A size-limited tmpfs can be mounted (root with CAP_SYS_ADMIN; the disk-full test). */
  tmpfs: string | null;
  /** The shared cases folder exists ($ZARIS_CASES_DIR, else ../shared/cases beside the checkout). */
  sharedCases: string | null;
  casesDir: string | null;
  /** The process runtime for targets can start nodes (setpriv, util-linux). */
  targetRuntime: string | null;
  /** The etcd target can run here (the etcd-server package; and targetRuntime). */
  etcd: string | null;
  /** The Redis + Sentinel target can run here (redis-server, redis-sentinel; and targetRuntime). */
  redis: string | null;
  /** Debian's Chromium answers at /usr/bin/chromium (the report's browser test drives it headless). */
  chromium: string | null;
  /** The NATS JetStream target can run here (nats-server; and targetRuntime). */
  nats: string | null;
  /** The PostgreSQL + Patroni target can run here (postgresql-15, patroni, etcd-server; and targetRuntime). */
  patroni: string | null;
}

// what global-setup provides and test files inject (vitest's typed provide/inject)
declare module 'vitest' {
  export interface ProvidedContext {
    zarisCapabilities: Capabilities;
  }
}

/** The checkout this file belongs to (test-support/ is at its root). */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function firstLine(e: unknown): string {
  const err = e as { stderr?: unknown; shortMessage?: unknown; message?: unknown };
  const text = [err.stderr, err.shortMessage, err.message].find((t) => typeof t === 'string' && t.trim() !== '') as string | undefined;
  return (text ?? String(e)).trim().split('\n')[0];
}

async function commandExists(cmd: string): Promise<boolean> {
  return (await execa('sh', ['-c', `command -v ${cmd}`], { reject: false })).exitCode === 0;
}

/** iptables: the harness's own check (a probe chain created and removed). */
async function probeIptables(): Promise<string | null> {
  const { checkNetAdmin } = await import('../harness/runtime/iptables.js');
  return checkNetAdmin();
}

/** A Docker engine and the node image's base (present, or makeable here). */
async function probeDocker(): Promise<string | null> {
  if (!(await commandExists('docker'))) return 'no Docker engine: the docker command is not installed (apt-get install -y docker.io, or run .ci/run)';
  const { dockerEngineVersion, imageExists } = await import('../harness/docker/docker-cli.js');
  const engine = await dockerEngineVersion();
  if (engine === undefined) return `no Docker engine answers${process.env.DOCKER_HOST ? ` at DOCKER_HOST=${process.env.DOCKER_HOST}` : ''} (start dockerd, or run .ci/run)`;
  const { BASE_IMAGE, baseImageUnbuildableReason } = await import('../harness/docker/base-image.js');
  if (await imageExists(BASE_IMAGE).catch(() => false)) return null;
  const why = await baseImageUnbuildableReason();
  return why === undefined ? null : `Docker engine ${engine} answers, but the base image ${BASE_IMAGE} is missing and cannot be made here: ${why}`;
}

/** Mounts a 1 MiB tmpfs on a temporary folder and unmounts it. */
async function probeTmpfs(): Promise<string | null> {
  if (process.getuid?.() !== 0) return 'mounting a size-limited tmpfs needs root';
  if (!(await commandExists('mount'))) return 'the mount command is not installed';
  const dir = mkdtempSync(path.join(os.tmpdir(), `zaris-certify-tmpfs-probe-p${process.pid}-`));
  try {
    await execa('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'zaris-certify', dir], { timeout: 10_000 });
  } catch (e) {
    rmdirSync(dir);
    return `mounting a tmpfs failed (root without CAP_SYS_ADMIN?): ${firstLine(e)}`;
  }
  const u = await execa('umount', [dir], { reject: false, timeout: 10_000 });
  if (u.exitCode !== 0) await execa('umount', ['-l', dir], { reject: false, timeout: 10_000 });
  try {
    rmdirSync(dir);
  } catch {
    // still mounted: left for the temp-folder sweep (its name carries this pid)
  }
  return u.exitCode === 0 ? null : `unmounting a tmpfs failed: ${firstLine(u)}`;
}

/**
 * The shared cases folder (DESIGN.md §7): `$ZARIS_CASES_DIR` when set, else `../shared/cases`
 * beside the checkout. Returns the absolute folder, or the reason there is none.
 * @throws Error (one line) when ZARIS_CASES_DIR is set but is not a folder: a mistake, not a skip.
 */
export function locateSharedCases(env: NodeJS.ProcessEnv = process.env, repoRoot: string = REPO_ROOT): { dir: string | null; reason: string | null } {
  const set = env.ZARIS_CASES_DIR;
  if (set !== undefined && set !== '') {
    const dir = path.resolve(repoRoot, set);
    if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new Error(`ZARIS_CASES_DIR=${set} is not a folder (unset it to skip the shared-cases suites)`);
    return { dir, reason: null };
  }
  const dir = path.resolve(repoRoot, '..', 'shared', 'cases');
  if (existsSync(dir) && statSync(dir).isDirectory()) return { dir, reason: null };
  return { dir: null, reason: `no shared cases: neither $ZARIS_CASES_DIR nor ${dir} exists` };
}

/** The targets' own answers (harness/targets: the Debian packages each needs), process runtime. */
async function probeTargets(): Promise<Pick<Capabilities, 'targetRuntime' | 'etcd' | 'redis' | 'nats' | 'patroni'>> {
  const { processRuntimeMissing } = await import('../harness/targets/installed.js');
  const { EtcdTarget } = await import('../harness/targets/etcd/etcd-target.js');
  const { RedisSentinelTarget } = await import('../harness/targets/redis/redis-target.js');
  const { NatsJetStreamTarget } = await import('../harness/targets/nats/nats-target.js');
  const { PostgresPatroniTarget } = await import('../harness/targets/postgres/patroni-target.js');
  return {
    targetRuntime: processRuntimeMissing(),
    etcd: await new EtcdTarget().unavailableReason('process'),
    redis: await new RedisSentinelTarget().unavailableReason('process'),
    nats: await new NatsJetStreamTarget().unavailableReason('process'),
    patroni: await new PostgresPatroniTarget().unavailableReason('process'),
  };
}

/** The system's Chromium (reports/browser.ts): installed, and it answers `--version` within 30 s. */
async function probeChromium(): Promise<string | null> {
  const { CHROMIUM_PATH, chromiumMissing } = await import('../reports/browser.js');
  const missing = chromiumMissing();
  if (missing !== null) return missing;
  const r = await execa(CHROMIUM_PATH, ['--version'], { reject: false, timeout: 30_000 });
  return r.exitCode === 0 ? null : `${CHROMIUM_PATH} --version failed: ${firstLine(r)}`;
}

/**
 * Decides every capability (global-setup calls this once per run). Never throws for a missing
 * capability; throws (one line) only for a misconfiguration (ZARIS_CASES_DIR not a folder).
 */
export async function probeCapabilities(): Promise<Capabilities> {
  const cases = locateSharedCases();
  const [iptables, docker, tmpfs, targets, chromium] = await Promise.all([probeIptables(), probeDocker(), probeTmpfs(), probeTargets(), probeChromium()]);
  return { iptables, docker, tmpfs, sharedCases: cases.reason, casesDir: cases.dir, ...targets, chromium };
}

/** What each capability is needed for, for the loud lines at the start of a run. */
export const NEEDED_FOR: Record<CapabilityName, string> = {
  iptables: 'the iptables partition tests',
  docker: 'the container tests (*-docker.test.ts)',
  tmpfs: 'the disk-full test (a size-limited tmpfs)',
  sharedCases: 'the shared-cases conformance suites (*.cases.test.ts)',
  targetRuntime: 'the target process runtime tests',
  etcd: 'the etcd target tests',
  redis: 'the Redis + Sentinel target tests',
  chromium: "the report's browser test (reports/report-browser.test.ts)",
  nats: 'the NATS JetStream target tests',
  patroni: 'the PostgreSQL + Patroni target tests',
};
