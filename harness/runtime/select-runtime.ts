import { baseImageUnbuildableReason, BASE_IMAGE } from '../docker/base-image.js';
import { dockerEngineVersion, imageExists } from '../docker/docker-cli.js';
import { nodeImageRef, repoRootFrom } from '../docker/node-image.js';
import { DockerRuntime, type DockerRuntimeOptions } from './docker-runtime.js';
import type { Runtime, RuntimeKind } from './runtime.js';

/** What the user asked for (`--runtime`, `make certify RUNTIME=`); auto is the default (DESIGN.md §3). */
export type RuntimeChoice = 'auto' | 'process' | 'docker';

/** The runtime choices, in the order help texts list them. */
export const RUNTIME_CHOICES: readonly RuntimeChoice[] = ['auto', 'process', 'docker'];

/** Whether the node image can be had: present, buildable, or not (with the reason). */
export type ImageStatus = { state: 'present' | 'buildable'; image: string } | { state: 'unavailable'; reason: string };

/** How selection looks at the machine; injectable so the choice is testable without an engine. */
export interface DockerProbe {
  /** The engine's version when one answers, else undefined. Must not throw. */
  engineVersion(): Promise<string | undefined>;
  /** Whether the node image exists or could be built now. Must not throw. */
  imageStatus(): Promise<ImageStatus>;
}

/** The outcome of {@link selectRuntime}; `R` the runtime made (the Zaris {@link Runtime} unless the caller makes others). */
export interface RuntimeSelection<R = Runtime> {
  kind: RuntimeKind;
  /** One line for the report, e.g. "auto: no Docker engine answers; nodes run as processes". */
  reason: string;
  /** Makes the (not yet started) runtime. */
  create(): Promise<R>;
}

/**
 * Options of {@link selectRuntime}. A caller that runs something other than the Zaris nodes (a
 * target, targets/target.ts) passes both makers, `R` being its runtime type.
 */
export interface SelectRuntimeOptions<R = Runtime> {
  /** Options for the docker runtime when it is chosen. */
  docker?: DockerRuntimeOptions;
  /** Replaces the real probe of the engine and image (tests). */
  probe?: DockerProbe;
  /**
   * Makes the process runtime (default: a lazy import of ./process-runtime.js, expecting an
   * exported class `ProcessRuntime` implementing Runtime with an optional options argument).
   */
  createProcessRuntime?: () => Promise<R>;
  /** Makes the docker runtime (default: the Zaris {@link DockerRuntime} with `docker`'s options). */
  createDockerRuntime?: () => Promise<R>;
}

/** The module holding the process runtime; a variable so it is only loaded when chosen. */
const PROCESS_RUNTIME_MODULE = './process-runtime.js';

async function defaultProcessRuntime(): Promise<Runtime> {
  const mod = (await import(/* @vite-ignore */ PROCESS_RUNTIME_MODULE)) as { ProcessRuntime?: new () => Runtime };
  if (typeof mod.ProcessRuntime !== 'function') throw new Error(`${PROCESS_RUNTIME_MODULE} does not export a ProcessRuntime class`);
  return new mod.ProcessRuntime();
}

/**
 * The real probe: `docker version` (5 s bound) for the engine; for the image, the node image of
 * this checkout's dist/ present, else buildable (dist/ exists and the base image is present or
 * can be made here: root, debootstrap, Node 20).
 */
export function realDockerProbe(opts: DockerRuntimeOptions = {}): DockerProbe {
  return {
    engineVersion: () => dockerEngineVersion(5_000),
    async imageStatus(): Promise<ImageStatus> {
      try {
        if (opts.image !== undefined) {
          return (await imageExists(opts.image)) ? { state: 'present', image: opts.image } : { state: 'unavailable', reason: `image ${opts.image} is not on the engine` };
        }
        const image = nodeImageRef(opts.repoRoot ?? repoRootFrom(import.meta.url));
        if (await imageExists(image)) return { state: 'present', image };
        if (await imageExists(BASE_IMAGE)) return { state: 'buildable', image };
        const why = await baseImageUnbuildableReason();
        return why === undefined ? { state: 'buildable', image } : { state: 'unavailable', reason: `node image ${image} is missing and cannot be built: ${why}` };
      } catch (e) {
        return { state: 'unavailable', reason: String((e as Error).message).split('\n')[0] };
      }
    },
  };
}

/**
 * Chooses the runtime (DESIGN.md §3): `process` as asked; `docker` as asked, but only when an
 * engine answers and the node image exists or can be built; `auto` = docker under those same
 * conditions, else process. The reason line says which ran and why.
 * @throws Error (one line) for an unknown choice, or when docker is asked for and cannot run.
 */
export async function selectRuntime<R = Runtime>(choice: string, opts: SelectRuntimeOptions<R> = {}): Promise<RuntimeSelection<R>> {
  if (!(RUNTIME_CHOICES as readonly string[]).includes(choice)) {
    throw new Error(`unknown runtime "${choice}": expected ${RUNTIME_CHOICES.join(', ')}`);
  }
  const processSel = (reason: string): RuntimeSelection<R> => ({
    kind: 'process',
    reason,
    create: opts.createProcessRuntime ?? (defaultProcessRuntime as unknown as () => Promise<R>),
  });
  if (choice === 'process') return processSel('process: as requested; nodes run as local processes');
  const probe = opts.probe ?? realDockerProbe(opts.docker);
  const engine = await probe.engineVersion();
  if (engine === undefined) {
    if (choice === 'docker') throw new Error('runtime docker: no Docker engine answers (start dockerd, or choose --runtime process)');
    return processSel('auto: no Docker engine answers; nodes run as local processes');
  }
  const image = await probe.imageStatus();
  if (image.state === 'unavailable') {
    if (choice === 'docker') throw new Error(`runtime docker: ${image.reason}`);
    return processSel(`auto: Docker engine ${engine} answers but ${image.reason}; nodes run as local processes`);
  }
  const how = image.state === 'present' ? 'present' : 'to be built';
  return {
    kind: 'docker',
    reason: `${choice === 'docker' ? 'docker: as requested' : 'auto: a Docker engine answers'} (engine ${engine}, image ${image.image} ${how}); nodes run as containers`,
    create: opts.createDockerRuntime ?? (async () => new DockerRuntime(opts.docker) as unknown as R),
  };
}
