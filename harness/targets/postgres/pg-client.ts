import pg from 'pg';
import type { ClientOptions, ReadOutcome, TargetAttempt, TargetClient, TargetCluster, WriteOutcome, WriteRequest } from '../target.js';
import { leaderOf, patroniViews, revisionOf, TIMELINE_STRIDE } from './patroni-nodes.js';
import { classifyPgError, NO_CONNECTION, NO_LEADER, NotSentError } from './pg-outcome.js';

/** The table the workload's keys live in (created by the target's prepare). */
export const TABLE = 'zaris_kv';

/** The timeline of the current WAL file (its name's first 8 hex digits): the primary's epoch, read in the write itself. */
const TIMELINE_SQL = `('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int::bigint`;

/**
 * One autocommit statement per write. The key's version is kept in the row: `max(current, tenure
 * base) + 1`, the tenure base being the primary's timeline times 2^32 (a primary promoted on a new
 * timeline gives versions above any an earlier primary could have given, as the Redis adapter
 * does with Sentinel's epoch). The statement returns the version, the timeline and the WAL
 * position it was written at (the revision). On a replica it is refused before anything is
 * written (25006, or pg_walfile_name's "recovery is in progress").
 */
export function writeSql(op: WriteRequest['op']): string {
  const t = `WITH t AS (SELECT ${TIMELINE_SQL} AS tl)`;
  const ret = `RETURNING ver, (SELECT tl FROM t) AS tl, (pg_current_wal_insert_lsn() - '0/0')::bigint AS lsn`;
  const base = `(SELECT tl FROM t) * ${TIMELINE_STRIDE}`;
  switch (op) {
    case 'put':
      return `${t} INSERT INTO ${TABLE} AS kv (k, v, ver, present) SELECT $1, $2, ${base} + 1, true ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v, present = true, ver = GREATEST(kv.ver, ${base}) + 1 ${ret}`;
    case 'create':
      return `${t} INSERT INTO ${TABLE} AS kv (k, v, ver, present) SELECT $1, $2, ${base} + 1, true ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v, present = true, ver = GREATEST(kv.ver, ${base}) + 1 WHERE NOT kv.present ${ret}`;
    case 'cas':
      return `${t} UPDATE ${TABLE} AS kv SET v = $2, ver = GREATEST(kv.ver, ${base}) + 1 WHERE k = $1 AND present AND ver = $3 ${ret}`;
    case 'delete':
      return `${t} UPDATE ${TABLE} AS kv SET v = NULL, present = false, ver = GREATEST(kv.ver, ${base}) + 1 WHERE k = $1 AND present ${ret}`;
  }
}

/**
 * The PostgreSQL + Patroni client adapter over pg 8: one pool per node; writes and reads go to
 * the primary Patroni names (GET /patroni on every node: the running primary on the highest
 * timeline), asked again every 500 ms and after every failed operation. Each write is sent once
 * (no retries); outcomes: pg-outcome.ts.
 */
/**
 * The pools' connection class: a pg.Client that listens to its own 'error' events from the moment
 * it is made. pg emits 'error' on a client whose socket dies or whose server sends a FATAL
 * ("terminating connection due to unexpected postmaster exit") while no query is under way,
 * including while it is still connecting, when the pool has no listener on it yet; unheard, that
 * event is an uncaught exception that ends the run. The operation under way, if any, rejects with
 * the error itself, which is what the outcome rules judge.
 */
export class GuardedPgClient extends pg.Client {
  constructor(config?: string | pg.ClientConfig) {
    super(config);
    this.on('error', () => undefined);
  }
}

export class PgClient implements TargetClient {
  private readonly pools = new Map<string, pg.Pool>();
  private leader: { node: string; timeline: number } | null = null;
  private refreshing: Promise<void> | null = null;
  private readonly timer: NodeJS.Timeout;
  private closed = false;
  private readonly timeoutMs: number;

  constructor(
    private readonly cluster: TargetCluster,
    private readonly store: string,
    private readonly opts: ClientOptions,
  ) {
    this.timeoutMs = opts.operationTimeoutMs ?? 5_000;
    for (const n of cluster.nodes) {
      const pool = new pg.Pool({
        host: n.host,
        port: cluster.ports.postgres,
        user: 'postgres',
        database: 'postgres',
        max: 24,
        Client: GuardedPgClient,
        connectionTimeoutMillis: 1_000,
        idleTimeoutMillis: 10_000,
        query_timeout: this.timeoutMs,
      });
      pool.on('error', () => undefined);
      this.pools.set(n.id, pool);
    }
    this.timer = setInterval(() => void this.refresh().catch(() => undefined), 500);
    this.timer.unref();
    void this.refresh().catch(() => undefined);
  }

  /** Asks Patroni for the leader (one refresh at a time). */
  refresh(): Promise<void> {
    this.refreshing ??= patroniViews(this.cluster, 1_000)
      .then((views) => {
        const l = leaderOf(views);
        this.leader = l ? { node: l.node, timeline: l.timeline } : null;
      })
      .finally(() => {
        this.refreshing = null;
      });
    return this.refreshing;
  }

  /** The leader, waiting for one refresh when none is known. */
  private async current(): Promise<{ node: string; timeline: number } | null> {
    if (!this.leader) await this.refresh();
    return this.leader;
  }

  private async connect(node: string): Promise<pg.PoolClient> {
    try {
      return await this.pools.get(node)!.connect();
    } catch (e) {
      throw new NotSentError(NO_CONNECTION, e);
    }
  }

  async write(req: WriteRequest): Promise<WriteOutcome> {
    if (this.closed) throw new Error('pg client is closed');
    if (req.store !== this.store) throw new RangeError(`postgres-patroni has no store ${req.store}`);
    const startMs = this.opts.now();
    const l = await this.current();
    if (!l) return { outcome: 'fail', status: NO_LEADER, attempts: [{ n: 1, node: null, status: NO_LEADER, startMs, endMs: this.opts.now() }] };
    let sentAt = startMs;
    let conn: pg.PoolClient | null = null;
    try {
      conn = await this.connect(l.node);
      sentAt = this.opts.now();
      const params: unknown[] = req.op === 'cas' ? [req.key, req.valueId, req.ifMatchVersion ?? -1] : req.op === 'delete' ? [req.key] : [req.key, req.valueId];
      const r = await conn.query<{ ver: string; tl: string; lsn: string }>(writeSql(req.op), params);
      conn.release();
      const endMs = this.opts.now();
      if (r.rows.length === 0) {
        const status = req.op === 'delete' ? 'NotFound' : 'Conflict';
        return { outcome: 'fail', status, attempts: [{ n: 1, node: l.node, status, epoch: l.timeline, startMs: sentAt, endMs }] };
      }
      const row = r.rows[0];
      const tl = Number(row.tl);
      const ack = { node: l.node, epoch: tl, version: Number(row.ver), revision: revisionOf(tl, Number(row.lsn)) };
      return { outcome: 'ok', status: 'OK', ack, attempts: [{ n: 1, node: l.node, status: 'OK', epoch: tl, startMs: sentAt, endMs }] };
    } catch (e) {
      conn?.release(true);
      void this.refresh().catch(() => undefined);
      const o = classifyPgError(e);
      const attempts: TargetAttempt[] = [{ n: 1, node: l.node, status: o.status, epoch: l.timeline, startMs: sentAt, endMs: this.opts.now() }];
      return { outcome: o.outcome, status: o.status, attempts };
    }
  }

  async read(store: string, key: string): Promise<ReadOutcome> {
    return (await this.readMany(store, [key]))[0];
  }

  async readMany(store: string, keys: readonly string[]): Promise<ReadOutcome[]> {
    if (this.closed) throw new Error('pg client is closed');
    if (store !== this.store) throw new RangeError(`postgres-patroni has no store ${store}`);
    const l = await this.current();
    if (!l) return keys.map((key) => ({ key, outcome: 'fail', status: NO_LEADER, node: null, value: null }));
    let conn: pg.PoolClient | null = null;
    try {
      conn = await this.connect(l.node);
      const r = await conn.query<{ k: string; v: string | null; present: boolean }>(`SELECT k, v, present FROM ${TABLE} WHERE k = ANY($1)`, [keys]);
      conn.release();
      const found = new Map(r.rows.map((x) => [x.k, x.present ? x.v : null]));
      return keys.map((key) => {
        const value = found.get(key) ?? null;
        return { key, outcome: 'ok', status: value === null ? 'NotFound' : 'OK', node: l.node, value };
      });
    } catch (e) {
      conn?.release(true);
      void this.refresh().catch(() => undefined);
      const o = classifyPgError(e);
      return keys.map((key) => ({ key, outcome: o.outcome, status: o.status, node: l.node, value: null }));
    }
  }

  /** The node the adapter currently sends to (tests). */
  get leaderNode(): string | null {
    return this.leader?.node ?? null;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await Promise.all([...this.pools.values()].map((p) => p.end().catch(() => undefined)));
  }
}
