import http from 'node:http';
import type { NodeCore } from './node-core.js';
import { EXPOSITION_CONTENT_TYPE, renderExposition, type MetricFamily } from './metrics-text.js';

/**
 * A store node's metrics endpoint (issue 14, "Operator surface"): its counters in the Prometheus
 * text format (metrics-text.ts) at `GET /metrics` on host:metricsPort (config `metricsPort` or
 * `--metrics-port`; 0 or absent = off). Every value is read from the {@link NodeCore} at the
 * moment of the request, so a scrape changes nothing.
 */

/** Metric names (stable: the harness samples them into the ledger by these names). */
export const METRIC = {
  failovers: 'zaris_failovers_total',
  promotions: 'zaris_promotions_total',
  staleEpochRefusals: 'zaris_stale_epoch_refusals_total',
  migratingAnswers: 'zaris_migrating_answers_total',
  migrations: 'zaris_migrations_total',
  invalidPolicy: 'zaris_invalid_multi_key_retry_policy_total',
  replicationLag: 'zaris_replication_lag_ms',
  writesAcked: 'zaris_writes_acked_total',
} as const;

/** The part of a node the metrics read (NodeCore; fakes in tests). */
export type MetricsSource = Pick<NodeCore, 'id' | 'counters' | 'replicationLagMs'>;

/**
 * The node's metric families: every counter of {@link NodeCore.counters} the issue names, plus
 * the replication lag gauge per partition this node is the active of (ms). Every sample carries
 * `node`.
 */
export function nodeMetricFamilies(core: MetricsSource, stores: readonly string[]): MetricFamily[] {
  const c = core.counters;
  const node = core.id;
  return [
    { name: METRIC.failovers, type: 'counter', help: 'Failover decisions of this node as leader: an active owner confirmed down (seed 002).', samples: [{ labels: { node }, value: c.failovers }] },
    { name: METRIC.promotions, type: 'counter', help: 'Committed runtime entries (this node as leader) whose active owner changed: failovers, failbacks, handoffs.', samples: [{ labels: { node }, value: c.promotions }] },
    {
      name: METRIC.staleEpochRefusals,
      type: 'counter',
      help: 'Messages refused for a stale term or epoch: proposals (older term, epoch not above the accepted one), replication batches fenced.',
      samples: [
        { labels: { node, kind: 'proposal' }, value: c.staleEpochRefusals.proposal },
        { labels: { node, kind: 'replication' }, value: c.staleEpochRefusals.replication },
      ],
    },
    { name: METRIC.migratingAnswers, type: 'counter', help: 'Client requests answered Migrating: the old owner during the fenced handoff of a planned move (membership, rebalance).', samples: [{ labels: { node }, value: c.migratingAnswers }] },
    { name: METRIC.migrations, type: 'counter', help: 'Partition moves this node finished as leader: a partition brought to its planned replicas and owner (join, leave, rebalance).', samples: [{ labels: { node }, value: c.migrations }] },
    {
      name: METRIC.invalidPolicy,
      type: 'counter',
      help: 'Multi-key retry policy values (admin set-policy) refused by seed 004 rules, per store.',
      samples: stores.map((store) => ({ labels: { node, store }, value: c.invalidPolicyValues.get(store) ?? 0 })),
    },
    {
      name: METRIC.replicationLag,
      type: 'gauge',
      help: 'Per partition this node is the active owner of: age of its oldest write not yet applied by every in-sync replica, ms (0: none waiting).',
      samples: core.replicationLagMs().map((l) => ({ labels: { node, store: l.store, partition: String(l.partition) }, value: Math.round(l.lagMs) })),
    },
    { name: METRIC.writesAcked, type: 'counter', help: 'Writes acknowledged by this node as active owner.', samples: [{ labels: { node }, value: c.writesAcked }] },
  ];
}

/**
 * Serves `GET /metrics` (anything else: 404) on host:port.
 * @param families called per request.
 * @returns the server, listening. @throws Error when the port cannot be bound.
 */
export async function startMetricsServer(host: string, port: number, families: () => MetricFamily[]): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: GET /metrics\n');
      return;
    }
    let body: string;
    try {
      body = renderExposition(families());
    } catch (e) {
      res.writeHead(500, { 'content-type': 'text/plain' }).end(`${(e as Error).message}\n`);
      return;
    }
    res.writeHead(200, { 'content-type': EXPOSITION_CONTENT_TYPE }).end(body);
  });
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}
