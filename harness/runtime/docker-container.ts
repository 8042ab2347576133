/**
 * One node's container in the docker runtimes (docker-nodes.ts): what it runs, how it is built
 * (a fixed address, docker-init), when it is ready, and its log saved before it is removed.
 */
import { appendFileSync } from 'node:fs';
import net from 'node:net';
import type { ContainerRuntimeClient, StartedTestContainer } from 'testcontainers';
import { demuxDockerLog } from './docker-log.js';
import type { TestcontainersModule } from './testcontainers-loader.js';

/** What one node's container runs: built by the subclass for each (re)start of the node. */
export interface ContainerSpec {
  command: string[];
  env: Record<string, string>;
  /** Text copied into the container before it starts (absolute target paths). */
  contents?: Array<{ content: string; target: string }>;
  /** Host files copied into the container before it starts (absolute target paths). */
  files?: Array<{ source: string; target: string }>;
  /** Host folders mounted into the container. */
  binds?: Array<{ source: string; target: string; mode: 'ro' | 'rw' }>;
  /** Ports (on the node's address) that must accept TCP from the host before the node is ready. */
  readyPorts: number[];
}

/** A node's state: running, frozen by the engine's freezer, or without a running container. */
export type NodeState = 'up' | 'paused' | 'down';

/** One node of a docker runtime: its fixed address, its state and its current container. */
export interface NodeSlot {
  id: string;
  host: string;
  state: NodeState;
  /** Container of the current incarnation (set while state is up or paused). */
  container?: StartedTestContainer;
  /** Starts so far; the n-th container of a node is its incarnation n. */
  incarnation: number;
}

/** The engine's client (dockerode), as testcontainers hands it out. */
export type Dockerode = ContainerRuntimeClient['container']['dockerode'];

/** Builds the GenericContainer subclass that can pin an address and run docker-init. */
function nodeContainerClass(tc: TestcontainersModule) {
  return class NodeContainer extends tc.GenericContainer {
    /** Attaches the container to `network` at the fixed IPv4 `address` (IPAM config at create). */
    withStaticAddress(network: string, address: string): this {
      this.createOpts.NetworkingConfig = { EndpointsConfig: { [network]: { IPAMConfig: { IPv4Address: address } } } };
      return this.withNetworkMode(network);
    }
    /** Runs docker-init as PID 1 so SIGTERM reaches the node and zombies are reaped. */
    withInit(): this {
      this.hostConfig.Init = true;
      return this;
    }
  };
}

/**
 * A node's container, built but not started: the image, named and labelled, NET_ADMIN as its only
 * added capability, at the fixed `address` on `network`, docker-init as PID 1, running `spec`;
 * testcontainers gives up its start after `startupTimeoutMs`.
 */
export function nodeContainer(
  tc: TestcontainersModule,
  o: { image: string; name: string; labels: Record<string, string>; network: string; address: string; spec: ContainerSpec; startupTimeoutMs: number },
) {
  const NodeContainer = nodeContainerClass(tc);
  const spec = o.spec;
  let c = new NodeContainer(o.image)
    .withName(o.name)
    .withLabels(o.labels)
    .withAddedCapabilities('NET_ADMIN')
    .withStaticAddress(o.network, o.address)
    .withInit()
    .withEnvironment(spec.env)
    .withCommand(spec.command)
    .withStartupTimeout(o.startupTimeoutMs);
  if (spec.contents && spec.contents.length > 0) c = c.withCopyContentToContainer(spec.contents);
  if (spec.files && spec.files.length > 0) c = c.withCopyFilesToContainer(spec.files);
  if (spec.binds && spec.binds.length > 0) c = c.withBindMounts(spec.binds);
  return c;
}

/** The first line of an error's message. */
export function oneLine(e: unknown): string {
  return String((e as Error)?.message ?? e).split('\n')[0];
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Whether a TCP connection to host:port is accepted within timeoutMs. */
export function tcpAccepts(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host, port });
    const done = (v: boolean): void => {
      clearTimeout(timer);
      s.destroy();
      resolve(v);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
  });
}

/**
 * Appends the log of node `s`'s container `ctr` to `logPath` under a header line (the node, the
 * container, `s`'s incarnation, `why`), then removes the container; one already gone is no error.
 * @throws Error (the engine's) when the log cannot be read or the container cannot be removed.
 */
export async function saveLogAndRemove(engine: Dockerode, s: NodeSlot, ctr: StartedTestContainer, logPath: string, why: string): Promise<void> {
  const handle = engine.getContainer(ctr.getId());
  try {
    const raw = (await handle.logs({ stdout: true, stderr: true, follow: false })) as unknown as Buffer;
    appendFileSync(logPath, `--- zaris-certify: ${s.id} container ${ctr.getId().slice(0, 12)} incarnation ${s.incarnation}: ${why} ---\n`);
    appendFileSync(logPath, demuxDockerLog(Buffer.from(raw)));
  } finally {
    await handle.remove({ force: true }).catch((e: unknown) => {
      if (!/no such container|404|already in progress/i.test(oneLine(e))) throw e;
    });
  }
}
