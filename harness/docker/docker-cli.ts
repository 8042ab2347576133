import { execa } from 'execa';

/**
 * The `docker` command line, as used by the image builders (DESIGN.md §3 "Runtime", docker).
 * The runtime itself talks to the engine through testcontainers; building and importing images
 * goes through the CLI, which is what a user would type.
 */

/** A docker command failed; the message is one line naming the command and the engine's reason. */
export class DockerCliError extends Error {
  override name = 'DockerCliError';
}

/** Options of {@link docker}. */
export interface DockerCallOptions {
  /** Abort after this many milliseconds (default: no limit). */
  timeoutMs?: number;
  /** Working directory (default: the current one). */
  cwd?: string;
}

/** First non-empty line of a text, trimmed (for one-line error messages). */
export function firstLine(text: string): string {
  return (
    text
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l.length > 0) ?? ''
  );
}

/**
 * Runs `docker ARGS...` and returns its stdout, trimmed.
 * @throws DockerCliError (one line) when docker is missing, exits non-zero or times out.
 */
export async function docker(args: string[], opts: DockerCallOptions = {}): Promise<string> {
  const r = await execa('docker', args, {
    reject: false,
    timeout: opts.timeoutMs,
    cwd: opts.cwd,
    stdin: 'ignore',
  });
  if (r.failed) {
    const what = `docker ${args.slice(0, 2).join(' ')}`;
    if ((r as { code?: string }).code === 'ENOENT') throw new DockerCliError(`${what}: the docker command is not installed`);
    if (r.timedOut) throw new DockerCliError(`${what}: no answer within ${opts.timeoutMs} ms`);
    const reason = firstLine(String(r.stderr)) || firstLine(String(r.stdout)) || `exit code ${r.exitCode}`;
    throw new DockerCliError(`${what}: ${reason}`);
  }
  return String(r.stdout).trim();
}

/**
 * The engine's server version when a Docker engine answers within `timeoutMs` (default 5,000 ms),
 * else undefined (no CLI, no daemon, no permission). Never throws.
 */
export async function dockerEngineVersion(timeoutMs = 5_000): Promise<string | undefined> {
  try {
    const v = await docker(['version', '--format', '{{.Server.Version}}'], { timeoutMs });
    return v.length > 0 ? v : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether the engine holds an image with this reference (name:tag).
 * @throws DockerCliError when the engine does not answer (any failure other than "no such image").
 */
export async function imageExists(ref: string): Promise<boolean> {
  try {
    await docker(['image', 'inspect', '--format', '{{.Id}}', ref], { timeoutMs: 30_000 });
    return true;
  } catch (e) {
    if (/no such image/i.test((e as Error).message)) return false;
    throw e;
  }
}
