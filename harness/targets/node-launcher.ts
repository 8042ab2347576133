/**
 * The entry point of a target's node container (targets/target-docker-runtime.ts): runs the
 * node's processes (a NodeLaunch, e.g. redis-server then redis-sentinel) inside one container, as
 * the process runtime runs them on the host:
 *
 *     node dist/harness/targets/node-launcher.js /etc/zaris-certify/launch.json
 *
 * Each process starts once the one before accepts TCP on its ready port; every output line goes
 * to the container's log prefixed with the process name. SIGTERM / SIGINT are passed to every
 * process (docker-init, PID 1, passes the engine's stop signal to this one); when any process
 * exits on its own the others are stopped and the launcher exits with its code, so the container
 * ends with it. Node built-ins only: the node image carries dist/ and no node_modules.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, constants, readFileSync, realpathSync } from 'node:fs';
import net from 'node:net';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

/** The launcher's spec file (JSON), written by the docker runtime into the container. */
export interface LaunchSpec {
  node: string;
  /** The node's address (the ready checks connect there). */
  host: string;
  /** The working folder of every process (the node's data folder). */
  cwd: string;
  /**
   * The processes, in order. `readyTimeoutMs`: bound on this one's start (default the spec's);
   * `user`: the user it runs as (a name in the image's /etc/passwd; the node's data folder is given
   * to that user first: PostgreSQL refuses to run as root).
   */
  processes: Array<{ name: string; command: string; args: string[]; env?: Record<string, string>; port: number; readyTimeoutMs?: number; user?: string }>;
  /** Bound on each process's start, ms. */
  readyTimeoutMs: number;
}

/** Exit code when a process's executable is not in the image. */
export const NOT_IN_IMAGE = 127;

/**
 * Parses and checks a launch spec.
 * @throws Error (one line) naming the first problem.
 */
export function parseLaunchSpec(text: string): LaunchSpec {
  const v = JSON.parse(text) as Partial<LaunchSpec>;
  if (typeof v.node !== 'string' || typeof v.host !== 'string' || typeof v.cwd !== 'string') throw new Error('launch spec: node, host and cwd must be strings');
  if (!Array.isArray(v.processes) || v.processes.length === 0) throw new Error('launch spec: processes must be a non-empty list');
  for (const p of v.processes) {
    if (typeof p.name !== 'string' || typeof p.command !== 'string' || !Array.isArray(p.args) || !Number.isInteger(p.port)) throw new Error(`launch spec: process ${JSON.stringify(p.name)} needs name, command, args and an integer port`);
    if (p.readyTimeoutMs !== undefined && !(typeof p.readyTimeoutMs === 'number' && p.readyTimeoutMs > 0)) throw new Error(`launch spec: process ${p.name}: readyTimeoutMs must be a number above zero`);
    if (p.user !== undefined && (typeof p.user !== 'string' || !/^[a-z_][a-z0-9_-]*$/.test(p.user))) throw new Error(`launch spec: process ${p.name}: user must be a user name`);
  }
  if (!(typeof v.readyTimeoutMs === 'number' && v.readyTimeoutMs > 0)) throw new Error('launch spec: readyTimeoutMs must be a number above zero');
  return v as LaunchSpec;
}

/**
 * The uid and gid of user `name` in an /etc/passwd text.
 * @throws Error (one line) when the user is not there.
 */
export function userIds(passwd: string, name: string): { uid: number; gid: number } {
  for (const line of passwd.split('\n')) {
    const f = line.split(':');
    if (f[0] === name && f.length >= 4) return { uid: Number(f[2]), gid: Number(f[3]) };
  }
  throw new Error(`user ${name} is not in this image's /etc/passwd`);
}

function say(line: string): void {
  process.stderr.write(`zaris-certify launcher: ${line}\n`);
}

function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host, port });
    const t = setTimeout(() => {
      s.destroy();
      resolve(false);
    }, 500);
    s.once('connect', () => {
      clearTimeout(t);
      s.destroy();
      resolve(true);
    });
    s.once('error', () => {
      clearTimeout(t);
      resolve(false);
    });
  });
}

function prefixLines(stream: NodeJS.ReadableStream | null, name: string, out: NodeJS.WritableStream): void {
  if (!stream) return;
  readline.createInterface({ input: stream }).on('line', (l) => out.write(`${name}| ${l}\n`));
}

async function main(specPath: string): Promise<number> {
  const spec = parseLaunchSpec(readFileSync(specPath, 'utf8'));
  for (const p of spec.processes) {
    try {
      accessSync(p.command, constants.X_OK);
    } catch {
      say(`${p.command} is not in this image: the node image must carry the stores' Debian packages (make image)`);
      return NOT_IN_IMAGE;
    }
  }
  // a process that runs as another user: that user owns the node's data folder
  const ids = new Map<string, { uid: number; gid: number }>();
  for (const p of spec.processes) {
    if (p.user === undefined || ids.has(p.user)) continue;
    const id = userIds(readFileSync('/etc/passwd', 'utf8'), p.user);
    ids.set(p.user, id);
    const chown = spawnSync('chown', ['-R', `${id.uid}:${id.gid}`, spec.cwd], { stdio: 'inherit' });
    if (chown.status !== 0) throw new Error(`chown -R ${p.user} ${spec.cwd} failed (exit ${chown.status})`);
  }
  const children: ChildProcess[] = [];
  let stopping = false;
  let exitCode: number | null = null;
  let resolveDone: (code: number) => void = () => undefined;
  const done = new Promise<number>((r) => (resolveDone = r));
  const stopAll = (signal: NodeJS.Signals): void => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill(signal);
  };
  const finishIfAllGone = (): void => {
    if (children.every((c) => c.exitCode !== null || c.signalCode !== null)) resolveDone(exitCode ?? 0);
  };
  for (const sig of ['SIGTERM', 'SIGINT'] as const) {
    process.on(sig, () => {
      stopping = true;
      say(`${sig}: stopping ${spec.processes.map((p) => p.name).join(', ')}`);
      stopAll(sig);
      finishIfAllGone();
    });
  }
  for (const p of spec.processes) {
    if (stopping) break;
    const as = p.user === undefined ? {} : ids.get(p.user)!;
    const c = spawn(p.command, p.args, { cwd: spec.cwd, env: { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin', ...(p.env ?? {}) }, stdio: ['ignore', 'pipe', 'pipe'], ...as });
    children.push(c);
    prefixLines(c.stdout, p.name, process.stdout);
    prefixLines(c.stderr, p.name, process.stderr);
    c.on('exit', (code, signal) => {
      if (!stopping) {
        say(`${p.name} exited on its own (${signal ?? `code ${code}`}): stopping the node`);
        stopping = true;
        exitCode = code ?? 1;
        stopAll('SIGTERM');
      }
      finishIfAllGone();
    });
    const bound = p.readyTimeoutMs ?? spec.readyTimeoutMs;
    const deadline = Date.now() + bound;
    while (!stopping && !(await accepts(spec.host, p.port))) {
      if (Date.now() > deadline) {
        say(`${p.name} did not accept connections on ${spec.host}:${p.port} within ${bound} ms: stopping the node`);
        stopping = true;
        exitCode = 1;
        stopAll('SIGTERM');
        break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    if (!stopping) say(`${p.name} is up on ${spec.host}:${p.port}`);
  }
  return done;
}

const isMain = !!process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  if (!process.argv[2]) {
    say('usage: node-launcher.js <launch.json>');
    process.exit(64);
  }
  main(process.argv[2]).then(
    (code) => process.exit(code),
    (e: unknown) => {
      say((e as Error).message.split('\n')[0]);
      process.exit(2);
    },
  );
}
