import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LeaderTenures, mergeViews, parseJsz, type NodeStreamView } from './nats-ownership.js';

const NODES = ['n1', 'n2', 'n3'];
const view = (node: string, leader: string | null, lastSeq: number): NodeStreamView => ({ node, leader, messages: lastSeq, firstSeq: lastSeq > 0 ? 1 : 0, lastSeq });

describe('NATS ownership: the stream leader and its tenures', () => {
  it('a leader every node names, all caught up: Healthy, all in sync', () => {
    const m = mergeViews('nats', NODES, [view('n1', 'n2', 100), view('n2', 'n2', 104), view('n3', 'n2', 99)], 99, 4);
    expect(m).toEqual({ store: 'nats', partition: 0, node: null, active: 'n2', epoch: 4, health: 'Healthy', replicatedRevision: 99, inSync: ['n1', 'n2', 'n3'], revisions: { n1: 100, n2: 104, n3: 99 } });
  });

  it('a node behind the leader\'s sequence of a round ago, or naming another leader, is out of sync: Degraded', () => {
    const m = mergeViews('nats', NODES, [view('n1', 'n2', 50), view('n2', 'n2', 104), view('n3', 'n1', 104)], 90, 2);
    expect(m.health).toBe('Degraded');
    expect(m.inSync).toEqual(['n2']);
    expect(m.replicatedRevision).toBe(104);
  });

  it('a leader that did not answer, or two self-claims without a majority: Unavailable', () => {
    // n1 was the leader and was killed: the others still name it
    expect(mergeViews('nats', NODES, [view('n2', 'n1', 10), view('n3', 'n1', 10)], 10, 3)).toMatchObject({ active: null, health: 'Unavailable', epoch: 3, inSync: [] });
    // n3 down, n1 and n2 each claim it
    expect(mergeViews('nats', NODES, [view('n1', 'n1', 10), view('n2', 'n2', 10)], 10, 3)).toMatchObject({ active: null, health: 'Unavailable' });
    expect(mergeViews('nats', NODES, [], 0, 0)).toMatchObject({ active: null, health: 'Unavailable', revisions: {} });
  });

  it('a stream cut short does not keep the others out for ever: the bar is the lower of a round ago and now', () => {
    const m = mergeViews('nats', NODES, [view('n1', 'n1', 40), view('n2', 'n1', 40), view('n3', 'n1', 40)], 100, 1);
    expect(m.health).toBe('Healthy');
  });

  it('reads a node\'s /jsz answer (nats-server 2.9 shape)', () => {
    const body = {
      server_id: 'N',
      meta_cluster: { name: 'c', leader: 'n2', cluster_size: 3 },
      account_details: [{ name: '$G', stream_detail: [{ name: 'other' }, { name: 'zaris-certify', cluster: { name: 'c', leader: 'n3', replicas: [] }, state: { messages: 7, first_seq: 2, last_seq: 8 } }] }],
    };
    expect(parseJsz('n1', 'zaris-certify', body)).toEqual({ node: 'n1', leader: 'n3', messages: 7, firstSeq: 2, lastSeq: 8 });
    expect(parseJsz('n1', 'missing', body)).toEqual({ node: 'n1', leader: null, messages: 0, firstSeq: 0, lastSeq: 0 });
    expect(parseJsz('n1', 'zaris-certify', { account_details: [{ stream_detail: [{ name: 'zaris-certify', cluster: { leader: '' } }] }] }).leader).toBeNull();
    expect(() => parseJsz('n1', 's', 'nope')).toThrow(/did not answer JSON/);
  });

  it('tenures: a new number each time another leader is named; none named keeps the number', () => {
    const t = new LeaderTenures();
    expect(t.current()).toEqual({ leader: null, tenure: 0 });
    expect(t.observe(null)).toBe(0);
    expect(t.observe('n1')).toBe(1);
    expect(t.observe('n1')).toBe(1);
    expect(t.observe(null)).toBe(1);
    expect(t.observe('n2')).toBe(2);
    expect(t.observe('n1')).toBe(3);
    expect(t.current()).toEqual({ leader: 'n1', tenure: 3 });
  });

  it('property: tenures never go back and each tenure has exactly one leader', () => {
    fc.assert(
      fc.property(fc.array(fc.option(fc.constantFrom('n1', 'n2', 'n3'), { nil: null })), (seen) => {
        const t = new LeaderTenures();
        const leaderOf = new Map<number, string>();
        let prev = 0;
        for (const l of seen) {
          const n = t.observe(l);
          expect(n).toBeGreaterThanOrEqual(prev);
          prev = n;
          const cur = t.current();
          if (cur.leader !== null) {
            expect(leaderOf.get(n) ?? cur.leader).toBe(cur.leader);
            leaderOf.set(n, cur.leader);
          }
        }
      }),
    );
  });

  it('property: a merged leader answered, claims itself and is named by a majority; in sync nodes name it; Healthy iff all in sync', () => {
    const viewArb = fc.record({ leader: fc.option(fc.constantFrom('n1', 'n2', 'n3'), { nil: null }), lastSeq: fc.nat(50), answered: fc.boolean() });
    fc.assert(
      fc.property(fc.tuple(viewArb, viewArb, viewArb), fc.nat(60), (vs, floor) => {
        const views = vs.flatMap((v, i) => (v.answered ? [view(NODES[i], v.leader, v.lastSeq)] : []));
        const m = mergeViews('nats', NODES, views, floor, 7);
        expect(m.epoch).toBe(7);
        if (m.active === null) {
          expect(m.health).toBe('Unavailable');
          expect(m.inSync).toEqual([]);
          return;
        }
        expect(views.find((v) => v.node === m.active)?.leader).toBe(m.active);
        expect(views.filter((v) => v.leader === m.active).length).toBeGreaterThanOrEqual(2);
        expect(m.inSync).toContain(m.active);
        for (const n of m.inSync ?? []) expect(views.find((v) => v.node === n)?.leader).toBe(m.active);
        expect(m.health === 'Healthy').toBe(m.inSync?.length === 3);
      }),
    );
  });
});
