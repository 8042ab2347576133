/**
 * Outgoing connections of a target's node processes leave from the node's own loopback address
 * (DESIGN.md §3 "Runtime", process: "each binding its outgoing connections to its own address
 * too, so that a DROP rule on source and destination cuts exactly one direction of one link").
 *
 * The Zaris nodes bind their sockets themselves; other stores do not (etcd's peer dialer has no
 * source-address option; Linux gives a connection to 127.a.b.N the source 127.0.0.1). So the
 * runtime starts each node's processes under a group id of its own ({@link nodeGid}) and this
 * module rewrites the source of their new connections on loopback, in a nat chain of the
 * harness's own (`zaris-certify-p<pid>-<rand>`, jumped to from nat POSTROUTING):
 *
 *     -o lo -m owner --gid-owner <gid> -j SNAT --to-source <node address>
 *
 * Conntrack applies the rewrite to every packet of the connection, so the grudge rules of
 * runtime/iptables.ts (`-s from -d to -j DROP` in INPUT) see the node's address as the source.
 * Connections the harness opens (group 0) and replies of accepted connections are untouched.
 * Needs CAP_NET_ADMIN, like the partitions it serves.
 */
import { execa, execaSync } from 'execa';
import { chainName, newRunTag, ownerPid, pidAlive } from '../runtime/iptables.js';
import type { Sweeper } from '../sweep.js';

const LOCK_WAIT_S = '10';
const CALL_TIMEOUT_MS = 30_000;
/** The nat chain's jump sits in this built-in chain. */
const HOOK = 'POSTROUTING';

/** First group id of {@link nodeGid}'s range (far above any group a system allocates). */
export const NODE_GID_BASE = 1_000_000_000;

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/**
 * The group id a node's processes run under on the process runtime: NODE_GID_BASE plus the last
 * three octets of its loopback address (127.a.b.c -> base + a*65536 + b*256 + c), so two runs on
 * one machine (which never share addresses) never share a group either.
 * @throws RangeError for an address outside 127.0.0.0/8.
 */
export function nodeGid(address: string): number {
  const m = IPV4.exec(address);
  if (!m || m[1] !== '127' || m.slice(2).some((o) => Number(o) > 255)) throw new RangeError(`snat: ${address} is not a loopback IPv4 address`);
  return NODE_GID_BASE + Number(m[2]) * 65536 + Number(m[3]) * 256 + Number(m[4]);
}

/** The SNAT rule of one node, as iptables arguments after `-A <chain>`. */
export function snatRule(gid: number, address: string): string[] {
  return ['-o', 'lo', '-m', 'owner', '--gid-owner', String(gid), '-j', 'SNAT', '--to-source', address];
}

function firstLine(e: unknown): string {
  const err = e as { stderr?: unknown; shortMessage?: unknown; message?: unknown };
  const text = typeof err.stderr === 'string' && err.stderr.trim() !== '' ? err.stderr : String(err.shortMessage ?? err.message ?? e);
  return text.trim().split('\n')[0];
}

async function nat(args: string[]): Promise<string> {
  try {
    const r = await execa('iptables', ['-w', LOCK_WAIT_S, '-t', 'nat', ...args], { timeout: CALL_TIMEOUT_MS, stripFinalNewline: true });
    return r.stdout;
  } catch (e) {
    throw new Error(`iptables -t nat ${args.join(' ')}: ${firstLine(e)}`);
  }
}

async function natQuiet(args: string[]): Promise<boolean> {
  try {
    await nat(args);
    return true;
  } catch {
    return false;
  }
}

/** One node whose processes' loopback connections get its address as their source. */
export interface SnatSource {
  gid: number;
  address: string;
}

/**
 * The nat chain of one run. open() installs the rules of every node at once; close() removes the
 * chain and its jump (also from a process 'exit' handler through closeSync()).
 */
export class LoopbackSourceNat {
  private closed = false;

  private constructor(
    /** The nat chain this object owns. */
    readonly chain: string,
  ) {}

  /**
   * Creates the chain with one SNAT rule per source and the jump from nat POSTROUTING.
   * @throws RangeError for a bad tag; Error (one line) when iptables refuses, after removing
   *   whatever it had created.
   */
  static async open(sources: readonly SnatSource[], runTag: string = newRunTag()): Promise<LoopbackSourceNat> {
    const chain = chainName(runTag);
    await nat(['-N', chain]);
    const self = new LoopbackSourceNat(chain);
    try {
      for (const s of sources) {
        if (!IPV4.test(s.address)) throw new RangeError(`snat: ${s.address} is not an IPv4 address`);
        await nat(['-A', chain, ...snatRule(s.gid, s.address)]);
      }
      await nat(['-I', HOOK, '1', '-j', chain]);
    } catch (e) {
      await self.close();
      throw e;
    }
    return self;
  }

  /** Removes the jump and the chain. Safe to call twice; never throws. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    while (await natQuiet(['-D', HOOK, '-j', this.chain])) {
      /* every jump */
    }
    await natQuiet(['-F', this.chain]);
    await natQuiet(['-X', this.chain]);
  }

  /** Synchronous close() for a process 'exit' handler. Never throws. */
  closeSync(): void {
    if (this.closed) return;
    this.closed = true;
    const run = (args: string[]): boolean => {
      try {
        execaSync('iptables', ['-w', LOCK_WAIT_S, '-t', 'nat', ...args], { timeout: CALL_TIMEOUT_MS });
        return true;
      } catch {
        return false;
      }
    };
    while (run(['-D', HOOK, '-j', this.chain])) {
      /* every jump */
    }
    run(['-F', this.chain]);
    run(['-X', this.chain]);
  }
}

/**
 * Removes nat chains named `zaris-certify-p<pid>-...` whose owner process is gone (a crashed
 * run's), with every rule jumping to them. Chains of live owners are kept. Returns the chains removed.
 * @throws Error (one line) when the nat table cannot be listed.
 */
export async function sweepSourceNat(): Promise<string[]> {
  const lines = (await nat(['-S'])).split('\n');
  const doomed = lines
    .filter((l) => l.startsWith('-N zaris-certify'))
    .map((l) => l.slice(3).trim())
    .filter((c) => {
      const pid = ownerPid(c);
      return pid !== null && pid !== process.pid && !pidAlive(pid);
    });
  const set = new Set(doomed);
  for (const l of lines) {
    if (!l.startsWith('-A ')) continue;
    const tokens = l.split(/\s+/);
    const j = tokens.indexOf('-j');
    if (j > 0 && set.has(tokens[j + 1]) && !set.has(tokens[1])) await natQuiet(['-D', ...tokens.slice(1)]);
  }
  for (const c of doomed) await natQuiet(['-F', c]);
  for (const c of doomed) await natQuiet(['-X', c]);
  return doomed;
}

/** The sweeper of crashed runs' nat chains (harness/sweep.ts). Skipped without iptables. */
export const sourceNatSweeper: Sweeper = {
  name: 'iptables-nat',
  async sweep(): Promise<string[]> {
    try {
      return await sweepSourceNat();
    } catch (e) {
      if (/ENOENT|not found|Permission denied|must be root/i.test((e as Error).message)) return [];
      throw e;
    }
  },
};
