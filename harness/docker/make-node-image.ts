import { Command } from 'commander';
import { BASE_IMAGE } from './base-image.js';
import { ensureNodeImage, repoRootFrom } from './node-image.js';

/**
 * `node dist/harness/docker/make-node-image.js [--base-image REF]` (what `make image` runs):
 * makes the offline base image when missing, then `zaris-certify-node:<content digest>` from
 * nodes/Dockerfile and the current dist/, skipping both when they exist. Progress on stderr;
 * one JSON line on stdout: `{"image","built","buildMs","baseImage","baseBuilt","baseMs"}`
 * (wall milliseconds). Exit 0 on success, 1 with a one-line error, 64 on bad arguments.
 */
async function main(argv: string[]): Promise<number> {
  const program = new Command()
    .name('make-node-image')
    .description('build the zaris-certify node image from dist/ when it is missing')
    .option('--base-image <ref>', 'FROM image (Debian with node 20; made offline when it is the default)', BASE_IMAGE)
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) });
  try {
    program.parse(argv, { from: 'user' });
  } catch (e) {
    const code = (e as { exitCode?: number }).exitCode;
    return code === 0 ? 0 : 64;
  }
  const o = program.opts<{ baseImage: string }>();
  if (o.baseImage.trim().length === 0) {
    process.stderr.write('make-node-image: --base-image must not be empty\n');
    return 64;
  }
  const r = await ensureNodeImage({
    repoRoot: repoRootFrom(import.meta.url),
    baseImage: o.baseImage,
    log: (l) => process.stderr.write(`make-node-image: ${l}\n`),
  });
  process.stderr.write(`make-node-image: ${r.image} ${r.built ? 'built' : 'up to date'}\n`);
  const out = { image: r.image, built: r.built, buildMs: Math.round(r.ms), baseImage: r.baseImage, baseBuilt: r.baseBuilt, baseMs: Math.round(r.baseMs) };
  process.stdout.write(`${JSON.stringify(out)}\n`);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`make-node-image: ${(e as Error).message}\n`);
    process.exit(1);
  },
);
