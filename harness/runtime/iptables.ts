/**
 * Loopback partitions for the process runtime (DESIGN.md §3 "Runtime", shared/notes/machine.md
 * "Partitions between loopback processes"). Nodes run on distinct addresses 127.0.0.N and bind
 * their outgoing connections to their own address, so `-s <from> -d <to> -j DROP` cuts exactly
 * one direction of one link. The rules live in a chain of the harness's own, named
 * `zaris-certify-p<pid>-<rand>` (at most 28 characters), jumped to from INPUT: on loopback every
 * packet passes INPUT on its way in, which is enough (iptables.test.ts proves it on real sockets).
 *
 * The owner's pid in the chain name lets {@link sweepIptables} remove a crashed run's leftovers
 * without touching the chain of another run that is still alive on the same machine.
 */
import { execa, execaSync } from 'execa';
import type { Grudge } from './runtime.js';

/** Every chain (and temporary object) the harness creates starts with this (DESIGN.md §7). */
export const CHAIN_PREFIX = 'zaris-certify';
/** iptables refuses chain names of 29 characters or more. */
export const MAX_CHAIN_LENGTH = 28;
/** How long to wait for the xtables lock, seconds. */
const LOCK_WAIT_S = '10';
/** Bound on one iptables call, ms. */
const CALL_TIMEOUT_MS = 30_000;

const OWNED = /^zaris-certify-p(\d{1,10})-/;

/**
 * A fresh run tag: `p<pid>-<4 base-36 characters>`. The chain `zaris-certify-<tag>` fits the
 * 28-character limit for any Linux pid (<= 4194304).
 */
export function newRunTag(pid: number = process.pid): string {
  const rand = Math.floor(Math.random() * 36 ** 4)
    .toString(36)
    .padStart(4, '0');
  return `p${pid}-${rand}`;
}

/**
 * The chain name for a run tag: `zaris-certify-<runTag>`.
 * @throws RangeError when the tag has characters other than [a-z0-9-] or the name exceeds 28 characters.
 */
export function chainName(runTag: string): string {
  if (!/^[a-z0-9-]+$/.test(runTag)) throw new RangeError(`iptables: run tag "${runTag}" must be [a-z0-9-]`);
  const name = `${CHAIN_PREFIX}-${runTag}`;
  if (name.length > MAX_CHAIN_LENGTH) throw new RangeError(`iptables: chain name ${name} is longer than ${MAX_CHAIN_LENGTH} characters`);
  return name;
}

/** The pid that owns a chain named `zaris-certify-p<pid>-...`, or null for any other name. */
export function ownerPid(chain: string): number | null {
  const m = OWNED.exec(chain);
  return m ? Number(m[1]) : null;
}

/** Is a process with this pid alive (EPERM counts as alive)? */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

function checkAddress(node: string, addr: string): void {
  const m = IPV4.exec(addr);
  if (!m || m.slice(1).some((o) => Number(o) > 255)) throw new RangeError(`iptables: node ${node} has address "${addr}", not an IPv4 address`);
}

/**
 * The DROP rules of a grudge, as iptables arguments after `-A <chain>`, in a stable order:
 * for `grudge[to]` containing `from`: `-s <addr(from)>/32 -d <addr(to)>/32 -j DROP`.
 * @throws RangeError when a node of the grudge has no address.
 */
export function grudgeRules(grudge: Grudge, addresses: Readonly<Record<string, string>>): string[][] {
  const out: string[][] = [];
  for (const to of Object.keys(grudge).sort()) {
    for (const from of [...grudge[to]].sort()) {
      if (from === to) continue;
      const a = addresses[from];
      const b = addresses[to];
      if (a === undefined) throw new RangeError(`iptables: node "${from}" has no address`);
      if (b === undefined) throw new RangeError(`iptables: node "${to}" has no address`);
      out.push(['-s', `${a}/32`, '-d', `${b}/32`, '-j', 'DROP']);
    }
  }
  return out;
}

function firstLine(e: unknown): string {
  const err = e as { stderr?: unknown; shortMessage?: unknown; message?: unknown };
  const text = typeof err.stderr === 'string' && err.stderr.trim() !== '' ? err.stderr : String(err.shortMessage ?? err.message ?? e);
  return text.trim().split('\n')[0];
}

async function iptables(args: string[], input?: string, bin = 'iptables'): Promise<string> {
  try {
    const r = await execa(bin, ['-w', LOCK_WAIT_S, ...args], { input, timeout: CALL_TIMEOUT_MS, stripFinalNewline: true });
    return r.stdout;
  } catch (e) {
    throw new Error(`${bin} ${args.join(' ')}: ${firstLine(e)}`);
  }
}

/** Runs iptables and ignores failure (for removals of what may already be gone). */
async function iptablesQuiet(args: string[]): Promise<boolean> {
  try {
    await iptables(args);
    return true;
  } catch {
    return false;
  }
}

/** Options of {@link IptablesPartitioner.open}. */
export interface PartitionerOptions {
  /** Node id -> the IPv4 address it listens on and binds its outgoing connections to. */
  addresses: Readonly<Record<string, string>>;
  /** Default: {@link newRunTag}(). Keep the `p<pid>-` form so that sweeps respect a live owner. */
  runTag?: string;
}

/**
 * The DROP rules that cut the harness's own traffic from `nodes`: `-s <source>/32 -d <addr>/32
 * -j DROP` per node, in node order (issue 13: a cut between the harness's client and one node
 * while the nodes still see each other; they bind their own addresses, never `source`).
 * @throws RangeError for a node without an address or a bad source address.
 */
export function clientCutRules(source: string, nodes: readonly string[], addresses: Readonly<Record<string, string>>): string[][] {
  checkAddress('the harness', source);
  return [...new Set(nodes)].sort().map((n) => {
    const a = addresses[n];
    if (a === undefined) throw new RangeError(`iptables: node "${n}" has no address`);
    if (a === source) throw new RangeError(`iptables: node ${n} shares the harness's source address ${source}`);
    return ['-s', `${source}/32`, '-d', `${a}/32`, '-j', 'DROP'];
  });
}

/**
 * The iptables side of the process runtime's `partition` / `cutClient` / `heal`: one chain per
 * run, jumped to from INPUT, holding the current grudge's rules and the current client cut's.
 * Methods resolve once the rules are installed; errors are Error with one line.
 */
export class IptablesPartitioner {
  private closed = false;
  private grudge: Grudge = {};
  private cut: { source: string; nodes: string[] } = { source: '', nodes: [] };

  private constructor(
    /** The chain this partitioner owns. */
    readonly chain: string,
    private readonly addresses: Readonly<Record<string, string>>,
  ) {}

  /**
   * Creates the (empty) chain and the jump from INPUT (first rule).
   * @throws RangeError on a bad address or tag; Error (one line) when iptables refuses, after
   * removing whatever it had created.
   */
  static async open(opts: PartitionerOptions): Promise<IptablesPartitioner> {
    for (const [node, addr] of Object.entries(opts.addresses)) checkAddress(node, addr);
    const chain = chainName(opts.runTag ?? newRunTag());
    await iptables(['-N', chain]);
    try {
      await iptables(['-I', 'INPUT', '1', '-j', chain]);
    } catch (e) {
      await iptablesQuiet(['-X', chain]);
      throw e;
    }
    return new IptablesPartitioner(chain, { ...opts.addresses });
  }

  /**
   * Replaces the grudge's DROP rules (the client cut stays), in one atomic iptables-restore
   * transaction (no instant without rules between two grudges).
   * @throws RangeError for a node without an address; Error when iptables fails or after close().
   */
  async apply(grudge: Grudge): Promise<void> {
    const rules = grudgeRules(grudge, this.addresses);
    await this.install(rules, this.cutRules());
    this.grudge = grudge;
  }

  /**
   * Replaces the client cut: what `source` (the harness's address) sends to `nodes` is dropped;
   * [] ends the cut. The grudge's rules stay.
   * @throws RangeError for an unknown node or a bad source; Error when iptables fails or after close().
   */
  async cutClient(source: string, nodes: readonly string[]): Promise<void> {
    const next = { source, nodes: [...nodes] };
    const cut = nodes.length === 0 ? [] : clientCutRules(source, nodes, this.addresses);
    await this.install(grudgeRules(this.grudge, this.addresses), cut);
    this.cut = next;
  }

  private cutRules(): string[][] {
    return this.cut.nodes.length === 0 ? [] : clientCutRules(this.cut.source, this.cut.nodes, this.addresses);
  }

  private async install(grudgeRulesNow: string[][], cutRulesNow: string[][]): Promise<void> {
    if (this.closed) throw new Error(`iptables: partitioner ${this.chain} is closed`);
    const rules = [...grudgeRulesNow, ...cutRulesNow];
    const text = ['*filter', `-F ${this.chain}`, ...rules.map((r) => `-A ${this.chain} ${r.join(' ')}`), 'COMMIT', ''].join('\n');
    await iptables(['--noflush'], text, 'iptables-restore');
  }

  /** Removes every rule of the chain: grudge and client cut (the jump stays until close()). */
  async heal(): Promise<void> {
    if (this.closed) return;
    await iptables(['-F', this.chain]);
    this.grudge = {};
    this.cut = { source: '', nodes: [] };
  }

  /** Removes the jump and the chain. Safe to call twice; never throws for what is already gone. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    while (await iptablesQuiet(['-D', 'INPUT', '-j', this.chain])) {
      /* remove every jump, should there be more than one */
    }
    await iptablesQuiet(['-F', this.chain]);
    await iptablesQuiet(['-X', this.chain]);
  }

  /** Synchronous close() for a process 'exit' handler (where nothing async runs). Never throws. */
  closeSync(): void {
    if (this.closed) return;
    this.closed = true;
    const run = (args: string[]): boolean => {
      try {
        execaSync('iptables', ['-w', LOCK_WAIT_S, ...args], { timeout: CALL_TIMEOUT_MS });
        return true;
      } catch {
        return false;
      }
    };
    while (run(['-D', 'INPUT', '-j', this.chain])) {
      /* every jump */
    }
    run(['-F', this.chain]);
    run(['-X', this.chain]);
  }
}

/**
 * Can this process change iptables? Creates and deletes a probe chain. Returns null when it can,
 * else a one-line reason, e.g. "partitions need CAP_NET_ADMIN (run as root): iptables: Permission
 * denied (you must be root)". The harness refuses a run that asks for partitions when this is not
 * null (DESIGN.md §3 "Runtime").
 */
export async function checkNetAdmin(): Promise<string | null> {
  const probe = chainName(`p${process.pid}-probe`);
  try {
    await execa('iptables', ['-w', LOCK_WAIT_S, '-N', probe], { timeout: CALL_TIMEOUT_MS });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 'partitions need the iptables command (apt-get install iptables) and CAP_NET_ADMIN (run as root)';
    const said = firstLine(e);
    if (/exists/i.test(said)) {
      await iptablesQuiet(['-X', probe]);
      return null;
    }
    return `partitions need CAP_NET_ADMIN (run as root): ${said}`;
  }
  await iptablesQuiet(['-X', probe]);
  return null;
}

/** Options of {@link sweepIptables}. */
export interface SweepIptablesOptions {
  /** Also remove chains whose owner process is alive (never the default). */
  all?: boolean;
}

/**
 * Removes leftover chains named `zaris-certify*` and every rule jumping to them (from any chain
 * of the filter table), e.g. a crashed run's. A chain named `zaris-certify-p<pid>-...` whose pid
 * is alive belongs to a running harness and is kept unless `all`. Returns the chains removed.
 * Call at the start of every run and at exit.
 * @throws Error (one line) when iptables cannot be listed; removal failures are ignored.
 */
export async function sweepIptables(opts: SweepIptablesOptions = {}): Promise<string[]> {
  const listing = await iptables(['-S']);
  const lines = listing.split('\n');
  const chains = lines
    .filter((l) => l.startsWith(`-N ${CHAIN_PREFIX}`))
    .map((l) => l.slice(3).trim())
    .filter((c) => {
      const pid = ownerPid(c);
      return opts.all === true || pid === null || !pidAlive(pid);
    });
  const doomed = new Set(chains);
  // jump rules first (a chain cannot be deleted while referenced)
  for (const l of lines) {
    if (!l.startsWith('-A ')) continue;
    const tokens = l.split(/\s+/);
    const j = tokens.indexOf('-j');
    if (j > 0 && doomed.has(tokens[j + 1]) && !doomed.has(tokens[1])) await iptablesQuiet(['-D', ...tokens.slice(1)]);
  }
  for (const c of chains) await iptablesQuiet(['-F', c]);
  for (const c of chains) await iptablesQuiet(['-X', c]);
  return chains;
}
