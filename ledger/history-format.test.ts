import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HistoryFormatError, parseHistory, validateHistory } from './history-format.js';
import { FIXTURES } from './test-support/fixtures.js';
import { build, planArb } from './test-support/random-history.js';

function sample(): Record<string, unknown> {
  return JSON.parse(JSON.stringify({
    format: 'zaris-history/1',
    nodes: ['n1', 'n2', 'n3'],
    stores: [{ name: 'sync3', replicationFactor: 3, ackMode: 'sync' }],
    partitions: [{ store: 'sync3', partition: 0, replicas: ['n1', 'n2', 'n3'] }],
    faults: [{ id: 'f1', kind: 'kill', nodes: ['n1'], start: 1000, end: 4000 }],
    ownership: [{ t: 0, store: 'sync3', partition: 0, active: 'n1', epoch: 1, health: 'Healthy', replicatedRevision: 0 }],
    writes: [
      { id: 'w1', store: 'sync3', key: 'k1', partition: 0, seq: 1, op: 'put', invoke: 100, complete: 104, outcome: 'ok',
        ack: { node: 'n1', epoch: 1, version: 1, revision: 1, ackMode: 'sync' } },
      { id: 'w2', store: 'sync3', key: 'k1', partition: 0, seq: 2, op: 'delete', invoke: 200, outcome: 'info' },
    ],
    finalReads: [{ store: 'sync3', key: 'k1', value: 'w1' }],
  })) as Record<string, unknown>;
}

type Mutation = [string, (h: any) => void, string];
const MUTATIONS: Mutation[] = [
  ['format', (h) => (h.format = 'zaris-history/3'), 'format must be "zaris-history/1" or "zaris-history/2"'],
  ['nodes', (h) => (h.nodes = 'n1'), 'nodes must be an array'],
  ['duplicate node', (h) => h.nodes.push('n1'), 'nodes lists a node twice'],
  ['store rf', (h) => (h.stores[0].replicationFactor = 0), 'stores[0].replicationFactor must be an integer >= 1'],
  ['store ack mode', (h) => (h.stores[0].ackMode = 'lazy'), 'stores[0].ackMode must be sync or async'],
  ['partition store', (h) => (h.partitions[0].store = 'nope'), 'partitions[0].store names unknown store "nope"'],
  ['replica', (h) => (h.partitions[0].replicas = ['n9']), 'partitions[0].replicas[0] names unknown node "n9"'],
  ['fault kind', (h) => (h.faults[0].kind = 'reboot'), 'faults[0].kind must be kill, stop, pause or partition'],
  ['fault end', (h) => (h.faults[0].end = 10), 'faults[0].end must not be before its start'],
  ['fault caughtUp on pause', (h) => Object.assign(h.faults[0], { kind: 'pause', caughtUp: 5000 }), 'faults[0].caughtUp is only allowed on kill and stop faults'],
  ['fault nodes', (h) => (h.faults[0].nodes = []), 'faults[0].nodes must list at least one node'],
  ['sample partition', (h) => (h.ownership[0].partition = 3), 'ownership[0].partition 3 is not a partition of store sync3'],
  ['sample epoch', (h) => (h.ownership[0].epoch = 1.5), 'ownership[0].epoch must be an integer >= 0'],
  ['outcome', (h) => (h.writes[1].outcome = 'done'), 'writes[1].outcome must be ok, fail or info'],
  ['op', (h) => (h.writes[0].op = 'upsert'), 'writes[0].op must be put, cas, create or delete'],
  ['ack missing', (h) => delete h.writes[0].ack, 'writes[0].ack must be an object'],
  ['ack on info', (h) => (h.writes[1].ack = h.writes[0].ack), 'writes[1].ack is only allowed when outcome is ok'],
  ['ack node', (h) => (h.writes[0].ack.node = 'n7'), 'writes[0].ack.node names unknown node "n7"'],
  ['complete missing', (h) => delete h.writes[0].complete, 'writes[0].complete is required when outcome is ok'],
  ['complete early', (h) => (h.writes[0].complete = 50), 'writes[0].complete must not be before its invoke'],
  ['invoke', (h) => (h.writes[0].invoke = -1), 'writes[0].invoke must be a number of milliseconds >= 0'],
  ['seq twice', (h) => (h.writes[1].seq = 1), 'writes[1].seq 1 is used twice for key k1 of store sync3'],
  ['id twice', (h) => (h.writes[1].id = 'w1'), 'writes[1].id "w1" is used twice for key k1 of store sync3'],
  ['partition differs', (h) => { h.partitions.push({ store: 'sync3', partition: 1, replicas: ['n2'] }); h.writes[1].partition = 1; }, "writes[1].partition 1 differs from the partition of the key's other writes (0)"],
  ['read value', (h) => (h.finalReads[0].value = 7), 'finalReads[0].value must be a write id (string) or null'],
  ['unreadable with value', (h) => (h.finalReads[0].unreadable = true), 'finalReads[0].value must be null when unreadable is true'],
  ['read twice', (h) => h.finalReads.push({ store: 'sync3', key: 'k1', value: null }), 'finalReads[1] reads key k1 of store sync3 a second time'],
  ['trace type', (h) => (h.writes[0].trace = [1]), 'writes[0].trace must be a string'],
];

function sampleV2(): Record<string, unknown> {
  const h = sample() as any;
  h.format = 'zaris-history/2';
  h.run = { status: 'complete', inconclusiveReason: null, beyondBudget: false, asyncLagMaxMs: 1000, leaseMs: 2500, selfTestBug: null };
  h.faults[0] = { id: 'f1', kind: 'partition', nodes: ['n1'], start: 1000, effective: 1002, end: 4000, isolated: ['n1'] };
  Object.assign(h.ownership[0], { node: 'n2', inSync: ['n1', 'n2'], revisions: { n1: 4, n2: 3 }, replicas: ['n1', 'n2', 'n3'] });
  h.writes[0].ack.copies = 2;
  h.reads = [{ id: 'r1', store: 'sync3', key: 'k1', invoke: 110, complete: 112, outcome: 'ok', node: 'n1', value: 'w1', kind: 'get' }];
  return h as Record<string, unknown>;
}

const V2_MUTATIONS: Mutation[] = [
  ['run missing', (h) => delete h.run, 'run must be an object'],
  ['fault kind', (h) => (h.faults[0].kind = 'flood'), 'faults[0].kind must be kill, stop, pause, partition, clock or client-cut'],
  ['run status', (h) => (h.run.status = 'done'), 'run.status must be complete, running or interrupted'],
  ['run budget', (h) => (h.run.beyondBudget = 'no'), 'run.beyondBudget must be true or false'],
  ['run lag', (h) => delete h.run.asyncLagMaxMs, 'run.asyncLagMaxMs must be a number of milliseconds >= 0'],
  ['run reason', (h) => (h.run.inconclusiveReason = 3), 'run.inconclusiveReason must be text or null'],
  ['run lease', (h) => (h.run.leaseMs = -1), 'run.leaseMs must be a number of milliseconds >= 0'],
  ['fault effective', (h) => (h.faults[0].effective = 999), 'faults[0].effective must not be before its start'],
  ['fault isolated on a kill', (h) => (h.faults[0].kind = 'kill'), 'faults[0].isolated is only allowed on partition faults'],
  ['fault isolated node', (h) => (h.faults[0].isolated = ['n9']), 'faults[0].isolated[0] names unknown node "n9"'],
  ['sample node', (h) => (h.ownership[0].node = 'n9'), 'ownership[0].node names unknown node "n9"'],
  ['sample inSync', (h) => (h.ownership[0].inSync = ['n1', 'n1']), 'ownership[0].inSync lists a node twice'],
  ['sample revisions node', (h) => (h.ownership[0].revisions = { n7: 1 }), 'ownership[0].revisions names unknown node "n7"'],
  ['sample revision', (h) => (h.ownership[0].revisions = { n1: -1 }), 'ownership[0].revisions.n1 must be an integer >= 0'],
  ['ack copies', (h) => (h.writes[0].ack.copies = 1.5), 'writes[0].ack.copies must be an integer >= 0'],
  ['read id twice', (h) => h.reads.push({ ...h.reads[0] }), 'reads[1].id "r1" is used twice'],
  ['read store', (h) => (h.reads[0].store = 'x'), 'reads[0].store names unknown store "x"'],
  ['read outcome', (h) => (h.reads[0].outcome = 'maybe'), 'reads[0].outcome must be ok, fail or info'],
  ['read value on fail', (h) => (h.reads[0].outcome = 'fail'), 'reads[0].value is only allowed when outcome is ok'],
  ['read value missing', (h) => delete h.reads[0].value, 'reads[0].value must be a write id (string) or null'],
  ['read complete early', (h) => (h.reads[0].complete = 100), 'reads[0].complete must not be before its invoke'],
  ['read node', (h) => (h.reads[0].node = 'n8'), 'reads[0].node names unknown node "n8"'],
  ['read kind', (h) => (h.reads[0].kind = 'scan'), 'reads[0].kind must be get, getMany or probe'],
];

describe('parseHistory', () => {
  it('accepts the example and keeps only the known fields', () => {
    const raw = sample();
    (raw as any).writes[0].extra = 'ignored';
    const h = parseHistory(JSON.stringify(raw));
    expect(h.writes[1]).toEqual({ id: 'w2', store: 'sync3', key: 'k1', partition: 0, seq: 2, op: 'delete', invoke: 200, outcome: 'info' });
    expect('extra' in h.writes[0]).toBe(false);
    expect(h.faults[0]).toEqual({ id: 'f1', kind: 'kill', nodes: ['n1'], start: 1000, end: 4000 });
  });

  it('accepts every fixture, v1 and v2, unchanged', () => {
    for (const f of FIXTURES) expect(validateHistory(JSON.parse(JSON.stringify(f.history))), f.name).toEqual(f.history);
  });

  it('reads a v1 file as v1: the fields of v2 are ignored there', () => {
    const raw = sample() as any;
    raw.run = { status: 'running' };
    raw.faults[0].effective = 1001;
    raw.ownership[0].inSync = ['n1'];
    raw.writes[0].ack.copies = 1;
    raw.reads = [{ id: 'r1' }];
    const h = parseHistory(JSON.stringify(raw));
    expect(h.run).toBeUndefined();
    expect(h.reads).toBeUndefined();
    expect(h.faults[0]).toEqual({ id: 'f1', kind: 'kill', nodes: ['n1'], start: 1000, end: 4000 });
    expect(h.ownership[0].inSync).toBeUndefined();
    expect(h.writes[0].ack!.copies).toBeUndefined();
  });

  it('fills a v2 history without reads with an empty list, and keeps its v2 fields', () => {
    const raw = sampleV2() as any;
    delete raw.reads;
    const h = parseHistory(JSON.stringify(raw));
    expect(h.reads).toEqual([]);
    expect(h.run).toEqual({ status: 'complete', inconclusiveReason: null, beyondBudget: false, asyncLagMaxMs: 1000, leaseMs: 2500, selfTestBug: null });
    expect(h.faults[0]).toEqual({ id: 'f1', kind: 'partition', nodes: ['n1'], start: 1000, effective: 1002, end: 4000, isolated: ['n1'] });
    expect(h.ownership[0]).toMatchObject({ node: 'n2', inSync: ['n1', 'n2'], revisions: { n1: 4, n2: 3 }, replicas: ['n1', 'n2', 'n3'] });
    expect(h.writes[0].ack).toEqual({ node: 'n1', epoch: 1, version: 1, revision: 1, ackMode: 'sync', copies: 2 });
  });

  it.each(V2_MUTATIONS)('v2: names the bad field: %s', (_name, mutate, message) => {
    const raw = sampleV2();
    mutate(raw);
    expect(() => parseHistory(JSON.stringify(raw))).toThrow(new HistoryFormatError(message));
  });

  it.each(MUTATIONS)('names the bad field: %s', (_name, mutate, message) => {
    const raw = sample();
    mutate(raw);
    expect(() => parseHistory(JSON.stringify(raw))).toThrow(new HistoryFormatError(message));
  });

  it("reads the nemesis's extension fault kinds (clock, client-cut) in v2 only", () => {
    const h = sampleV2() as any;
    h.faults.push({ id: 'f2', kind: 'clock', nodes: ['n2'], start: 5000, end: 6000 }, { id: 'f3', kind: 'client-cut', nodes: ['n3'], start: 5000, effective: 5001, end: 7000 });
    expect(validateHistory(JSON.parse(JSON.stringify(h))).faults.map((f) => f.kind)).toEqual(['partition', 'clock', 'client-cut']);
    const v1 = sample() as any;
    v1.faults[0].kind = 'clock';
    expect(() => validateHistory(v1)).toThrow('faults[0].kind must be kill, stop, pause or partition');
  });

  it('rejects text that is not JSON in one line', () => {
    expect(() => parseHistory('{"format":')).toThrow(HistoryFormatError);
    expect(() => parseHistory('{"format":')).toThrow(/^not valid JSON: /);
  });

  it('property: a generated history survives JSON and parsing unchanged', () => {
    fc.assert(
      fc.property(planArb, (plan) => {
        const { history } = build(plan);
        expect(parseHistory(JSON.stringify(history))).toEqual(history);
      }),
      { numRuns: 200 },
    );
  });

  it('property: any damage gives a one-line HistoryFormatError or a valid history, never another error', () => {
    const damage = fc.record({ path: fc.array(fc.nat(20), { minLength: 1, maxLength: 4 }), value: fc.jsonValue({ maxDepth: 2 }), drop: fc.boolean() });
    fc.assert(
      fc.property(planArb, damage, (plan, d) => {
        const doc = JSON.parse(JSON.stringify(build(plan).history)) as unknown;
        // walk down the path by index into keys / elements, then overwrite or drop that field
        let node: any = doc;
        for (let i = 0; i < d.path.length - 1; i++) {
          const keys = Object.keys(node);
          if (keys.length === 0) break;
          const next = node[keys[d.path[i] % keys.length]];
          if (typeof next !== 'object' || next === null) break;
          node = next;
        }
        const keys = Object.keys(node);
        if (keys.length > 0) {
          const k = keys[d.path[d.path.length - 1] % keys.length];
          if (d.drop && !Array.isArray(node)) delete node[k];
          else node[k] = d.value;
        }
        try {
          parseHistory(JSON.stringify(doc));
        } catch (e) {
          expect(e).toBeInstanceOf(HistoryFormatError);
          expect((e as Error).message).not.toMatch(/\n/);
        }
      }),
      { numRuns: 500 },
    );
  });
});
