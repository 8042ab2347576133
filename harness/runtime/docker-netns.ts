/**
 * A script run in a node container's network namespace, how the rules of docker-partition.ts reach
 * a node: `docker exec` while it runs, a short-lived helper container while it is paused.
 */
import { randomBytes } from 'node:crypto';
import { demuxDockerLog } from './docker-log.js';
import { oneLine, type Dockerode, type NodeSlot, type NodeState } from './docker-container.js';

/**
 * Runs an `sh` script in the network namespace of node `s`'s container (`s` up or paused):
 * `docker exec` when it runs, a helper container (`helper.image`, named `helper.name` plus a
 * random suffix, `--network container:<id>`, NET_ADMIN, `helper.labels`) when it is paused,
 * since a frozen container cannot exec. A container that stops under the exec (it died on its
 * own, or a kill began) is no failure: its rules went with it. `what` names the change in errors.
 * @throws Error (one line) when the script fails.
 */
export async function runInNetns(
  engine: Dockerode,
  s: NodeSlot,
  script: string,
  what: string,
  helper: { image: string; name: string; labels: Record<string, string> },
): Promise<void> {
  const id = s.id;
  if (s.state === 'up') {
    const ctr = s.container!;
    let r: { exitCode: number; output: string };
    try {
      r = await ctr.exec(['sh', '-c', script]);
    } catch (e) {
      // the container stopped under us (it died on its own, or a kill began): its rules went
      // with it, and its next container gets the grudge of the moment (launch)
      if (s.container !== ctr || (s.state as NodeState) === 'down' || !(await engine.getContainer(ctr.getId()).inspect().then((i) => i.State.Running, () => false))) return;
      throw new Error(`docker runtime: ${what} in ${id}: ${oneLine(e)}`);
    }
    if (r.exitCode !== 0) throw new Error(`docker runtime: ${what} in ${id} failed (exit ${r.exitCode}): ${r.output.trim().split('\n').pop() ?? ''}`);
    return;
  }
  const h = await engine.createContainer({
    Image: helper.image,
    name: `${helper.name}-netns-${randomBytes(3).toString('hex')}`,
    Cmd: ['sh', '-c', script],
    Labels: helper.labels,
    HostConfig: { NetworkMode: `container:${s.container!.getId()}`, CapAdd: ['NET_ADMIN'] },
  });
  try {
    await h.start();
    const r = (await h.wait()) as { StatusCode: number };
    if (r.StatusCode !== 0) {
      const out = demuxDockerLog(Buffer.from((await h.logs({ stdout: true, stderr: true })) as unknown as Buffer)).toString();
      throw new Error(`docker runtime: ${what} in paused ${id} failed (exit ${r.StatusCode}): ${out.trim().split('\n').pop() ?? ''}`);
    }
  } finally {
    await h.remove({ force: true }).catch(() => undefined);
  }
}
