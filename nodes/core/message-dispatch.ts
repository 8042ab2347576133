/** Routes each cluster message a node receives to the part of its core that handles it. */
import type { ClusterMsg, RuntimeEntry } from '../cluster-messages.js';
import type { CoreEnv } from './core-env.js';
import type { Election } from './election.js';
import type { MembershipRole } from './membership-role.js';
import type { PeerSignals } from './peer-signals.js';
import type { PeerTable } from './peer-table.js';
import type { Replication } from './replication.js';
import type { RuntimeMapFollower } from './runtime-map-follower.js';
import type { RuntimeMapLeader } from './runtime-map-leader.js';

/** The parts of one node core that cluster messages are for (NodeCore's own, shared by reference). */
export interface MessageHandlers {
  readonly env: Pick<CoreEnv, 'now' | 'send'>;
  /** The peers and what is known of them (failure detection). */
  readonly fd: PeerTable;
  /** NodeLeft signals, probe answers, messages of dead incarnations. */
  readonly signals: PeerSignals;
  /** Terms, votes, the rejoin rule. */
  readonly el: Election;
  /** The runtime entries this node accepted, by partition key. */
  readonly accepted: ReadonlyMap<string, RuntimeEntry>;
  /** Every node's side of the runtime map. */
  readonly fol: RuntimeMapFollower;
  /** The leader's side of the runtime map. */
  readonly rm: RuntimeMapLeader;
  /** Replication and catch-up, both sides. */
  readonly rep: Replication;
  /** The member set, its consensus, the leader's migrations. */
  readonly membership: MembershipRole;
}

/**
 * Handles one cluster message from peer `from`: dropped when `from` is no configured peer or the
 * message comes from an incarnation known dead; otherwise the peer is heard now, a higher term
 * in a term-carrying message is adopted first (Raft: the node steps down), then the message goes
 * to its part: election (hello, rejoin, pre-vote, vote), the runtime map (heartbeats, proposals,
 * commits, the leader's requests), replication (rep, rep-ack, rep-nack, sync), membership
 * (member-set proposals and commits, join requests).
 */
export function dispatchClusterMessage(h: MessageHandlers, from: string, msg: ClusterMsg): void {
  const peer = h.fd.peers.get(from);
  if (!peer) return;
  // a dead incarnation is never revived (core/peer-signals.ts); the shell also drops every
  // message of a superseded connection
  if (h.signals.fromDeadIncarnation(from, msg)) return;
  const el = h.el;
  const now = h.env.now();
  peer.lastHeard = now;
  switch (msg.t) {
    case 'vote':
    case 'vote-r':
    case 'hb':
    case 'hb-r':
    case 'propose':
    case 'propose-r':
    case 'commit':
    case 'mpropose':
    case 'mpropose-r':
    case 'mcommit':
      // Raft: a node that sees a higher term adopts it and steps down
      if (msg.term > el.term) el.adoptTerm(msg.term, null);
      break;
    default:
      break;
  }
  switch (msg.t) {
    case 'hello':
      h.fd.noteIncarnation(from, msg.inc);
      peer.term = Math.max(peer.term, msg.term);
      el.onHello(msg.term, now);
      return;
    case 'rejoin-q':
      // a node still rejoining holds no memory worth protecting yet
      h.env.send(from, { t: 'rejoin-r', term: el.term, known: !el.rejoinPending && h.accepted.size > 0 });
      return;
    case 'rejoin-r':
      peer.term = Math.max(peer.term, msg.term);
      return el.onRejoinReply(from, msg.term, msg.known);
    case 'prevote':
      return el.onPreVote(from, msg.term, now);
    case 'prevote-r':
      return el.onPreVoteReply(from, msg.term, msg.granted, now);
    case 'vote':
      return el.onVote(from, msg.term, now);
    case 'vote-r':
      return el.onVoteReply(from, msg, now);
    case 'hb':
      return h.fol.onHeartbeat(from, msg, now);
    case 'hb-r':
      return h.rm.onHeartbeatReply(from, msg, now);
    case 'propose':
      return h.fol.onPropose(from, msg.term, msg.entry, now);
    case 'propose-r':
      return h.rm.onProposeReply(from, msg, now);
    case 'commit':
      if (msg.term < el.term) return;
      el.noteLeader(from, now);
      h.fol.learnCommitted(msg.entry);
      return;
    case 'rep':
      return h.rep.onRep(from, msg, now);
    case 'rep-ack':
      return h.rep.onRepAck(from, msg, now);
    case 'rep-nack':
      return h.rep.onRepNack(from, msg.pkey, msg.tag);
    case 'sync-req':
      return h.rep.onSyncReq(from, msg, now);
    case 'sync-resp':
      return h.rep.onSyncResp(from, msg, now);
    case 'req-add':
    case 'req-drop':
    case 'handoff-ready':
    case 'recovered':
      return h.rm.onLeaderRequest(from, msg, now);
    case 'mpropose': {
      // as a runtime entry's proposal: a current term, and never before rejoining
      const acceptable = msg.term >= el.term && !el.rejoinPending;
      if (acceptable) el.followProposer(from, now);
      return h.membership.consensus.onPropose(from, el.term, msg.ballot, acceptable);
    }
    case 'mpropose-r':
      if (el.role === 'leader') h.membership.consensus.onProposeReply(from, msg, el.term);
      return;
    case 'mcommit':
      if (msg.term < el.term) return;
      h.membership.consensus.learnCommitted(msg.ballot);
      return;
    case 'req-join':
      return h.membership.onJoinRequest(from, msg.term, now);
  }
}
