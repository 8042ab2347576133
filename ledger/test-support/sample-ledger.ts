import Database from 'better-sqlite3';
import { applySchema } from '../schema.js';

/** One `samples` row for {@link sampleLedger}; what is left out takes a plain default. */
export interface SampleRow {
  t: number;
  store?: string;
  partition: number;
  active?: string;
  epoch?: number;
  health?: string;
  /** replicated_revision */
  rr?: number;
  node?: string | null;
  inSync?: string | null;
  revisions?: string | null;
  replicas?: string | null;
}

/**
 * An in-memory ledger of the real schema holding only `samples` rows (verifier tests of the
 * runtime-map passes). Defaults: store async3, active n1, epoch 1, Healthy, replicated revision
 * 0, every optional column NULL. The caller closes it.
 */
export function sampleLedger(rows: readonly SampleRow[]): Database.Database {
  const db = new Database(':memory:');
  applySchema(db);
  const ins = db.prepare('INSERT INTO samples (t_ms, store, partition, active, epoch, health, replicated_revision, node, in_sync, revisions, replicas) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
  for (const s of rows) ins.run(s.t, s.store ?? 'async3', s.partition, s.active ?? 'n1', s.epoch ?? 1, s.health ?? 'Healthy', s.rr ?? 0, s.node ?? null, s.inSync ?? null, s.revisions ?? null, s.replicas ?? null);
  return db;
}
