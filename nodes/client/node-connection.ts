import net from 'node:net';
import { performance } from 'node:perf_hooks';
import {
  decodeResponse,
  encodeRequest,
  FLAG_INDETERMINATE,
  type ClientRequest,
  type ClientResponse,
} from '../client-protocol.js';
import { FrameReader, FrameWriter } from '../framing.js';
import { TransportError } from './transport-error.js';

/** A request without its id: the connection assigns ids. */
export type OutgoingRequest = ClientRequest extends infer R ? (R extends { reqId: number } ? Omit<R, 'reqId'> : never) : never;

interface Pending {
  resolve(res: ClientResponse): void;
  reject(e: Error): void;
  deadline: number;
  /** The frame left our buffer for the socket: the node may have received it. */
  written: boolean;
}

/** Options of a {@link NodeConnection}. */
export interface NodeConnectionOptions {
  host: string;
  port: number;
  /** TCP connect timeout, ms (default 1,000). */
  connectTimeoutMs?: number;
  /** Largest response frame accepted, bytes (default 64 MiB). */
  maxFrameBytes?: number;
  /** Local address to bind (optional). */
  localAddress?: string;
}

/**
 * One pipelined TCP connection to a node's client port (DESIGN.md §2 "Protocol": request ids).
 * Requests issued in one event-loop turn go out in one write. Failures surface as typed
 * {@link TransportError}s (seed 000): ConnectRefused (nothing sent), NodeUnavailable (connect
 * timed out: nothing sent), Timeout (no answer in time: may have been applied), Transport (the
 * connection died with the request written, or the node answered that the write's fate is unknown).
 */
export class NodeConnection {
  private socket: net.Socket | null = null;
  private connecting: Promise<net.Socket> | null = null;
  private readonly pending = new Map<number, Pending>();
  private readonly out = new FrameWriter(64 * 1024);
  private unsent: number[] = [];
  private nextId = 1;
  private flushScheduled = false;
  private sweeper: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(private readonly opts: NodeConnectionOptions) {}

  /** Requests in flight. */
  get inFlight(): number {
    return this.pending.size;
  }

  /**
   * Sends one request and resolves with the node's response.
   * @param timeoutMs per-attempt time to wait for the response.
   * @throws TransportError as described on the class.
   */
  request(req: OutgoingRequest, timeoutMs: number): Promise<ClientResponse> {
    if (this.closed) return Promise.reject(new TransportError('NodeUnavailable', { message: 'connection closed' }));
    const reqId = this.nextId;
    this.nextId = this.nextId >= 0xfffffff0 ? 1 : this.nextId + 1;
    return new Promise<ClientResponse>((resolve, reject) => {
      this.pending.set(reqId, { resolve, reject, deadline: performance.now() + timeoutMs, written: false });
      encodeRequest(this.out, { ...req, reqId } as ClientRequest);
      this.unsent.push(reqId);
      this.scheduleFlush();
    });
  }

  /** Closes the connection; requests in flight fail with Transport (may have been applied). */
  close(): void {
    this.closed = true;
    this.failAll('connection closed by the client', true);
    this.socket?.destroy();
    this.socket = null;
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    if (this.out.length === 0) return;
    let socket: net.Socket;
    try {
      socket = this.socket ?? (await this.connect());
    } catch (e) {
      const ids = this.unsent;
      this.unsent = [];
      this.out.take();
      for (const id of ids) {
        const p = this.pending.get(id);
        if (!p) continue;
        this.pending.delete(id);
        p.reject(e as Error);
      }
      return;
    }
    if (this.out.length === 0) return;
    const ids = this.unsent;
    this.unsent = [];
    for (const id of ids) {
      const p = this.pending.get(id);
      if (p) p.written = true;
    }
    socket.write(this.out.take());
  }

  private connect(): Promise<net.Socket> {
    if (this.connecting) return this.connecting;
    this.connecting = new Promise<net.Socket>((resolve, reject) => {
      const s = net.connect({ host: this.opts.host, port: this.opts.port, localAddress: this.opts.localAddress });
      s.setNoDelay(true);
      const timer = setTimeout(() => {
        s.destroy();
        reject(new TransportError('NodeUnavailable', { message: `connect to ${this.opts.host}:${this.opts.port} timed out` }));
      }, this.opts.connectTimeoutMs ?? 1_000);
      s.once('connect', () => {
        clearTimeout(timer);
        this.attach(s);
        resolve(s);
      });
      s.once('error', (e: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        if (e.code === 'ECONNREFUSED') reject(new TransportError('ConnectRefused', { message: `connect to ${this.opts.host}:${this.opts.port} refused`, cause: e }));
        else reject(new TransportError('NodeUnavailable', { message: `connect to ${this.opts.host}:${this.opts.port}: ${e.code ?? e.message}`, cause: e }));
      });
    }).finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private attach(s: net.Socket): void {
    this.socket = s;
    const reader = new FrameReader(this.opts.maxFrameBytes ?? 64 * 1024 * 1024);
    s.on('data', (chunk) => {
      let frames: Buffer[];
      try {
        frames = reader.push(chunk);
      } catch (e) {
        s.destroy(e as Error);
        return;
      }
      for (const f of frames) {
        let res: ClientResponse;
        try {
          res = decodeResponse(f);
        } catch (e) {
          s.destroy(e as Error);
          return;
        }
        const p = this.pending.get(res.reqId);
        if (!p) continue;
        this.pending.delete(res.reqId);
        if (res.flags & FLAG_INDETERMINATE) {
          p.reject(new TransportError('Transport', { mayHaveBeenSent: true, message: 'the owner could not settle the write (lost ownership or replicas): outcome unknown' }));
        } else if (res.op === 0) {
          p.reject(new TransportError('Transport', { mayHaveBeenSent: true, message: `node rejected the frame: ${(res as { message: string }).message}` }));
        } else p.resolve(res);
      }
    });
    const gone = (why: string): void => {
      // a socket already reset (sweepTimeouts) failed its requests then; those written since
      // belong to its successor
      if (this.socket !== s) return;
      this.socket = null;
      this.failAll(why, true);
    };
    s.on('error', (e: NodeJS.ErrnoException) => gone(e.code ?? e.message));
    s.on('close', () => gone('connection closed'));
    if (!this.sweeper) {
      this.sweeper = setInterval(() => this.sweepTimeouts(), 25);
      this.sweeper.unref();
    }
  }

  private failAll(why: string, onlyWritten: boolean): void {
    for (const [id, p] of this.pending) {
      if (onlyWritten && !p.written) continue;
      this.pending.delete(id);
      p.reject(new TransportError('Transport', { mayHaveBeenSent: true, message: `${this.opts.host}:${this.opts.port}: ${why}` }));
    }
  }

  /**
   * Fails the requests past their deadline. A written request that timed out resets the
   * connection (RST, the kernel's send queue discarded): its bytes may still sit in that queue
   * (a link that drops packets: TCP retransmits with exponential backoff and delivers them once
   * the link is back, up to a backoff period later), and a request the caller has given up on
   * must never reach the node after the caller moved on to its next write (DESIGN.md §5: an
   * acknowledged write ordered after the final value is lost, even when that value is an `info`
   * write; certify seed 6060: ten sync writes acknowledged after such a timeout were overwritten
   * 12.6 s after their predecessors' send, when the cut's retransmission reached the new active).
   * The other written requests on that connection fail as Transport (may have been applied).
   */
  private sweepTimeouts(): void {
    const now = performance.now();
    let timedOutWritten = false;
    for (const [id, p] of this.pending) {
      if (now < p.deadline) continue;
      this.pending.delete(id);
      if (p.written) timedOutWritten = true;
      p.reject(new TransportError(p.written ? 'Timeout' : 'NodeUnavailable', { mayHaveBeenSent: p.written, message: `no response from ${this.opts.host}:${this.opts.port} in time` }));
    }
    if (timedOutWritten && this.socket) {
      const s = this.socket;
      this.socket = null;
      s.resetAndDestroy();
      this.failAll('connection reset by the client after a request timed out', true);
    }
  }
}
