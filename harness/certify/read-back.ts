/**
 * Read back: after the heal, every key the run wrote read once more, by the harness's own client
 * or a target's own adapter (the judge's reads, not the client under test's).
 */
import { KvStatus } from '../../nodes/kv-status.js';
import type { ZarisClient } from '../../nodes/client/zaris-client.js';
import type { Ledger } from '../../ledger/ledger-writer.js';
import type { RunClock } from '../clock.js';
import { finalReadAll } from '../final-reads.js';
import type { RunState } from './run-state.js';

/**
 * The end phase's final reads through the Zaris client (harness/final-reads.ts): from active
 * owners only; an Ok answer's value is the write id read, NotFound reads as absent, a key the
 * client could not read is read again next round.
 */
function finalReads(client: ZarisClient, ledger: Ledger, clock: RunClock): Promise<number> {
  return finalReadAll(ledger, clock, async (store, keys) => {
    const got = await client.readMany(store, keys);
    return keys.map((key) => {
      const r = got.get(key);
      if (!r) return undefined;
      return r.status === KvStatus.Ok && r.value ? r.value.toString('utf8') : null;
    });
  }, 5_000);
}

/**
 * Records the phase `final-reads` and reads every key back: a target's through its session, the
 * Zaris store's through the harness's own client on a fresh map; prints how many keys in how long.
 */
export async function readBack(state: Pick<RunState, 'session' | 'harnessClient'>, ledger: Ledger, clock: RunClock, log: (line: string) => void): Promise<void> {
  const { session, harnessClient } = state;
  ledger.event(clock.now(), 'phase', { phase: 'final-reads' });
  const t0 = clock.now();
  // the harness's own client, on a fresh map: the final reads are the judge's, not the client under test's
  let n: number;
  if (session) n = await session.finalReads();
  else {
    await harnessClient!.fetchView().catch(() => undefined);
    n = await finalReads(harnessClient!, ledger, clock);
  }
  log(`final reads: ${n} keys in ${((clock.now() - t0) / 1000).toFixed(1)} s`);
}
