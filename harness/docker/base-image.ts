import { chmodSync, copyFileSync, mkdtempSync, rmSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { docker, DockerCliError, firstLine, imageExists } from './docker-cli.js';
import { hostDebianMirror } from './apt-mirror.js';

/**
 * The locally made base image of the node image (DESIGN.md §3: "the image must also build where
 * no registry can be reached"): Debian bookworm minbase with iptables, iproute2, libfaketime
 * (clock faults, harness/runtime/faketime.ts) and the stores the other targets run (issue 15:
 * etcd-server 3.4, redis-server and redis-sentinel 7.0; issue 23: postgresql-15 and patroni 3.0),
 * plus the host's own `node` binary in
 * /usr/local/bin. (The tag names what was added last: a base image made before has another tag.)
 */
export const BASE_IMAGE = 'zaris-certify-base:bookworm-node20-faketime-stores-pg';

/** The Debian packages the targets other than Zaris run (harness/targets/), in the base image. */
export const TARGET_PACKAGES = ['etcd-server', 'redis-server', 'redis-sentinel', 'postgresql-15', 'patroni'] as const;

/** The Debian packages debootstrap adds to minbase. */
export const BASE_PACKAGES = ['iptables', 'iproute2', 'libfaketime', ...TARGET_PACKAGES] as const;

/** The Debian suite of the base image. */
export const BASE_SUITE = 'bookworm';

/** The label every image and container of the project carries (DESIGN.md §7). */
export const PROJECT_LABEL = 'zaris-certify';

/** Options of {@link ensureBaseImage}. */
export interface EnsureBaseImageOptions {
  /** Image reference to make (default {@link BASE_IMAGE}). */
  image?: string;
  /** The node binary copied into the image (default: the running one, process.execPath). */
  nodeBinary?: string;
  /** Debian mirror (default: the one apt uses on this host, see hostDebianMirror). */
  mirror?: string;
  /** Progress lines (default: none). */
  log?: (line: string) => void;
}

/** What {@link ensureBaseImage} did. */
export interface EnsureBaseImageResult {
  image: string;
  /** true when the image was made now, false when it already existed. */
  built: boolean;
  /** Wall time spent, milliseconds. */
  ms: number;
}

/** The base image cannot be made here; the message is one line naming what is missing. */
export class BaseImageError extends Error {
  override name = 'BaseImageError';
}

async function commandExists(cmd: string): Promise<boolean> {
  const r = await execa('sh', ['-c', `command -v ${cmd}`], { reject: false });
  return r.exitCode === 0;
}

/**
 * Whether this host could make the base image: root, debootstrap and tar installed, a Node 20
 * binary running. Returns undefined when it can, else the one-line reason it cannot.
 */
export async function baseImageUnbuildableReason(): Promise<string | undefined> {
  if (process.getuid?.() !== 0) return 'making the base image needs root (debootstrap)';
  if (!process.versions.node.startsWith('20.')) return `the base image carries the host's node binary, which must be Node 20 (found ${process.versions.node})`;
  if (!(await commandExists('debootstrap'))) return 'debootstrap is not installed (apt-get install -y debootstrap)';
  if (!(await commandExists('tar'))) return 'tar is not installed';
  return undefined;
}

/**
 * Makes the base image when the engine lacks it; quick (one `docker image inspect`) when it
 * exists. Steps: `debootstrap --variant=minbase --include=iptables,iproute2,libfaketime,etcd-server,
 * redis-server,redis-sentinel bookworm ROOTFS MIRROR` (the packages' services are not started:
 * debootstrap fakes start-stop-daemon while it installs; the node image runs the stores itself) into a temporary folder named `zaris-certify-base-*`, copy the node binary into
 * ROOTFS/usr/local/bin/node, `tar -C ROOTFS -c . | docker import` with a project label, then
 * remove the folder (also on failure).
 * @throws BaseImageError when the host cannot make it (see baseImageUnbuildableReason) or a
 *   step fails; DockerCliError when the engine does not answer.
 */
export async function ensureBaseImage(opts: EnsureBaseImageOptions = {}): Promise<EnsureBaseImageResult> {
  const image = opts.image ?? BASE_IMAGE;
  const log = opts.log ?? (() => {});
  const t0 = performance.now();
  if (await imageExists(image)) return { image, built: false, ms: performance.now() - t0 };
  const why = await baseImageUnbuildableReason();
  if (why !== undefined) throw new BaseImageError(`cannot make base image ${image}: ${why}`);
  const mirror = opts.mirror ?? hostDebianMirror(BASE_SUITE);
  const nodeBinary = opts.nodeBinary ?? process.execPath;
  const tmp = mkdtempSync(join(tmpdir(), 'zaris-certify-base-'));
  const rootfs = join(tmp, 'rootfs');
  try {
    log(`debootstrap ${BASE_SUITE} (minbase + ${BASE_PACKAGES.join(', ')}) from ${mirror} into ${rootfs}`);
    const boot = await execa('debootstrap', ['--variant=minbase', `--include=${BASE_PACKAGES.join(',')}`, BASE_SUITE, rootfs, mirror], {
      reject: false,
      all: true,
      timeout: 15 * 60_000,
    });
    if (boot.failed) {
      const lines = String(boot.all ?? '').trim().split('\n');
      throw new BaseImageError(`debootstrap failed (${boot.timedOut ? 'timed out' : `exit ${boot.exitCode}`}): ${lines[lines.length - 1] ?? ''}`);
    }
    // keep the image small: the downloaded packages are not needed once installed
    const archives = join(rootfs, 'var/cache/apt/archives');
    for (const f of readdirSync(archives)) if (f.endsWith('.deb')) rmSync(join(archives, f));
    copyFileSync(nodeBinary, join(rootfs, 'usr/local/bin/node'));
    chmodSync(join(rootfs, 'usr/local/bin/node'), 0o755);
    log(`docker import ${image}`);
    const imported = await execa('tar', ['-C', rootfs, '-c', '.'], { reject: false, buffer: false }).pipe(
      'docker',
      [
        'import',
        '--change',
        `LABEL ${PROJECT_LABEL}=base-image`,
        '--change',
        'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
        '--change',
        'CMD ["node"]',
        '-',
        image,
      ],
      { reject: false },
    );
    if (imported.failed) throw new DockerCliError(`docker import ${image}: ${firstLine(String(imported.stderr)) || `exit ${imported.exitCode}`}`);
    let version: string;
    try {
      version = await docker(['run', '--rm', '--label', `${PROJECT_LABEL}=1`, image, 'node', '--version'], { timeoutMs: 60_000 });
    } catch (e) {
      // an image whose node does not run must not pass for a made one next time
      await docker(['image', 'rm', image]).catch(() => undefined);
      throw new BaseImageError(`base image ${image}: node does not run inside: ${(e as Error).message}`);
    }
    log(`base image ${image} made; node ${version} inside`);
    return { image, built: true, ms: performance.now() - t0 };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
