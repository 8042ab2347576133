/**
 * The end phase's final read of every key (DESIGN.md §3), for any client: paged through the
 * ledger's keys table (memory stays flat however many keys the run created), grouped by store,
 * each group read in up to three rounds 1 s apart. A value names the write it came from
 * (`w<key_id>.<seq>`); an absent key reads as null; a key no round answered is recorded
 * unreadable (the verifier reports it unverified).
 */
import type { Ledger } from '../ledger/ledger-writer.js';
import { parseWriteId } from '../ledger/schema.js';
import type { RunClock } from './clock.js';

/**
 * Reads `keys` of `store` once: per key, in order, the value read (`null`: absent) or
 * `undefined` when this round could not read it (it is read again next round).
 */
export type FinalReadRound = (store: string, keys: readonly string[]) => Promise<(string | null | undefined)[]>;

/** Rounds per key before it is recorded unreadable. */
const ROUNDS = 3;
/** The pause between two rounds, ms. */
export const ROUND_PAUSE_MS = 1_000;

/**
 * Final-reads every key of the ledger through `read`, `pageSize` keys at a time, recording each
 * answer in the ledger at the run clock's time, then flushes the ledger. `pauseMs`: between two
 * rounds (tests shorten it).
 * @returns the number of keys read (readable or not).
 * @throws whatever `read` or the ledger throws (a harness error).
 */
export async function finalReadAll(ledger: Pick<Ledger, 'keysPage' | 'finalRead' | 'flush'>, clock: Pick<RunClock, 'now'>, read: FinalReadRound, pageSize: number, pauseMs = ROUND_PAUSE_MS): Promise<number> {
  let after = 0;
  let n = 0;
  for (;;) {
    const page = ledger.keysPage(after, pageSize);
    if (page.length === 0) break;
    after = page[page.length - 1].keyId;
    const byStore = new Map<string, typeof page>();
    for (const k of page) {
      const list = byStore.get(k.store) ?? [];
      list.push(k);
      byStore.set(k.store, list);
    }
    for (const [store, rows] of byStore) {
      let pending = rows;
      for (let round = 0; round < ROUNDS && pending.length > 0; round++) {
        if (round > 0) await new Promise((r) => setTimeout(r, pauseMs));
        const got = await read(store, pending.map((k) => k.key));
        const again: typeof rows = [];
        pending.forEach((k, i) => {
          const value = got[i];
          if (value === undefined) {
            again.push(k);
            return;
          }
          const parsed = value === null ? null : parseWriteId(value);
          ledger.finalRead(k.keyId, value, parsed && parsed.keyId === k.keyId ? parsed : null, false, clock.now());
        });
        pending = again;
      }
      for (const k of pending) ledger.finalRead(k.keyId, null, null, true, clock.now());
      n += rows.length;
    }
  }
  ledger.flush();
  return n;
}
