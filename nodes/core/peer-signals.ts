import type { ClusterConfig } from '../cluster-config.js';
import type { ClusterMsg, RuntimeEntry } from '../cluster-messages.js';
import type { LocalPartition } from './partition-state.js';
import type { PeerTable } from './peer-table.js';

/** The result of a direct liveness probe (seed 002: re-check a NodeLeft before promoting). */
export type ProbeResult = 'refused' | 'alive' | 'timeout';

/** What the peer signals need of their node (times: the node's clock, ms). */
export interface PeerSignalsHost {
  readonly config: ClusterConfig;
  readonly env: { now(): number; log(event: string, fields?: Record<string, unknown>): void; probe(node: string): void };
  readonly fd: PeerTable;
  readonly parts: ReadonlyMap<string, LocalPartition>;
  readonly committed: ReadonlyMap<string, RuntimeEntry>;
  readonly isLeader: boolean;
  /** The leader's periodic decisions, run at once when a peer is known gone. */
  leaderTick(now: number): void;
}

/**
 * What a node makes of its peers' failure signals (seed 002 step 1, "re-check liveness before
 * the high-impact action"): a closed connection (NodeLeft) stops the streams on it and asks for a
 * probe, never believed as it comes; a refused probe marks the incarnation gone; a message of an
 * incarnation known gone is dropped (logged once per incarnation and kind).
 */
export class PeerSignals {
  private readonly h: PeerSignalsHost;
  /** Messages of dead incarnations already logged (node/inc/kind). */
  private readonly staleLogged = new Set<string>();

  constructor(host: PeerSignalsHost) {
    this.h = host;
  }

  /** The connection to a peer closed (a NodeLeft signal): re-check it before believing it. */
  onPeerDown(node: string): void {
    const peer = this.h.fd.peers.get(node);
    if (!peer) return;
    for (const lp of this.h.parts.values()) {
      const f = lp.act?.followers.get(node);
      if (f) f.streaming = false;
      // a replica of that node's partitions: what was on the connection is lost, and the active
      // streams to us again only once we ask (ops still in flight on its other connection do not
      // change that); ask at the next tick (retried every RETRY_MS until a connection carries it)
      // rather than after FOLLOW_STALE_MS of silence, so we are back within the async lag bound
      // once a connection is (DESIGN.md §5 replication-lag)
      if (!lp.act && this.h.committed.get(lp.pkey)?.active?.node === node) lp.resyncWanted = true;
    }
    if (this.h.config.selfTestBug === 'skip-liveness-recheck' && this.h.isLeader && peer.inc) {
      // the deliberate bug: the NodeLeft believed as it came, the node confirmed down at once (no
      // probe, no suspicion and escalation); it counts as live again once it answers. Its last
      // reply is dated back past the suspicion window, so that updateSuspicion keeps the
      // confirmation until it does answer (a promotion waits for the candidates' fresh reports,
      // which takes more than one tick on 5 nodes)
      const now = this.h.env.now();
      peer.lastReply = Math.min(peer.lastReply, now - this.h.config.timing.suspectAfterMs);
      peer.suspectedSince = now;
      peer.silentConfirmed = true;
      peer.downAt = now;
      this.h.env.log('confirm-down', { node, reason: 'NodeLeft', bug: 'skip-liveness-recheck' });
      this.h.leaderTick(now);
      return;
    }
    if (peer.inc && !this.h.fd.probing.has(node)) {
      this.h.fd.probing.set(node, peer.inc);
      this.h.env.probe(node);
    }
  }

  /**
   * The answer to an earlier probe(). 'refused': nothing listens at the node's address any more, so
   * the incarnation probed is gone (seed 002: the NodeLeft re-checked). 'alive' or 'timeout' change
   * nothing: a reachable node is left where it is, a silent one goes through suspicion.
   */
  onProbeResult(node: string, result: ProbeResult): void {
    const peer = this.h.fd.peers.get(node);
    const inc = this.h.fd.probing.get(node);
    this.h.fd.probing.delete(node);
    if (!peer || !inc) return;
    this.h.env.log('probe', { node, result, inc });
    if (result === 'refused' && peer.inc === inc) {
      peer.deadIncs.add(inc);
      peer.downAt = this.h.env.now();
      if (this.h.isLeader) this.h.leaderTick(this.h.env.now());
    }
  }

  /**
   * A message of an incarnation known to be gone says nothing about the node now: the bytes a
   * killed process had written into a cut link are retransmitted by its kernel and delivered once
   * the cut heals, possibly after its successor spoke (runs/evidence-stale-incarnation-seed14:
   * taken for a restart, it made the leader believe the live successor dead). A dead incarnation
   * is never revived. True when the message is such a one (dropped, logged once).
   */
  fromDeadIncarnation(from: string, msg: ClusterMsg): boolean {
    const peer = this.h.fd.peers.get(from);
    const inc = messageInc(msg);
    if (!peer || inc === null || !peer.deadIncs.has(inc)) return false;
    const key = `${from}/${inc}/${msg.t}`;
    if (!this.staleLogged.has(key)) {
      if (this.staleLogged.size >= 256) this.staleLogged.clear();
      this.staleLogged.add(key);
      this.h.env.log('stale-incarnation', { node: from, inc, msg: msg.t, current: peer.inc ?? null });
    }
    return true;
  }
}

/** The sender's incarnation a message names (hello, hb-r, rep-ack, sync-req), or null. */
function messageInc(msg: ClusterMsg): string | null {
  switch (msg.t) {
    case 'hello':
    case 'hb-r':
    case 'rep-ack':
    case 'sync-req':
      return msg.inc;
    default:
      return null;
  }
}
