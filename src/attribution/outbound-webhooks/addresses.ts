import { BlockList, isIP } from 'node:net';
import { lookup as systemLookup, Resolver } from 'node:dns/promises';

/**
 * Where a webhook may be sent (docs/webhooks.md, "Receiving webhooks"): only public addresses,
 * never the service itself. A URL is checked on create and update and before every attempt, and the
 * attempt connects to the address checked, so a name whose answer changes cannot redirect it.
 */

export const URL_REASONS = ['scheme', 'too_long', 'userinfo', 'fragment', 'service_origin', 'localhost', 'single_label', 'blocked_address', 'unresolvable'] as const;
export type UrlReason = (typeof URL_REASONS)[number];

export const MAX_URL_LENGTH = 2048;

export class UrlRefused extends Error {
  constructor(readonly reason: UrlReason) {
    super(`webhook URL refused: ${reason}`);
  }
}

export type AddressRules = {
  requireHttps: boolean;
  /** CIDRs exempt from the blocked ranges (never from the service's own origin). */
  allowedNetworks: string[];
  publicBaseUrl: string;
  dnsServers: string[] | undefined;
};

export type CheckedUrl = { url: URL; address: string; family: 4 | 6 };

/** Ranges no webhook may reach: loopback, private, link-local, CGNAT, multicast, reserved, documentation. */
const BLOCKED_V4: [string, number][] = [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
];
const BLOCKED_V6: [string, number][] = [
  ['100::', 64], ['2001::', 23], ['2001:db8::', 32], ['2002::', 16], ['3fff::', 20], ['5f00::', 16],
];
const blocked = new BlockList();
for (const [net, bits] of BLOCKED_V4) blocked.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of BLOCKED_V6) blocked.addSubnet(net, bits, 'ipv6');
// Global unicast IPv6 is 2000::/3; everything else (loopback, ULA, link-local, multicast…) is refused.
const globalV6 = new BlockList();
globalV6.addSubnet('2000::', 3, 'ipv6');

/** The IPv4 address an IPv6 one carries (IPv4-mapped, -compatible, NAT64), else undefined. */
function embeddedV4(address: string): string | undefined {
  const m = /^(?:::ffff:|::|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (m) return m[1];
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (!hex) return undefined;
  const hi = Number.parseInt(hex[1]!, 16);
  const lo = Number.parseInt(hex[2]!, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

function allowList(networks: string[]): BlockList {
  const list = new BlockList();
  for (const cidr of networks) {
    const [net = '', bits = '0'] = cidr.split('/');
    list.addSubnet(net, Number(bits), isIP(net) === 6 ? 'ipv6' : 'ipv4');
  }
  return list;
}
const allowLists = new Map<string, BlockList>();

/** Whether an attempt may connect to `address` under these rules. */
export function addressAllowed(address: string, allowedNetworks: string[]): boolean {
  const key = allowedNetworks.join(',');
  let allow = allowLists.get(key);
  if (!allow) {
    allow = allowList(allowedNetworks);
    allowLists.set(key, allow);
  }
  const family = isIP(address);
  if (family === 0) return false;
  if (family === 4 && allow.check(address, 'ipv4')) return true;
  if (family === 6 && allow.check(address, 'ipv6')) return true;
  if (family === 6) {
    const v4 = embeddedV4(address.toLowerCase());
    if (v4 !== undefined) return addressAllowed(v4, allowedNetworks);
    return globalV6.check(address, 'ipv6') && !blocked.check(address, 'ipv6');
  }
  return !blocked.check(address, 'ipv4');
}

/** A URL as stored and compared: WHATWG-parsed and serialised. Throws UrlRefused('scheme') when it does not parse. */
export function normaliseUrl(input: string): URL {
  try {
    return new URL(input.trim());
  } catch {
    throw new UrlRefused('scheme');
  }
}

/** The rules that need no look-up, in the order their reasons are named; answers the parsed URL. */
export function checkUrlShape(input: string, rules: Pick<AddressRules, 'requireHttps' | 'publicBaseUrl'>): URL {
  const url = normaliseUrl(input);
  if (!(url.protocol === 'https:' || (url.protocol === 'http:' && !rules.requireHttps))) throw new UrlRefused('scheme');
  if (input.trim().length > MAX_URL_LENGTH || url.href.length > MAX_URL_LENGTH) throw new UrlRefused('too_long');
  if (url.username !== '' || url.password !== '' || /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i.test(input.trim())) throw new UrlRefused('userinfo');
  if (url.hash !== '' || input.includes('#')) throw new UrlRefused('fragment');
  if (url.origin === new URL(rules.publicBaseUrl).origin) throw new UrlRefused('service_origin');
  const host = hostOf(url);
  if (isIP(host) === 0) {
    const name = host.replace(/\.$/, '').toLowerCase();
    if (name === 'localhost' || name.endsWith('.localhost')) throw new UrlRefused('localhost');
    if (!name.includes('.')) throw new UrlRefused('single_label');
  }
  return url;
}

/** The URL's host without IPv6 brackets. */
export const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1');

const LOOKUP = { timeout: 2000, tries: 2 };

/** Every A and AAAA address of `name`, through `servers` when set (else the system's resolver); [] when it has none. */
export async function resolveAll(name: string, servers: string[] | undefined): Promise<{ address: string; family: 4 | 6 }[]> {
  if (!servers?.length) {
    try {
      const found = await systemLookup(name, { all: true, verbatim: true });
      return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
    } catch {
      return [];
    }
  }
  const resolver = new Resolver(LOOKUP);
  resolver.setServers(servers);
  const none = () => [] as string[];
  const [v4, v6] = await Promise.all([resolver.resolve4(name).catch(none), resolver.resolve6(name).catch(none)]);
  return [...v4.map((address) => ({ address, family: 4 as const })), ...v6.map((address) => ({ address, family: 6 as const }))];
}

/**
 * Every rule, look-ups included: the URL and the address to connect to. Any resolved address that
 * is blocked refuses the URL (a name must not mix public and private answers).
 */
export async function checkUrl(input: string, rules: AddressRules): Promise<CheckedUrl> {
  const url = checkUrlShape(input, rules);
  const host = hostOf(url);
  const family = isIP(host);
  const addresses = family !== 0 ? [{ address: host, family: family as 4 | 6 }] : await resolveAll(host.replace(/\.$/, ''), rules.dnsServers);
  if (addresses.some((a) => !addressAllowed(a.address, rules.allowedNetworks))) throw new UrlRefused('blocked_address');
  const first = addresses[0];
  if (!first) throw new UrlRefused('unresolvable');
  return { url, address: first.address, family: first.family };
}
