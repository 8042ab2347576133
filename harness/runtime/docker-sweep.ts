import { loadTestcontainers } from './testcontainers-loader.js';
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

/**
 * Removes the containers and networks a crashed run left on the engine: every one labelled
 * `zaris-certify.run` whose `zaris-certify.owner` process no longer runs (see ownerAlive), so
 * that suites running side by side on one engine never remove each other's nodes. With
 * `runTag`, removes that run's resources regardless of owner. Containers go first (forced,
 * paused ones included), then networks. Called by the docker runtime at start and close.
 * Resources that vanish meanwhile are skipped silently; a removal the engine refuses (e.g. a
 * network another sweep is emptying at the same moment) is reported in `errors`, not thrown,
 * so a sweep never fails a run.
 * @throws Error when the engine does not answer.
 */
export async function sweepDockerLeftovers(opts: SweepOptions = {}): Promise<SweepResult> {
  const tc = await loadTestcontainers();
  const client = await tc.getContainerRuntimeClient();
  const dockerode = client.container.dockerode;
  const filter = opts.runTag === undefined ? RUN_LABEL : `${RUN_LABEL}=${opts.runTag}`;
  const doomed = (labels: Record<string, string> | undefined): boolean => opts.runTag !== undefined || !ownerAlive(labels?.[OWNER_LABEL]);
  const gone = (e: unknown): boolean => /no such|not found|404|already in progress/i.test(String((e as Error).message));
  const result: SweepResult = { containers: [], networks: [], errors: [] };
  const containers = await dockerode.listContainers({ all: true, filters: { label: [filter] } });
  for (const c of containers) {
    if (!doomed(c.Labels)) continue;
    try {
      await dockerode.getContainer(c.Id).remove({ force: true });
      result.containers.push((c.Names[0] ?? c.Id).replace(/^\//, ''));
    } catch (e) {
      if (!gone(e)) result.errors.push(`cannot remove container ${c.Names[0] ?? c.Id}: ${(e as Error).message.split('\n')[0]}`);
    }
  }
  const networks = await dockerode.listNetworks({ filters: { label: [filter] } });
  for (const n of networks) {
    if (!doomed(n.Labels)) continue;
    try {
      await dockerode.getNetwork(n.Id).remove();
      result.networks.push(n.Name);
    } catch (e) {
      if (!gone(e)) result.errors.push(`cannot remove network ${n.Name}: ${(e as Error).message.split('\n')[0]}`);
    }
  }
  return result;
}
