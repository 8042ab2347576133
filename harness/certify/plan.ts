/**
 * Set-up, before anything starts: the options checked and resolved into the run's plan (target,
 * nodes and spares, fault kinds, timings, stores, a replayed run's schedule).
 */
import { DEFAULT_TIMING, type SelfTestBug, type StoreConfig } from '../../nodes/cluster-config.js';
import { DEFAULT_ASYNC_LAG_MS } from '../../ledger/schema.js';
import { checkClientEnv } from '../client-options.js';
import { ADMIN_KINDS, isMembershipKind, type FaultKind, type Schedule } from '../nemesis/schedule.js';
import { hostClockFaultsUnavailable } from '../runtime/faketime.js';
import { checkNetAdmin } from '../runtime/iptables.js';
import { scenarioRecord, type Scenario, type ScenarioRecord } from '../scenario/scenario.js';
import { faultRefusals, type Target, type TargetName } from '../targets/target.js';
import { createTarget, isTargetName, TARGET_NAMES } from '../targets/targets.js';
import { UsageError } from '../usage-error.js';
import { DEFAULT_STALL_BOUND_MS } from '../verifier/stalls.js';
import { DEFAULT_STORES, type CertifyOptions } from './options.js';
import { readReplay } from './replay.js';

/** The node ids of a cluster of n nodes: n1..nN. */
export function nodeIdsOf(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `n${i + 1}`);
}

/** The most spare nodes a run may start (SPARES=). */
export const MAX_SPARES = 3;

/**
 * The spare nodes of a run (issue 14): `n<voters+1>`.. after the voters n1..n<voters>, as many as
 * `spares` asks (SPARES=), by default 1 when membership changes are planned, else none.
 * @throws UsageError (one line) for a count outside 0..{@link MAX_SPARES}, or SPARES=0 with
 * membership changes planned (a join would find nobody outside and a leave may not go below the
 * voters' count, so no change could run).
 */
export function spareIdsOf(voters: number, spares: number | undefined, membership: boolean): string[] {
  if (spares !== undefined && !(Number.isSafeInteger(spares) && spares >= 0 && spares <= MAX_SPARES)) throw new UsageError(`SPARES must be 0 to ${MAX_SPARES}, got ${spares}`);
  if (spares === 0 && membership) throw new UsageError('membership changes need a spare node to join (SPARES=0 given): use SPARES=1 or drop membership from FAULTS');
  const n = spares ?? (membership ? 1 : 0);
  return Array.from({ length: n }, (_, i) => `n${voters + 1 + i}`);
}

/** The store under test and the run's bounds, checked before the run's clock starts. */
export interface RunTarget {
  /** The store under test (TARGET=; default zaris). */
  targetName: TargetName;
  /** That store when it is not Zaris (its nodes, contract, adapters), else null. */
  target: Target | null;
  /** The async lag bound (ASYNC_LAG=), ms. */
  asyncLagMaxMs: number;
  /** The stall bound (STALL=), ms. */
  stallBoundMs: number;
}

/**
 * The store under test, made and checked against the options that mean nothing to it; the Zaris
 * client's ZARIS_* variables and the async lag and stall bounds checked.
 * @throws UsageError (one line) for an unknown target, a target that cannot be made, a Zaris
 *   option given to another target (BUG=, NODES=, ASYNC_LAG=, SCENARIO=), a bad ZARIS_* variable,
 *   or a bound that is not a duration above zero.
 */
export async function checkTarget(o: CertifyOptions): Promise<RunTarget> {
  const targetName = o.target ?? 'zaris';
  if (!isTargetName(targetName)) throw new UsageError(`unknown TARGET "${String(targetName)}": expected ${TARGET_NAMES.join(', ')}`);
  let target: Target | null;
  try {
    target = await createTarget(targetName, { redisMinReplicas: o.redisMinReplicas, natsReads: o.natsReads, patroniSync: o.patroniSync });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  if (target) {
    // the Zaris store's own knobs mean nothing to another store
    if (o.selfTestBug) throw new UsageError(`BUG=${o.selfTestBug} is a deliberate bug of the Zaris store; TARGET=${target.name} runs the store as it is`);
    if (o.nodes !== undefined && o.nodes !== target.nodeIds.length) throw new UsageError(`TARGET=${target.name} runs ${target.nodeIds.length} nodes, not NODES=${o.nodes}`);
    if (o.asyncLagMaxMs !== undefined) throw new UsageError(`ASYNC_LAG= is the Zaris store's async lag bound; TARGET=${target.name} declares its own contract (docs/targets.md)`);
    if (o.scenario) throw new UsageError(`SCENARIO= plays its steps on the Zaris store's partitions and admin requests; TARGET=${target.name} takes FAULTS= (or REPLAY=) instead`);
  }
  // the client under test reads its ZARIS_* variables itself; a bad one is refused before anything starts
  if (!target) checkClientEnv();
  const asyncLagMaxMs = o.asyncLagMaxMs ?? DEFAULT_ASYNC_LAG_MS;
  const stallBoundMs = o.stallBoundMs ?? DEFAULT_STALL_BOUND_MS;
  if (!(Number.isFinite(stallBoundMs) && stallBoundMs > 0)) throw new UsageError(`STALL must be a duration above zero, got ${stallBoundMs} ms`);
  if (!(Number.isFinite(asyncLagMaxMs) && asyncLagMaxMs > 0)) throw new UsageError(`ASYNC_LAG must be a duration above zero, got ${asyncLagMaxMs} ms`);
  return { targetName, target, asyncLagMaxMs, stallBoundMs };
}

/** What the run will do, decided from the options (a scenario's or a replayed run's settings first). */
export interface RunPlan extends RunTarget {
  /** The scenario played (SCENARIO=), if any. */
  scenario: Scenario | undefined;
  /** How many voting nodes the cluster has (NODES=, or the scenario's), spares not counted. */
  nodeCount: number;
  /**
   * The fault kinds the run may play, those this host or the target cannot play left out; the
   * process runtime's check ({@link RunPlan.processPartitions}) may leave out more.
   */
  kinds: FaultKind[];
  beyondBudget: boolean;
  /** The nodes' escalation and eviction timeouts, ms (seed 002; a scenario or a replay sets them). */
  escalationTimeoutMs: number;
  evictionTimeoutMs: number;
  /** The stores the run starts. */
  stores: StoreConfig[];
  selfTestBug: SelfTestBug | undefined;
  /** The recorded schedule a replay (REPLAY=) plays again, or null. */
  replayed: Schedule | null;
  /** The scenario's record (results.json `scenario`): the scenario's, or a replayed scenario run's; else null. */
  scenarioRec: ScenarioRecord | null;
  /** The spare nodes started beside the voters (none for a target other than Zaris). */
  spareIds: string[];
  /**
   * For the process runtime, asked once as it is made: whether its partitions and client cuts can
   * be iptables rules on this host (CAP_NET_ADMIN); clock faults need libfaketime. A kind that
   * cannot run here leaves {@link RunPlan.kinds} with a line, or is refused when asked for.
   * @throws UsageError when FAULTS= (or the scenario) asks for a kind this host cannot play.
   */
  processPartitions: () => Promise<boolean>;
}

/**
 * The run's plan from its options and checked target: node count, fault kinds (a power failure
 * within the budget needs NODES=5; a target refuses the kinds it cannot express), timings, stores,
 * the recorded run a replay reads again, and the spare nodes.
 * @throws UsageError (one line) for options that cannot go together or a replay without a ledger.
 */
export async function planRun(o: CertifyOptions, t: RunTarget, log: (line: string) => void): Promise<RunPlan> {
  const { target } = t;
  const sc = o.scenario;
  if (sc && o.replay) throw new UsageError('give SCENARIO= or REPLAY=, not both (a scenario run replays with REPLAY= like any run)');
  const nodeCount = sc ? sc.nodes : (o.nodes ?? 3);
  if (nodeCount !== 3 && nodeCount !== 5) throw new UsageError(`NODES must be 3 or 5, got ${nodeCount}`);
  let kinds = sc ? [...new Set(sc.faults.map((f) => f.kind))].filter((k) => !(ADMIN_KINDS as readonly string[]).includes(k)) : [...o.faults];
  const faultsExplicit = sc ? true : o.faultsExplicit;
  // one node: every crash takes the whole cluster down, past a replicated store's budget (its contract decides what it may lose)
  const beyondBudget = (sc ? sc.beyondBudget : o.beyondBudget) || target?.nodeIds.length === 1;
  let escalationTimeoutMs = sc ? sc.escalationTimeoutMs : o.escalationTimeoutMs;
  let evictionTimeoutMs = sc ? sc.evictionTimeoutMs : DEFAULT_TIMING.evictionTimeoutMs;
  let stores = sc ? sc.stores : (o.stores ?? DEFAULT_STORES);
  const selfTestBug = o.selfTestBug ?? sc?.bug;
  // a power failure within the budget must leave a majority up: two nodes of five, never of three
  if (!sc && kinds.includes('power') && !beyondBudget && nodeCount < 5) {
    const why = 'the fault budget allows power failures only with NODES=5 (two nodes at once) or BEYOND_BUDGET=1';
    if (faultsExplicit && (o.faultPreset ?? 'random') === 'random') throw new UsageError(`FAULTS asks for power failures, but ${why}`);
    kinds = kinds.filter((k) => k !== 'power');
    log(`power failures left out: ${why}`);
  }
  // a target refuses the kinds it cannot express (clock faults and membership changes are Zaris's)
  for (const [kind, why] of target ? faultRefusals(target) : []) {
    if (!kinds.includes(kind)) continue;
    if (faultsExplicit && (o.faultPreset ?? 'random') === 'random') throw new UsageError(`FAULTS asks for ${kind}, but ${why}`);
    kinds = kinds.filter((k) => k !== kind);
    log(`${kind} left out: ${why}`);
  }
  let replayed: Schedule | null = null;
  /** A replayed run's spare nodes (its run config), started again the same. */
  let replayedSpares: number | undefined;
  let scenarioRec: ScenarioRecord | null = sc ? scenarioRecord(sc) : null;
  if (o.replay) {
    const r = await readReplay(o.replay);
    replayed = r.schedule;
    // a scenario run replays as a scenario (its expectation judged again), with its stores and timings
    if (r.scenario) scenarioRec = r.scenario;
    if (r.stores) stores = r.stores;
    replayedSpares = r.spares;
    escalationTimeoutMs = replayed.escalationTimeoutMs;
    evictionTimeoutMs = replayed.evictionTimeoutMs;
    kinds = replayed.kinds.filter((k) => !(ADMIN_KINDS as readonly string[]).includes(k));
  }

  // spare nodes (issue 14): when membership changes are planned, unless SPARES= says otherwise
  const membershipPlanned = (replayed ?? (sc ? { faults: sc.faults } : null))?.faults.some((f) => isMembershipKind(f.kind)) ?? kinds.some(isMembershipKind);
  if (target && o.spares) throw new UsageError(`SPARES= starts spare Zaris nodes; TARGET=${target.name} runs its own nodes`);
  // (a scenario says its own spares; SPARES= overrides them; a replay starts the recorded run's)
  const spareCount = o.spares ?? replayedSpares ?? sc?.spares;
  const spareIds = target ? [] : spareIdsOf(replayed ? replayed.nodeCount : nodeCount, spareCount, membershipPlanned && !(sc !== undefined && spareCount === 0));

  const plan: RunPlan = {
    ...t,
    scenario: sc,
    nodeCount,
    kinds,
    beyondBudget,
    escalationTimeoutMs,
    evictionTimeoutMs,
    stores,
    selfTestBug,
    replayed,
    scenarioRec,
    spareIds,
    // process runtime: partitions and client cuts are iptables rules on this host (CAP_NET_ADMIN); clock faults preload libfaketime
    processPartitions: async (): Promise<boolean> => {
      if (plan.kinds.includes('clock')) {
        const why = hostClockFaultsUnavailable();
        if (why) {
          if (faultsExplicit) throw new UsageError(`${sc ? `scenario ${sc.name} has clock steps` : 'FAULTS asks for clock faults'}, but ${why}`);
          plan.kinds = plan.kinds.filter((k) => k !== 'clock');
          log(`clock faults left out: ${why}`);
        }
      }
      const net = plan.kinds.filter((k) => k === 'partition' || k === 'client-cut');
      if (net.length === 0) return false;
      const why = await checkNetAdmin();
      if (!why) return true;
      if (faultsExplicit) throw new UsageError(`${sc ? `scenario ${sc.name} has ${net.join(' and ')} steps` : `FAULTS asks for ${net.join(' and ')}`}, but ${why}`);
      plan.kinds = plan.kinds.filter((k) => k !== 'partition' && k !== 'client-cut');
      log(`partitions and client cuts left out: ${why}`);
      return false;
    },
  };
  return plan;
}
