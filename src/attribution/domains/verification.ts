import { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { DnsRecord } from '../../db/schema';

/**
 * Domain verification by real DNS look-ups of exactly the records the owner is told
 * to create: a TXT record proving ownership, and a record routing the host to the
 * service (CNAME to the host of PUBLIC_BASE_URL, or A/AAAA when that host is an IP).
 */

export function dnsInstructions(hostname: string, token: string, publicBaseUrl: string): DnsRecord[] {
  const target = new URL(publicBaseUrl).hostname.replace(/^\[(.*)\]$/, '$1');
  const family = isIP(target);
  const routingType = family === 4 ? 'A' : family === 6 ? 'AAAA' : 'CNAME';
  return [
    { type: 'TXT', name: `_svc-verify.${hostname}`, value: `svc-verify=${token}` },
    { type: routingType, name: hostname, value: target },
  ];
}

/** found: the record answers the expected value; missing: DNS says it is absent or different; unknown: the look-up failed. */
export type RecordState = 'found' | 'missing' | 'unknown';

// NXDOMAIN and "no record of this type": the owner has not created it (yet).
const ABSENT = new Set(['ENOTFOUND', 'ENODATA']);

// One short try per look-up: a check is a request the owner waits for.
const LOOKUP = { timeout: 2000, tries: 1 };

/** Looks every record up in parallel; never throws. `servers` overrides the system's name servers. */
export async function lookUpRecords(records: DnsRecord[], servers?: string[]): Promise<RecordState[]> {
  const resolver = new Resolver(LOOKUP);
  if (servers?.length) resolver.setServers(servers);
  return Promise.all(
    records.map((record) =>
      lookUp(resolver, record).then(
        (found): RecordState => (found ? 'found' : 'missing'),
        (err: { code?: string }): RecordState => (ABSENT.has(err.code ?? '') ? 'missing' : 'unknown'),
      ),
    ),
  );
}

async function lookUp(resolver: Resolver, { type, name, value }: DnsRecord): Promise<boolean> {
  switch (type) {
    case 'TXT':
      // A TXT record may be split into several strings; its value is their concatenation.
      return (await resolver.resolveTxt(name)).some((chunks) => chunks.join('') === value);
    case 'A':
      return (await resolver.resolve4(name)).includes(value);
    case 'AAAA':
      return (await resolver.resolve6(name)).includes(value);
    case 'CNAME':
      return pointsAt(resolver, name, value);
    default:
      return false;
  }
}

/**
 * A CNAME to the target, or, at a zone apex where CNAMEs are not allowed, an
 * ALIAS/ANAME record that the DNS provider flattens into the target's addresses.
 */
async function pointsAt(resolver: Resolver, name: string, target: string): Promise<boolean> {
  const cnames = await resolver.resolveCname(name).catch((err: { code?: string }) => {
    if (err.code === 'ENODATA') return [];
    throw err;
  });
  if (cnames.some((c) => c.toLowerCase().replace(/\.$/, '') === target)) return true;
  const [mine, theirs] = await Promise.all([resolver.resolve4(name), resolver.resolve4(target)]);
  return mine.some((address) => theirs.includes(address));
}
