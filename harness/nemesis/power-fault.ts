/**
 * Power failures: the resolved node and `count - 1` other up nodes SIGKILLed at once and restarted
 * together, recorded as one kill row per node (detail `power` = the schedule index, `group`).
 */
import { processFault } from './process-faults.js';

/** power: a power failure of `f.count` nodes (default 2). */
export const powerFault = processFault({
  hold: 'down',
  recorded: 'kill',
  apply: (rt, node) => rt.kill(node),
  victims: ({ f, nodes, rng, usable }, first) => {
    const count = Math.min(f.count ?? 2, nodes.length);
    const others = rng.shuffle(nodes.filter((n) => n !== first && usable(n)));
    if (others.length < count - 1) return { skip: `a power failure of ${count} nodes needs ${count} up nodes` };
    return [first, ...others.slice(0, count - 1)];
  },
  rowDetail: ({ index }, victims) => ({ power: index, group: victims }),
});
