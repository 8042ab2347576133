import { parseExposition, sampleValue, type MetricSample } from '../nodes/metrics-text.js';
import { METRIC } from '../nodes/node-metrics.js';

/**
 * The node counter of partition moves (issue 14: `migrations`, each a copy added and/or dropped
 * and/or ownership moved to reach the planned partition map, finished by the node as leader).
 */
export const MIGRATIONS_METRIC = METRIC.migrations;

/** The ledger event one node's sampled counters are recorded as (reports/node-metrics.ts charts them). */
export const NODE_METRICS_EVENT = 'node-metrics';

/**
 * One node's counters at one moment, as recorded in the ledger (`node-metrics` event detail).
 * Counters count since the node process started (a restart starts them at 0 again).
 */
export interface NodeMetricsSample {
  node: string;
  failovers: number;
  promotions: number;
  /** Proposals and replication batches refused for a stale term or epoch. */
  staleEpochRefusals: number;
  migratingAnswers: number;
  /**
   * Partition moves this node finished as leader ({@link MIGRATIONS_METRIC}); null when the node
   * does not export the counter (a store from before membership changes).
   */
  migrations: number | null;
  /** Summed over stores. */
  invalidPolicyValues: number;
  writesAcked: number;
  /** The largest replication lag over the partitions the node is the active of, ms (0: none). */
  lagMaxMs: number;
  /** Per partition the node is the active of (`store/partition`), ms. */
  lag: Record<string, number>;
}

/** Where a node's metrics endpoint is. */
export interface MetricsEndpoint {
  node: string;
  host: string;
  port: number;
}

const sum = (xs: readonly MetricSample[] | undefined): number => (xs ?? []).reduce((a, s) => a + (Number.isFinite(s.value) ? s.value : 0), 0);

/**
 * Reads one node's exposition text into a sample.
 * @throws ExpositionParseError when the text breaks the format; Error when a counter is missing.
 */
export function sampleFromExposition(node: string, text: string): NodeMetricsSample {
  const f = parseExposition(text);
  const one = (name: string): number => {
    const v = sampleValue(f, name, { node });
    if (v === undefined) throw new Error(`${node}: metric ${name} missing`);
    return v;
  };
  const lag: Record<string, number> = {};
  for (const s of f.get(METRIC.replicationLag)?.samples ?? []) lag[`${s.labels.store}/${s.labels.partition}`] = s.value;
  return {
    node,
    failovers: one(METRIC.failovers),
    promotions: one(METRIC.promotions),
    staleEpochRefusals: sum(f.get(METRIC.staleEpochRefusals)?.samples),
    migratingAnswers: one(METRIC.migratingAnswers),
    migrations: sampleValue(f, MIGRATIONS_METRIC, { node }) ?? null,
    invalidPolicyValues: sum(f.get(METRIC.invalidPolicy)?.samples),
    writesAcked: one(METRIC.writesAcked),
    lagMaxMs: Math.max(0, ...Object.values(lag)),
    lag,
  };
}

/** Options of {@link startMetricsSampler}. */
export interface MetricsSamplerOptions {
  endpoints: readonly MetricsEndpoint[];
  /** The run clock, ms. */
  now: () => number;
  /** Receives one `node-metrics` event per node that answered, per round. */
  ledger: { event(tMs: number, kind: string, detail?: unknown): void };
  /** Period, ms (default 5,000). */
  everyMs?: number;
  /** Per-request timeout, ms (default 1,000). */
  timeoutMs?: number;
  /** GET a URL's body (default: fetch); rejects when the node does not answer 200. */
  get?: (url: string, timeoutMs: number) => Promise<string>;
}

/** A running sampler. */
export interface MetricsSampler {
  /** One round now (every node at once); resolves when recorded. Nodes that do not answer (down, paused, cut) are skipped. */
  sampleNow(): Promise<NodeMetricsSample[]>;
  /** The latest sample of each node that ever answered. */
  latest(): ReadonlyMap<string, NodeMetricsSample>;
  /** Stops the timer and waits for a round in flight. Idempotent. */
  stop(): Promise<void>;
}

async function httpGet(url: string, timeoutMs: number): Promise<string> {
  const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  if (res.status !== 200) throw new Error(`${url}: HTTP ${res.status}`);
  return res.text();
}

/**
 * Samples every node's metrics endpoint into the ledger during a certify run (issue 14): one
 * `node-metrics` event per node per round ({@link NodeMetricsSample}), every `everyMs`. A round
 * never overlaps the previous one; a node that does not answer within the timeout is skipped.
 */
export function startMetricsSampler(o: MetricsSamplerOptions): MetricsSampler {
  const get = o.get ?? httpGet;
  const timeoutMs = o.timeoutMs ?? 1_000;
  const latest = new Map<string, NodeMetricsSample>();
  let inFlight: Promise<NodeMetricsSample[]> | null = null;
  let stopped = false;
  const round = async (): Promise<NodeMetricsSample[]> => {
    const got = await Promise.all(
      o.endpoints.map(async (e) => {
        try {
          return sampleFromExposition(e.node, await get(`http://${e.host.includes(':') ? `[${e.host}]` : e.host}:${e.port}/metrics`, timeoutMs));
        } catch {
          return null;
        }
      }),
    );
    const t = o.now();
    const out = got.filter((s): s is NodeMetricsSample => s !== null);
    for (const s of out) {
      latest.set(s.node, s);
      o.ledger.event(t, NODE_METRICS_EVENT, s);
    }
    return out;
  };
  const sampleNow = (): Promise<NodeMetricsSample[]> => {
    if (!inFlight) inFlight = round().finally(() => (inFlight = null));
    return inFlight;
  };
  const timer = setInterval(() => {
    if (!stopped && !inFlight) void sampleNow();
  }, o.everyMs ?? 5_000);
  timer.unref();
  return {
    sampleNow,
    latest: () => latest,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await inFlight?.catch(() => undefined);
    },
  };
}
