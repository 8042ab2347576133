import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cidrsOverlap, formatCidr, formatIpv4, gatewayAddress, nodeAddress, parseCidr, parseIpv4, pickFreeSubnet } from './docker-subnet.js';

const ipv4 = fc.integer({ min: 0, max: 0xffffffff });
const cidr = fc.record({ base: ipv4, bits: fc.integer({ min: 0, max: 32 }) }).map(({ base, bits }) => formatCidr(parseCidr(`${formatIpv4(base)}/${bits}`)));

describe('IPv4 parsing', () => {
  it('round-trips addresses and blocks', () => {
    fc.assert(fc.property(ipv4, (v) => parseIpv4(formatIpv4(v)) === v));
    fc.assert(fc.property(cidr, (c) => formatCidr(parseCidr(c)) === c));
    expect(parseCidr('172.29.5.77/24')).toEqual({ base: parseIpv4('172.29.5.0'), bits: 24 });
    expect(formatCidr(parseCidr('10.1.2.3'))).toBe('10.1.2.3/32');
  });

  it('rejects what is not IPv4', () => {
    for (const bad of ['256.1.1.1', '1.2.3', 'fe80::1/64', '1.2.3.4/33', '1.2.3.4/', 'a.b.c.d', '1.2.3.4/8/1']) {
      expect(() => parseCidr(bad), bad).toThrow(/not an IPv4/);
    }
  });
});

describe('cidrsOverlap', () => {
  it('is symmetric and true exactly when one block holds the other\'s network address', () => {
    fc.assert(
      fc.property(cidr, cidr, (a, b) => {
        const A = parseCidr(a);
        const B = parseCidr(b);
        const holds = (x: typeof A, y: typeof A): boolean => formatCidr(parseCidr(`${formatIpv4(y.base)}/${x.bits}`)) === formatCidr(x);
        expect(cidrsOverlap(A, B)).toBe(cidrsOverlap(B, A));
        expect(cidrsOverlap(A, B)).toBe(holds(A, B) || holds(B, A));
      }),
    );
    expect(cidrsOverlap(parseCidr('172.16.0.0/12'), parseCidr('172.29.3.0/24'))).toBe(true);
    expect(cidrsOverlap(parseCidr('172.17.0.0/16'), parseCidr('172.29.3.0/24'))).toBe(false);
  });
});

describe('pickFreeSubnet', () => {
  it('never returns a block overlapping a taken one, and finds one while any is free', () => {
    fc.assert(
      fc.property(fc.array(cidr, { maxLength: 20 }), fc.integer({ min: 0, max: 1000 }), (taken, start) => {
        const got = pickFreeSubnet(taken, start);
        const free = Array.from({ length: 256 }, (_, x) => `172.29.${x}.0/24`).filter((c) => !taken.some((t) => cidrsOverlap(parseCidr(t), parseCidr(c))));
        if (free.length === 0) expect(got).toBeUndefined();
        else expect(free).toContain(got);
      }),
    );
  });

  it('starts at the given /24 and skips taken ones, ignoring IPv6 entries', () => {
    expect(pickFreeSubnet([], 5)).toBe('172.29.5.0/24');
    expect(pickFreeSubnet(['172.29.5.0/24', '172.29.6.128/25', 'fd00::/64'], 5)).toBe('172.29.7.0/24');
    expect(pickFreeSubnet(['172.29.255.0/24'], 255)).toBe('172.29.0.0/24');
    expect(pickFreeSubnet(['172.16.0.0/12'])).toBeUndefined();
  });
});

describe('addresses in a run subnet', () => {
  it('puts the gateway at .1 and the n-th node at .11 + n', () => {
    expect(gatewayAddress('172.29.40.0/24')).toBe('172.29.40.1');
    expect([0, 1, 2].map((i) => nodeAddress('172.29.40.0/24', i))).toEqual(['172.29.40.11', '172.29.40.12', '172.29.40.13']);
    expect(nodeAddress('172.29.40.0/24', 243)).toBe('172.29.40.254');
    expect(() => nodeAddress('172.29.40.0/24', 244)).toThrow(/does not fit/);
    expect(() => nodeAddress('172.29.0.0/16', 0)).toThrow(/must be a \/24/);
  });
});
