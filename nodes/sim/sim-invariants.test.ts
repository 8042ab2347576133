import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Member, RuntimeEntry } from '../cluster-messages.js';
import type { KeyHistory, WriteRecord } from './sim-client.js';
import { classifyFinal, InvariantViolation, SafetyChecker, staleRead, type NodeView } from './sim-invariants.js';
import { runtimeEntry } from '../test-support/runtime-entry.js';

const m = (node: string, inc = `${node}.0`): Member => ({ node, inc });

function entry(over: Partial<RuntimeEntry> = {}): RuntimeEntry {
  return runtimeEntry({ epoch: 3, term: 1, activeSince: 3, ...over }, (n) => `${n}.0`);
}

/** A node view whose committed entry and serving flag the test sets directly. */
function view(id: string, e: RuntimeEntry | undefined, serving = false, inc = `${id}.0`): NodeView & { e: RuntimeEntry | undefined; serving: boolean } {
  const v = {
    id,
    inc,
    e,
    serving,
    isServingActive: (_p: string) => v.serving,
    committedEntry: (_p: string) => v.e,
  };
  return v;
}

function violation(f: () => void): string {
  try {
    f();
  } catch (e) {
    if (e instanceof InvariantViolation) return e.invariant;
    throw e;
  }
  return 'none';
}

describe('SafetyChecker', () => {
  it('flags a committed epoch that goes backwards on one incarnation, not across incarnations', () => {
    const c = new SafetyChecker(['s/0']);
    const a = view('n1', entry({ epoch: 5 }));
    c.checkCommitted(a);
    a.e = entry({ epoch: 6 });
    expect(violation(() => c.checkCommitted(a))).toBe('none');
    a.e = entry({ epoch: 4 });
    expect(violation(() => c.checkCommitted(a))).toBe('epoch-regression');
    // a restarted node starts empty and relearns from older heartbeats first: a new incarnation
    const b = view('n1', entry({ epoch: 6 }), false, 'n1.1');
    expect(violation(() => c.checkCommitted(b))).toBe('none');
  });

  it('flags two different entries committed at the same (partition, epoch)', () => {
    const c = new SafetyChecker(['s/0']);
    c.checkCommitted(view('n1', entry({ epoch: 7 })));
    expect(violation(() => c.checkCommitted(view('n2', entry({ epoch: 7 }))))).toBe('none');
    expect(violation(() => c.checkCommitted(view('n3', entry({ epoch: 7, active: m('n3') }))))).toBe('epoch-conflict');
  });

  it('flags two nodes serving one partition at the same epoch, allows different epochs', () => {
    const c = new SafetyChecker(['s/0']);
    const a = view('n1', entry({ epoch: 4 }), true);
    const b = view('n2', entry({ epoch: 5, active: m('n2') }), true);
    expect(violation(() => c.checkServing([a, b], a))).toBe('none');
    b.e = entry({ epoch: 4, active: m('n2') });
    expect(violation(() => c.checkServing([a, b], a))).toBe('one-active-per-epoch');
    expect(violation(() => c.checkServing([a, b]))).toBe('one-active-per-epoch');
    b.serving = false;
    expect(violation(() => c.checkServing([a, b]))).toBe('none');
  });

  it('flags a read answered by a Recovering active, a stale incarnation or a replica', () => {
    const c = new SafetyChecker(['s/0']);
    expect(violation(() => c.checkRead(view('n1', entry({ health: 'Degraded' })), 's/0', 'Ok'))).toBe('none');
    expect(violation(() => c.checkRead(view('n1', entry({ health: 'Recovering', syncFrom: m('n2') })), 's/0', 'NotFound'))).toBe('read-not-from-active');
    expect(violation(() => c.checkRead(view('n1', entry(), false, 'n1.9'), 's/0', 'Ok'))).toBe('read-not-from-active');
    expect(violation(() => c.checkRead(view('n2', entry()), 's/0', 'Ok'))).toBe('read-not-from-active');
    expect(violation(() => c.checkRead(view('n2', undefined), 's/0', 'Ok'))).toBe('read-not-from-active');
  });

  it('flags an acknowledgement from anyone but the committed active', () => {
    const c = new SafetyChecker(['s/0']);
    expect(violation(() => c.checkAck(view('n1', entry()), 's/0'))).toBe('none');
    expect(violation(() => c.checkAck(view('n2', entry()), 's/0'))).toBe('ack-not-from-active');
    expect(violation(() => c.checkAck(view('n1', entry({ active: null, health: 'Unavailable' })), 's/0'))).toBe('ack-not-from-active');
  });

  it('flags an ack or a read by an owner whose tenure a committed entry elsewhere has ended (issue 10)', () => {
    const c = new SafetyChecker(['s/0']);
    const old = view('n1', entry({ epoch: 3, activeSince: 3 }));
    c.checkCommitted(old);
    expect(violation(() => c.checkNotDeposed(old, 's/0', 'ack'))).toBe('none');
    // the same tenure at a later epoch (an in-sync change, a health change) deposes nobody
    c.checkCommitted(view('n3', entry({ epoch: 4, activeSince: 3, health: 'Degraded' })));
    expect(violation(() => c.checkNotDeposed(old, 's/0', 'ack'))).toBe('none');
    // another active promoted at epoch 5, committed on n2 only
    c.checkCommitted(view('n2', entry({ epoch: 5, activeSince: 5, active: m('n2') })));
    expect(violation(() => c.checkNotDeposed(old, 's/0', 'ack'))).toBe('stale-owner-ack');
    expect(violation(() => c.checkNotDeposed(old, 's/0', 'read'))).toBe('stale-owner-read');
    // the new owner itself is fine; so is n1 once it holds a later tenure of its own
    expect(violation(() => c.checkNotDeposed(view('n2', entry({ epoch: 5, activeSince: 5, active: m('n2') })), 's/0', 'ack'))).toBe('none');
    const back = view('n1', entry({ epoch: 7, activeSince: 7 }));
    c.checkCommitted(back);
    expect(violation(() => c.checkNotDeposed(back, 's/0', 'ack'))).toBe('none');
    // an Unavailable entry (no active) ends every tenure
    c.checkCommitted(view('n3', entry({ epoch: 8, active: null, health: 'Unavailable' })));
    expect(violation(() => c.checkNotDeposed(back, 's/0', 'read'))).toBe('stale-owner-read');
  });
});

function w(seq: number, kind: WriteRecord['kind'], outcome: WriteRecord['outcome']): WriteRecord {
  return { seq, kind, valueId: kind === 'delete' ? null : `s/k#${seq}`, outcome, last: '', attempts: 1, invokeMs: seq, completeMs: seq + 0.5 };
}

function hist(...writes: WriteRecord[]): KeyHistory {
  return { store: 's', key: 'k', pkey: 's/0', writes };
}

describe('classifyFinal (DESIGN.md §5 rules)', () => {
  it('classifies the final value against the history', () => {
    const h = hist(w(1, 'create', 'ok'), w(2, 'put', 'fail'), w(3, 'put', 'ok'), w(4, 'put', 'info'));
    expect(classifyFinal(h, 's/k#3')).toBe('ok');
    expect(classifyFinal(h, 's/k#4')).toBe('recovered');
    expect(classifyFinal(h, 's/k#1')).toBe('lost');
    expect(classifyFinal(h, 's/k#2')).toBe('phantom');
    expect(classifyFinal(h, 's/k#9')).toBe('unexpected');
    expect(classifyFinal(h, null)).toBe('lost');
    const d = hist(w(1, 'create', 'ok'), w(2, 'delete', 'ok'));
    expect(classifyFinal(d, null)).toBe('ok');
    expect(classifyFinal(d, 's/k#1')).toBe('lost');
    const di = hist(w(1, 'create', 'ok'), w(2, 'delete', 'info'));
    expect(classifyFinal(di, null)).toBe('recovered');
    expect(classifyFinal(di, 's/k#1')).toBe('ok');
    expect(classifyFinal(hist(), null)).toBe('ok');
    expect(classifyFinal(hist(w(1, 'create', 'fail')), null)).toBe('ok');
  });

  it('agrees with a brute-force reading of the rules on random histories', () => {
    const outcome = fc.constantFrom<'ok' | 'fail' | 'info'>('ok', 'fail', 'info');
    const kind = fc.constantFrom<WriteRecord['kind']>('put', 'cas', 'create', 'delete');
    fc.assert(
      fc.property(fc.array(fc.tuple(kind, outcome), { maxLength: 8 }), fc.integer({ min: -1, max: 9 }), (ws, pick) => {
        const h = hist(...ws.map(([k, o], i) => w(i + 1, k, o)));
        const final = pick < 0 || pick >= h.writes.length ? (pick === 9 ? 's/k#99' : null) : h.writes[pick].valueId;
        const got = classifyFinal(h, final);
        // the brute force: which writes could legally be the last one applied?
        const lastOk = h.writes.map((x) => x.outcome).lastIndexOf('ok');
        let want: string;
        if (final === 's/k#99') want = 'unexpected';
        else if (final !== null) {
          const j = h.writes.findIndex((x) => x.valueId === final);
          if (h.writes[j].outcome === 'fail') want = 'phantom';
          else if (j < lastOk) want = 'lost';
          else want = j === lastOk ? 'ok' : 'recovered';
        } else {
          const absentOk = lastOk < 0 || h.writes[lastOk].kind === 'delete';
          const laterInfoDelete = h.writes.some((x, i) => i > lastOk && x.kind === 'delete' && x.outcome === 'info');
          want = absentOk ? 'ok' : laterInfoDelete ? 'recovered' : 'lost';
        }
        expect(got).toBe(want);
      }),
    );
  });
});

describe('staleRead (v2 stale-read, judged when the node answered)', () => {
  // writes acknowledged to the client at 1.5, 2.5, 3.5 (seq 1..3), then a delete
  const h = hist(w(1, 'create', 'ok'), w(2, 'put', 'ok'), w(3, 'put', 'ok'));
  it('a read answered after an ack must hold that write or a later one', () => {
    expect(staleRead(h, { valueId: 's/k#2', at: 3.0 }, 's/k#3')).toBeNull();
    expect(staleRead(h, { valueId: 's/k#2', at: 3.6 }, 's/k#3')?.seq).toBe(3);
    expect(staleRead(h, { valueId: 's/k#3', at: 9 }, 's/k#3')).toBeNull();
    expect(staleRead(h, { valueId: null, at: 1.6 }, 's/k#3')?.seq).toBe(1);
    expect(staleRead(h, { valueId: null, at: 1.0 }, 's/k#3')).toBeNull();
  });

  it('a missed write that was itself lost is the loss rules\' business, not the read\'s', () => {
    expect(staleRead(h, { valueId: 's/k#2', at: 3.6 }, 's/k#2')).toBeNull();
    expect(staleRead(h, { valueId: 's/k#2', at: 3.6 }, null)).toBeNull();
  });

  it('absent after an acknowledged put is fine once a delete of it was invoked', () => {
    const d = hist(w(1, 'create', 'ok'), w(2, 'delete', 'info'));
    // the delete (seq 2) was invoked at 2: a read answered absent after it is not stale
    expect(staleRead(d, { valueId: null, at: 2.1 }, null)).toBeNull();
    expect(staleRead(d, { valueId: null, at: 1.6 }, null)?.seq).toBe(1);
  });
});
