/**
 * The harness's view of a Patroni cluster through Patroni's REST API (GET /patroni on every node,
 * bounded per node), for the adapter's leader routing and the sampler. A node that does not
 * answer gives null.
 */
import type { TargetCluster } from '../target.js';

/** One node's own report (GET /patroni). */
export interface PatroniView {
  node: string;
  /** `primary` (Patroni 3 says `master`), `replica`, or another Patroni role (`uninitialized`, `demoted`). */
  role: 'primary' | 'replica' | 'other';
  /** Patroni's state of its PostgreSQL (`running`, `starting`, `stopped`, `restarting`, ...). */
  state: string;
  /** The PostgreSQL timeline the node is on (0 when not reported). */
  timeline: number;
  /** primary: its WAL position; replica: the position replayed (bytes, 0 when not reported). */
  lsn: number;
  /** primary: the replicas streaming from it (node ids by address) and which of them are synchronous. */
  streaming: string[];
  sync: string[];
}

/** Revisions and versions of timeline t start above t * TIMELINE_STRIDE (the Redis adapter's tenure base, by timeline). */
export const TIMELINE_STRIDE = 2 ** 32;
/** A WAL position as a revision: timeline * 2^40 + position (a run writes far less than 1 TiB of WAL). */
export const REVISION_TIMELINE_STRIDE = 2 ** 40;

/** The revision of WAL position `lsn` on timeline `timeline`. */
export function revisionOf(timeline: number, lsn: number): number {
  return timeline * REVISION_TIMELINE_STRIDE + lsn;
}

/** Parses a GET /patroni body of node `node`. @throws Error on a body that is not an object. */
export function parsePatroniView(node: string, body: unknown, cluster: TargetCluster): PatroniView {
  if (typeof body !== 'object' || body === null) throw new Error(`unexpected /patroni body ${JSON.stringify(body)}`);
  const b = body as Record<string, unknown>;
  const r = String(b.role ?? '');
  const role = r === 'master' || r === 'primary' ? 'primary' : r === 'replica' || r === 'standby_leader' ? 'replica' : 'other';
  const xlog = (typeof b.xlog === 'object' && b.xlog !== null ? b.xlog : {}) as Record<string, unknown>;
  const lsn = Number(role === 'primary' ? xlog.location : xlog.replayed_location) || 0;
  const repl = Array.isArray(b.replication) ? (b.replication as Array<Record<string, unknown>>) : [];
  const nodeOf = (addr: unknown): string | null => cluster.nodes.find((n) => n.host === addr || n.id === addr)?.id ?? null;
  const streaming: string[] = [];
  const sync: string[] = [];
  for (const x of repl) {
    const id = nodeOf(x.application_name) ?? nodeOf(x.client_addr);
    if (!id || x.state !== 'streaming') continue;
    streaming.push(id);
    if (x.sync_state === 'sync' || x.sync_state === 'quorum') sync.push(id);
  }
  return { node, role, state: String(b.state ?? ''), timeline: Number(b.timeline) || 0, lsn, streaming, sync };
}

/** The primary the views name: the one on the highest timeline (a replaced primary stays on its old one), or null. */
export function leaderOf(views: ReadonlyArray<PatroniView | null>): PatroniView | null {
  let best: PatroniView | null = null;
  for (const v of views) if (v && v.role === 'primary' && v.state === 'running' && (!best || v.timeline > best.timeline)) best = v;
  return best;
}

/** Asks every node's Patroni (GET /patroni, at most `timeoutMs` each, in parallel). */
export async function patroniViews(cluster: TargetCluster, timeoutMs = 1_000): Promise<Array<PatroniView | null>> {
  const port = cluster.ports.patroni;
  return Promise.all(
    cluster.nodes.map(async (n) => {
      try {
        const res = await fetch(`http://${n.host}:${port}/patroni`, { signal: AbortSignal.timeout(timeoutMs) });
        return parsePatroniView(n.id, await res.json(), cluster);
      } catch {
        return null;
      }
    }),
  );
}
