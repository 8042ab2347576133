import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { etcdContract } from '../etcd/etcd-contract.js';
import type { ErrorOutcome, LaunchContext, NodeLaunch, OwnershipSampler, Target, TargetClient, TargetContract } from '../target.js';

/** The stand-in peer script (plain JavaScript: node runs it as it is). */
export const STAND_IN_PEER = fileURLToPath(new URL('./stand-in-peer.mjs', import.meta.url));

function unused(what: string): never {
  throw new Error(`the stand-in target has no ${what}`);
}

/**
 * A target whose nodes are two stand-in processes each (`main` on port 7700, `side` on 7701), to
 * test the runtime alone: addresses, kill/stop/pause/restart, data folders, partitions. It has no
 * client, sampler or contract of a store.
 */
export class StandInTarget implements Target {
  readonly name = 'zaris' as const;
  readonly nodeIds = ['n1', 'n2', 'n3'];
  readonly ports = { main: 7700, side: 7701 };
  readonly contract: TargetContract = { ...etcdContract('none'), target: 'stand-in' };
  readonly clientLibrary = 'none';
  async unavailableReason(): Promise<string | null> {
    return null;
  }
  async version(): Promise<string> {
    return 'stand-in';
  }
  partitionOf(): number {
    return 0;
  }
  launch(nodeId: string, ctx: LaunchContext): NodeLaunch {
    const host = ctx.cluster.nodes.find((n) => n.id === nodeId)!.host;
    return {
      files: [{ path: 'config.txt', content: `${nodeId} first config\n` }],
      processes: [
        { name: 'main', command: process.execPath, args: [STAND_IN_PEER, host, String(this.ports.main)], readyPort: 'main' },
        { name: 'side', command: process.execPath, args: [STAND_IN_PEER, host, String(this.ports.side)], readyPort: 'side' },
      ],
    };
  }
  client(): TargetClient {
    return unused('client');
  }
  sampler(): OwnershipSampler {
    return unused('sampler');
  }
  classifyError(): ErrorOutcome {
    return unused('outcome rules');
  }
}

/** Sends one line to host:port and returns the reply's first line ("timeout" after timeoutMs, "refused" when refused). */
export function ask(host: string, port: number, line: string, timeoutMs = 2_000): Promise<string> {
  return new Promise((resolve) => {
    const s = net.connect({ host, port });
    let out = '';
    const t = setTimeout(() => {
      s.destroy();
      resolve('timeout');
    }, timeoutMs);
    s.on('connect', () => s.write(`${line}\n`));
    s.on('data', (d) => (out += d));
    s.on('end', () => {
      clearTimeout(t);
      resolve(out.trim());
    });
    s.on('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(t);
      resolve(e.code === 'ECONNREFUSED' ? 'refused' : `error ${e.code}`);
    });
  });
}
