import { randomBytes } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import type { ClusterConfig, NodeConfig } from './cluster-config.js';
import { decodeRequest, encodeResponse, Op, ProtocolError, type ClientResponse } from './client-protocol.js';
import { decodeClusterFrame, decodeLinkAck, encodeBatch, encodeHello, encodeLinkAck, encodeRep } from './cluster-codec.js';
import type { ClusterMsg } from './cluster-messages.js';
import { FrameError, FrameReader, FrameWriter } from './framing.js';
import { KvStatus } from './kv-status.js';
import { LinkAcker, LinkWatch } from './link-watch.js';
import { LoopDelayMonitor } from './loop-delay.js';
import { makeNodeClock } from './node-clock.js';
import { NodeCore, type ProbeResult } from './node-core.js';
import { nodeMetricFamilies, startMetricsServer } from './node-metrics.js';

/** Largest cluster frame (snapshots of a partition travel in one frame): 256 MiB. */
const MAX_CLUSTER_FRAME_BYTES = 256 * 1024 * 1024;
/** Core tick period, ms. */
const TICK_MS = 20;
/** Probe connect timeout, ms. */
const CONNECT_TIMEOUT_MS = 500;
/**
 * Peer-link connect timeout and the delay before redialling, ms: while a partition lasts the shell
 * dials every ~300 ms, so that after the heal a link is up again within that long (a SYN lost to
 * the cut is retransmitted by TCP only 1 s later, past the 1 s async lag bound: node-async-heal.test.ts).
 */
const DIAL_TIMEOUT_MS = 250;
const REDIAL_MS = 50;
/** After a gap in our own ticks, links are not judged for this long, ms. */
const LINK_CHECK_GRACE_MS = 200;
/** A gap this long between two ticks is logged as an event-loop stall, ms. */
const STALL_LOG_MS = 1_000;

interface ClientConn {
  socket: net.Socket;
  out: FrameWriter;
  closed: boolean;
  closing: boolean;
}

interface PeerLink {
  cfg: NodeConfig;
  socket: net.Socket | null;
  connected: boolean;
  connecting: boolean;
  queue: ClusterMsg[];
  out: FrameWriter;
  redialTimer: NodeJS.Timeout | null;
  /** Delivery watchdog of the current connection (null while not connected). */
  watch: LinkWatch | null;
}

/** A connection a peer dialled to us: we read its messages and acknowledge the bytes read. */
interface InboundLink {
  socket: net.Socket;
  from: string | null;
  acker: LinkAcker;
  /** Replaced by a newer connection of the same peer: closing it is not a NodeLeft signal. */
  superseded: boolean;
  /** Accept order (1, 2, …): a connection accepted later was dialled later. */
  seq: number;
}

/** A structured logger: one JSON line per event. */
export type LogFn = (event: string, fields?: Record<string, unknown>) => void;

/**
 * The node process: sockets and timers around a {@link NodeCore} (DESIGN.md §2).
 * Listens on host:clientPort (client protocol) and host:clusterPort (cluster protocol); dials
 * each peer's cluster port from its own address (so a DROP rule on source and destination cuts
 * exactly one direction of one link, DESIGN.md §3).
 */
export class NodeShell {
  readonly core: NodeCore;
  readonly self: NodeConfig;
  private clientServer: net.Server | null = null;
  private clusterServer: net.Server | null = null;
  private metricsServer: http.Server | null = null;
  private readonly peers = new Map<string, PeerLink>();
  private readonly clientConns = new Set<ClientConn>();
  private readonly dirtyClients = new Set<ClientConn>();
  private readonly inbound = new Set<InboundLink>();
  private acceptSeq = 0;
  /** Per peer: the accept order of the newest connection whose hello we read. */
  private readonly helloSeq = new Map<string, number>();
  /** Every node has an IP address of its own: a connection's source address names the peer that dialled it. */
  private readonly ownAddresses: boolean;
  private readonly linkAcks = new FrameWriter(64);
  private flushScheduled = false;
  private ticker: NodeJS.Timeout | null = null;
  private stopped = false;
  /** The node's monotonic clock, ms (node-clock.ts: robust to the harness's clock-rate faults). */
  private readonly clock = makeNodeClock();
  private readonly loop = new LoopDelayMonitor();
  private lastTickAt = -1;
  /** Our own loop was stopped or blocked until then: links are not judged before their acks are read. */
  private resumedAt = -Infinity;

  /**
   * @param config the validated cluster config; @param id this node's id; @param opts.join a
   *   spare that asks to join the member set by itself (`--join`).
   * @throws Error if the id is not in the config.
   */
  constructor(private readonly config: ClusterConfig, id: string, private readonly log: LogFn, inc = randomBytes(4).toString('hex'), opts: { join?: boolean } = {}) {
    const self = config.nodes.find((n) => n.id === id);
    if (!self) throw new Error(`node id "${id}" is not in the cluster config (nodes: ${config.nodes.map((n) => n.id).join(', ')})`);
    this.self = self;
    this.ownAddresses = config.nodes.every((n) => net.isIP(n.host)) && new Set(config.nodes.map((n) => n.host)).size === config.nodes.length;
    this.core = new NodeCore(id, inc, config, {
      now: () => this.clock(),
      random: Math.random,
      send: (to, msg) => this.send(to, msg),
      respond: (token, res) => this.respond(token as ClientConn, res),
      probe: (node) => this.probe(node),
      log: (event, fields) => this.log(event, { node: id, ...fields }),
      loopDelay: () => this.loop.stats(),
    }, opts);
    for (const n of config.nodes) {
      if (n.id === id) continue;
      this.peers.set(n.id, { cfg: n, socket: null, connected: false, connecting: false, queue: [], out: new FrameWriter(16 * 1024), redialTimer: null, watch: null });
    }
  }

  /** Binds both ports and starts dialling peers. @throws Error (EADDRINUSE …) if a port cannot be bound. */
  async start(): Promise<void> {
    this.clusterServer = net.createServer((s) => this.acceptCluster(s));
    this.clientServer = net.createServer((s) => this.acceptClient(s));
    await listen(this.clusterServer, this.self.host, this.self.clusterPort);
    await listen(this.clientServer, this.self.host, this.self.clientPort);
    if (this.self.metricsPort) {
      const stores = this.config.stores.map((st) => st.name);
      this.metricsServer = await startMetricsServer(this.self.host, this.self.metricsPort, () => nodeMetricFamilies(this.core, stores));
    }
    for (const p of this.peers.values()) this.dial(p);
    this.loop.start();
    this.ticker = setInterval(() => {
      const now = this.clock();
      // the loop was blocked (or the process stopped): say so in the node's own log (issue 11)
      if (this.lastTickAt >= 0 && now - this.lastTickAt > STALL_LOG_MS) this.log('event-loop-stall', { node: this.self.id, gapMs: Math.round(now - this.lastTickAt) });
      if (this.lastTickAt >= 0 && now - this.lastTickAt > TICK_MS * 5) this.resumedAt = now;
      this.lastTickAt = now;
      this.core.tick();
      this.checkLinks();
      this.scheduleFlush();
    }, TICK_MS);
    this.log('started', { node: this.self.id, inc: this.core.inc, host: this.self.host, clientPort: this.self.clientPort, clusterPort: this.self.clusterPort, metricsPort: this.self.metricsPort ?? 0, ...(this.config.selfTestBug ? { selfTestBug: this.config.selfTestBug } : {}) });
    if (this.config.selfTestBug) {
      this.log('SELF-TEST-BUG', { node: this.self.id, bug: this.config.selfTestBug, warning: `this node runs with the deliberate bug "${this.config.selfTestBug}" (harness self-test): it WILL lose or misreport acknowledged writes` });
    }
  }

  /** Closes every socket and server. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.ticker) clearInterval(this.ticker);
    this.loop.stop();
    for (const p of this.peers.values()) {
      if (p.redialTimer) clearTimeout(p.redialTimer);
      p.socket?.destroy();
    }
    for (const l of this.inbound) l.socket.destroy();
    for (const c of this.clientConns) c.socket.destroy();
    this.metricsServer?.closeAllConnections();
    await Promise.all([closeServer(this.clientServer), closeServer(this.clusterServer), closeServer(this.metricsServer)]);
  }

  // ───────────── client port ─────────────

  private acceptClient(socket: net.Socket): void {
    socket.setNoDelay(true);
    const conn: ClientConn = { socket, out: new FrameWriter(16 * 1024), closed: false, closing: false };
    this.clientConns.add(conn);
    const reader = new FrameReader(this.config.maxFrameBytes);
    socket.on('data', (chunk) => {
      if (conn.closing) return;
      let frames: Buffer[];
      try {
        frames = reader.push(chunk);
      } catch (e) {
        this.rejectClient(conn, 0, (e as FrameError).message);
        return;
      }
      for (const f of frames) {
        let req;
        try {
          req = decodeRequest(f);
        } catch (e) {
          const pe = e as ProtocolError;
          this.rejectClient(conn, pe.reqId ?? 0, pe.message);
          return;
        }
        this.core.onClient(req, conn);
      }
      this.scheduleFlush();
    });
    const gone = (): void => {
      conn.closed = true;
      this.clientConns.delete(conn);
      this.dirtyClients.delete(conn);
    };
    socket.on('close', gone);
    socket.on('error', gone);
  }

  /** A malformed or oversized frame: answer InvalidInput, then close this connection only. */
  private rejectClient(conn: ClientConn, reqId: number, message: string): void {
    this.log('client-protocol-error', { remote: `${conn.socket.remoteAddress}:${conn.socket.remotePort}`, message });
    encodeResponse(conn.out, { op: Op.Error, reqId, status: KvStatus.InvalidInput, flags: 0, message });
    conn.closing = true;
    const buf = conn.out.take();
    conn.socket.end(buf);
    setTimeout(() => conn.socket.destroy(), 1000).unref();
  }

  private respond(conn: ClientConn, res: ClientResponse): void {
    if (conn.closed || conn.closing) return;
    encodeResponse(conn.out, res);
    this.dirtyClients.add(conn);
    this.scheduleFlush();
  }

  // ───────────── cluster port ─────────────

  private acceptCluster(socket: net.Socket): void {
    socket.setNoDelay(true);
    const link: InboundLink = { socket, from: null, acker: new LinkAcker(), superseded: false, seq: ++this.acceptSeq };
    this.inbound.add(link);
    const reader = new FrameReader(MAX_CLUSTER_FRAME_BYTES);
    socket.on('data', (chunk) => {
      link.acker.read(chunk.length);
      let frames: Buffer[];
      try {
        frames = reader.push(chunk);
        for (const f of frames) {
          const fr = decodeClusterFrame(f);
          if (fr.kind === 'hello') {
            if (!this.peers.has(fr.node)) throw new Error(`hello from unknown node ${fr.node}`);
            // a peer dials a new connection only after giving up its previous one (closed, reset
            // as stalled, or its process died): what arrives on an older connection is stale. A
            // hello on a connection accepted before the newest one this peer said hello on comes
            // from a dead process (its kernel retransmitted what it had written into a cut once
            // the cut healed; runs/evidence-stale-incarnation-seed14): drop it and its connection
            const newest = this.helloSeq.get(fr.node) ?? 0;
            if (link.seq < newest) {
              this.log('stale-connection', { node: this.self.id, peer: fr.node, inc: fr.inc, accepted: link.seq, newest });
              link.superseded = true;
              socket.destroy();
              return;
            }
            link.from = fr.node;
            this.helloSeq.set(fr.node, link.seq);
            for (const other of this.inbound) {
              if (other === link || other.superseded) continue;
              // older connections of this peer, and older ones from its address that never said
              // hello (their hello is stuck behind a cut, from a process that is gone)
              const older = other.from === fr.node || (this.ownAddresses && other.from === null && other.seq < link.seq && sameRemote(other.socket, socket));
              if (!older) continue;
              other.superseded = true;
              other.socket.destroy();
            }
            this.core.onMessage(fr.node, { t: 'hello', inc: fr.inc, term: fr.term });
            continue;
          }
          if (!link.from) throw new Error('cluster frame before hello');
          if (link.superseded) return;
          for (const m of fr.msgs) this.core.onMessage(link.from, m);
        }
      } catch (e) {
        this.log('cluster-protocol-error', { from: link.from, message: (e as Error).message });
        socket.destroy();
        return;
      }
      this.scheduleFlush();
    });
    const gone = (): void => {
      if (!this.inbound.delete(link)) return;
      if (link.from && !link.superseded && !this.stopped) this.core.onPeerDown(link.from);
    };
    socket.on('close', gone);
    socket.on('error', () => socket.destroy());
  }

  private localAddress(): string | undefined {
    return net.isIP(this.self.host) ? this.self.host : undefined;
  }

  private dial(p: PeerLink): void {
    if (this.stopped || p.connecting || p.connected) return;
    p.connecting = true;
    const socket = net.connect({ host: p.cfg.host, port: p.cfg.clusterPort, localAddress: this.localAddress() });
    p.socket = socket;
    socket.setNoDelay(true);
    const timer = setTimeout(() => socket.destroy(), DIAL_TIMEOUT_MS);
    let wasConnected = false;
    const watch = new LinkWatch();
    socket.on('connect', () => {
      clearTimeout(timer);
      wasConnected = true;
      p.connecting = false;
      p.connected = true;
      p.watch = watch;
      encodeHello(p.out, this.self.id, this.core.inc, this.core.currentTerm);
      this.scheduleFlush();
    });
    // replies travel on the peer's own outbound connection; what comes back here is only the
    // peer's acknowledgement of the bytes it read (link-watch.ts)
    const acks = new FrameReader(64);
    socket.on('data', (chunk) => {
      try {
        for (const f of acks.push(chunk)) watch.acked(decodeLinkAck(f), this.clock());
      } catch (e) {
        this.log('cluster-protocol-error', { to: p.cfg.id, message: (e as Error).message });
        socket.resetAndDestroy();
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      p.connecting = false;
      p.connected = false;
      p.socket = null;
      p.watch = null;
      p.queue = [];
      p.out.take();
      if (wasConnected && !this.stopped) this.core.onPeerDown(p.cfg.id);
      if (!this.stopped) p.redialTimer = setTimeout(() => this.dial(p), REDIAL_MS);
    });
  }

  /**
   * Resets every peer link on which a write has waited longer than timing.linkStallMs for the
   * peer's acknowledgement (issue 11): a connection cut by a partition sits in TCP retransmission
   * backoff and would deliver nothing for as long again after the heal. The close handler redials.
   */
  private checkLinks(): void {
    const now = this.clock();
    // after a gap in our own loop (SIGSTOP, a long task) the peers' acks wait unread in our socket
    // buffers: let the loop read them before judging any link
    if (now - this.resumedAt < LINK_CHECK_GRACE_MS) return;
    const bound = this.config.timing.linkStallMs;
    for (const p of this.peers.values()) {
      if (!p.connected || !p.socket || !p.watch) continue;
      const ms = p.watch.stalledFor(now);
      if (ms <= bound) continue;
      this.log('peer-link-stalled', { node: this.self.id, peer: p.cfg.id, waitedMs: Math.round(ms), sentBytes: p.watch.sentUnits, ackedBytes: p.watch.ackedUnits });
      // a reset, not a FIN: the kernel drops what is still unsent instead of retransmitting it
      // to the peer long after (stale messages), and the peer's end dies at its next packet
      p.socket.resetAndDestroy();
    }
  }

  private send(to: string, msg: ClusterMsg): void {
    const p = this.peers.get(to);
    if (!p || !p.connected) return;
    p.queue.push(msg);
    this.scheduleFlush();
  }

  /** Direct liveness check (seed 002 IsNodeAlive): a fresh connection attempt. */
  private probe(node: string): void {
    const p = this.peers.get(node);
    if (!p) return;
    const socket = net.connect({ host: p.cfg.host, port: p.cfg.clusterPort, localAddress: this.localAddress() });
    let done = false;
    const finish = (r: ProbeResult): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      if (!this.stopped) {
        this.core.onProbeResult(node, r);
        this.scheduleFlush();
      }
    };
    const timer = setTimeout(() => finish('timeout'), CONNECT_TIMEOUT_MS);
    socket.on('connect', () => finish('alive'));
    socket.on('error', (e: NodeJS.ErrnoException) => finish(e.code === 'ECONNREFUSED' || e.code === 'EHOSTUNREACH' ? 'refused' : 'timeout'));
  }

  // ───────────── output ─────────────

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.flushScheduled = false;
    const now = this.clock();
    this.core.flush();
    for (const p of this.peers.values()) {
      if (!p.connected || !p.socket) continue;
      if (p.queue.length > 0) {
        const control: ClusterMsg[] = [];
        for (const m of p.queue) {
          if (m.t === 'rep') {
            if (control.length > 0) encodeBatch(p.out, control.splice(0));
            encodeRep(p.out, m);
          } else control.push(m);
        }
        if (control.length > 0) encodeBatch(p.out, control);
        p.queue = [];
      }
      if (p.out.length > 0) {
        const buf = p.out.take();
        p.watch?.sent(buf.length, now);
        p.socket.write(buf);
      }
    }
    for (const l of this.inbound) {
      const total = l.acker.due(now);
      if (total === null || l.superseded) continue;
      encodeLinkAck(this.linkAcks, total);
      l.socket.write(this.linkAcks.take());
    }
    for (const c of this.dirtyClients) {
      if (!c.closed && c.out.length > 0) c.socket.write(c.out.take());
    }
    this.dirtyClients.clear();
  }
}

/** Both connections come from the same address (a peer dials from its own address, DESIGN.md §3). */
function sameRemote(a: net.Socket, b: net.Socket): boolean {
  return a.remoteAddress !== undefined && a.remoteAddress === b.remoteAddress;
}

function listen(server: net.Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port, backlog: 1024 }, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

function closeServer(server: net.Server | http.Server | null): Promise<void> {
  return new Promise((resolve) => (server ? server.close(() => resolve()) : resolve()));
}
