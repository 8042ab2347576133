import { connect, StorageType, type JetStreamClient, type JetStreamManager, type NatsConnection, type PubAck } from 'nats';
import type { ClientOptions, ReadOutcome, TargetAck, TargetAttempt, TargetClient, TargetCluster, WriteOutcome, WriteRequest } from '../target.js';
import type { LeaderTenures } from './nats-ownership.js';
import { classifyNatsError, natsRetryable } from './nats-outcome.js';
import { subjectOf } from './nats-readback.js';

/** The stream the target writes: its name, subject prefix and replicas. */
export interface NatsStreamConfig {
  /** Stream name (`[A-Za-z0-9_-]+`). */
  stream: string;
  /** Subject prefix: the stream takes `<prefix>.>`. */
  prefix: string;
  /** Replicas of the stream (1..5; the cluster's size). */
  replicas: number;
  /** The stream's duplicate window, ms (JetStream's default: 120,000). */
  duplicateWindowMs: number;
}

/** Bound on one publish attempt, ms (an operation makes attempts until its own deadline). */
export const NATS_ATTEMPT_MS = 2_000;
/** The pause before another attempt after "no responders" (the stream had no leader), ms. */
export const NATS_NO_RESPONDERS_PAUSE_MS = 250;

/**
 * The connection options of every adapter (nats.js 2.29): all the cluster's client URLs, reconnect
 * for ever 250 ms apart, and a 2 s client PING with 2 outstanding, so that a connection to a
 * paused or cut-off server is given up in about 4-6 s rather than nats.js's default of minutes
 * (2-minute PINGs); only the listed servers (no cluster gossip).
 */
export function natsConnectOptions(cluster: TargetCluster, name: string): Parameters<typeof connect>[0] {
  return {
    servers: cluster.nodes.map((n) => `${n.host}:${cluster.ports.client}`),
    name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    reconnectJitter: 100,
    pingInterval: 2_000,
    maxPingOut: 2,
    timeout: 2_000,
    waitOnFirstConnect: true,
    ignoreClusterUpdates: true,
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** A promise bounded by `ms`: resolves to null when the bound comes first. */
export async function bounded<T>(p: Promise<T>, ms: number): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<null>((r) => {
    timer = setTimeout(() => r(null), Math.max(0, ms));
  });
  try {
    return await Promise.race([p, t]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Creates the stream when missing (file storage, limits retention, no limits, `replicas`
 * replicas, the duplicate window), retrying while JetStream's meta group elects its leader.
 * @throws Error (one line) when it is still not created after `timeoutMs`.
 */
export async function ensureStream(cluster: TargetCluster, cfg: NatsStreamConfig, timeoutMs = 60_000): Promise<void> {
  const nc = await connect({ ...natsConnectOptions(cluster, 'zaris-certify-setup'), waitOnFirstConnect: false, maxReconnectAttempts: 10 });
  try {
    const jsm = await nc.jetstreamManager({ checkAPI: false, timeout: 5_000 });
    const deadline = Date.now() + timeoutMs;
    let last = '';
    for (;;) {
      try {
        await jsm.streams.info(cfg.stream);
        return;
      } catch (e) {
        last = String((e as Error).message).split('\n')[0];
      }
      try {
        await jsm.streams.add({ name: cfg.stream, subjects: [`${cfg.prefix}.>`], num_replicas: cfg.replicas, storage: StorageType.File, duplicate_window: cfg.duplicateWindowMs * 1_000_000 });
        return;
      } catch (e) {
        last = String((e as Error).message).split('\n')[0];
      }
      if (Date.now() > deadline) throw new Error(`NATS: stream ${cfg.stream} not created after ${timeoutMs / 1000} s: ${last}`);
      await sleep(500);
    }
  } finally {
    await nc.close().catch(() => undefined);
  }
}

/**
 * The NATS JetStream client adapter (`nats` 2.29.3, the official Node client), one connection to
 * the cluster (every server listed, reconnecting as an application's would: {@link natsConnectOptions}).
 * - A write (put, create or cas: all one publish; the NATS target writes each key once with
 *   `create`) publishes one message on `<prefix>.<store>.<key>`, payload and `Nats-Msg-Id` = the
 *   value id, and waits for the PubAck, each attempt bounded by {@link NATS_ATTEMPT_MS}. "No
 *   responders" (no stream leader) and a timeout are tried again with the same `Nats-Msg-Id` until
 *   the operation's deadline (the stream drops a repeat inside its duplicate window: a PubAck of
 *   a repeat says `duplicate` and names the first copy's sequence); the outcome is `fail` only when
 *   no attempt may have stored it (classifyNatsError). A delete is refused (`Unsupported`, fail:
 *   nothing is sent): a stream does not delete one key's write.
 * - The ack: `version` = `revision` = the PubAck's stream sequence; `node` and `epoch` = the stream
 *   leader the harness saw last and its tenure ({@link LeaderTenures}: a PubAck names neither).
 * - Reads (`read`, `readMany`): the stream's last message on the key's subject (JetStream's
 *   `STREAM.MSG.GET`, answered by the stream leader); none is absent.
 */
export class NatsClient implements TargetClient {
  private conn: Promise<NatsConnection> | null = null;
  private js: JetStreamClient | null = null;
  private jsm: JetStreamManager | null = null;
  private closed = false;
  private readonly timeoutMs: number;
  private readonly encoder = new TextEncoder();

  constructor(
    private readonly cluster: TargetCluster,
    private readonly tenures: LeaderTenures,
    private readonly cfg: NatsStreamConfig,
    private readonly opts: ClientOptions,
    private readonly name = 'zaris-certify-workload',
  ) {
    this.timeoutMs = opts.operationTimeoutMs ?? 5_000;
  }

  /** The connection (made on first use; nats.js then keeps it, reconnecting). */
  private async connection(): Promise<NatsConnection> {
    this.conn ??= connect(natsConnectOptions(this.cluster, this.name)).then(async (nc) => {
      this.js = nc.jetstream({ checkAPI: false });
      this.jsm = await nc.jetstreamManager({ checkAPI: false });
      return nc;
    });
    return this.conn;
  }

  /** The connection within `ms`, or null (nothing was sent). */
  private async connected(ms: number): Promise<NatsConnection | null> {
    const p = this.connection();
    p.catch(() => undefined);
    return bounded(p, ms);
  }

  async write(req: WriteRequest): Promise<WriteOutcome> {
    if (this.closed) throw new Error('NATS client is closed');
    const attempts: TargetAttempt[] = [];
    if (req.op === 'delete') return { outcome: 'fail', status: 'Unsupported', attempts: [{ n: 1, node: null, status: 'Unsupported', startMs: this.opts.now(), endMs: this.opts.now(), note: 'a stream does not delete one key: nothing was sent' }] };
    const deadline = Date.now() + this.timeoutMs;
    const subject = subjectOf(this.cfg.prefix, req.store, req.key);
    const payload = this.encoder.encode(req.valueId);
    let maybeStored = false;
    let last = { outcome: 'fail' as 'fail' | 'info', status: 'NoConnection' };
    while (Date.now() < deadline) {
      const startMs = this.opts.now();
      const nc = await this.connected(deadline - Date.now());
      if (nc === null || this.js === null) {
        attempts.push({ n: attempts.length + 1, node: null, status: 'NoConnection', startMs, endMs: this.opts.now(), note: 'no server accepted a connection before the deadline: nothing was sent' });
        break;
      }
      let pa: PubAck;
      try {
        pa = await this.js.publish(subject, payload, { msgID: req.valueId, timeout: Math.max(50, Math.min(NATS_ATTEMPT_MS, deadline - Date.now())) });
      } catch (e) {
        const o = classifyNatsError(e);
        attempts.push({ n: attempts.length + 1, node: null, status: o.status, startMs, endMs: this.opts.now() });
        if (o.outcome === 'info') maybeStored = true;
        last = o;
        if (natsRetryable(o) && deadline - Date.now() > 100) {
          if (o.status === 'NoResponders') await sleep(Math.min(NATS_NO_RESPONDERS_PAUSE_MS, deadline - Date.now()));
          continue;
        }
        break;
      }
      let { leader, tenure } = this.tenures.current();
      if (leader === null) {
        await this.learnLeader();
        ({ leader, tenure } = this.tenures.current());
      }
      const endMs = this.opts.now();
      const a: TargetAttempt = { n: attempts.length + 1, node: leader, status: pa.duplicate ? 'OK-Duplicate' : 'OK', epoch: tenure, startMs, endMs };
      if (leader === null) a.note = 'no stream leader known: the ack names none';
      attempts.push(a);
      const ack: TargetAck = { node: leader ?? 'unknown', epoch: tenure, version: pa.seq, revision: pa.seq };
      return { outcome: 'ok', status: 'OK', ack, attempts };
    }
    return { outcome: maybeStored ? 'info' : last.outcome, status: last.status, attempts };
  }

  /** Asks the stream leader's name (STREAM.INFO, answered by the leader) into the tenure book; bounded, never throws. */
  private async learnLeader(): Promise<void> {
    try {
      const info = await bounded(this.jsm!.streams.info(this.cfg.stream), 1_000);
      if (info?.cluster?.leader) this.tenures.observe(info.cluster.leader);
    } catch {
      // unknown: the ack says so
    }
  }

  async read(store: string, key: string): Promise<ReadOutcome> {
    if (this.closed) throw new Error('NATS client is closed');
    const nc = await this.connected(this.timeoutMs);
    if (nc === null || this.jsm === null) return { key, outcome: 'fail', status: 'NoConnection', node: null, value: null };
    try {
      const m = await bounded(this.jsm.streams.getMessage(this.cfg.stream, { last_by_subj: subjectOf(this.cfg.prefix, store, key) }), this.timeoutMs);
      if (m === null) return { key, outcome: 'info', status: 'Timeout', node: null, value: null };
      const id = m.header?.get('Nats-Msg-Id') ?? '';
      return { key, outcome: 'ok', status: 'OK', node: null, value: id === '' ? new TextDecoder().decode(m.data) : id };
    } catch (e) {
      const api = (e as { api_error?: { err_code?: number } }).api_error;
      // 10037: no message found on that subject: the key is absent
      if (api?.err_code === 10037) return { key, outcome: 'ok', status: 'NotFound', node: null, value: null };
      const o = classifyNatsError(e);
      return { key, outcome: o.outcome, status: o.status, node: null, value: null };
    }
  }

  async readMany(store: string, keys: readonly string[]): Promise<ReadOutcome[]> {
    return Promise.all(keys.map((k) => this.read(store, k)));
  }

  /** Closes the connection (pending requests end as indeterminate). */
  async close(): Promise<void> {
    this.closed = true;
    const c = this.conn;
    this.conn = null;
    if (c) {
      const nc = await bounded(c.catch(() => null), 100);
      if (nc) await nc.close().catch(() => undefined);
      else c.then((x) => x.close()).catch(() => undefined);
    }
  }
}
