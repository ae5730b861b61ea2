import { BlockList, isIP } from 'node:net';

/**
 * The key of a client address for every per-IP limit and IP-keyed count: an IPv6 client is keyed
 * by its /64 (one subscriber's network; a client with a /64 has 2^64 addresses to rotate through),
 * an IPv4-mapped IPv6 address by its IPv4 form, an IPv4 address by itself (docs/hardening.md).
 */
export function addressKey(ip: string): string {
  const address = ip.trim().toLowerCase().replace(/%.*$/, '');
  if (isIP(address) !== 6) return address;
  const groups = ipv6Groups(address);
  if (!groups) return address;
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join('.');
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address (`::` expanded, a dotted IPv4 tail as two groups). */
function ipv6Groups(address: string): number[] | null {
  let text = address;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const parse = (part: string) => (part ? part.split(':').map((g) => Number.parseInt(g, 16)) : []);
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  const groups = tail === undefined ? left : [...left, ...new Array(8 - left.length - right.length).fill(0), ...right];
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null;
}

const NAMED_RANGES: Record<string, [string, number][]> = {
  loopback: [
    ['127.0.0.0', 8],
    ['::1', 128],
  ],
  linklocal: [
    ['169.254.0.0', 16],
    ['fe80::', 10],
  ],
  uniquelocal: [
    ['10.0.0.0', 8],
    ['172.16.0.0', 12],
    ['192.168.0.0', 16],
    ['fc00::', 7],
  ],
};

/**
 * Whether an address is one of TRUST_PROXY's (as validated by src/config.ts: `true`, or
 * addresses, CIDRs with `/bits` or `/netmask`, and the names loopback, linklocal, uniquelocal).
 * `false` trusts no one. An IPv4-mapped IPv6 address is checked as its IPv4 form.
 */
export function trustedProxies(trustProxy: boolean | string): (address: string | undefined) => boolean {
  if (trustProxy === true) return () => true;
  if (trustProxy === false) return () => false;
  // IPv4 ranges as [network, mask] integers: every request checks its hops, and BlockList.check
  // builds a SocketAddress per call (2-3 % of a click's CPU, docs/benchmarks.md). IPv6 uses BlockList.
  const v4: [number, number][] = [];
  const v6 = new BlockList();
  const add = (address: string, bits: number) => {
    const n = ipv4Number(address);
    if (n === null) v6.addSubnet(address, bits, 'ipv6');
    else v4.push([(n & maskOf(bits)) >>> 0, maskOf(bits)]);
  };
  for (const entry of trustProxy.split(',').map((s) => s.trim())) {
    const named = NAMED_RANGES[entry];
    if (named) {
      for (const [net, bits] of named) add(net, bits);
      continue;
    }
    const [address = '', range] = entry.split('/');
    const full = isIP(address) === 6 ? 128 : 32;
    add(address, range === undefined ? full : /^\d+$/.test(range) ? Number(range) : netmaskBits(range));
  }
  const inV4 = (n: number) => v4.some(([net, mask]) => ((n & mask) >>> 0) === net);
  return (address) => {
    if (!address) return false;
    const n = ipv4Number(address);
    if (n !== null) return inV4(n);
    const plain = address.replace(/%.*$/, '');
    if (isIP(plain) !== 6) return false;
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(plain);
    const mappedV4 = mapped ? ipv4Number(mapped[1]!) : null;
    return v6.check(plain, 'ipv6') || (mappedV4 !== null && inV4(mappedV4));
  };
}

/** A dotted IPv4 address as an unsigned integer; null for anything else (no leading zeros, as isIP). Read by character: on every request. */
function ipv4Number(address: string): number | null {
  let n = 0;
  let octet = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < address.length; i++) {
    const c = address.charCodeAt(i);
    if (c === 46) {
      if (digits === 0 || ++dots > 3) return null;
      n = n * 256 + octet;
      octet = 0;
      digits = 0;
    } else if (c >= 48 && c <= 57) {
      // A second digit after a leading 0 ("01") is not an address.
      if (digits > 0 && octet === 0) return null;
      octet = octet * 10 + (c - 48);
      if (++digits > 3 || octet > 255) return null;
    } else return null;
  }
  return dots === 3 && digits > 0 ? n * 256 + octet : null;
}

const maskOf = (bits: number) => (bits <= 0 ? 0 : (0xffffffff << (32 - Math.min(bits, 32))) >>> 0);

/** `255.255.255.0` -> 24. */
function netmaskBits(mask: string): number {
  return mask.split('.').reduce((bits, octet) => bits + (Number(octet) >>> 0).toString(2).replace(/0/g, '').length, 0);
}
