import { describe, expect, it } from 'vitest';
import { DEFAULT_TIMING, validateClusterConfig } from '../cluster-config.js';
import type { RuntimeEntry } from '../cluster-messages.js';
import { runtimeEntry } from '../test-support/runtime-entry.js';
import type { FollowerLink, LocalPartition } from './partition-state.js';
import { PeerSignals } from './peer-signals.js';
import { PeerTable } from './peer-table.js';

function signals(o: { leader?: boolean; bug?: boolean } = {}) {
  const config = validateClusterConfig({
    cluster: 't',
    nodes: [1, 2, 3].map((i) => ({ id: `n${i}`, host: '127.0.0.1', clientPort: 7000 + i, clusterPort: 7100 + i })),
    stores: [{ name: 's', replicationFactor: 3, ackMode: 'sync', segments: 4 }],
    ...(o.bug ? { selfTestBug: 'skip-liveness-recheck' } : {}),
  });
  const probes: string[] = [];
  const logs: Array<[string, Record<string, unknown> | undefined]> = [];
  const ticks: number[] = [];
  const env = { now: () => 5_000, log: (e: string, f?: Record<string, unknown>) => void logs.push([e, f]), probe: (n: string) => void probes.push(n) };
  const fd = new PeerTable({ node: 'n1', inc: 'n1-i1' }, ['n2', 'n3'], 2, DEFAULT_TIMING, { now: env.now, log: env.log, term: () => 1 });
  fd.noteIncarnation('n2', 'n2-i1');
  fd.noteIncarnation('n3', 'n3-i1');
  // n1 is active of s/0 streaming to n2; n1 follows n3 in s/1
  const link = { member: { node: 'n2', inc: 'n2-i1' }, streaming: true } as FollowerLink;
  const active = { pkey: 's/0', act: { followers: new Map([['n2', link]]) }, resyncWanted: false } as unknown as LocalPartition;
  const replica = { pkey: 's/1', act: null, resyncWanted: false } as unknown as LocalPartition;
  const committed = new Map<string, RuntimeEntry>([['s/1', runtimeEntry({ partition: 1, active: { node: 'n3', inc: 'n3-i1' } })]]);
  const ps = new PeerSignals({ config, env, fd, parts: new Map([['s/0', active], ['s/1', replica]]), committed, isLeader: o.leader ?? false, leaderTick: (now) => void ticks.push(now) });
  return { ps, fd, probes, logs, ticks, link, replica };
}

describe('PeerSignals (nodes/core/peer-signals.ts): NodeLeft re-checked, probes, dead incarnations', () => {
  it('a closed connection stops the stream to that peer, asks a resync of what it owns, and probes it once (never believed as it comes)', () => {
    const { ps, fd, probes, link, replica } = signals({ leader: true });
    ps.onPeerDown('n2');
    expect(link.streaming).toBe(false);
    expect(replica.resyncWanted).toBe(false);
    ps.onPeerDown('n3');
    expect(replica.resyncWanted).toBe(true);
    ps.onPeerDown('n3');
    expect(probes).toEqual(['n2', 'n3']);
    expect(fd.peers.get('n3')!.silentConfirmed).toBe(false);
  });

  it('a refused probe marks that incarnation gone (the leader decides at once); alive or timeout change nothing', () => {
    const { ps, fd, ticks } = signals({ leader: true });
    ps.onPeerDown('n2');
    ps.onProbeResult('n2', 'alive');
    expect(fd.peers.get('n2')!.deadIncs.size).toBe(0);
    ps.onPeerDown('n2');
    ps.onProbeResult('n2', 'refused');
    expect([...fd.peers.get('n2')!.deadIncs]).toEqual(['n2-i1']);
    expect(ticks).toEqual([5_000]);
    // an answer nobody asked for is ignored
    ps.onProbeResult('n3', 'refused');
    expect(fd.peers.get('n3')!.deadIncs.size).toBe(0);
  });

  it('drops messages of a dead incarnation, logging once per incarnation and kind', () => {
    const { ps, fd, logs } = signals();
    fd.peers.get('n2')!.deadIncs.add('n2-i0');
    const hbr = { t: 'hb-r' as const, term: 1, seq: 1, inc: 'n2-i0', reports: [], at: 0, echo: 0 };
    expect(ps.fromDeadIncarnation('n2', hbr)).toBe(true);
    expect(ps.fromDeadIncarnation('n2', hbr)).toBe(true);
    expect(ps.fromDeadIncarnation('n2', { ...hbr, inc: 'n2-i1' })).toBe(false);
    expect(ps.fromDeadIncarnation('n2', { t: 'vote', term: 2 })).toBe(false);
    expect(logs.filter(([e]) => e === 'stale-incarnation')).toEqual([['stale-incarnation', { node: 'n2', inc: 'n2-i0', msg: 'hb-r', current: 'n2-i1' }]]);
  });

  it('the self-test bug skip-liveness-recheck believes the NodeLeft at once (confirmed down, no probe)', () => {
    const { ps, fd, probes, ticks } = signals({ leader: true, bug: true });
    ps.onPeerDown('n2');
    expect(fd.peers.get('n2')!.silentConfirmed).toBe(true);
    expect(probes).toEqual([]);
    expect(ticks).toEqual([5_000]);
  });
});
