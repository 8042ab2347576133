/**
 * Every fault kind a schedule may hold, mapped to the family module that starts, holds and ends it
 * (a {@link FaultHandler}, fault-handler.ts). fault-lifecycle.ts looks kinds up here and nowhere
 * else: a new kind is its family's file plus one line below (tsc refuses a FaultKind without one).
 */
import { clientCutFault } from './client-cut.js';
import { clockFault } from './clock-fault.js';
import type { FaultHandler } from './fault-handler.js';
import { joinFault, leaveFault, rebalanceFault } from './membership-faults.js';
import { partitionFault } from './network-faults.js';
import { handoffFault, regenerateFault } from './ownership-faults.js';
import { powerFault } from './power-fault.js';
import { killFault, pauseFault, stopFault } from './process-faults.js';
import type { FaultKind } from './schedule.js';

/** Fault kind -> its family's handler, one line per kind. */
export const FAULT_HANDLERS: Readonly<Record<FaultKind, FaultHandler>> = {
  kill: killFault, // process-faults.ts
  stop: stopFault, // process-faults.ts
  pause: pauseFault, // process-faults.ts
  power: powerFault, // power-fault.ts
  partition: partitionFault, // network-faults.ts
  clock: clockFault, // clock-fault.ts
  'client-cut': clientCutFault, // client-cut.ts
  handoff: handoffFault, // ownership-faults.ts
  regenerate: regenerateFault, // ownership-faults.ts
  join: joinFault, // membership-faults.ts
  leave: leaveFault, // membership-faults.ts
  rebalance: rebalanceFault, // membership-faults.ts
};

/**
 * The handler of a fault kind.
 * @throws Error `nemesis: no handler for fault kind <kind>` when the kind has none (a schedule
 * that was not validated: schedule-validate.ts refuses unknown kinds).
 */
export function handlerOf(kind: FaultKind): FaultHandler {
  if (!Object.hasOwn(FAULT_HANDLERS, kind)) throw new Error(`nemesis: no handler for fault kind ${String(kind)}`);
  return FAULT_HANDLERS[kind];
}
