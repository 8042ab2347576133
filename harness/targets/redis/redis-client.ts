import { Redis } from 'ioredis';
import { nodeOfHost, type ClientOptions, type ReadOutcome, type TargetAttempt, type TargetClient, type TargetCluster, type WriteOutcome, type WriteRequest } from '../target.js';
import { MASTER_UNCONFIRMED, classifyRedisError } from './redis-outcome.js';
import { newestMaster, RedisNodes } from './redis-nodes.js';
import { parseScriptReply, scriptArgs, valueKey, WRITE_SCRIPT, WRITE_SCRIPT_SHA } from './redis-script.js';

/** The master the adapter's current connection goes to, as Sentinel confirmed it. */
interface Confirmed {
  /** The connection it belongs to (bumped at every 'ready'). */
  generation: number;
  node: string;
  epoch: number;
}

/**
 * The Redis + Sentinel client adapter (issue 15) over ioredis 5.11 in Sentinel mode, as an
 * application would use it: ioredis asks a Sentinel for the master (the next Sentinel in its list
 * at each reconnect), connects, checks the role, and stays on that connection until it breaks. On
 * top of it the adapter
 * - sends nothing while offline (offline queue off) and never re-sends a command after a
 *   reconnect (autoResendUnfulfilledCommands off): every attempt is the one recorded;
 * - confirms each new connection's master with every Sentinel that answers (`SENTINEL MASTER`):
 *   the master's node and config epoch, which the acks name and the write script's versions are
 *   based on. A connection to a master that a settled Sentinel view at a higher epoch has replaced
 *   is dropped (ioredis then asks the next Sentinel); until a connection is confirmed, writes and
 *   reads are not sent (fail, MasterUnconfirmed). A confirmed connection is NOT re-checked while
 *   it lasts: a master cut off from its Sentinels keeps the clients connected to it, as in the
 *   public Redis analyses (the clients on the old master's side).
 * - reconnects on a READONLY reply (the ioredis README's failover advice).
 * Writes run the script of redis-script.ts (EVALSHA, EVAL once when the master lacks it), reads
 * are GET / MGET on the same connection. Outcomes: redis-outcome.ts.
 */
export class RedisClient implements TargetClient {
  private readonly redis: Redis;
  private readonly nodes: RedisNodes;
  private generation = 0;
  private confirmed: Confirmed | null = null;
  private waiters: Array<() => void> = [];
  private closed = false;
  private readonly timeoutMs: number;

  constructor(
    private readonly cluster: TargetCluster,
    masterName: string,
    store: string,
    private readonly opts: ClientOptions,
  ) {
    this.timeoutMs = opts.operationTimeoutMs ?? 5_000;
    this.nodes = new RedisNodes(cluster, masterName, store);
    this.redis = new Redis({
      sentinels: cluster.nodes.map((n) => ({ host: n.host, port: cluster.ports.sentinel })),
      name: masterName,
      role: 'master',
      enableOfflineQueue: false,
      autoResendUnfulfilledCommands: false,
      commandTimeout: this.timeoutMs,
      connectTimeout: 1_000,
      sentinelCommandTimeout: 500,
      retryStrategy: () => 100,
      sentinelRetryStrategy: () => 200,
      reconnectOnError: (err) => (err.message.startsWith('READONLY') ? 1 : false),
      updateSentinels: false,
    });
    this.redis.on('error', () => undefined);
    this.redis.on('ready', () => {
      this.generation++;
      this.confirmed = null;
      void this.confirm(this.generation);
    });
    this.redis.on('close', () => {
      this.generation++;
      this.confirmed = null;
    });
  }

  /** Confirms the master of connection `gen` with the Sentinels (retries while the connection lasts). */
  private async confirm(gen: number): Promise<void> {
    while (!this.closed && gen === this.generation) {
      const host = this.redis.stream?.remoteAddress;
      const node = host ? nodeOfHost(this.cluster, host) : null;
      const newest = newestMaster(await this.nodes.sentinelViews());
      if (gen !== this.generation) return;
      if (newest && node && newest.master === node) {
        // load the write script on this master, so EVALSHA finds it
        const loaded = await this.redis.script('LOAD', WRITE_SCRIPT).then(
          () => true,
          () => false,
        );
        if (gen !== this.generation) return;
        if (!loaded) {
          await new Promise((r) => setTimeout(r, 100));
          continue;
        }
        this.confirmed = { generation: gen, node, epoch: newest.epoch };
        for (const w of this.waiters.splice(0)) w();
        return;
      }
      if (newest && node && newest.master !== node) {
        // a master Sentinel no longer names: leave it (ioredis asks the next Sentinel)
        this.redis.disconnect(true);
        return;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** The confirmed master of the current connection, waiting at most `waitMs` for one. */
  private async current(waitMs: number): Promise<Confirmed | null> {
    if (this.confirmed?.generation === this.generation) return this.confirmed;
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, waitMs);
      this.waiters.push(() => {
        clearTimeout(t);
        resolve();
      });
    });
    return this.confirmed?.generation === this.generation ? this.confirmed : null;
  }

  async write(req: WriteRequest): Promise<WriteOutcome> {
    if (this.closed) throw new Error('redis client is closed');
    const startMs = this.opts.now();
    const m = await this.current(Math.min(1_000, this.timeoutMs));
    if (!m) {
      const attempts: TargetAttempt[] = [{ n: 1, node: null, status: MASTER_UNCONFIRMED, startMs, endMs: this.opts.now() }];
      return { outcome: 'fail', status: MASTER_UNCONFIRMED, attempts };
    }
    const { keys, argv } = scriptArgs(req.store, req.key, req.op, req.valueId, req.ifMatchVersion, m.epoch);
    const sentAt = this.opts.now();
    let reply: unknown;
    try {
      // the script's tenure base is this connection's epoch: send only on that connection (the
      // check and the send happen in one turn of the event loop, so the connection cannot change)
      const onConnection = <T>(send: () => Promise<T>): Promise<T> => (this.generation === m.generation ? send() : Promise.reject(new Error(MASTER_UNCONFIRMED)));
      reply = await onConnection(() => this.redis.evalsha(WRITE_SCRIPT_SHA, keys.length, ...keys, ...argv)).catch((e: Error) => {
        // NOSCRIPT: nothing ran (the script cache was flushed); once more with the script's text
        if (e.name === 'ReplyError' && e.message.startsWith('NOSCRIPT')) return onConnection(() => this.redis.eval(WRITE_SCRIPT, keys.length, ...keys, ...argv));
        throw e;
      });
    } catch (e) {
      const o = classifyRedisError(e);
      return { outcome: o.outcome, status: o.status, attempts: [{ n: 1, node: m.node, status: o.status, epoch: m.epoch, startMs: sentAt, endMs: this.opts.now() }] };
    }
    const endMs = this.opts.now();
    let r;
    try {
      r = parseScriptReply(reply);
    } catch {
      return { outcome: 'info', status: 'BadReply', attempts: [{ n: 1, node: m.node, status: 'BadReply', epoch: m.epoch, startMs: sentAt, endMs }] };
    }
    const attempts: TargetAttempt[] = [{ n: 1, node: m.node, status: r.status, epoch: m.epoch, startMs: sentAt, endMs }];
    if (r.status !== 'OK') return { outcome: 'fail', status: r.status, attempts };
    return { outcome: 'ok', status: 'OK', ack: { node: m.node, epoch: m.epoch, version: r.version, revision: r.revision }, attempts };
  }

  async read(store: string, key: string): Promise<ReadOutcome> {
    return (await this.readMany(store, [key]))[0];
  }

  async readMany(store: string, keys: readonly string[]): Promise<ReadOutcome[]> {
    if (this.closed) throw new Error('redis client is closed');
    const m = await this.current(Math.min(1_000, this.timeoutMs));
    if (!m) return keys.map((key) => ({ key, outcome: 'fail', status: MASTER_UNCONFIRMED, node: null, value: null }));
    try {
      const values = keys.length === 0 ? [] : await this.redis.mget(...keys.map((k) => valueKey(store, k)));
      return keys.map((key, i) => ({ key, outcome: 'ok', status: values[i] === null ? 'NotFound' : 'OK', node: m.node, value: values[i] }));
    } catch (e) {
      const o = classifyRedisError(e);
      return keys.map((key) => ({ key, outcome: o.outcome, status: o.status, node: m.node, value: null }));
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const w of this.waiters.splice(0)) w();
    this.redis.disconnect();
    this.nodes.close();
  }
}
