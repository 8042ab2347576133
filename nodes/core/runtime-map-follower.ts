import { supersedes, type ClusterMsg, type PartitionReport, type RuntimeEntry } from '../cluster-messages.js';
import type { Election } from './election.js';
import type { MemberConsensus } from './member-consensus.js';
import type { LocalPartition, NodeContext } from './partition-state.js';

/** What the follower side of the runtime map needs of its node (times: the node's clock, ms). */
export interface RuntimeMapFollowerHost extends NodeContext {
  readonly env: { send(to: string, msg: ClusterMsg): void };
  readonly el: Election;
  /** The node's runtime map: accepted and committed entries (written here). */
  readonly accepted: Map<string, RuntimeEntry>;
  readonly committed: Map<string, RuntimeEntry>;
  readonly members: MemberConsensus;
  readonly counters: { staleEpochRefusals: { proposal: number } };
  /** Re-derive the node's role in the partition (core/data-path.ts refreshRole). */
  refreshRole(pkey: string): void;
}

/**
 * Every node's side of the runtime map (DESIGN.md §2 "Leader and ownership decisions"): it
 * answers the leader's heartbeats (learning the committed map and member set, granting itself the
 * owner lease the heartbeat carries, reporting its copies: seed 002's possession proof), accepts
 * proposals of a current term whose epoch is above the one it accepted, and learns committed
 * entries that supersede its own (epoch, then term). A node still rejoining accepts nothing and
 * stays silent to heartbeats.
 */
export class RuntimeMapFollower {
  private readonly h: RuntimeMapFollowerHost;

  constructor(host: RuntimeMapFollowerHost) {
    this.h = host;
  }

  onHeartbeat(from: string, msg: Extract<ClusterMsg, { t: 'hb' }>, now: number): void {
    const h = this.h;
    if (msg.term < h.el.term) {
      h.env.send(from, { t: 'hb-r', term: h.el.term, seq: msg.seq, inc: h.inc, reports: [], at: now, echo: msg.at });
      return;
    }
    h.el.followLeader(from, msg, now);
    for (const e of msg.committed) this.learnCommitted(e);
    if (msg.members) h.members.learnCommitted(msg.members);
    // not rejoined yet: stay silent (a stale leader must not count on us) until this leader is
    // at least as recent as every term a majority of the others reported
    if (!h.el.rejoinedBy(msg.term)) return;
    h.el.grantOwnerLease(h.inc, msg);
    h.env.send(from, { t: 'hb-r', term: h.el.term, seq: msg.seq, inc: h.inc, reports: [...h.parts.values()].map((lp) => this.ownReport(lp)), at: now, echo: msg.at });
  }

  /** This node's report of its copy of one partition (the possession proof's input, seed 002). */
  ownReport(lp: LocalPartition): PartitionReport {
    const synced = lp.followTag !== '' || !!lp.act;
    // the tenure whose log our copy is a prefix of: the one we follow, or while a catch-up we
    // asked for is outstanding, the one we asked to resume (our copy is still its prefix)
    return { pkey: lp.pkey, rev: lp.data.revision, heldKeys: lp.data.heldKeys, syncedSegments: synced ? lp.segments.length : 0, tag: lp.act ? lp.act.tag : lp.followTag || lp.resumeTag, accepted: this.h.accepted.get(lp.pkey)?.epoch ?? -1 };
  }

  onPropose(from: string, term: number, entry: RuntimeEntry, now: number): void {
    const h = this.h;
    const refuse = (): void => h.env.send(from, { t: 'propose-r', term: h.el.term, pkey: entry.pkey, epoch: entry.epoch, ok: false });
    if (term < h.el.term) {
      h.counters.staleEpochRefusals.proposal++;
      return refuse();
    }
    // what an earlier life of ours accepted is forgotten: accept nothing before rejoining
    if (h.el.rejoinPending) return refuse();
    h.el.followProposer(from, now);
    const cur = h.accepted.get(entry.pkey);
    const ok = !cur || entry.epoch > cur.epoch;
    if (ok) {
      h.accepted.set(entry.pkey, entry);
      h.refreshRole(entry.pkey);
    } else h.counters.staleEpochRefusals.proposal++;
    h.env.send(from, { t: 'propose-r', term: h.el.term, pkey: entry.pkey, epoch: entry.epoch, ok });
  }

  /** Accepts a committed entry (from a heartbeat, commit or vote merge) if it supersedes ours (epoch, then term). */
  learnCommitted(e: RuntimeEntry): void {
    const h = this.h;
    const cur = h.committed.get(e.pkey);
    if (cur && !supersedes(e, cur)) return;
    h.committed.set(e.pkey, e);
    const acc = h.accepted.get(e.pkey);
    if (!acc || supersedes(e, acc)) h.accepted.set(e.pkey, e);
    h.refreshRole(e.pkey);
  }
}
