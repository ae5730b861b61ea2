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
  const list = new BlockList();
  for (const entry of trustProxy.split(',').map((s) => s.trim())) {
    const named = NAMED_RANGES[entry];
    if (named) {
      for (const [net, bits] of named) list.addSubnet(net, bits, isIP(net) === 6 ? 'ipv6' : 'ipv4');
      continue;
    }
    const [address = '', range] = entry.split('/');
    const type = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (range === undefined) list.addAddress(address, type);
    else list.addSubnet(address, /^\d+$/.test(range) ? Number(range) : netmaskBits(range), type);
  }
  return (address) => {
    if (!address) return false;
    const plain = address.replace(/%.*$/, '');
    const family = isIP(plain);
    if (family === 0) return false;
    if (family === 4) return list.check(plain, 'ipv4');
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(plain);
    return list.check(plain, 'ipv6') || (mapped !== null && list.check(mapped[1]!, 'ipv4'));
  };
}

/** `255.255.255.0` -> 24. */
function netmaskBits(mask: string): number {
  return mask.split('.').reduce((bits, octet) => bits + (Number(octet) >>> 0).toString(2).replace(/0/g, '').length, 0);
}
