import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { grudgeDrops, healScript, PARTITION_CHAIN, partitionScript } from './docker-partition.js';

const ids = ['n1', 'n2', 'n3'];

describe('grudgeDrops', () => {
  it('maps every node to the sorted, distinct peers it drops', () => {
    const d = grudgeDrops({ n1: ['n3', 'n2', 'n3'], n2: [] }, ids);
    expect([...d.entries()]).toEqual([
      ['n1', ['n2', 'n3']],
      ['n2', []],
      ['n3', []],
    ]);
  });

  it('rejects unknown nodes and self-grudges', () => {
    expect(() => grudgeDrops({ n4: ['n1'] }, ids)).toThrow('partition: unknown node "n4" in grudge');
    expect(() => grudgeDrops({ n1: ['n4'] }, ids)).toThrow('partition: unknown node "n4" in grudge of n1');
    expect(() => grudgeDrops({ n2: ['n2'] }, ids)).toThrow('partition: node n2 cannot drop its own traffic');
  });

  it('keeps exactly the directed pairs of any valid grudge', () => {
    const node = fc.constantFrom(...ids);
    fc.assert(
      fc.property(fc.array(fc.tuple(node, node), { maxLength: 12 }), (pairs) => {
        const valid = pairs.filter(([a, b]) => a !== b);
        const grudge: Record<string, string[]> = {};
        for (const [a, b] of valid) (grudge[a] ??= []).push(b);
        const d = grudgeDrops(grudge, ids);
        const got = [...d.entries()].flatMap(([a, bs]) => bs.map((b) => `${a}<-${b}`)).sort();
        expect(got).toEqual([...new Set(valid.map(([a, b]) => `${a}<-${b}`))].sort());
      }),
    );
  });
});

describe('partitionScript', () => {
  it('creates the chain once, jumps to it first from INPUT, flushes it, then drops each source', () => {
    expect(partitionScript(['172.29.3.12', '172.29.3.13']).split('\n')).toEqual([
      'set -e',
      `iptables -w -N ${PARTITION_CHAIN} 2>/dev/null || true`,
      `iptables -w -C INPUT -j ${PARTITION_CHAIN} 2>/dev/null || iptables -w -I INPUT 1 -j ${PARTITION_CHAIN}`,
      `iptables -w -F ${PARTITION_CHAIN}`,
      `iptables -w -A ${PARTITION_CHAIN} -s 172.29.3.12/32 -j DROP`,
      `iptables -w -A ${PARTITION_CHAIN} -s 172.29.3.13/32 -j DROP`,
    ]);
    expect(partitionScript([])).not.toContain('DROP');
  });

  it('lets nothing but an IPv4 address into the shell', () => {
    expect(() => partitionScript(['172.29.3.12; rm -rf /'])).toThrow(/not an IPv4 address/);
  });

  it('heals by flushing the chain only when it exists', () => {
    expect(healScript()).toBe(`if iptables -w -n -L ${PARTITION_CHAIN} >/dev/null 2>&1; then iptables -w -F ${PARTITION_CHAIN}; fi`);
  });
});
