import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The zaris-certify checkout above a module: the nearest folder, walking up from `moduleUrl`'s
 * folder, holding a package.json named "zaris-certify" (works from sources and from dist/), or
 * null when there is none. At the bottom of the layout (DESIGN.md §1) so that every layer may
 * find its compiled files: the ledger's worker, the harness's node processes and image.
 */
export function checkoutRootFrom(moduleUrl: string): string | null {
  let dir = path.dirname(fileURLToPath(moduleUrl));
  for (;;) {
    const pkg = path.join(dir, 'package.json');
    if (existsSync(pkg)) {
      try {
        if ((JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'zaris-certify') return dir;
      } catch {
        // not ours; keep walking
      }
    }
    const up = path.dirname(dir);
    if (up === dir) return null;
    dir = up;
  }
}

/**
 * The compiled file `<checkout>/dist/<relPath>`, found from any module of the checkout: child
 * processes and worker threads must run JavaScript, also when the caller runs from the TypeScript
 * sources (vitest).
 * @param moduleUrl the caller's import.meta.url (under dist/ or the sources).
 * @param relPath a path below dist/, e.g. `nodes/node-main.js`.
 * @throws Error (one line) when there is no checkout above, or the file is not built.
 */
export function distPath(moduleUrl: string, relPath: string): string {
  const root = checkoutRootFrom(moduleUrl);
  if (root === null) throw new Error(`no zaris-certify checkout above ${fileURLToPath(moduleUrl)}`);
  const file = path.join(root, 'dist', relPath);
  if (!existsSync(file)) throw new Error(`${file} is missing: run make build`);
  return file;
}
