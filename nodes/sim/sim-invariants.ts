import { sameMember, supersedes, type RuntimeEntry } from '../cluster-messages.js';
import type { KeyHistory } from './sim-client.js';

/**
 * The invariants of the failover simulation (sim brief, issue 4), as checkers the simulator calls
 * after every event. They read the nodes only through NodeCore's public surface.
 */

/** A broken invariant. The simulator adds the seed and the last events before rethrowing. */
export class InvariantViolation extends Error {
  override name = 'InvariantViolation';
  /** @param invariant short name (e.g. "one-active-per-epoch"); @param detail one line of facts. */
  constructor(readonly invariant: string, readonly detail: string) {
    super(`${invariant}: ${detail}`);
  }
}

/** What a checker needs to know of one running node (the public surface of NodeCore). */
export interface NodeView {
  id: string;
  inc: string;
  isServingActive(pkey: string): boolean;
  committedEntry(pkey: string): RuntimeEntry | undefined;
}

/**
 * The safety invariants, checked after every delivered event:
 * - one active per epoch: two nodes serving as active (`isServingActive`) for one partition with
 *   the same committed epoch (different epochs are allowed transiently: the lease fences the old);
 * - epochs never regress: per node incarnation and partition the committed epoch never decreases,
 *   and two committed entries with the same (partition, epoch) anywhere are identical;
 * - reads and acknowledgements come from the active: a node answers a read Ok/NotFound, or
 *   acknowledges a write, only when its committed entry names this very incarnation as the
 *   active, in a serving health (Healthy or Degraded; never Recovering) for reads;
 * - no deposed owner serves: once any node holds a committed entry of a partition that ends an
 *   owner's tenure (a higher epoch naming another active, or the same node in a later tenure, or
 *   no active), that owner neither acknowledges a write nor answers a read at its old epoch
 *   (issue 10: its lease lapsed before the leader could promote anyone; a write it acknowledged
 *   then is lost to an allowed-loss class it does not belong to, and a read it answered is stale).
 */
export class SafetyChecker {
  /** `${node}:${inc}` → pkey → last committed entry seen. */
  private readonly lastSeen = new Map<string, Map<string, RuntimeEntry>>();
  /** `${pkey}@${epoch}` → canonical JSON of the first committed entry seen at that epoch. */
  private readonly canonical = new Map<string, string>();
  /** pkey → the highest committed entry any node has held (a commit is never undone). */
  private readonly highest = new Map<string, RuntimeEntry>();

  constructor(private readonly pkeys: readonly string[]) {}

  /**
   * Checks one node's committed entries after it handled an event.
   * @throws InvariantViolation (epoch-regression, epoch-conflict).
   */
  checkCommitted(n: NodeView): void {
    const key = `${n.id}:${n.inc}`;
    let seen = this.lastSeen.get(key);
    if (!seen) {
      seen = new Map();
      this.lastSeen.set(key, seen);
    }
    for (const pkey of this.pkeys) {
      const e = n.committedEntry(pkey);
      if (!e) continue;
      const prev = seen.get(pkey);
      if (prev === e) continue;
      if (prev && e.epoch < prev.epoch) {
        throw new InvariantViolation('epoch-regression', `${n.id} (inc ${n.inc}) committed ${pkey} epoch ${e.epoch} after epoch ${prev.epoch}`);
      }
      seen.set(pkey, e);
      const hi = this.highest.get(pkey);
      if (!hi || supersedes(e, hi)) this.highest.set(pkey, e);
      const ck = `${pkey}@${e.epoch}`;
      const json = canonicalEntry(e);
      const first = this.canonical.get(ck);
      if (first === undefined) this.canonical.set(ck, json);
      else if (first !== json) {
        throw new InvariantViolation('epoch-conflict', `${n.id} committed ${pkey} epoch ${e.epoch} as ${json}, but another node committed ${first}`);
      }
    }
  }

  /**
   * At most one node serving as active per (partition, epoch). `nodes` are every node that is up
   * (paused ones included: they would serve the moment they resume).
   * @throws InvariantViolation (one-active-per-epoch).
   */
  checkServing(nodes: readonly NodeView[], onlyFor?: NodeView): void {
    const subjects = onlyFor ? [onlyFor] : nodes;
    for (const pkey of this.pkeys) {
      for (const a of subjects) {
        if (!a.isServingActive(pkey)) continue;
        const ea = a.committedEntry(pkey);
        if (!ea) throw new InvariantViolation('one-active-per-epoch', `${a.id} serves ${pkey} without a committed entry`);
        for (const b of nodes) {
          if (b === a || !b.isServingActive(pkey)) continue;
          const eb = b.committedEntry(pkey);
          if (eb && eb.epoch === ea.epoch) {
            throw new InvariantViolation('one-active-per-epoch', `${a.id} and ${b.id} both serve ${pkey} as active at epoch ${ea.epoch}`);
          }
        }
      }
    }
  }

  /**
   * A read answered Ok or NotFound by `n` for `pkey` (seed 002: Recovering never serves).
   * @throws InvariantViolation (read-not-from-active).
   */
  checkRead(n: NodeView, pkey: string, status: string): void {
    const e = n.committedEntry(pkey);
    if (!e || !e.active || e.active.node !== n.id || e.active.inc !== n.inc || (e.health !== 'Healthy' && e.health !== 'Degraded')) {
      const what = e ? `committed epoch ${e.epoch} says active ${e.active ? `${e.active.node}/${e.active.inc}` : 'none'}, ${e.health}` : 'no committed entry';
      throw new InvariantViolation('read-not-from-active', `${n.id} (inc ${n.inc}) answered a read of ${pkey} with ${status} but its ${what}`);
    }
  }

  /**
   * A write acknowledged (Ok) by `n` for `pkey`: only the committed active acknowledges.
   * @throws InvariantViolation (ack-not-from-active).
   */
  checkAck(n: NodeView, pkey: string): void {
    const e = n.committedEntry(pkey);
    if (!e || !e.active || e.active.node !== n.id || e.active.inc !== n.inc) {
      throw new InvariantViolation('ack-not-from-active', `${n.id} (inc ${n.inc}) acknowledged a write of ${pkey} but its committed entry ${e ? `epoch ${e.epoch} names ${e.active?.node ?? 'no active'}` : 'is missing'}`);
    }
  }

  /**
   * An acknowledgement or a read answered by `n` for `pkey` at its committed entry: no entry ending
   * that tenure may be committed anywhere yet (see the class doc). Call after the read/ack checks.
   * @throws InvariantViolation (stale-owner-ack, stale-owner-read).
   */
  checkNotDeposed(n: NodeView, pkey: string, what: 'ack' | 'read'): void {
    const e = n.committedEntry(pkey);
    const hi = this.highest.get(pkey);
    if (!e || !hi || hi.epoch <= e.epoch) return;
    if (hi.active && sameMember(hi.active, e.active) && hi.activeSince === e.activeSince) return;
    throw new InvariantViolation(
      `stale-owner-${what}`,
      `${n.id} (inc ${n.inc}) ${what === 'ack' ? 'acknowledged a write' : 'answered a read'} of ${pkey} as the active of epoch ${e.epoch}, but epoch ${hi.epoch} (active ${hi.active ? `${hi.active.node}/${hi.active.inc} since ${hi.activeSince}` : 'none'}, ${hi.health}) is already committed`,
    );
  }
}

/** A stable JSON form of a runtime entry (key order fixed), for comparing entries across nodes. */
export function canonicalEntry(e: RuntimeEntry): string {
  const m = (x: { node: string; inc: string } | null): string | null => (x ? `${x.node}/${x.inc}` : null);
  return JSON.stringify([e.pkey, e.epoch, e.term, m(e.active), e.activeSince, e.health, e.inSync.map(m), m(e.handoffTo), m(e.syncFrom), e.syncTag ?? null, e.replicas, e.mapVersion]);
}

/**
 * How one key ended (DESIGN.md §5, the verifier's rules), given F = the value id read at the end
 * (null when absent) and lastOk = the last acknowledged write:
 * - `ok`: F is lastOk's value (or absent after an acknowledged delete, or absent with no ack);
 * - `recovered`: F is a later write whose outcome was `info` (or absent after a later `info` delete);
 * - `unexpected`: F names no write of the key;
 * - `phantom`: F is a write whose outcome was `fail`;
 * - `lost`: F is older than lastOk (an acknowledged write is missing).
 */
export type FinalClass = 'ok' | 'recovered' | 'unexpected' | 'phantom' | 'lost';

/**
 * Classifies a key's final value against its history (see {@link FinalClass}).
 * @param h the key's writes, in order, all completed.
 * @param finalValueId the value id read from the partition's active, or null when absent.
 */
export function classifyFinal(h: KeyHistory, finalValueId: string | null): FinalClass {
  const w = h.writes;
  let lastOk = -1;
  for (let i = w.length - 1; i >= 0; i--) {
    if (w[i].outcome === 'ok') {
      lastOk = i;
      break;
    }
  }
  if (finalValueId !== null) {
    const j = w.findIndex((x) => x.valueId === finalValueId);
    if (j < 0) return 'unexpected';
    if (w[j].outcome === 'fail') return 'phantom';
    if (j < lastOk) return 'lost';
    return j === lastOk ? 'ok' : 'recovered';
  }
  if (lastOk < 0 || w[lastOk].kind === 'delete') return 'ok';
  for (let i = lastOk + 1; i < w.length; i++) if (w[i].kind === 'delete' && w[i].outcome === 'info') return 'recovered';
  return 'lost';
}

/** One answer a read got: the value id read (null: absent), from which node, when it was served. */
export interface ReadAnswer {
  valueId: string | null;
  /** Virtual time the node answered, ms. */
  at: number;
}

/**
 * Is a read stale (history-format.md v2 stale-read, judged at the instant the node answered,
 * which is no earlier than the read's invocation): with W the last write of the key acknowledged
 * to its client before that instant, the read returned a write ordered before W, or absent while
 * W is not a delete and no delete after W had been invoked by then; and the key's final value
 * holds W or a later write (a lost W is the loss rules' business, not the read's).
 * @param h the key's writes, in order, all completed.
 * @param r the read's answer.
 * @param finalValueId the key's final value (null: absent).
 * @returns W (the write the read missed), or null when the read is not stale.
 */
export function staleRead(h: KeyHistory, r: ReadAnswer, finalValueId: string | null): WriteRecordOf<KeyHistory> | null {
  const ws = h.writes;
  let wi = -1;
  for (let i = ws.length - 1; i >= 0; i--) {
    if (ws[i].outcome === 'ok' && ws[i].completeMs < r.at) {
      wi = i;
      break;
    }
  }
  if (wi < 0) return null;
  const w = ws[wi];
  if (r.valueId !== null) {
    const j = ws.findIndex((x) => x.valueId === r.valueId);
    if (j < 0 || j >= wi) return null;
  } else {
    if (w.kind === 'delete') return null;
    for (let i = wi + 1; i < ws.length; i++) if (ws[i].kind === 'delete' && ws[i].invokeMs < r.at) return null;
  }
  // the final value holds W or a later write
  if (finalValueId !== null) {
    const f = ws.findIndex((x) => x.valueId === finalValueId);
    return f >= wi ? w : null;
  }
  for (let i = wi; i < ws.length; i++) if (ws[i].kind === 'delete' && ws[i].outcome !== 'fail') return w;
  return null;
}

/** The write record type of a history. */
type WriteRecordOf<H extends KeyHistory> = H['writes'][number];
