/**
 * Set-up of a replay (REPLAY=): what a recorded run's ledger says to start again the same.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { StoreConfig } from '../../nodes/cluster-config.js';
import { META } from '../../ledger/schema.js';
import { scheduleFromJson, type Schedule } from '../nemesis/schedule.js';
import type { ScenarioRecord } from '../scenario/scenario.js';
import { UsageError } from '../usage-error.js';
import type { RunConfig } from './run-meta.js';

/** What a replay takes from the recorded run (its ledger's meta). */
export interface Replayed {
  /** The planned schedule, played again (its seed, duration, kinds and node timings too). */
  schedule: Schedule;
  /** A scenario run's scenario record: the replay judges its expectation again; else null. */
  scenario: ScenarioRecord | null;
  /** The stores the recorded run started (its run config), or null when it recorded none. */
  stores: StoreConfig[] | null;
  /** How many spare nodes the recorded run started, or undefined for a run from before spares. */
  spares: number | undefined;
}

/**
 * Reads what a replay starts again from `<dir>/ledger.sqlite` (read only).
 * @throws UsageError when the directory has no ledger.sqlite or its run recorded no schedule.
 */
export async function readReplay(dir: string): Promise<Replayed> {
  const ledgerPath = path.join(dir, 'ledger.sqlite');
  if (!existsSync(ledgerPath)) throw new UsageError(`REPLAY=${dir}: no ledger.sqlite there`);
  const Database = (await import('better-sqlite3')).default;
  const db = new Database(ledgerPath, { readonly: true, fileMustExist: true });
  try {
    const row = db.prepare('SELECT value FROM meta WHERE key = ?').get(META.schedule) as { value: string } | undefined;
    if (!row) throw new UsageError(`REPLAY=${dir}: the run recorded no schedule`);
    const schedule = scheduleFromJson(row.value);
    const scRow = db.prepare('SELECT value FROM meta WHERE key = ?').get(META.scenario) as { value: string } | undefined;
    const scenario = scRow ? (JSON.parse(scRow.value) as ScenarioRecord) : null;
    const cfgRow = db.prepare('SELECT value FROM meta WHERE key = ?').get(META.runConfig) as { value: string } | undefined;
    const cfg = cfgRow ? (JSON.parse(cfgRow.value) as Partial<RunConfig>) : {};
    return {
      schedule,
      scenario,
      stores: Array.isArray(cfg.stores) && cfg.stores.length > 0 ? cfg.stores : null,
      spares: Array.isArray(cfg.spares) ? cfg.spares.length : undefined,
    };
  } finally {
    db.close();
  }
}
