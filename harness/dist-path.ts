import { existsSync } from 'node:fs';
import path from 'node:path';
import { repoRootFrom } from './docker/node-image.js';

/**
 * The compiled file `<checkout>/dist/<relPath>`, found from any module of the checkout: child
 * processes and worker threads must run JavaScript, also when the caller runs from the TypeScript
 * sources (vitest).
 * @param moduleUrl the caller's import.meta.url (under dist/ or the sources).
 * @param relPath a path below dist/, e.g. `nodes/node-main.js`.
 * @throws Error (one line) when there is no checkout above, or the file is not built.
 */
export function distPath(moduleUrl: string, relPath: string): string {
  const file = path.join(repoRootFrom(moduleUrl), 'dist', relPath);
  if (!existsSync(file)) throw new Error(`${file} is missing: run make build`);
  return file;
}
