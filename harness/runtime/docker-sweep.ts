import { docker, DockerCliError } from '../docker/docker-cli.js';
import { OWNER_LABEL, ownerAlive, RUN_LABEL } from './docker-owner.js';

/** What {@link sweepDockerLeftovers} removed (names), and what it could not remove (one line each). */
export interface SweepResult {
  containers: string[];
  networks: string[];
  errors: string[];
}

/** Options of {@link sweepDockerLeftovers}. */
export interface SweepOptions {
  /** Remove only this run's resources, whoever owns them (used by the runtime's close()). */
  runTag?: string;
}

/** One line per resource: id, name, owner label, tab-separated (docker --format). */
const FORMAT = `{{.ID}}\t{{.Names}}\t{{.Label "${OWNER_LABEL}"}}`;
const NET_FORMAT = `{{.ID}}\t{{.Name}}\t{{.Label "${OWNER_LABEL}"}}`;

function rows(out: string): Array<{ id: string; name: string; owner: string | undefined }> {
  return out
    .split('\n')
    .filter((l) => l.trim().length > 0)
    .map((l) => {
      const [id, name, owner] = l.split('\t');
      return { id, name: name ?? id, owner: owner || undefined };
    });
}

/**
 * Removes the containers and networks a crashed run left on the engine: every one labelled
 * `zaris-certify.run` whose `zaris-certify.owner` process no longer runs (see ownerAlive), so
 * that suites running side by side on one engine never remove each other's nodes. With
 * `runTag`, removes that run's resources regardless of owner. Containers go first (forced,
 * paused ones included), then networks. Resources that vanish meanwhile are skipped silently; a
 * removal the engine refuses (e.g. a network another sweep is emptying at the same moment) is
 * reported in `errors`, not thrown, so a sweep never fails a run. Called by the docker runtime at
 * start and close, and by every certify run where an engine answers.
 *
 * Through the docker command line (as the engine check, docker-cli.ts), not testcontainers: a run
 * on the process runtime that loaded testcontainers for its sweep carried dockerode, ssh2 (with a
 * 16 MB WebAssembly heap) and gRPC for the whole run, ~50 MB of its RSS (DESIGN.md §8).
 * @throws DockerCliError when the engine does not answer or the docker command is missing.
 */
export async function sweepDockerLeftovers(opts: SweepOptions = {}): Promise<SweepResult> {
  const filter = opts.runTag === undefined ? RUN_LABEL : `${RUN_LABEL}=${opts.runTag}`;
  const doomed = (owner: string | undefined): boolean => opts.runTag !== undefined || !ownerAlive(owner);
  const gone = (e: unknown): boolean => /no such|not found|404|already in progress/i.test(String((e as Error).message));
  const result: SweepResult = { containers: [], networks: [], errors: [] };
  const timeoutMs = 60_000;
  for (const c of rows(await docker(['ps', '-a', '--no-trunc', '--filter', `label=${filter}`, '--format', FORMAT], { timeoutMs }))) {
    if (!doomed(c.owner)) continue;
    try {
      await docker(['rm', '-f', c.id], { timeoutMs });
      result.containers.push(c.name.replace(/^\//, ''));
    } catch (e) {
      if (!(e instanceof DockerCliError)) throw e;
      if (!gone(e)) result.errors.push(`cannot remove container ${c.name}: ${e.message}`);
    }
  }
  for (const n of rows(await docker(['network', 'ls', '--no-trunc', '--filter', `label=${filter}`, '--format', NET_FORMAT], { timeoutMs }))) {
    if (!doomed(n.owner)) continue;
    try {
      await docker(['network', 'rm', n.id], { timeoutMs });
      result.networks.push(n.name);
    } catch (e) {
      if (!(e instanceof DockerCliError)) throw e;
      if (!gone(e)) result.errors.push(`cannot remove network ${n.name}: ${e.message}`);
    }
  }
  return result;
}
