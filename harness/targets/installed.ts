/**
 * What a target needs installed, asked of the machine: executables (Debian packages) and the
 * client libraries' versions (for the report).
 */
import { accessSync, constants } from 'node:fs';
import { createRequire } from 'node:module';
import { execa } from 'execa';

const require = createRequire(import.meta.url);

/** The version of an installed npm package (its package.json), e.g. packageVersion('etcd3') = '1.1.2'. @throws Error when it is not installed. */
export function packageVersion(pkg: string): string {
  return (require(`${pkg}/package.json`) as { version: string }).version;
}

/**
 * Null when `file` is an executable, else the one-line reason: "<what> is not installed (<hint>)".
 * Example: missingExecutable('/usr/bin/etcd', 'etcd', 'apt-get install etcd-server').
 */
export function missingExecutable(file: string, what: string, hint: string): string | null {
  try {
    accessSync(file, constants.X_OK);
    return null;
  } catch {
    return `${what} is not installed: no executable ${file} (${hint})`;
  }
}

/** The process runtime for targets starts node processes through setpriv (util-linux). */
export const SETPRIV = '/usr/bin/setpriv';

/** Null when the process runtime for targets can start node processes here, else the reason. */
export function processRuntimeMissing(): string | null {
  return missingExecutable(SETPRIV, 'setpriv', 'apt-get install util-linux');
}

/**
 * Runs a command where the store's binaries are and returns its output (stdout and stderr):
 * on the host ({@link runOnHost}) or in a node container (the docker runtime's). @throws Error (one line).
 */
export type BinaryRunner = (file: string, args: string[]) => Promise<string>;

/** Runs `file args` on this machine (bounded, 10 s). @throws Error (one line) when it cannot run or fails without output. */
export const runOnHost: BinaryRunner = async (file, args) => {
  const r = await execa(file, args, { reject: false, timeout: 10_000, all: true });
  const out = String(r.all ?? '');
  if (r.failed && out.trim() === '') throw new Error(`${file} ${args.join(' ')} failed: ${String(r.shortMessage ?? '').split('\n')[0]}`);
  return out;
};

/**
 * Runs `file args` (on the host unless `run` says where) and returns the first match of
 * `pattern`'s group 1 in its output.
 * @throws Error (one line) when it fails to run or prints no match.
 */
export async function versionFromBinary(file: string, args: string[], pattern: RegExp, run: BinaryRunner = runOnHost): Promise<string> {
  const m = pattern.exec(await run(file, args));
  if (!m) throw new Error(`${file} ${args.join(' ')} printed no version`);
  return m[1];
}
