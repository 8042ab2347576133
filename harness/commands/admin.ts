import { readFileSync } from 'node:fs';
import path from 'node:path';
import { KvStatus } from '../../nodes/kv-status.js';
import type { MetadataDoc } from '../../nodes/node-core.js';
import { setPolicyCommand } from '../../nodes/node-admin.js';
import { ZarisClient, type ClusterView, type Endpoint } from '../../nodes/client/zaris-client.js';
import { UsageError } from '../usage-error.js';
import { membersOf } from '../cluster-watch.js';

/**
 * `zaris-certify admin <verb>` against a running cluster (issue 14, "Operator surface").
 *
 * - `status`: the partition map, runtime map, health and epochs of every store/partition, the
 *   leader, each node's term and state, each store's multi-key retry policy; a table, or JSON.
 * - `handoff <store>/<partition> <node>` and `regenerate <store>/<partition>`: the store's admin
 *   request (nodes/node-admin.ts), sent to the leader.
 * - `set-policy <store> <table>`: a store's multi-key retry policy (seed 004) on a running cluster
 *   ("" withdraws it), committed through the runtime map by the leader.
 * - `join <node>`, `leave <node>`, `rebalance`: membership changes (issue 14), sent to the leader:
 *   a spare (or a node that left) joins and takes copies; a member is drained and removed from the
 *   member set; the partition map is re-planned over the members. The answer says the change was
 *   proposed; `status` shows the member set as it moves (joining, member, leaving).
 *
 * Exit codes: 0 done; 64 bad arguments (also an admin request the node refuses as InvalidInput,
 * e.g. an unknown node or an invalid policy); 3 cluster error (unreachable, no leader, a request
 * refused as Unavailable, e.g. `a membership change is still pending`).
 */

/** The membership verbs (issue 14). */
export const MEMBERSHIP_VERBS = ['join', 'leave', 'rebalance'] as const;

/** Every verb of `admin`. */
export const ADMIN_VERBS = ['status', 'handoff', 'regenerate', 'set-policy', ...MEMBERSHIP_VERBS] as const;

/** A cluster error: one line, exit 3 (the cluster is unreachable or refused the request). */
export class ClusterError extends Error {
  override readonly name = 'ClusterError';
}

/** One node as the status sees it. */
export interface NodeStatus {
  id: string;
  host: string;
  port: number;
  /** It answered the metadata request. */
  answered: boolean;
  inc: string | null;
  term: number | null;
  isLeader: boolean;
  /** The leader it knows. */
  leader: string | null;
  rejoining: boolean | null;
  /** The peers it suspects (the leader only). */
  suspected: string[];
}

/** One store as the status sees it. */
export interface StoreStatus {
  name: string;
  replicationFactor: number;
  ackMode: 'sync' | 'async';
  partitions: number;
  /** The advertised multi-key retry policy text (seed 004; "" none). */
  policy: string;
  /** Its version (0: the cluster's configured property; else set by set-policy). */
  policyVersion: number;
}

/** One partition: its partition-map and merged runtime-map entries, and each node's own committed epoch. */
export interface PartitionStatus {
  store: string;
  partition: number;
  /** Partition map: assigned nodes, preferred primary first. */
  replicas: string[];
  mapVersion: number;
  active: string | null;
  /** The highest committed epoch any node reported. */
  epoch: number;
  health: string;
  inSync: string[];
  handoffTo: string | null;
  /** Node -> the epoch of its own committed entry (nodes that answered). */
  epochs: Record<string, number>;
  /** Revision of the active's copy, and the highest revision every in-sync replica applied (null: not known). */
  revision: number | null;
  replicatedRevision: number | null;
}

/**
 * The member set (issue 14: the leader's metadata `members`; nodes not listed are outside it), or
 * null when no node reported one (a store from before membership changes).
 */
export interface MembersStatus {
  version: number;
  members: Array<{ id: string; state: 'joining' | 'member' | 'leaving' }>;
  /** Nodes of the cluster the set does not list (spares, nodes that left). */
  outside: string[];
}

/** The document `admin status --json` prints. */
export interface ClusterStatus {
  cluster: string;
  leader: string | null;
  /** The member set the leader reports (else the first answering node that reports one). */
  members: MembersStatus | null;
  nodes: NodeStatus[];
  stores: StoreStatus[];
  partitions: PartitionStatus[];
}

/**
 * Parses `host:port,host:port,...` (`--seeds`).
 * @throws UsageError (one line) on an empty list or a malformed entry.
 */
export function parseSeeds(text: string): Endpoint[] {
  const out: Endpoint[] = [];
  for (const part of text.split(',')) {
    const m = /^\s*([A-Za-z0-9_.-]+|\[[0-9a-fA-F:]+\]):(\d{1,5})\s*$/.exec(part);
    const port = m ? Number(m[2]) : NaN;
    if (!m || port < 1 || port > 65_535) throw new UsageError(`--seeds: "${part}" is not host:port (e.g. 127.0.0.1:7101)`);
    out.push({ host: m[1].replace(/^\[|\]$/g, ''), port });
  }
  return out;
}

/**
 * The client endpoints of a run's cluster (`<runDir>/cluster.json`, written by certify), for
 * `admin` without `--seeds`.
 * @throws UsageError (one line) when the file is missing or names no node.
 */
export function seedsOfRun(runDir: string): Endpoint[] {
  const file = path.join(runDir, 'cluster.json');
  let cfg: { nodes?: Array<{ host?: unknown; clientPort?: unknown }> };
  try {
    cfg = JSON.parse(readFileSync(file, 'utf8')) as typeof cfg;
  } catch {
    throw new UsageError(`no --seeds and no readable ${file}: give --seeds host:port,... or --run <a running run's directory>`);
  }
  const seeds = (cfg.nodes ?? []).filter((n) => typeof n.host === 'string' && typeof n.clientPort === 'number').map((n) => ({ host: n.host as string, port: n.clientPort as number }));
  if (seeds.length === 0) throw new UsageError(`${file} names no node`);
  return seeds;
}

/** Builds the status document from a merged view and the documents it was merged from. */
export function buildStatus(view: ClusterView, docs: readonly MetadataDoc[]): ClusterStatus {
  const byNode = new Map(docs.map((d) => [d.node, d]));
  const leaderDoc = docs.find((d) => d.isLeader) ?? docs[0];
  const nodes: NodeStatus[] = [...view.nodes].map(([id, ep]) => {
    const d = byNode.get(id);
    return {
      id,
      host: ep.host,
      port: ep.port,
      answered: d !== undefined,
      inc: d?.inc ?? null,
      term: d?.term ?? null,
      isLeader: d?.isLeader ?? false,
      leader: d ? d.leader : null,
      rejoining: d ? (d.rejoining ?? null) : null,
      suspected: d?.suspected ?? [],
    };
  });
  const stores: StoreStatus[] = (leaderDoc?.stores ?? []).map((s) => ({
    name: s.name,
    replicationFactor: s.replicationFactor,
    ackMode: s.ackMode,
    partitions: s.partitions,
    policy: s.multiKeyLongTailRetryThresholdsMs ?? leaderDoc!.multiKeyLongTailRetryThresholdsMs ?? '',
    policyVersion: s.policyVersion ?? 0,
  }));
  const partitions: PartitionStatus[] = [];
  for (const [, r] of [...view.runtime].sort(([a], [b]) => comparePkeys(a, b))) {
    const epochs: Record<string, number> = {};
    let mapVersion = 0;
    let revision: number | null = null;
    for (const d of docs) {
      const mine = d.runtimeMap.find((x) => x.store === r.store && x.partition === r.partition);
      if (mine) {
        epochs[d.node] = mine.epoch;
        if (mine.active === d.node && mine.epoch === r.epoch) revision = mine.revision;
      }
      const pm = d.partitionMap.partitions.find((p) => p.store === r.store && p.partition === r.partition);
      if (pm) mapVersion = Math.max(mapVersion, pm.mapVersion);
    }
    partitions.push({
      store: r.store,
      partition: r.partition,
      replicas: r.replicas,
      mapVersion,
      active: r.active,
      epoch: r.epoch,
      health: r.health,
      inSync: r.inSync,
      handoffTo: r.handoffTo,
      epochs,
      revision,
      replicatedRevision: r.replicatedRevision,
    });
  }
  const withMembers = [leaderDoc, ...docs].find((d) => d !== undefined && membersOf(d).members !== undefined);
  const m = withMembers ? membersOf(withMembers).members! : null;
  const members: MembersStatus | null = m ? { version: m.version, members: m.members, outside: nodes.map((n) => n.id).filter((id) => !m.members.some((x) => x.id === id)) } : null;
  return { cluster: view.cluster, leader: view.leader, members, nodes, stores, partitions };
}

function comparePkeys(a: string, b: string): number {
  const [sa, pa] = a.split('/');
  const [sb, pb] = b.split('/');
  return sa === sb ? Number(pa) - Number(pb) : sa < sb ? -1 : 1;
}

/** Lays rows out in columns two spaces apart (every cell padded to its column's widest). */
export function columns(rows: readonly (readonly string[])[]): string {
  const width = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(width[i]))).join('  ')).join('\n');
}

/** The human-readable status: a header, the nodes, the stores, then one row per partition. */
export function formatStatus(s: ClusterStatus): string {
  const ids = s.nodes.map((n) => n.id);
  const out: string[] = [`cluster ${s.cluster}, leader ${s.leader ?? 'none'}`];
  out.push(
    s.members === null
      ? 'members: not reported (a store without membership changes)'
      : `members (version ${s.members.version}): ${s.members.members.map((m) => (m.state === 'member' ? m.id : `${m.id} (${m.state})`)).join(', ') || 'none'}; outside: ${s.members.outside.join(', ') || 'none'}`,
  );
  out.push('');
  out.push(
    columns([
      ['node', 'address', 'answered', 'term', 'role', 'rejoining', 'suspects'],
      ...s.nodes.map((n) => [n.id, `${n.host}:${n.port}`, n.answered ? 'yes' : 'NO', n.term === null ? '-' : String(n.term), n.isLeader ? 'leader' : n.answered ? 'follower' : '-', n.rejoining === null ? '-' : n.rejoining ? 'yes' : 'no', n.suspected.join(',') || '-']),
    ]),
  );
  out.push('');
  out.push(
    columns([
      ['store', 'rf', 'ack', 'partitions', 'multi-key retry policy (seed 004)'],
      ...s.stores.map((st) => [st.name, String(st.replicationFactor), st.ackMode, String(st.partitions), `${st.policy === '' ? '(none)' : st.policy} ${st.policyVersion === 0 ? '[configured]' : `[set-policy v${st.policyVersion}]`}`]),
    ]),
  );
  out.push('');
  out.push(
    columns([
      ['partition', 'replicas (map)', 'map v', 'active', 'epoch', 'health', 'in sync', 'handoff to', `epochs ${ids.join('/')}`, 'revision', 'replicated'],
      ...s.partitions.map((p) => [
        `${p.store}/${p.partition}`,
        p.replicas.join(','),
        String(p.mapVersion),
        p.active ?? '-',
        String(p.epoch),
        p.health,
        p.inSync.join(',') || '-',
        p.handoffTo ?? '-',
        ids.map((id) => (p.epochs[id] === undefined ? '-' : String(p.epochs[id]))).join('/'),
        p.revision === null ? '-' : String(p.revision),
        p.replicatedRevision === null ? '-' : String(p.replicatedRevision),
      ]),
    ]),
  );
  return out.join('\n');
}

/** Options of {@link runAdmin}. */
export interface AdminRunOptions {
  seeds: Endpoint[];
  json: boolean;
  /** Per-request timeout, ms. */
  timeoutMs: number;
  print: (text: string) => void;
}

/**
 * Runs one admin verb (see the module doc).
 * @throws UsageError (bad arguments; InvalidInput answers), ClusterError (unreachable cluster,
 *   refusals).
 */
export async function runAdmin(verb: string, args: readonly string[], opts: AdminRunOptions): Promise<void> {
  const arity = (n: number, usage: string): void => {
    if (args.length !== n) throw new UsageError(`usage: zaris-certify admin ${usage} --seeds host:port,...`);
  };
  let command: string | null = null;
  switch (verb) {
    case 'status':
      arity(0, 'status [--json]');
      break;
    case 'handoff':
      arity(2, 'handoff <store>/<partition> <node>');
      command = `handoff ${args[0]} to ${args[1]}`;
      break;
    case 'regenerate':
      arity(1, 'regenerate <store>/<partition>');
      command = `regenerate ${args[0]}`;
      break;
    case 'set-policy':
      arity(2, 'set-policy <store> <lower-upper:ms,...,lower-:ms | "">');
      command = setPolicyCommand(args[0], args[1]);
      break;
    case 'join':
    case 'leave':
      arity(1, `${verb} <node>`);
      command = `${verb} ${args[0]}`;
      break;
    case 'rebalance':
      arity(0, 'rebalance');
      command = 'rebalance';
      break;
    default:
      throw new UsageError(`unknown admin verb "${verb}" (known: ${ADMIN_VERBS.join(', ')})`);
  }
  const client = new ZarisClient({ seeds: opts.seeds, attemptTimeoutMs: opts.timeoutMs, metadataTimeoutMs: opts.timeoutMs, retry: { maxAttempts: 1, backoffMillis: 0, timeoutMs: opts.timeoutMs, disableRetries: true }, warn: () => undefined });
  try {
    let fetched;
    try {
      fetched = await client.fetchViewAndDocs();
    } catch (e) {
      throw new ClusterError(`cluster unreachable: ${(e as Error).message}`);
    }
    if (command === null) {
      const status = buildStatus(fetched.view, fetched.docs);
      opts.print(opts.json ? JSON.stringify(status, null, 2) : formatStatus(status));
      return;
    }
    let r;
    try {
      r = await client.admin(command);
    } catch (e) {
      throw new ClusterError(`admin ${verb}: no answer: ${(e as Error).message}`);
    }
    if (opts.json) opts.print(JSON.stringify({ status: KvStatus[r.status] ?? r.status, ...r.answer }));
    if (r.status === KvStatus.Ok) {
      if (!opts.json) opts.print(`${r.answer.message} (${r.answer.epoch !== undefined ? `epoch ${r.answer.epoch}, ` : ''}by leader ${r.answer.node})`);
      return;
    }
    const why = `admin ${verb} refused by ${r.answer.node} (${KvStatus[r.status] ?? r.status}): ${r.answer.message}`;
    throw r.status === KvStatus.InvalidInput ? new UsageError(why) : new ClusterError(why);
  } finally {
    client.close();
  }
}
