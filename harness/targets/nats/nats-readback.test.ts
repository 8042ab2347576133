import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DUPLICATE_SAMPLES, keyIdOf, NO_MSG_ID, onlyWriteId, StreamReadback, subjectOf } from './nats-readback.js';

describe('the stream onto the verifier: one key per publish', () => {
  it('names subjects and key ids', () => {
    expect(subjectOf('zc', 'nats', 'k12')).toBe('zc.nats.k12');
    expect(keyIdOf('k12')).toBe(12);
    expect(keyIdOf('k0')).toBeNull();
    expect(keyIdOf('k012')).toBeNull();
    expect(keyIdOf('x12')).toBeNull();
    expect(onlyWriteId(12)).toBe('w12.1');
  });

  it('a present publish reads as its value id; an absent one as null only after a complete read', () => {
    const r = new StreamReadback('zc', 'nats');
    r.add(1, 'zc.nats.k1', 'w1.1');
    r.add(2, 'zc.nats.k3', 'w3.1');
    expect(r.valueOf('nats', 'k1', true)).toBe('w1.1');
    expect(r.valueOf('nats', 'k3', false)).toBe('w3.1');
    expect(r.valueOf('nats', 'k2', true)).toBeNull();
    expect(r.valueOf('nats', 'k2', false)).toBeUndefined();
    expect(r.valueOf('other', 'k1', true)).toBeUndefined();
    expect(r.seqOf('k3')).toBe(2);
    expect(r.seqOf('k2')).toBeNull();
    expect({ read: r.read, keys: r.keys, duplicates: r.duplicates, anomalies: r.anomalies, lastSeq: r.lastSeq }).toEqual({ read: 2, keys: 2, duplicates: 0, anomalies: 0, lastSeq: 2 });
  });

  it('a value id read again at another sequence is a duplicate: counted, sampled, the key still present', () => {
    const r = new StreamReadback('zc', 'nats');
    r.add(5, 'zc.nats.k7', 'w7.1');
    r.add(9, 'zc.nats.k7', 'w7.1');
    r.add(11, 'zc.nats.k7', 'w7.1');
    expect(r.valueOf('nats', 'k7', true)).toBe('w7.1');
    expect(r.duplicates).toBe(2);
    expect(r.keys).toBe(1);
    expect(r.duplicateSamples()).toEqual([{ id: 'w7.1', seqs: [5, 9, 11] }]);
  });

  it('an id never published on a key (another write, another key, none) is that key\'s final value: the verifier calls it unexpected', () => {
    const r = new StreamReadback('zc', 'nats');
    r.add(1, 'zc.nats.k4', 'w4.1');
    r.add(2, 'zc.nats.k4', 'w4.2');
    r.add(3, 'zc.nats.k5', 'w6.1');
    r.add(4, 'zc.nats.k8', null);
    expect(r.valueOf('nats', 'k4', true)).toBe('w4.2');
    expect(r.valueOf('nats', 'k5', true)).toBe('w6.1');
    expect(r.valueOf('nats', 'k6', true)).toBeNull();
    expect(r.valueOf('nats', 'k8', true)).toBe(NO_MSG_ID);
    expect(r.anomalies).toBe(3);
    expect(r.keys).toBe(3);
  });

  it('a subject that names no workload key is an anomaly hung on no key', () => {
    const r = new StreamReadback('zc', 'nats');
    r.add(1, 'zc.other.k1', 'w1.1');
    r.add(2, 'zc.nats.kx', 'w1.1');
    r.add(3, 'elsewhere', 'w1.1');
    expect(r.anomalies).toBe(3);
    expect(r.keys).toBe(0);
    expect(r.valueOf('nats', 'k1', true)).toBeNull();
  });

  it('refuses a sequence that is not a positive integer', () => {
    const r = new StreamReadback('zc', 'nats');
    expect(() => r.add(0, 'zc.nats.k1', 'w1.1')).toThrow(RangeError);
    expect(() => r.add(1.5, 'zc.nats.k1', 'w1.1')).toThrow(/positive integer/);
  });

  it('keeps at most the first few duplicated ids as samples, counting them all', () => {
    const r = new StreamReadback('zc', 'nats');
    let seq = 1;
    for (let k = 1; k <= DUPLICATE_SAMPLES + 5; k++) {
      r.add(seq++, `zc.nats.k${k}`, `w${k}.1`);
      r.add(seq++, `zc.nats.k${k}`, `w${k}.1`);
    }
    expect(r.duplicates).toBe(DUPLICATE_SAMPLES + 5);
    expect(r.duplicateSamples()).toHaveLength(DUPLICATE_SAMPLES);
  });

  // the model: each key of 1..K published or not; the stream holds each published key at least
  // once (duplicates), plus messages carrying an odd id on some keys; read in any order
  it('property: every key reads as the model says, in any message order, with any duplicates', () => {
    const keyArb = fc.record({ published: fc.boolean(), copies: fc.integer({ min: 1, max: 3 }), odd: fc.option(fc.constantFrom('w0.1', 'w999.2', 'junk', null), { nil: undefined }) });
    fc.assert(
      fc.property(fc.array(keyArb, { minLength: 1, maxLength: 60 }), fc.integer(), fc.boolean(), (keys, seed, complete) => {
        const msgs: Array<[string, string | null]> = [];
        keys.forEach((k, i) => {
          const id = i + 1;
          if (k.published) for (let c = 0; c < k.copies; c++) msgs.push([`zc.nats.k${id}`, `w${id}.1`]);
          if (k.odd !== undefined) msgs.push([`zc.nats.k${id}`, k.odd]);
        });
        // a seeded shuffle, then sequences in stream order
        let s = seed >>> 0;
        for (let i = msgs.length - 1; i > 0; i--) {
          s = (s * 1103515245 + 12345) >>> 0;
          const j = s % (i + 1);
          [msgs[i], msgs[j]] = [msgs[j], msgs[i]];
        }
        const r = new StreamReadback('zc', 'nats');
        msgs.forEach(([subject, id], i) => r.add(i + 1, subject, id));
        let dups = 0;
        let present = 0;
        keys.forEach((k, i) => {
          const id = i + 1;
          const want = k.odd !== undefined ? (k.odd ?? NO_MSG_ID) : k.published ? `w${id}.1` : complete ? null : undefined;
          expect(r.valueOf('nats', `k${id}`, complete)).toBe(want);
          if (k.published) dups += k.copies - 1;
          if (k.published || k.odd !== undefined) present++;
        });
        expect(r.duplicates).toBe(dups);
        expect(r.anomalies).toBe(keys.filter((k) => k.odd !== undefined).length);
        expect(r.keys).toBe(present);
        expect(r.read).toBe(msgs.length);
        expect(r.lastSeq).toBe(msgs.length);
      }),
    );
  });
});
