import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { KvStatus } from './kv-status.js';
import type { Member, RuntimeEntry } from './cluster-messages.js';
import { advertisedPolicy, handleAdmin, parseAdminCommand, planRegeneration, setPolicyCommand, type AdminContext } from './node-admin.js';
import { decodeRequest, decodeResponse, encodeRequest, encodeResponse, Op } from './client-protocol.js';
import { FrameReader, FrameWriter } from './framing.js';
import { runtimeEntry } from './test-support/runtime-entry.js';

const m = (node: string, inc = `${node}-i1`): Member => ({ node, inc });

function entry(over: Partial<RuntimeEntry> = {}): RuntimeEntry {
  return runtimeEntry({ store: 'sync3', epoch: 4, term: 2, activeSince: 1, ...over });
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
    partitionsOf: (store) => (store === 'sync3' || store === 'rf1' ? [`${store}/0`] : []),
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
    expect(parseAdminCommand('rebalance')).toEqual({ cmd: 'rebalance' });
    expect(parseAdminCommand('join n4')).toEqual({ cmd: 'join', node: 'n4' });
    expect(parseAdminCommand('leave n2')).toEqual({ cmd: 'leave', node: 'n2' });
    expect(parseAdminCommand('leave')).toBe('usage: leave <node>');
    expect(parseAdminCommand('rebalance now')).toBe('usage: rebalance');
    expect(parseAdminCommand('grow')).toBe('unknown admin command "grow" (known: handoff, regenerate, set-policy, join, leave, rebalance)');
  });

  it('never throws on any text (property)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 60 }), (s) => {
        const r = parseAdminCommand(s);
        expect(typeof r === 'string' || ['handoff', 'regenerate', 'set-policy', 'join', 'leave', 'rebalance'].includes(r.cmd)).toBe(true);
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

  it('parses set-policy with a JSON string value (any string, the empty one included), and round-trips setPolicyCommand (property)', () => {
    expect(parseAdminCommand('set-policy sync3 "1-12:8,13-:50"')).toEqual({ cmd: 'set-policy', store: 'sync3', policy: '1-12:8,13-:50' });
    expect(parseAdminCommand('set-policy sync3 ""')).toEqual({ cmd: 'set-policy', store: 'sync3', policy: '' });
    expect(parseAdminCommand('set-policy sync3 1-:5')).toBe('usage: set-policy <store> "<lower-upper:ms,...,lower-:ms>" (a JSON string; "" withdraws the policy)');
    expect(parseAdminCommand('set-policy sync3')).toBe('usage: set-policy <store> "<lower-upper:ms,...,lower-:ms>" (a JSON string; "" withdraws the policy)');
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (v) => {
        expect(parseAdminCommand(setPolicyCommand('async3', v))).toEqual({ cmd: 'set-policy', store: 'async3', policy: v });
      }),
    );
  });

  it('set-policy proposes every partition of the store with the next policy version, ownership untouched', () => {
    const e0 = entry({ policy: { text: '1-:9', version: 3 } });
    const e1 = entry({ pkey: 'sync3/1', partition: 1, epoch: 7 });
    const c = ctx(e0, { partitionsOf: () => ['sync3/0', 'sync3/1'], committed: (k) => (k === 'sync3/0' ? e0 : k === 'sync3/1' ? e1 : undefined) });
    const r = handleAdmin(c, setPolicyCommand('sync3', '1-12:8,13-:50'));
    expect(r.status).toBe(KvStatus.Ok);
    expect(r.invalidPolicy).toBeUndefined();
    expect(r.answer.message).toBe('policy version 4 of sync3 proposed for 2 partitions: 1-12:8,13-:50');
    expect(r.answer.epoch).toBe(8);
    expect(c.proposed.map((p) => [p.entry.pkey, p.entry.policy, p.newTenure, p.entry.active, p.entry.inSync.length])).toEqual([
      ['sync3/0', { text: '1-12:8,13-:50', version: 4 }, false, m('n1'), 3],
      ['sync3/1', { text: '1-12:8,13-:50', version: 4 }, false, m('n1'), 3],
    ]);
    const w = handleAdmin(ctx(entry()), setPolicyCommand('sync3', ''));
    expect([w.status, w.answer.message]).toEqual([KvStatus.Ok, 'policy version 1 of sync3 proposed for 1 partitions: withdrawn ("")']);
  });

  it('set-policy refuses an invalid value by seed 004 (one line, counted), and proposes nothing when any partition is busy', () => {
    for (const [v, msg] of [
      [' ', 'invalid retry range table " ": entry 1 " " is not lower-upper:ms or lower-:ms'],
      ['1-10:5', 'invalid retry range table "1-10:5": no open-ended range: the last range 1-10 must be followed by 11-:ms'],
      ['1-:0', 'invalid retry range table "1-:0": entry 1: delay must be at least 1 ms, got 0'],
      ['1-:2147484', 'invalid retry range table "1-:2147484": entry 1: delay 2147484 ms exceeds 2147483 ms'],
      ['2-:5', 'invalid retry range table "2-:5": ranges must start at 1, first starts at 2'],
    ] as const) {
      const c = ctx(entry());
      const r = handleAdmin(c, setPolicyCommand('sync3', v));
      expect({ v, status: r.status, message: r.answer.message, invalid: r.invalidPolicy }).toEqual({ v, status: KvStatus.InvalidInput, message: msg, invalid: true });
      expect(c.proposed).toEqual([]);
    }
    const busy = ctx(entry(), { inflight: () => true });
    expect(handleAdmin(busy, setPolicyCommand('sync3', '1-:5')).answer.message).toBe('another change of sync3/0 is in flight');
    expect(busy.proposed).toEqual([]);
    expect(handleAdmin(ctx(entry()), setPolicyCommand('nope', '1-:5')).answer.message).toBe('unknown store "nope"');
    expect(handleAdmin(ctx(entry(), { isLeader: false, leader: 'n2' }), setPolicyCommand('sync3', '1-:5')).status).toBe(KvStatus.Moved);
  });

  it('a node advertises the highest committed policy version of a store, else the configured property', () => {
    expect(advertisedPolicy([undefined, entry()], '1-:500')).toEqual({ text: '1-:500', version: 0 });
    expect(advertisedPolicy([entry({ policy: { text: '1-:7', version: 2 } }), entry({ policy: { text: '1-:9', version: 3 } }), entry({ policy: { text: '1-:1', version: 1 } })], '1-:500')).toEqual({ text: '1-:9', version: 3 });
    expect(advertisedPolicy([entry({ policy: { text: '', version: 1 } })], '1-:500')).toEqual({ text: '', version: 1 });
  });
});
