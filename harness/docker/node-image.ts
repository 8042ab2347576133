import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { checkoutRootFrom } from '../../ledger/checkout.js';
import { BASE_IMAGE, ensureBaseImage, PROJECT_LABEL } from './base-image.js';
import { docker, DockerCliError, firstLine, imageExists } from './docker-cli.js';

/** Repository (name) of the node images; the tag is a content digest (see nodeImageTag). */
export const NODE_IMAGE_REPO = 'zaris-certify-node';

/** The Dockerfile of the node image, relative to the repository root. */
export const NODE_DOCKERFILE = 'nodes/Dockerfile';

/** The node image cannot be built; the message is one line. */
export class NodeImageError extends Error {
  override name = 'NodeImageError';
}

/**
 * The repository root above a module: the nearest folder, walking up from `moduleUrl`'s folder,
 * holding a package.json named "zaris-certify" (works from sources and from dist/).
 * @throws NodeImageError when there is none.
 */
export function repoRootFrom(moduleUrl: string): string {
  const root = checkoutRootFrom(moduleUrl);
  if (root === null) throw new NodeImageError(`no zaris-certify checkout above ${fileURLToPath(moduleUrl)}`);
  return root;
}

function listFiles(root: string, dir: string, out: string[]): void {
  for (const ent of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, ent.name);
    if (ent.isDirectory()) listFiles(root, p, out);
    else if (ent.isFile()) out.push(relative(root, p).split(sep).join('/'));
  }
}

/**
 * The node image tag for a checkout: the first 16 hex digits of a SHA-256 over what goes into
 * the image: every file of `dist/` (path and bytes, sorted by path; the `.built` stamp left
 * out), the Dockerfile, and the base image reference. Same inputs, same tag, so `make image`
 * skips the build when nothing changed.
 * @throws NodeImageError when dist/ is missing or empty (build first).
 */
export function nodeImageTag(repoRoot: string, baseImage: string = BASE_IMAGE): string {
  const dist = join(repoRoot, 'dist');
  if (!existsSync(dist) || !statSync(dist).isDirectory()) throw new NodeImageError(`${dist} is missing: run "make build" first`);
  const files: string[] = [];
  listFiles(dist, dist, files);
  const inImage = files.filter((f) => f !== '.built').sort();
  if (inImage.length === 0) throw new NodeImageError(`${dist} is empty: run "make build" first`);
  const h = createHash('sha256');
  h.update(`base ${baseImage}\n`);
  h.update(`dockerfile ${readFileSync(join(repoRoot, NODE_DOCKERFILE))}\n`);
  for (const f of inImage) {
    const bytes = readFileSync(join(dist, f));
    h.update(`file ${f} ${bytes.length}\n`);
    h.update(bytes);
  }
  return h.digest('hex').slice(0, 16);
}

/** `zaris-certify-node:<nodeImageTag>` for a checkout and base image. */
export function nodeImageRef(repoRoot: string, baseImage: string = BASE_IMAGE): string {
  return `${NODE_IMAGE_REPO}:${nodeImageTag(repoRoot, baseImage)}`;
}

/** Options of {@link ensureNodeImage}. */
export interface EnsureNodeImageOptions {
  /** The checkout whose dist/ goes into the image. */
  repoRoot: string;
  /** FROM of the Dockerfile (default {@link BASE_IMAGE}, made offline when missing). */
  baseImage?: string;
  /** Progress lines (default: none). */
  log?: (line: string) => void;
  /**
   * After a build, how many older node images to keep beside the new one (default
   * {@link KEEP_OLD_NODE_IMAGES}); the rest are removed (each ~285 MB; a tag is a digest of
   * dist/, so every change of the code builds a new one).
   */
  keepOld?: number;
}

/** Older node images kept by {@link ensureNodeImage} after a build (other checkouts' may be in use). */
export const KEEP_OLD_NODE_IMAGES = 3;

/** One row of `docker images zaris-certify-node`: the tag and its creation time (ms since epoch). */
export interface NodeImageRow {
  tag: string;
  createdMs: number;
}

/**
 * The node image tags to remove after building `current`: every tag but `current` and the
 * `keepOld` most recently created others (ties broken by tag, so the choice is stable).
 * Pure; `keepOld` < 0 is taken as 0.
 */
export function staleNodeImageTags(rows: readonly NodeImageRow[], current: string, keepOld: number): string[] {
  const others = rows.filter((r) => r.tag !== current && r.tag !== '<none>');
  others.sort((a, b) => b.createdMs - a.createdMs || (a.tag < b.tag ? -1 : a.tag > b.tag ? 1 : 0));
  return others.slice(Math.max(0, keepOld)).map((r) => r.tag);
}

/**
 * Rows of `docker images --format '{{.Tag}}\t{{.CreatedAt}}'` (CreatedAt like
 * "2026-11-30 18:31:02 +0000 UTC"); a time that does not parse counts as 0 (oldest).
 */
export function parseNodeImageRows(text: string): NodeImageRow[] {
  return text
    .split('\n')
    .filter((l) => l.includes('\t'))
    .map((l) => {
      const [tag, created] = l.split('\t') as [string, string];
      const m = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d) ([+-]\d{4})/.exec(created.trim());
      const ms = m ? Date.parse(`${m[1]}T${m[2]}${m[3]}`) : Number.NaN;
      return { tag: tag.trim(), createdMs: Number.isNaN(ms) ? 0 : ms };
    });
}

/**
 * Removes older node images (see {@link staleNodeImageTags}) without force: an image a
 * container still uses stays. Never throws; returns the references removed.
 */
export async function pruneNodeImages(current: string, keepOld: number = KEEP_OLD_NODE_IMAGES): Promise<string[]> {
  let out: string;
  try {
    out = await docker(['images', NODE_IMAGE_REPO, '--format', '{{.Tag}}\t{{.CreatedAt}}'], { timeoutMs: 30_000 });
  } catch {
    return [];
  }
  const rows = parseNodeImageRows(out);
  const removed: string[] = [];
  for (const tag of staleNodeImageTags(rows, current.slice(current.indexOf(':') + 1), keepOld)) {
    try {
      await docker(['rmi', `${NODE_IMAGE_REPO}:${tag}`], { timeoutMs: 60_000 });
      removed.push(`${NODE_IMAGE_REPO}:${tag}`);
    } catch {
      // in use by a container, or gone meanwhile: keep going
    }
  }
  return removed;
}

/** What {@link ensureNodeImage} did; times are wall milliseconds. */
export interface EnsureNodeImageResult {
  image: string;
  built: boolean;
  ms: number;
  baseImage: string;
  baseBuilt: boolean;
  baseMs: number;
}

/**
 * Makes sure `zaris-certify-node:<tag>` exists for the checkout's current dist/: makes the
 * offline base first when it is the default one and missing, then `docker build -f
 * nodes/Dockerfile` from the repository root (classic builder unless DOCKER_BUILDKIT is set;
 * intermediate containers removed even when a step fails;
 * the image is labelled zaris-certify), then removes all but the newest older node images
 * ({@link pruneNodeImages}). Quick (a digest and an inspect) when the image exists.
 * @throws NodeImageError (dist/ missing, build failed), BaseImageError, DockerCliError.
 */
export async function ensureNodeImage(opts: EnsureNodeImageOptions): Promise<EnsureNodeImageResult> {
  const baseImage = opts.baseImage ?? BASE_IMAGE;
  const log = opts.log ?? (() => {});
  const image = nodeImageRef(opts.repoRoot, baseImage);
  const t0 = performance.now();
  if (await imageExists(image)) {
    return { image, built: false, ms: performance.now() - t0, baseImage, baseBuilt: false, baseMs: 0 };
  }
  let baseBuilt = false;
  let baseMs = 0;
  if (baseImage === BASE_IMAGE) {
    const b = await ensureBaseImage({ log });
    baseBuilt = b.built;
    baseMs = b.ms;
  }
  const t1 = performance.now();
  log(`docker build ${image} FROM ${baseImage}`);
  const r = await execa(
    'docker',
    ['build', '--force-rm', '-f', NODE_DOCKERFILE, '--build-arg', `BASE_IMAGE=${baseImage}`, '--label', `${PROJECT_LABEL}=node-image`, '-t', image, '.'],
    {
      cwd: opts.repoRoot,
      reject: false,
      all: true,
      timeout: 15 * 60_000,
      env: { DOCKER_BUILDKIT: process.env.DOCKER_BUILDKIT ?? '0' },
      stdin: 'ignore',
    },
  );
  if (r.failed) {
    if ((r as { code?: string }).code === 'ENOENT') throw new DockerCliError('docker build: the docker command is not installed');
    const lines = String(r.all ?? '')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l.length > 0 && !/^DEPRECATED|legacy builder|BuildKit|buildx/i.test(l));
    throw new NodeImageError(`docker build ${image} failed: ${lines[lines.length - 1] ?? firstLine(String(r.stderr))}`);
  }
  const ms = performance.now() - t1;
  log(`node image ${image} built in ${(ms / 1000).toFixed(1)} s`);
  const removed = await pruneNodeImages(image, opts.keepOld ?? KEEP_OLD_NODE_IMAGES);
  if (removed.length > 0) log(`removed ${removed.length} older node image(s): ${removed.join(', ')}`);
  return { image, built: true, ms, baseImage, baseBuilt, baseMs };
}
