import { describe, expect, it } from 'vitest';
import type { SimStats } from './sim-result.js';
import { SimNemesis, type SimNemesisHost } from './sim-nemesis.js';
import type { SimSchedule } from './sim-schedule.js';
import type { Link, SimNode } from './sim-world.js';

/** Three idle nodes on a virtual clock; the host records what the nemesis asks of it. */
function world(budget: SimSchedule['budget'] = 'within', open = true) {
  const clock = { now: 0 };
  const events: Array<[number, () => void]> = [];
  const asked: string[] = [];
  const nodes: SimNode[] = ['n1', 'n2', 'n3'].map((id, index) => ({ id, index, core: {} as SimNode['core'], view: null, crashTouch: null, pauseTouch: null, gen: 0, restarts: 0, paused: false, held: [], tickToken: 0, rejoined: true }));
  const links: Link[][] = nodes.map((a) => nodes.map((b) => ({ from: a, to: b, state: 'up' as const, connId: 1, lastAt: 0, helloConn: 1, skewMs: 0 })));
  const host: SimNemesisHost = {
    get now() {
      return clock.now;
    },
    faultsOpen: open,
    s: { budget } as SimSchedule,
    config: { nodes: nodes.map((n) => ({ id: n.id })), stores: [] } as unknown as SimNemesisHost['config'],
    nodes,
    byId: new Map(nodes.map((n) => [n.id, n])),
    links,
    cuts: nodes.map(() => nodes.map(() => 0)),
    pkeys: [],
    stats: { pauses: 0, partitions: 0, crashes: 0, faultsSkipped: 0 } as SimStats,
    durability: {} as SimNemesisHost['durability'],
    at: (t, fn) => void events.push([t, fn]),
    crash: (x, why) => void asked.push(`crash ${x.id} ${why}`),
    restart: (x) => void asked.push(`restart ${x.id}`),
    pause: (x) => {
      x.paused = true;
      asked.push(`pause ${x.id}`);
    },
    resume: (x) => {
      x.paused = false;
      asked.push(`resume ${x.id}`);
    },
    breakLink: (l, why) => void asked.push(`break ${l.from.id}->${l.to.id} ${why}`),
    bestEntry: () => undefined,
    current: () => true,
    mapCurrent: () => true,
    allHealthy: () => true,
    servingActive: () => null,
    trace: () => undefined,
    violate: (inv) => {
      throw new Error(inv);
    },
  };
  /** Runs the queued events in time order up to `t`. */
  const runTo = (t: number): void => {
    for (;;) {
      events.sort((a, b) => a[0] - b[0]);
      if (events.length === 0 || events[0][0] > t) break;
      const [at, fn] = events.shift()!;
      clock.now = at;
      fn();
    }
    clock.now = t;
  };
  return { nem: new SimNemesis(host), nodes, asked, runTo };
}

describe('SimNemesis (nodes/sim/sim-nemesis.ts): the simulation\'s fault driver', () => {
  it('a pause of a node resumes it at its end; its end is kept until then, so a heal-all can end it early', () => {
    const w = world();
    w.nem.fault({ atMs: 0, kind: 'pause', target: { kind: 'node', index: 1 }, durationMs: 700 }, 10_000);
    expect(w.asked).toEqual(['pause n2']);
    expect(w.nem.faultEnds).toHaveLength(1);
    w.runTo(699);
    expect(w.nodes[1].paused).toBe(true);
    w.runTo(700);
    expect(w.asked).toEqual(['pause n2', 'resume n2']);
    expect(w.nem.faultEnds).toHaveLength(0);
    // healed early by the simulator: the end runs once, the timer then finds nothing to end
    w.nem.fault({ atMs: 0, kind: 'pause', target: { kind: 'node', index: 0 }, durationMs: 500 }, 10_000);
    for (const end of w.nem.faultEnds.splice(0)) end();
    w.runTo(2_000);
    expect(w.asked.filter((a) => a === 'resume n1')).toHaveLength(1);
  });

  it('no fault starts outside the workload phase, and a paused node is not paused twice', () => {
    const closed = world('within', false);
    closed.nem.fault({ atMs: 0, kind: 'pause', target: { kind: 'node', index: 0 }, durationMs: 500 }, 10_000);
    expect(closed.asked).toEqual([]);
    const w = world();
    w.nem.fault({ atMs: 0, kind: 'pause', target: { kind: 'node', index: 2 }, durationMs: 500 }, 10_000);
    w.nem.fault({ atMs: 0, kind: 'pause', target: { kind: 'node', index: 2 }, durationMs: 500 }, 10_000);
    expect(w.asked).toEqual(['pause n3']);
  });
});
