/** The simulation's end-of-run checks: every key's final value, every read answered, every in-sync replica equal to its active. */
import type { ClusterConfig } from '../cluster-config.js';
import type { KeyHistory } from './sim-client.js';
import type { AnsweredRead } from './sim-client-net.js';
import type { ClusterView } from './sim-cluster-view.js';
import type { DurabilityChecker } from './sim-durability.js';
import { classifyFinal, InvariantViolation, staleRead, type FinalClass } from './sim-invariants.js';
import { describeEntry, type SimNode } from './sim-world.js';

/** What the final checks read of a finished run. */
export interface FinalCheckInput {
  readonly config: ClusterConfig;
  /** Every key's writes, in order, all completed. */
  readonly histories: readonly KeyHistory[];
  /** Every answer a read got during the run. */
  readonly reads: readonly AnsweredRead[];
  /** Every partition, as `store/partition`. */
  readonly pkeys: readonly string[];
  readonly byId: ReadonlyMap<string, SimNode>;
  readonly view: ClusterView;
  readonly durability: DurabilityChecker;
}

/**
 * Within budget, after convergence: every key's final value on its active is allowed by its
 * history (no phantom or unexpected value anywhere; no lost write in a sync store with RF > 1; a
 * loss elsewhere must fit an allowed-loss class: DurabilityChecker.checkLoss), every read of a
 * sync RF > 1 store saw every write acknowledged before it was answered (history-format.md v2
 * stale-read), and every in-sync replica holds exactly what its active holds.
 * @param finals counted into, one per key by its {@link FinalClass}.
 * @throws InvariantViolation on the first broken rule ("no-convergence" when a partition has no
 *   serving active, "unexpected", "phantom", "lost", "stale-read", "replica-divergence", or the
 *   durability checker's own).
 */
export function checkFinalValues(run: FinalCheckInput, finals: Record<FinalClass, number>): void {
  const durable = new Set(run.config.stores.filter((s) => s.ackMode === 'sync' && s.replicationFactor > 1).map((s) => s.name));
  const finalValues = new Map<string, string | null>();
  for (const h of run.histories) {
    const x = run.view.servingActive(h.pkey);
    if (!x) violate('no-convergence', `no serving active for ${h.pkey} at the final read`);
    const rec = x.core!.peek(h.pkey, h.key);
    const valueId = rec && rec.value !== null ? rec.value.toString() : null;
    finalValues.set(`${h.store}/${h.key}`, valueId);
    const cls = classifyFinal(h, valueId);
    finals[cls]++;
    const lastOk = [...h.writes].reverse().find((w) => w.outcome === 'ok');
    if (cls === 'lost' && !durable.has(h.store)) run.durability.checkLoss(h, lastOk!, `${h.store}/${h.key} (${h.pkey}) reads ${valueId ?? 'absent'} on ${x.id}, without ${lastOk!.valueId ?? 'delete'} (seq ${lastOk!.seq}, acked by ${lastOk!.ack?.node} at epoch ${lastOk!.ack?.epoch}, t=${lastOk!.completeMs.toFixed(1)})`);
    if (cls === 'unexpected' || cls === 'phantom' || (cls === 'lost' && durable.has(h.store))) {
      violate(cls, `${h.store}/${h.key} (${h.pkey}) reads ${valueId ?? 'absent'} on ${x.id}; last acknowledged: ${lastOk ? `${lastOk.valueId ?? 'delete'} (seq ${lastOk.seq}, acked by ${lastOk.ack?.node} at epoch ${lastOk.ack?.epoch}, t=${lastOk.completeMs.toFixed(1)})` : 'none'}; writes: ${h.writes.map((w) => `#${w.seq}:${w.kind}:${w.outcome}`).join(' ')}`);
    }
  }
  // every read, single or hedged (a replica answering a long-tail retry), saw every write
  // acknowledged before it was answered (v2 stale-read). Judged where no acknowledged write may
  // be lost (sync, RF > 1): in an async or RF1 store a read after an allowed loss returns the
  // older value, and the history cannot tell it from a stale read once the key is written again;
  // there the stale-owner invariant (checked on every answer) is the store's side of the rule
  const byKey = new Map(run.histories.map((h) => [`${h.store}/${h.key}`, h]));
  for (const r of run.reads) {
    const h = byKey.get(r.sk);
    if (!h || !durable.has(h.store)) continue;
    const missed = staleRead(h, r, finalValues.get(r.sk) ?? null);
    if (missed) violate('stale-read', `${r.node} answered a ${r.hedged ? 'hedged batch' : 'single'} read of ${r.sk} at ${r.at.toFixed(1)} ms with ${r.valueId ?? 'absent'}, but ${missed.valueId ?? 'a delete'} (seq ${missed.seq}) was acknowledged at ${missed.completeMs.toFixed(1)} ms by ${missed.ack?.node} and survived`);
  }
  for (const pkey of run.pkeys) {
    const e = run.view.bestEntry(pkey)!;
    const active = run.view.servingActive(pkey)!;
    for (const m of e.inSync) {
      if (m.node === active.id) continue;
      const y = run.byId.get(m.node)!;
      if (!y.core || y.core.inc !== m.inc) continue;
      for (const h of run.histories) {
        if (h.pkey !== pkey) continue;
        const a = active.core!.peek(pkey, h.key);
        const b = y.core.peek(pkey, h.key);
        const av = a && a.value !== null ? a.value.toString() : null;
        const bv = b && b.value !== null ? b.value.toString() : null;
        if (av !== bv || (a?.version ?? 0) !== (b?.version ?? 0)) {
          violate('replica-divergence', `${pkey} key ${h.key}: active ${active.id} holds ${av ?? 'absent'} v${a?.version ?? 0}, in-sync ${y.id} holds ${bv ?? 'absent'} v${b?.version ?? 0} (${describeEntry(e)})`);
        }
      }
    }
  }
}

/**
 * Any budget: no read ever returned a value that no write of the key carried (unexpected) or
 * whose write failed definitely (phantom: a `fail` write was never applied anywhere).
 * @throws InvariantViolation "unexpected-read" or "phantom-read" on the first such read.
 */
export function checkReadValues(histories: readonly KeyHistory[], reads: readonly AnsweredRead[]): void {
  const byKey = new Map(histories.map((h) => [`${h.store}/${h.key}`, h]));
  for (const r of reads) {
    if (r.valueId === null) continue;
    const w = byKey.get(r.sk)?.writes.find((x) => x.valueId === r.valueId);
    if (!w) violate('unexpected-read', `${r.node} answered a read of ${r.sk} at ${r.at.toFixed(1)} ms with ${r.valueId}, which no write carried`);
    if (w.outcome === 'fail') violate('phantom-read', `${r.node} answered a read of ${r.sk} at ${r.at.toFixed(1)} ms with ${r.valueId}, a write that failed definitely (${w.last})`);
  }
}

function violate(invariant: string, detail: string): never {
  throw new InvariantViolation(invariant, detail);
}
