import type Database from 'better-sqlite3';
import { DEFAULT_ASYNC_LAG_MS, META, type RulesVersion } from '../../ledger/schema.js';
import { ContractError, contractRules, parseContract, type Contract, type ContractRules } from '../../ledger/contract.js';
import type { ContractJudged } from '../../ledger/contract-judged.js';
import { META_HISTORY_FORMAT } from '../../ledger/history-import.js';
import { contractFromRunConfig } from '../targets/contracts.js';

/** A fault as the verifier reads it from the ledger (times in ms since the run started). */
export interface FaultFact {
  /** faults.id */
  id: number;
  /** The id a history gave it (detail.historyId), else `f<id>`. */
  name: string;
  kind: string;
  nodes: string[];
  /** Partition faults: the nodes that cannot reach a majority; null unknown (then `nodes`). */
  isolated: string[] | null;
  start: number;
  /** When it had taken effect; null unknown (then `start`). */
  effective: number | null;
  /** null: never ended. */
  end: number | null;
  caughtUp: number | null;
}

/** A store as the rules need it. */
export interface StoreFact {
  name: string;
  replicationFactor: number;
  ackMode: string;
}

/**
 * What the rules read from a ledger besides the writes, reads and samples: which rules apply
 * (meta `rules`), the run's record (status, reason, budget mode, lag bound, lease, self-test
 * bug: meta and the run config), stores, partitions' replicas, faults. Small (faults number in
 * the hundreds or thousands), held in memory.
 */
export interface RunFacts {
  rules: RulesVersion;
  v2: boolean;
  /** meta status: complete | running | interrupted; null when not recorded. */
  status: string | null;
  inconclusiveReason: string | null;
  beyondBudget: boolean;
  asyncLagMaxMs: number;
  leaseMs: number | null;
  selfTestBug: string | null;
  /**
   * The contract the run is judged by (v2): meta `contract`; a ledger without it, its target's
   * declaration (harness/targets/contracts.ts); an imported history without one, the letter.
   */
  contract: Contract;
  /** Where {@link contract} came from. */
  contractOrigin: ContractJudged['origin'];
  /** The rules the contract gates (ledger/contract.ts). */
  gates: ContractRules;
  stores: Map<string, StoreFact>;
  /** `store\0partition` -> replicas (the partition map at the start). */
  replicas: Map<string, string[]>;
  faults: FaultFact[];
}

/** The partition key used by the verifier's maps. */
export function pkey(store: string, partition: number): string {
  return `${store}\u0000${partition}`;
}

/** A meta value, or null. */
export function metaValue(db: Database.Database, key: string): string | null {
  const v = db.prepare('SELECT value FROM meta WHERE key = ?').pluck().get(key);
  return typeof v === 'string' ? v : null;
}

function nodeArray(text: string | null, where: string): string[] | null {
  if (text === null) return null;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    v = null;
  }
  if (!Array.isArray(v) || !v.every((n) => typeof n === 'string')) throw new Error(`ledger: ${where} is not a JSON array of node ids`);
  return v as string[];
}

function historyName(id: number, detail: string | null): string {
  if (detail !== null) {
    try {
      const d = JSON.parse(detail) as unknown;
      if (typeof d === 'object' && d !== null && typeof (d as { historyId?: unknown }).historyId === 'string') return (d as { historyId: string }).historyId;
    } catch {
      // free-form detail from the harness
    }
  }
  return `f${id}`;
}

/** The run config's fields the rules read (meta run_config JSON); {} when absent or not JSON. */
export function runConfigOf(db: Database.Database): Record<string, unknown> {
  const raw = metaValue(db, META.runConfig);
  if (raw === null) return {};
  try {
    const v = JSON.parse(raw) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/**
 * Loads the {@link RunFacts} of a ledger. Rules: meta `rules`; a ledger without it was written
 * before v2 and is judged by v1. Run config defaults (v2): asyncLagMaxMs 1,000 ms, leaseMs
 * null, beyondBudget false. The contract: meta `contract`, else the declaration of the run
 * config's target, else (an imported history) the letter.
 * @throws Error when a JSON column (replicas, nodes, isolated) is not a JSON array of node ids,
 *   or meta `contract` is not a valid contract.
 */
export function loadRunFacts(db: Database.Database): RunFacts {
  const rulesMeta = metaValue(db, META.rules);
  const rules: RulesVersion = rulesMeta === 'zaris-history/2' ? 'zaris-history/2' : 'zaris-history/1';
  const cfg = runConfigOf(db);
  const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null);
  const stores = new Map<string, StoreFact>();
  for (const s of db.prepare('SELECT name, replication_factor, ack_mode FROM stores ORDER BY rowid').all() as { name: string; replication_factor: number; ack_mode: string }[]) {
    stores.set(s.name, { name: s.name, replicationFactor: s.replication_factor, ackMode: s.ack_mode });
  }
  const replicas = new Map<string, string[]>();
  for (const p of db.prepare('SELECT store, partition, replicas FROM partitions').all() as { store: string; partition: number; replicas: string }[]) {
    replicas.set(pkey(p.store, p.partition), nodeArray(p.replicas, `partitions(${p.store}, ${p.partition}).replicas`)!);
  }
  type Row = { id: number; kind: string; nodes: string; isolated: string | null; start_ms: number; effective_ms: number | null; end_ms: number | null; caught_up_ms: number | null; detail: string | null };
  const faults = (db.prepare('SELECT id, kind, nodes, isolated, start_ms, effective_ms, end_ms, caught_up_ms, detail FROM faults ORDER BY id').all() as Row[]).map(
    (r): FaultFact => ({
      id: r.id,
      name: historyName(r.id, r.detail),
      kind: r.kind,
      nodes: nodeArray(r.nodes, `faults(${r.id}).nodes`)!,
      isolated: nodeArray(r.isolated, `faults(${r.id}).isolated`),
      start: r.start_ms,
      effective: r.effective_ms,
      end: r.end_ms,
      caughtUp: r.caught_up_ms,
    }),
  );
  const bug = cfg.selfTestBug;
  const { contract, origin } = contractOf(db, cfg, stores, rules);
  return {
    rules,
    v2: rules === 'zaris-history/2',
    status: metaValue(db, META.status),
    inconclusiveReason: metaValue(db, META.inconclusiveReason),
    beyondBudget: cfg.beyondBudget === true,
    asyncLagMaxMs: num(cfg.asyncLagMaxMs) ?? DEFAULT_ASYNC_LAG_MS,
    leaseMs: num(cfg.leaseMs),
    selfTestBug: typeof bug === 'string' && bug !== '' ? bug : null,
    contract,
    contractOrigin: origin,
    gates: contractRules(contract),
    stores,
    replicas,
    faults,
  };
}

/** A fault is in effect from its start to its end (no end: to the end of the run). */
export function inEffectDuring(f: FaultFact, from: number, to: number): boolean {
  return f.start <= to && (f.end ?? Infinity) >= from;
}

/** The crash instant of a kill/stop fault: when it took effect, else its start. */
export function crashInstant(f: FaultFact): number {
  return f.effective ?? f.start;
}

/** The contract of a ledger and where it came from (see {@link RunFacts.contract}). */
function contractOf(db: Database.Database, cfg: Record<string, unknown>, stores: Map<string, StoreFact>, rules: RulesVersion): { contract: Contract; origin: ContractJudged['origin'] } {
  const specs = [...stores.values()].map((s) => ({ name: s.name, replicationFactor: s.replicationFactor, ackMode: s.ackMode === 'async' ? ('async' as const) : ('sync' as const) }));
  const imported = metaValue(db, META_HISTORY_FORMAT) !== null;
  const raw = metaValue(db, META.contract);
  if (raw !== null) {
    try {
      return { contract: parseContract(JSON.parse(raw) as unknown, 'meta contract'), origin: 'ledger' };
    } catch (e) {
      throw new Error(`ledger: ${e instanceof ContractError ? e.message : `meta contract is not JSON (${(e as Error).message})`}`);
    }
  }
  const contract = contractFromRunConfig(cfg, specs, imported);
  return { contract, origin: rules === 'zaris-history/1' ? 'v1' : imported ? 'letter' : 'target declaration' };
}
