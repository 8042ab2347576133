/**
 * Tests never run a stale dist/ (issue 11): the multi-process tests start compiled files
 * (dist/nodes/node-main.js, the ledger worker, dist/harness/cli.js), so `npx vitest run` after an
 * edit would test the old code. vitest's globalSetup calls {@link ensureFreshDist} first: it
 * builds through `make build` (the one definition of a build) when dist/ is older than a source,
 * or refuses the run with one line.
 */
import { execa } from 'execa';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

/** The folders whose sources are compiled into dist/ (the Makefile's SOURCES). */
export const SOURCE_DIRS = ['nodes', 'harness', 'ledger', 'reports'];
/** Files besides the sources that dist/.built depends on in the Makefile (when present). */
export const BUILD_INPUTS = ['tsconfig.json', 'tsconfig.build.json', 'node_modules/.installed'];
/** The stamp `make build` touches after a successful build. */
export const BUILT_STAMP = 'dist/.built';

/** Whether a path below a source folder is compiled (the Makefile's SOURCES filter). */
export function isCompiledSource(rel: string): boolean {
  return rel.endsWith('.ts') && !rel.endsWith('.test.ts') && !rel.split(/[\\/]/).includes('test-support');
}

function newestUnder(root: string, dir: string, best: { file: string; ms: number }): void {
  const abs = path.join(root, dir);
  if (!existsSync(abs)) return;
  for (const e of readdirSync(abs, { withFileTypes: true })) {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'node_modules' && e.name !== 'test-support') newestUnder(root, rel, best);
    } else if (isCompiledSource(rel)) {
      const ms = statSync(path.join(root, rel)).mtimeMs;
      if (ms > best.ms) {
        best.file = rel;
        best.ms = ms;
      }
    }
  }
}

/**
 * Why dist/ is stale, or null when it is fresh: the build stamp is missing, or a source or build
 * input is newer than it (by modification time, as make decides).
 * @param repoRoot the checkout.
 */
export function staleDistReason(repoRoot: string): string | null {
  const stamp = path.join(repoRoot, BUILT_STAMP);
  if (!existsSync(stamp)) return `${BUILT_STAMP} is missing (never built)`;
  const builtMs = statSync(stamp).mtimeMs;
  const best = { file: '', ms: -Infinity };
  for (const d of SOURCE_DIRS) newestUnder(repoRoot, d, best);
  for (const f of BUILD_INPUTS) {
    const abs = path.join(repoRoot, f);
    if (existsSync(abs) && statSync(abs).mtimeMs > best.ms) {
      best.file = f;
      best.ms = statSync(abs).mtimeMs;
    }
  }
  return best.ms > builtMs ? `${best.file} is newer than the last build` : null;
}

/**
 * Makes dist/ fresh before any test runs: nothing when it is; else `make -s build` in the
 * checkout. Returns what it did, one line.
 * @throws Error (one line) when dist/ is stale and cannot be built (no make, or the build failed:
 *   the compiler's first error line).
 */
export async function ensureFreshDist(repoRoot: string): Promise<string> {
  const why = staleDistReason(repoRoot);
  if (why === null) return 'dist/ is up to date';
  const t0 = performance.now();
  const r = await execa('make', ['-s', 'build'], { cwd: repoRoot, reject: false, all: true });
  if ((r as { code?: string }).code === 'ENOENT') throw new Error(`dist/ is stale (${why}) and make is not installed: build it (npx tsc -p tsconfig.build.json) before running the tests`);
  if (r.exitCode !== 0) {
    const lines = String(r.all ?? '').split('\n').map((l) => l.trim()).filter((l) => l !== '');
    const first = lines.find((l) => /error/i.test(l)) ?? lines[lines.length - 1] ?? `exit ${r.exitCode}`;
    throw new Error(`dist/ is stale (${why}) and make build failed: ${first}`);
  }
  const still = staleDistReason(repoRoot);
  if (still !== null) throw new Error(`dist/ is still stale after make build: ${still}`);
  return `dist/ was stale (${why}): built in ${((performance.now() - t0) / 1000).toFixed(1)} s`;
}
