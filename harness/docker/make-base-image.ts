import { Command } from 'commander';
import { BASE_IMAGE, ensureBaseImage } from './base-image.js';

/**
 * `node dist/harness/docker/make-base-image.js [--image REF] [--mirror URL]`: makes the offline
 * base image when the engine lacks it (see ensureBaseImage). Progress on stderr; one JSON line on
 * stdout: `{"image","built","ms"}` (ms = wall time). Exit 0 when the image exists afterwards,
 * 1 with a one-line error otherwise, 64 on bad arguments.
 */
async function main(argv: string[]): Promise<number> {
  const program = new Command()
    .name('make-base-image')
    .description(`make the offline base image (default ${BASE_IMAGE}) when it is missing`)
    .option('--image <ref>', 'image reference to make', BASE_IMAGE)
    .option('--mirror <url>', 'Debian mirror (default: the one apt uses here)')
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) });
  try {
    program.parse(argv, { from: 'user' });
  } catch (e) {
    const code = (e as { exitCode?: number }).exitCode;
    return code === 0 ? 0 : 64;
  }
  const o = program.opts<{ image: string; mirror?: string }>();
  const r = await ensureBaseImage({ image: o.image, mirror: o.mirror, log: (l) => process.stderr.write(`make-base-image: ${l}\n`) });
  process.stderr.write(`make-base-image: ${r.image} ${r.built ? `made in ${(r.ms / 1000).toFixed(1)} s` : 'already present'}\n`);
  process.stdout.write(`${JSON.stringify({ image: r.image, built: r.built, ms: Math.round(r.ms) })}\n`);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`make-base-image: ${(e as Error).message}\n`);
    process.exit(1);
  },
);
