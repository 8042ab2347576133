import type { Grudge } from './runtime.js';
import { formatIpv4, parseIpv4 } from './docker-subnet.js';

/**
 * Partitions of the docker runtime as iptables rules inside the containers (DESIGN.md §3):
 * each container holds a chain of the harness's own, jumped to first from INPUT, with one
 * `-s PEER -j DROP` rule per peer it holds a grudge against. Healing flushes the chain.
 */

/** The iptables chain the harness owns inside every node container (DESIGN.md §7 naming). */
export const PARTITION_CHAIN = 'zaris-certify';

/**
 * Checks a grudge against the cluster's node ids and returns, for every node, the sorted,
 * de-duplicated peers whose traffic it drops (nodes without a grudge map to []).
 * `{ n1: ['n2'] }`: n1 drops what comes from n2 (runtime.ts, Grudge).
 * @throws Error (one line) for an unknown node id or a node holding a grudge against itself.
 */
export function grudgeDrops(grudge: Grudge, nodeIds: readonly string[]): Map<string, string[]> {
  const known = new Set(nodeIds);
  const out = new Map<string, string[]>(nodeIds.map((id) => [id, []]));
  for (const [node, peers] of Object.entries(grudge)) {
    if (!known.has(node)) throw new Error(`partition: unknown node "${node}" in grudge`);
    if (!Array.isArray(peers)) throw new Error(`partition: grudge of ${node} must be a list of node ids`);
    const set = new Set<string>();
    for (const p of peers) {
      if (!known.has(p)) throw new Error(`partition: unknown node "${p}" in grudge of ${node}`);
      if (p === node) throw new Error(`partition: node ${node} cannot drop its own traffic`);
      set.add(p);
    }
    out.set(node, [...set].sort());
  }
  return out;
}

/**
 * The `sh` script that makes a container drop traffic from exactly `sources` (IPv4 addresses):
 * creates the chain when missing, jumps to it first from INPUT (once), flushes it, then adds
 * one DROP rule per source. `-w` waits for the xtables lock. An empty list heals the container.
 * @throws Error when a source is not an IPv4 address (nothing reaches a shell unchecked).
 */
export function partitionScript(sources: readonly string[]): string {
  const addrs = sources.map((s) => formatIpv4(parseIpv4(s)));
  const c = PARTITION_CHAIN;
  const lines = [
    'set -e',
    `iptables -w -N ${c} 2>/dev/null || true`,
    `iptables -w -C INPUT -j ${c} 2>/dev/null || iptables -w -I INPUT 1 -j ${c}`,
    `iptables -w -F ${c}`,
    ...addrs.map((a) => `iptables -w -A ${c} -s ${a}/32 -j DROP`),
  ];
  return lines.join('\n');
}

/** The `sh` script that heals a container: flushes the chain when it exists (no error when it does not). */
export function healScript(): string {
  const c = PARTITION_CHAIN;
  return `if iptables -w -n -L ${c} >/dev/null 2>&1; then iptables -w -F ${c}; fi`;
}
