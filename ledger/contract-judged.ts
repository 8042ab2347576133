/**
 * "Contract judged": what results.json and the report say about the contract a run was judged by
 * (ledger/contract.ts): each rule the contract governs, whether the verifier applied it, its
 * parameter and where that comes from.
 */
import { contractRules, type Contract } from './contract.js';

/** The rules a contract governs, in the order they are listed. */
export const CONTRACT_RULES = [
  'rf1',
  'async-ack',
  'async-lag-bound',
  'owner-lease',
  'fencing',
  'beyond-budget',
  'replication-lag',
  'stale-read',
  'under-replicated-ack',
  'duplicates',
] as const;
/** One of {@link CONTRACT_RULES}. */
export type ContractRuleName = (typeof CONTRACT_RULES)[number];

/**
 * One rule as judged: `judged` true when the verifier applied it to this run; `value` its
 * parameter (ms for the lag bound and the lease, a boolean for fencing, linearizable reads and
 * duplicates, the store names for under-replicated-ack, null when the rule has none or the store
 * declares none); `meaning` one sentence on what was applied (or why not); `source` where the
 * parameter or the claim comes from.
 */
export interface JudgedRule {
  rule: ContractRuleName;
  judged: boolean;
  value: number | boolean | string[] | null;
  meaning: string;
  source: string;
}

/** results.json `contract`: the declaration judged by, where it came from, and its rules. */
export interface ContractJudged {
  /** The store that declared it (`zaris`, `etcd`, `redis-sentinel`; `history-format.md` for the letter). */
  target: string;
  /**
   * Where the verifier found it: `ledger` (the run stored it), `target declaration` (a ledger from
   * before contracts were stored: its target's declaration), `letter` (a history with none: the
   * rules of history-format.md v2 to the letter), `v1` (a v1 history: its rules have no contract).
   */
  origin: 'ledger' | 'target declaration' | 'letter' | 'v1';
  rules: JudgedRule[];
  declaration: Contract;
}

/** What the run adds to the contract: the budget mode (beyond-budget is judged only past the budget). */
export interface JudgedRun {
  beyondBudget: boolean;
}

/**
 * The {@link JudgedRule}s of a contract for a run, in {@link CONTRACT_RULES} order. Pure: the same
 * contract and run give the same list.
 */
export function judgedRules(c: Contract, run: JudgedRun): JudgedRule[] {
  const r = contractRules(c);
  const claimSource = (cls: 'rf1' | 'async-ack' | 'beyond-budget'): string => c.claims.find((k) => k.class === cls)?.source ?? `not claimed by ${c.target}`;
  const async = c.stores.filter((s) => s.ackMode === 'async').map((s) => s.name);
  const majority = c.stores.filter((s) => r.majorityAck(s));
  const lag = r.asyncLagMs;
  return [
    {
      rule: 'rf1',
      judged: r.rf1,
      value: null,
      meaning: r.rf1 ? 'a lost write of a replication-factor-1 store whose node crashed after the ack is allowed (rf1)' : 'not claimed: every lost write of a replication-factor-1 store is a violation',
      source: claimSource('rf1'),
    },
    {
      rule: 'async-ack',
      judged: r.asyncAck,
      value: null,
      meaning: r.asyncAck
        ? `a lost write of an async store (${async.join(', ')}) is allowed when its owner crashed or another node took over at a higher epoch before holding it, a fault disrupted replication, and the parameters below hold`
        : 'not claimed: every lost async write is a violation',
      source: claimSource('async-ack'),
    },
    {
      rule: 'async-lag-bound',
      judged: r.asyncAck || (r.replicationLag && async.length > 0),
      value: lag,
      meaning:
        lag === null
          ? 'no bound declared: an async-ack loss needs a fault between the ack and the takeover, and replication lag is not judged'
          : `an async-ack loss needs a fault within ${lag} ms after the ack; an async replica behind longer than that with nothing in the way is a violation (replication-lag)`,
      source: c.asyncLagMs.source,
    },
    {
      rule: 'owner-lease',
      judged: r.asyncAck && r.leaseMs !== null,
      value: r.leaseMs,
      meaning: r.leaseMs === null ? 'no lease declared: an owner cut off from a majority is not bounded' : `an owner cut off from a majority longer than ${r.leaseMs} ms acknowledges nothing it may lose`,
      source: c.leaseMs.source,
    },
    {
      rule: 'fencing',
      judged: r.asyncAck && r.fencing,
      value: r.fencing,
      meaning: r.fencing ? 'an owner seen deposed before the write was invoked acknowledges nothing it may lose' : 'no fencing: a replaced owner may acknowledge until it learns it was replaced (its losses are judged by the other conditions)',
      source: c.fencing.source,
    },
    {
      rule: 'beyond-budget',
      judged: r.beyondBudget && run.beyondBudget,
      value: run.beyondBudget,
      meaning: !r.beyondBudget
        ? 'not claimed: a write lost while every replica was down is a violation'
        : run.beyondBudget
          ? 'a write lost while every replica was down (or out of sync at the ack) is allowed (beyond-budget)'
          : 'claimed, but the run stayed within the fault budget: not applied',
      source: claimSource('beyond-budget'),
    },
    {
      rule: 'replication-lag',
      judged: r.replicationLag && async.length > 0,
      value: lag,
      meaning: lag === null ? 'not judged: no async lag bound declared' : async.length === 0 ? 'not judged: no async store' : `an async replica in sync but ${lag} ms behind its active with no fault in the way, and no node of the partition seen stalled, is a violation`,
      source: c.asyncLagMs.source,
    },
    {
      rule: 'stale-read',
      judged: r.staleReads,
      value: r.staleReads,
      meaning: r.staleReads ? 'reads are linearizable: a read missing a write acknowledged before it began (while that write survives) is a violation' : 'reads are not linearizable: stale reads are not judged (phantom and unexpected reads are)',
      source: c.linearizableReads.source,
    },
    {
      rule: 'under-replicated-ack',
      judged: majority.length > 0,
      value: majority.map((s) => s.name),
      meaning: majority.length > 0 ? 'an ack of these stores that names fewer than 2 copies is a violation' : 'no store acknowledges on a majority: not judged',
      source: majority.length > 0 ? majority.map((s) => `${s.name}: ${s.source}`).join('; ') : c.stores.map((s) => `${s.name}: ${s.source}`).join('; '),
    },
    {
      rule: 'duplicates',
      judged: false,
      value: c.duplicates.value,
      meaning: c.duplicates.value ? 'a write may take effect more than once (declared; the per-key rules read one final value per key)' : 'a write takes effect at most once (declared; no rule of the per-key verifier reads it)',
      source: c.duplicates.source,
    },
  ];
}

/** The {@link ContractJudged} of a run: the contract, where it came from, its rules. */
export function contractJudged(c: Contract, origin: ContractJudged['origin'], run: JudgedRun): ContractJudged {
  return { target: c.target, origin, rules: judgedRules(c, run), declaration: c };
}

/**
 * One line for the console: `contract (redis-sentinel): claims async-ack; async lag bound none;
 * owner lease 4000 ms; fencing no; linearizable reads no`.
 */
export function describeContract(c: Contract): string {
  const list = c.claims.map((k) => k.class).join(', ') || 'no loss';
  const ms = (v: number | null): string => (v === null ? 'none' : `${v} ms`);
  const yes = (b: boolean): string => (b ? 'yes' : 'no');
  return `contract (${c.target}): claims ${list}; async lag bound ${ms(c.asyncLagMs.value)}; owner lease ${ms(c.leaseMs.value)}; fencing ${yes(c.fencing.value)}; linearizable reads ${yes(c.linearizableReads.value)}`;
}

