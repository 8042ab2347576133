import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { KvStatus } from './kv-status.js';
import type { Member, RuntimeEntry } from './cluster-messages.js';
import { handleAdmin, parseAdminCommand, planRegeneration, type AdminContext } from './node-admin.js';
import { decodeRequest, decodeResponse, encodeRequest, encodeResponse, Op } from './client-protocol.js';
import { FrameReader, FrameWriter } from './framing.js';

const m = (node: string, inc = `${node}-i1`): Member => ({ node, inc });

function entry(over: Partial<RuntimeEntry> = {}): RuntimeEntry {
  return {
    pkey: 'sync3/0',
    store: 'sync3',
    partition: 0,
    epoch: 4,
    term: 2,
    active: m('n1'),
    activeSince: 1,
    health: 'Healthy',
    inSync: [m('n1'), m('n2'), m('n3')],
    handoffTo: null,
    syncFrom: null,
    replicas: ['n1', 'n2', 'n3'],
    mapVersion: 1,
    ...over,
  };
}

/** A context over one committed entry; records proposals. */
function ctx(e: RuntimeEntry | undefined, over: Partial<AdminContext> = {}, live: string[] = ['n1', 'n2', 'n3', 'n4', 'n5']): AdminContext & { proposed: Array<{ entry: RuntimeEntry; newTenure: boolean }> } {
  const proposed: Array<{ entry: RuntimeEntry; newTenure: boolean }> = [];
  return {
    node: 'n1',
    isLeader: true,
    leader: 'n1',
    stores: new Map([
      ['sync3', 3],
      ['rf1', 1],
    ]),
    nodes: ['n1', 'n2', 'n3', 'n4', 'n5'],
    committed: (pkey) => (e && pkey === e.pkey ? e : undefined),
    inflight: () => false,
    liveMember: (n) => (live.includes(n) ? m(n) : null),
    propose: (entry, newTenure) => {
      proposed.push({ entry, newTenure });
      return entry.epoch + 1;
    },
    proposed,
    ...over,
  };
}

describe('admin commands (node-admin.ts)', () => {
  it('parses handoff and regenerate, and names what is wrong otherwise', () => {
    expect(parseAdminCommand('handoff sync3/0 to n2')).toEqual({ cmd: 'handoff', store: 'sync3', partition: 0, to: 'n2' });
    expect(parseAdminCommand('  regenerate async3/12 ')).toEqual({ cmd: 'regenerate', store: 'async3', partition: 12 });
    expect(parseAdminCommand('handoff sync3/0 n2')).toBe('usage: handoff <store>/<partition> to <node>');
    expect(parseAdminCommand('handoff sync3/01 to n2')).toBe('usage: handoff <store>/<partition> to <node>');
    expect(parseAdminCommand('regenerate sync3')).toBe('usage: regenerate <store>/<partition>');
    expect(parseAdminCommand('rebalance')).toBe('unknown admin command "rebalance" (known: handoff, regenerate)');
  });

  it('never throws on any text (property)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 60 }), (s) => {
        const r = parseAdminCommand(s);
        expect(typeof r === 'string' || r.cmd === 'handoff' || r.cmd === 'regenerate').toBe(true);
      }),
    );
  });

  it('the leader proposes a handoff to a live in-sync member, as a failback does (same tenure, handoffTo set)', () => {
    const c = ctx(entry());
    const r = handleAdmin(c, 'handoff sync3/0 to n2');
    expect(r.status).toBe(KvStatus.Ok);
    expect(r.answer).toEqual({ ok: true, node: 'n1', leader: 'n1', message: 'handoff of sync3/0 from n1 to n2 proposed', epoch: 5 });
    expect(c.proposed).toHaveLength(1);
    expect(c.proposed[0].newTenure).toBe(false);
    expect(c.proposed[0].entry.handoffTo).toEqual(m('n2'));
    expect(c.proposed[0].entry.active).toEqual(m('n1'));
  });

  it('refuses what cannot be handed off now, and sends other nodes to the leader', () => {
    const cases: Array<[AdminContext, string, KvStatus, string]> = [
      [ctx(entry(), { isLeader: false, leader: 'n2', node: 'n3' }), 'handoff sync3/0 to n2', KvStatus.Moved, 'not the leader: ask n2'],
      [ctx(entry(), { isLeader: false, leader: null }), 'handoff sync3/0 to n2', KvStatus.Moved, 'not the leader, and no leader known'],
      [ctx(entry()), 'handoff nope/0 to n2', KvStatus.InvalidInput, 'unknown store "nope"'],
      [ctx(entry()), 'handoff sync3/7 to n2', KvStatus.InvalidInput, 'unknown partition sync3/7'],
      [ctx(entry()), 'handoff sync3/0 to n9', KvStatus.InvalidInput, 'unknown node "n9"'],
      [ctx(entry()), 'handoff sync3/0 to n1', KvStatus.Unavailable, 'n1 is already the active owner of sync3/0'],
      [ctx(entry({ inSync: [m('n1'), m('n2')] })), 'handoff sync3/0 to n3', KvStatus.Unavailable, 'n3 is not in sync in sync3/0'],
      [ctx(entry(), {}, ['n1', 'n2']), 'handoff sync3/0 to n3', KvStatus.Unavailable, 'n3 is not live'],
      [ctx(entry({ handoffTo: m('n1') , active: m('n2')})), 'handoff sync3/0 to n3', KvStatus.Unavailable, 'sync3/0 already hands off to n1'],
      [ctx(entry({ health: 'Recovering' })), 'handoff sync3/0 to n2', KvStatus.Unavailable, 'sync3/0 is Recovering'],
      [ctx(entry({ active: null, health: 'Unavailable' })), 'handoff sync3/0 to n2', KvStatus.Unavailable, 'sync3/0 is Unavailable (no active owner)'],
      [ctx(entry(), { inflight: () => true }), 'handoff sync3/0 to n2', KvStatus.Unavailable, 'another change of sync3/0 is in flight'],
      [ctx(entry()), 'handoff', KvStatus.InvalidInput, 'usage: handoff <store>/<partition> to <node>'],
    ];
    for (const [c, cmd, status, message] of cases) {
      const r = handleAdmin(c, cmd);
      expect({ cmd, status: r.status, message: r.answer.message, ok: r.answer.ok }).toEqual({ cmd, status, message, ok: false });
    }
  });

  it('a regeneration keeps the active and the in-sync copies, at a new map version and a new tenure', () => {
    const c = ctx(entry());
    const r = handleAdmin(c, 'regenerate sync3/0');
    expect(r.status).toBe(KvStatus.Ok);
    expect(r.answer.message).toBe('regeneration of sync3/0 proposed: map version 2, replicas n1,n2,n3');
    const p = c.proposed[0];
    expect(p.newTenure).toBe(true);
    expect(p.entry).toMatchObject({ active: m('n1'), replicas: ['n1', 'n2', 'n3'], inSync: [m('n1'), m('n2'), m('n3')], health: 'Healthy', mapVersion: 2, keepCopies: true });
  });

  it('a regeneration re-homes a dead replica on a live spare node, which starts out of sync', () => {
    const e = entry({ inSync: [m('n1'), m('n3')], health: 'Degraded' });
    const next = planRegeneration(e, 3, ['n1', 'n2', 'n3', 'n4', 'n5'], (n) => (n === 'n2' ? null : m(n)));
    expect(next).toMatchObject({ replicas: ['n1', 'n3', 'n4'], inSync: [m('n1'), m('n3')], health: 'Degraded', mapVersion: 2, keepCopies: true });
    expect(planRegeneration(entry({ active: m('n1', 'old') }), 3, ['n1', 'n2', 'n3'], (n) => m(n))).toBe("sync3/0's active n1 is not live");
    expect(planRegeneration(entry({ health: 'Unavailable', active: null }), 3, ['n1'], (n) => m(n))).toBe('sync3/0 has no active owner');
  });

  it('travels on the wire (Op.Admin request and response)', () => {
    const w = new FrameWriter(8);
    encodeRequest(w, { op: Op.Admin, reqId: 9, command: 'handoff sync3/0 to n2' });
    const req = decodeRequest(new FrameReader(1 << 20).push(w.take())[0]);
    expect(req).toEqual({ op: Op.Admin, reqId: 9, command: 'handoff sync3/0 to n2' });
    encodeResponse(w, { op: Op.Admin, reqId: 9, status: KvStatus.Moved, flags: 0, json: '{"ok":false}' });
    expect(decodeResponse(new FrameReader(1 << 20).push(w.take())[0])).toEqual({ op: Op.Admin, reqId: 9, status: KvStatus.Moved, flags: 0, json: '{"ok":false}' });
  });
});
