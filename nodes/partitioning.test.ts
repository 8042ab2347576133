import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { assignAll, assignPartitions, hashKey, partitionCount, partitionOfSegment, segmentOf } from './partitioning.js';

const nodes = (n: number, preferred = n) =>
  Array.from({ length: n }, (_, i) => ({ id: `n${i + 1}`, host: `127.0.0.${11 + i}`, clientPort: 1, clusterPort: 2, preferredPrimary: i < preferred }));

describe('partition assignment', () => {
  it('gives each preferred primary one partition, replicas on the next RF-1 nodes of the ring', () => {
    const cfg = { nodes: nodes(3) };
    const ps = assignPartitions(cfg, { name: 'sync3', replicationFactor: 3, ackMode: 'sync', segments: 64 });
    expect(ps.map((p) => p.replicas)).toEqual([
      ['n1', 'n2', 'n3'],
      ['n2', 'n3', 'n1'],
      ['n3', 'n1', 'n2'],
    ]);
    const rf1 = assignPartitions(cfg, { name: 'rf1', replicationFactor: 1, ackMode: 'sync', segments: 64 });
    expect(rf1.map((p) => p.replicas)).toEqual([['n1'], ['n2'], ['n3']]);
    const rf2of5 = assignPartitions({ nodes: nodes(5, 2) }, { name: 's', replicationFactor: 2, ackMode: 'sync', segments: 10 });
    expect(rf2of5.map((p) => p.replicas)).toEqual([
      ['n1', 'n2'],
      ['n2', 'n3'],
    ]);
  });

  it('puts every segment in exactly one partition, and routes keys consistently', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 7 }), fc.integer({ min: 1, max: 300 }), fc.integer({ min: 1, max: 7 }), (n, segments, rfRaw) => {
        const cfg = { nodes: nodes(n), stores: [{ name: 's', replicationFactor: Math.min(rfRaw, n), ackMode: 'sync' as const, segments }] };
        const ps = assignAll(cfg);
        expect(ps).toHaveLength(partitionCount(cfg));
        const seen = ps.flatMap((p) => p.segments).sort((a, b) => a - b);
        expect(seen).toEqual(Array.from({ length: segments }, (_, i) => i));
        for (const p of ps) {
          expect(new Set(p.replicas).size).toBe(p.replicas.length);
          for (const s of p.segments) expect(partitionOfSegment(s, ps.length)).toBe(p.partition);
        }
      }),
    );
  });

  it('hashes keys with FNV-1a over UTF-8 (stable values)', () => {
    expect(hashKey('')).toBe(0x811c9dc5);
    expect(hashKey('a')).toBe(0xe40c292c);
    expect(hashKey('foobar')).toBe(0xbf9cf968);
    // non-ASCII keys hash their UTF-8 bytes: same as hashing the encoded bytes by hand
    const manual = (s: string) => {
      let h = 0x811c9dc5;
      for (const b of Buffer.from(s, 'utf8')) h = Math.imul(h ^ b, 0x01000193);
      return h >>> 0;
    };
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 20 }), (s) => {
        expect(hashKey(s)).toBe(manual(s));
      }),
    );
    expect(segmentOf('k1', 64)).toBe(hashKey('k1') % 64);
  });
});
