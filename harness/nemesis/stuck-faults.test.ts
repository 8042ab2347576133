import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { drive, FakeCluster, nemesisOn, node, sched } from './test-support/fake-cluster.js';

/** The ledger side of the fake's log: fault rows started and ended, caught up. */
const rows = (c: FakeCluster): string[] => c.log.filter((l) => /^(start|end|reopen|caughtUp)#/.test(l));

describe('faults whose undo failed (issue 22)', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'performance', 'Date'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('a pause whose resume fails is reopened on record; at heal-all a node still frozen is killed (recorded first) and restarted', async () => {
    const c = new FakeCluster();
    c.failResume.add('n3');
    const n = nemesisOn(c, sched([{ kind: 'pause', target: node('n3'), atMs: 0, durationMs: 20 }]));
    await expect(drive(n.run(new AbortController().signal))).rejects.toThrow('resume n3: the engine refused');
    expect(rows(c)).toEqual(['start#1 pause n3', 'end#1', 'reopen#1']);
    expect(c.ended.has(1)).toBe(false);
    expect(c.events.find((e) => e.kind === 'fault-undo-failed')?.detail).toEqual({ id: 1, index: 0, kind: 'pause', nodes: ['n3'], error: 'resume n3: the engine refused' });

    expect(await drive(n.healAll())).toEqual({ healed: true });
    expect(c.log.slice(c.log.indexOf('reopen#1') + 1)).toEqual(['end#1', 'start#2 kill n3', 'kill n3', 'heal', 'end#2', 'restart n3', 'caughtUp#2']);
    expect(c.detailOf(2)).toEqual({ index: 0, node: 'n3', replaces: 1, why: 'resume failed: resume n3: the engine refused' });
    expect(c.starts.find((s) => s.id === 2)!.target).toBe('replaces:1');
    expect(c.state.get('n3')).toBe('up');
  });

  it('a resume that works at heal-all ends the reopened row and resumes the node; nothing is killed', async () => {
    const c = new FakeCluster();
    c.failResume.add('n2');
    const n = nemesisOn(c, sched([{ kind: 'pause', target: node('n2'), atMs: 0, durationMs: 20 }]));
    await expect(drive(n.run(new AbortController().signal))).rejects.toThrow();
    c.failResume.clear();
    expect(await drive(n.healAll())).toEqual({ healed: true });
    expect(c.log.slice(c.log.indexOf('reopen#1') + 1)).toEqual(['end#1', 'resume n2', 'heal']);
  });

  it('a partition whose removal fails goes on (its row reopened) until heal-all heals it', async () => {
    const c = new FakeCluster(['n1', 'n2', 'n3']);
    const n = nemesisOn(c, sched([{ kind: 'partition', topology: 'isolate', target: node('n1'), atMs: 0, durationMs: 20 }], { nodeCount: 3 }));
    const run = n.run(new AbortController().signal);
    // the cut is installed at once; its removal, 20 ms later, fails
    await vi.advanceTimersByTimeAsync(10);
    c.failNet = true;
    await expect(drive(run)).rejects.toThrow('partition: iptables failed');
    expect(rows(c)).toEqual(['start#1 partition n1', 'end#1', 'reopen#1']);
    expect(c.grudge).not.toEqual({});

    expect(await drive(n.healAll())).toEqual({ healed: true });
    expect(c.log.slice(-2)).toEqual(['end#1', 'heal']);
    expect(c.grudge).toEqual({});
  });

  it('a crashed node that cannot be restarted stays down on record; heal-all restarts it, or leaves its row open', async () => {
    const c = new FakeCluster();
    c.failRestart.add('n2');
    const n = nemesisOn(c, sched([{ kind: 'kill', target: node('n2'), atMs: 0, durationMs: 20 }]));
    await expect(drive(n.run(new AbortController().signal))).rejects.toThrow('restart n2: port in use');
    expect(rows(c)).toEqual(['start#1 kill n2', 'end#1', 'reopen#1']);
    // heal-all: the restart fails again: the crash goes on, its row reopened again and left open
    expect(await drive(n.healAll())).toEqual({ healed: false, reason: 'heal failed: restart n2: restart n2: port in use' });
    expect(rows(c).slice(3)).toEqual(['end#1', 'reopen#1']);
    expect(c.ended.has(1)).toBe(false);

    const d = new FakeCluster();
    d.failRestart.add('n4');
    const m = nemesisOn(d, sched([{ kind: 'kill', target: node('n4'), atMs: 0, durationMs: 20 }]));
    await expect(drive(m.run(new AbortController().signal))).rejects.toThrow();
    d.failRestart.clear();
    expect(await drive(m.healAll())).toEqual({ healed: true });
    expect(rows(d).slice(3)).toEqual(['end#1', 'caughtUp#1']);
  });

  it('a heal that fails at heal-all leaves the stuck cut on record, its row open', async () => {
    const c = new FakeCluster(['n1', 'n2', 'n3']);
    const n = nemesisOn(c, sched([{ kind: 'client-cut', target: node('n2'), atMs: 0, durationMs: 20 }], { nodeCount: 3 }));
    const run = n.run(new AbortController().signal);
    await vi.advanceTimersByTimeAsync(10);
    c.failNet = true;
    c.failHeal = true;
    await expect(drive(run)).rejects.toThrow('cut: iptables failed');
    expect(await drive(n.healAll())).toMatchObject({ healed: false, reason: 'heal failed: heal: heal: iptables failed' });
    expect(rows(c)).toEqual(['start#1 client-cut n2', 'end#1', 'reopen#1', 'end#1', 'reopen#1']);
    expect(c.ended.has(1)).toBe(false);
  });
});
