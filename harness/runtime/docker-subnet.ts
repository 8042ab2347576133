/**
 * IPv4 subnets for the docker runtime's per-run network (DESIGN.md §3: "a network with an
 * explicit subnet, stable addresses across restarts").
 */

/** An IPv4 block: `base` is the network address as an unsigned 32-bit integer, `bits` the prefix length 0..32. */
export interface Ipv4Cidr {
  base: number;
  bits: number;
}

/** The first private block probed for run networks: 172.29.0.0/16, one /24 per run. */
export const RUN_SUBNET_PREFIX = '172.29';

/** Host number of the first node in a run subnet: n-th node (0-based) gets `.11 + n`. */
export const FIRST_NODE_HOST = 11;

/**
 * Parses a dotted IPv4 address to an unsigned 32-bit integer.
 * @throws Error (one line) unless it is four decimal octets 0..255.
 */
export function parseIpv4(text: string): number {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text.trim());
  if (!m) throw new Error(`not an IPv4 address: "${text}"`);
  let v = 0;
  for (let i = 1; i <= 4; i++) {
    const o = Number(m[i]);
    if (o > 255) throw new Error(`not an IPv4 address: "${text}"`);
    v = v * 256 + o;
  }
  return v >>> 0;
}

/** Formats an unsigned 32-bit integer as a dotted IPv4 address. */
export function formatIpv4(v: number): string {
  return [v >>> 24, (v >>> 16) & 255, (v >>> 8) & 255, v & 255].join('.');
}

function mask(bits: number): number {
  return bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
}

/**
 * Parses `A.B.C.D/N` (a bare address counts as /32); host bits are cleared.
 * @throws Error (one line) on anything else (IPv6 included).
 */
export function parseCidr(text: string): Ipv4Cidr {
  const [addr, len, extra] = text.trim().split('/');
  if (extra !== undefined) throw new Error(`not an IPv4 CIDR block: "${text}"`);
  const bits = len === undefined ? 32 : /^\d{1,2}$/.test(len) ? Number(len) : NaN;
  if (!(bits >= 0 && bits <= 32)) throw new Error(`not an IPv4 CIDR block: "${text}"`);
  return { base: (parseIpv4(addr) & mask(bits)) >>> 0, bits };
}

/** Formats a block as `A.B.C.D/N`. */
export function formatCidr(c: Ipv4Cidr): string {
  return `${formatIpv4(c.base)}/${c.bits}`;
}

/** Whether two blocks share at least one address. */
export function cidrsOverlap(a: Ipv4Cidr, b: Ipv4Cidr): boolean {
  const m = mask(Math.min(a.bits, b.bits));
  return ((a.base & m) >>> 0) === ((b.base & m) >>> 0);
}

/**
 * The first /24 of `prefix`.X.0 (X = start, start+1, ... wrapping at 256) that overlaps none of
 * `taken` (CIDR strings of existing networks and host interfaces; unparsable ones, such as
 * IPv6 blocks, are ignored). Undefined when all 256 are taken.
 */
export function pickFreeSubnet(taken: readonly string[], start = 0, prefix: string = RUN_SUBNET_PREFIX): string | undefined {
  const used: Ipv4Cidr[] = [];
  for (const t of taken) {
    try {
      used.push(parseCidr(t));
    } catch {
      // not IPv4: cannot collide with an IPv4 /24
    }
  }
  for (let i = 0; i < 256; i++) {
    const x = (((start + i) % 256) + 256) % 256;
    const candidate = parseCidr(`${prefix}.${x}.0/24`);
    if (!used.some((u) => cidrsOverlap(u, candidate))) return formatCidr(candidate);
  }
  return undefined;
}

/** The gateway of a run subnet (its .1): the host's address on the bridge. */
export function gatewayAddress(subnet: string): string {
  return formatIpv4((parseCidr(subnet).base + 1) >>> 0);
}

/**
 * The fixed address of the `index`-th node (0-based, config order) in a /24 run subnet:
 * `.11 + index`, so a node keeps its address across restarts.
 * @throws Error when the subnet is not a /24 or index is outside 0..243.
 */
export function nodeAddress(subnet: string, index: number): string {
  const c = parseCidr(subnet);
  if (c.bits !== 24) throw new Error(`run subnet must be a /24, got ${subnet}`);
  if (!Number.isInteger(index) || index < 0 || FIRST_NODE_HOST + index > 254) throw new Error(`node index ${index} does not fit a /24`);
  return formatIpv4((c.base + FIRST_NODE_HOST + index) >>> 0);
}
