import { randomBytes } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isBotVisit } from '../../src/attribution/clicks/bots';
import { AttributionHosts } from '../../src/attribution/link-host/hosts';
import { clickedDomain, ClickLinks } from '../../src/attribution/links/resolve';
import { FACT_KINDS } from '../../src/queues/facts';
import { type AttributionBrand, attributionBrand, IPHONE, postPublic, uniqueId } from '../attribution/public/setup';
import { destroyTestService, startTestService, type TestService } from '../helpers/harness';

/**
 * What unauthenticated requests make the service keep is
 * bounded in bytes. The IP-match memory in Redis stays under IP_MATCH_MEMORY_MB (1 MiB here)
 * however many distinct IPs click, and the served-link cache stays under its byte budget
 * however long the made-up hosts and slugs.
 */
const MIB = 1024 * 1024;

/** The heap in use after a full collection, for what a cache keeps. */
function heapUsed(): number {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
  return process.memoryUsage().heapUsed;
}
let t: TestService;
let acme: AttributionBrand;

beforeAll(async () => {
  t = await startTestService({ env: { IP_MATCH_MEMORY_MB: '1', TRUST_PROXY: '127.0.0.1' } }); // clicks name their visitor's IP
  acme = await attributionBrand(t);
});
afterAll(async () => destroyTestService(t));

/** Redis memory of this service's keys other than its queues (the outbound webhooks' too) and the sweeper's lock (the IP match here), in bytes, and how many keys. */
async function redisHeld(): Promise<{ bytes: number; keys: number }> {
  const redis = t.services.redis;
  const prefix = t.config.queuePrefix;
  const queueKey = new RegExp(`^${prefix}:((${[...FACT_KINDS, 'webhooks'].join('|')}):|outbox-sweeper-lock$)`);
  let cursor = '0';
  let bytes = 0;
  let keys = 0;
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    for (const key of found.filter((k) => !queueKey.test(k))) {
      bytes += Number((await redis.memory('USAGE', key)) ?? 0);
      keys++;
    }
    cursor = next;
  } while (cursor !== '0');
  return { bytes, keys };
}

/** App-link clicks from `n` distinct visitor IPs, 50 at a time. */
async function flood(n: number): Promise<void> {
  for (let sent = 0; sent < n; sent += 50) {
    const answers = await Promise.all(
      Array.from({ length: Math.min(50, n - sent) }, () =>
        postPublic(t, 'clicks', { domain: acme.hostname, slug: 'app', user_agent: IPHONE, ip: `10.${randomBytes(3).join('.')}` }),
      ),
    );
    for (const a of answers) expect(a.statusCode, a.body).toBe(200);
  }
}

describe('IP-match memory (IP_MATCH_MEMORY_MB)', () => {
  it('stops growing at its cap whatever IPs a flood of clicks carries, and still matches the latest clicks', async () => {
    await flood(400);
    const first = await redisHeld();
    await flood(400);
    const second = await redisHeld();
    expect(second.bytes).toBeLessThanOrEqual(1.05 * MIB);
    // At the cap, newer clicks take older ones' slots: no more memory for 400 more IPs.
    expect(second.bytes - first.bytes).toBeLessThan(4096);
    expect(second.keys).toBeLessThanOrEqual(16);

    const ip = '192.0.2.77';
    await postPublic(t, 'clicks', { domain: acme.hostname, slug: 'app', user_agent: IPHONE, ip });
    const install = await postPublic(t, 'installs', { pixel_key: acme.brand.pixel_key, install_id: uniqueId(), platform: 'ios' }, { remoteAddress: ip });
    expect(install.json().install).toMatchObject({ resolution_method: 'ip', link: { id: acme.app.id } });
  });
});

describe('served-link cache', () => {
  it('stays within its byte budget under clicks on long made-up hosts and slugs, and keeps serving real links', async () => {
    const budget = 256 * 1024;
    const links = new ClickLinks(t.services.db, t.services.linkChanges, 100_000, budget);
    for (let i = 0; i < 200; i++) {
      const host = `${'x'.repeat(60)}.${'y'.repeat(60)}.${'z'.repeat(60)}.${randomBytes(16).toString('hex')}.example`;
      expect(await links.forClick(host, 's'.repeat(2000) + i)).toBeNull();
      expect(links.cachedBytes).toBeLessThanOrEqual(budget);
    }
    // 200 answers of over 4 KB each: the budget held, by letting the oldest go.
    expect(links.cachedBytes).toBeGreaterThan(budget / 2);
    const link = await links.forClick(clickedDomain(acme.hostname)!, 'maya');
    expect(link).toMatchObject({ id: acme.web.id, slug: 'maya' });
    expect(links.cachedBytes).toBeLessThanOrEqual(budget);
  });

  it('keeps no more of a click than the host and agent it names, however large the padded values they were cut from', () => {
    const before = heapUsed();
    // As POST /clicks reads its fields (body.ts, optionalText): trimmed, then cut to the field's length.
    const read = (value: string, max: number) => value.trim().slice(0, max);
    for (let i = 0; i < 1000; i++) {
      const padding = ' '.repeat(60_000);
      expect(clickedDomain(read(`${padding}padded-${i}.example${padding}`, 253))).toBe(`padded-${i}.example`);
      expect(isBotVisit(read(`${padding}${IPHONE} Build/${i}${padding}`, 1024))).toBe(false);
    }
    // 2,000 kept keys of a few bytes each, not the 120 KB values they were cut from (240 MB).
    expect(heapUsed() - before).toBeLessThan(16 * MIB);
  });

  it('remembers no Host header longer than a host name, and still answers it', async () => {
    const hosts = new AttributionHosts(t.services.db, t.services.linkChanges, t.services.log, null);
    expect(await hosts.match(acme.hostname)).toBe(acme.hostname);
    const before = heapUsed();
    for (let i = 0; i < 4000; i++) expect(await hosts.match(`${'h'.repeat(15_000)}${i}.example`)).toBeNull();
    // 4,000 headers of 15 KB (60 MB) were answered, none kept.
    expect(heapUsed() - before).toBeLessThan(16 * MIB);
    expect(await hosts.match(acme.hostname.toUpperCase())).toBe(acme.hostname);
  });
});
