import { connect, type NatsConnection } from 'nats';
import type { FinalReadback, FinalReader, TargetCluster } from '../target.js';
import { bounded, natsConnectOptions, type NatsStreamConfig } from './nats-client.js';
import { nodeStreamView } from './nats-ownership.js';
import { StreamReadback } from './nats-readback.js';

/** Bounds of {@link NatsFinalReader.readAll}, ms. */
export interface NatsFinalReadBounds {
  /** The stream's info (retried while the stream has no leader). Default 60,000. */
  infoMs?: number;
  /** No message for this long ends the read (incomplete). Default 30,000. */
  stallMs?: number;
  /** The whole read at most this long, plus 1 ms per 10 messages of the stream. Default 120,000. */
  totalMs?: number;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * The NATS target's final read (the mapping: nats-readback.ts): after the heal, the stream's state
 * is asked of its leader (STREAM.INFO: messages, first and last sequence), every node's own copy
 * of its monitoring endpoint, then the whole stream is read in order through an ordered consumer
 * (nats.js `js.consumers.get(stream)`: an ephemeral consumer that restarts itself where it left
 * off after a gap or a lost heartbeat) up to that last sequence, each message's sequence, subject
 * and `Nats-Msg-Id` added to a {@link StreamReadback}. The read is complete when it reached the
 * last sequence; when it stalls or runs out of time it is incomplete and keys it did not find stay
 * unknown (the verifier reports them unverified, the run INCONCLUSIVE), never absent.
 */
export class NatsFinalReader implements FinalReader {
  private acc: StreamReadback;
  private complete = false;
  private nc: NatsConnection | null = null;

  constructor(
    private readonly cluster: TargetCluster,
    private readonly cfg: NatsStreamConfig,
    private readonly store: string,
    private readonly bounds: NatsFinalReadBounds = {},
  ) {
    this.acc = new StreamReadback(cfg.prefix, store);
  }

  async readAll(): Promise<FinalReadback> {
    const t0 = Date.now();
    this.acc = new StreamReadback(this.cfg.prefix, this.store);
    this.complete = false;
    const out = (stream: FinalReadback['stream'], replicas: FinalReadback['replicas'], reason?: string): FinalReadback => ({
      complete: this.complete,
      stream,
      read: this.acc.read,
      keys: this.acc.keys,
      duplicates: this.acc.duplicates,
      duplicateSamples: this.acc.duplicateSamples(),
      anomalies: this.acc.anomalies,
      replicas,
      ms: Date.now() - t0,
      ...(reason !== undefined ? { reason } : {}),
    });
    const none = { messages: 0, firstSeq: 0, lastSeq: 0 };
    const connected = await bounded(connect({ ...natsConnectOptions(this.cluster, 'zaris-certify-final-read'), waitOnFirstConnect: false, maxReconnectAttempts: 20 }).catch((e: unknown) => e as Error), 15_000);
    if (connected === null || connected instanceof Error) return out(none, {}, `no connection to the cluster: ${connected instanceof Error ? connected.message.split('\n')[0] : 'timed out after 15 s'}`);
    this.nc = connected;
    const jsm = await connected.jetstreamManager({ checkAPI: false, timeout: 5_000 });
    const js = connected.jetstream({ checkAPI: false, timeout: 5_000 });
    // the stream's state, from its leader
    let info: Awaited<ReturnType<typeof jsm.streams.info>> | null = null;
    let why = '';
    const infoDeadline = Date.now() + (this.bounds.infoMs ?? 60_000);
    while (info === null && Date.now() < infoDeadline) {
      try {
        info = await jsm.streams.info(this.cfg.stream);
      } catch (e) {
        why = String((e as Error).message).split('\n')[0];
        await sleep(500);
      }
    }
    if (info === null) return out(none, {}, `the stream's info did not come: ${why}`);
    const stream = { messages: info.state.messages, firstSeq: info.state.first_seq, lastSeq: info.state.last_seq };
    const views = await Promise.all(this.cluster.nodes.map((n) => nodeStreamView(n.host, this.cluster.ports.monitor, n.id, this.cfg.stream, 2_000)));
    const replicas: FinalReadback['replicas'] = Object.fromEntries(this.cluster.nodes.map((n, i) => {
      const v = views[i];
      return [n.id, v ? { messages: v.messages, firstSeq: v.firstSeq, lastSeq: v.lastSeq } : null];
    }));
    if (stream.messages === 0 || stream.lastSeq === 0) {
      this.complete = true;
      return out(stream, replicas);
    }
    const consumer = await js.consumers.get(this.cfg.stream);
    const msgs = await consumer.consume({ max_messages: 2_000 });
    const stallMs = this.bounds.stallMs ?? 30_000;
    const endAt = Date.now() + (this.bounds.totalMs ?? 120_000) + Math.ceil(stream.messages / 10);
    let lastMsgAt = Date.now();
    let stopped: string | undefined;
    const watchdog = setInterval(() => {
      if (Date.now() - lastMsgAt > stallMs) stopped = `no message for ${stallMs / 1000} s after sequence ${this.acc.lastSeq}`;
      else if (Date.now() > endAt) stopped = `out of time after ${Math.round((Date.now() - t0) / 1000)} s at sequence ${this.acc.lastSeq}`;
      if (stopped) msgs.stop();
    }, 500);
    try {
      for await (const m of msgs) {
        lastMsgAt = Date.now();
        const id = m.headers?.get('Nats-Msg-Id') ?? '';
        this.acc.add(m.seq, m.subject, id === '' ? null : id);
        if (m.seq >= stream.lastSeq) break;
      }
    } catch (e) {
      stopped ??= `the consumer failed: ${String((e as Error).message).split('\n')[0]}`;
    } finally {
      clearInterval(watchdog);
      msgs.stop();
    }
    this.complete = stopped === undefined && this.acc.lastSeq >= stream.lastSeq;
    return out(stream, replicas, this.complete ? undefined : (stopped ?? `stopped at sequence ${this.acc.lastSeq} of ${stream.lastSeq}`));
  }

  valueOf(store: string, key: string): string | null | undefined {
    return this.acc.valueOf(store, key, this.complete);
  }

  async close(): Promise<void> {
    const nc = this.nc;
    this.nc = null;
    if (nc) await nc.close().catch(() => undefined);
  }
}
