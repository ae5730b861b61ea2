import { createHash } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RateLimiter } from '../../src/http/rate-limit';
import { createRedis } from '../../src/queues/redis';
import { type AttributionBrand, attributionBrand, postPublic, uniqueId } from '../attribution/public/setup';
import { createApiKey } from '../helpers/fixtures';
import { destroyTestService, sleep, startTestService, type TestService } from '../helpers/harness';
import { freePort } from '../helpers/free-port';

/**
 * Rate limits (docs/operations.md#rate-limits), with small limits set for this test: a minute's requests per
 * client IP on public installs, events and clicks, per pixel key, and per Data API key;
 * RateLimit-* headers on every answer of a limited route, 429 rate_limited with Retry-After
 * past the limit, counts shared by every process through Redis.
 */
const LIMITS = { RATE_LIMIT_PUBLIC_IP: '5', RATE_LIMIT_PIXEL_KEY: '4', RATE_LIMIT_DATA_API: '3', RATE_LIMIT_FAILED_KEYS: '4' };
let t: TestService;
let acme: AttributionBrand;
let beta: AttributionBrand;
let ipCounter = 0;
/** A client address no other test of this file used. */
const newIp = () => `198.51.100.${++ipCounter}`;

beforeAll(async () => {
  t = await startTestService({ env: LIMITS });
  acme = await attributionBrand(t);
  beta = await attributionBrand(t, 'Beta');
});
afterAll(async () => destroyTestService(t));

/** Limits count per minute: a test that needs its requests in one window waits when less than 10 s of it is left. */
async function freshWindow(): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 10_000) await sleep(left + 50);
}

function limitHeaders(res: LightMyRequestResponse) {
  return {
    limit: Number(res.headers['ratelimit-limit']),
    remaining: Number(res.headers['ratelimit-remaining']),
    reset: Number(res.headers['ratelimit-reset']),
  };
}

function expectRefused(res: LightMyRequestResponse, limit: number) {
  expect(res.statusCode, res.body).toBe(429);
  expect(res.json()).toEqual({ error: 'rate_limited' });
  const retryAfter = Number(res.headers['retry-after']);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
  expect(limitHeaders(res)).toMatchObject({ limit, remaining: 0 });
}

const clickFrom = (ip: string) => postPublic(t, 'clicks', { domain: acme.hostname, slug: 'maya' }, { remoteAddress: ip });
const installFrom = (ip: string, pixelKey = acme.brand.pixel_key) =>
  postPublic(t, 'installs', { pixel_key: pixelKey, install_id: uniqueId(), platform: 'ios' }, { remoteAddress: ip });
const eventFrom = (ip: string, pixelKey = acme.brand.pixel_key) =>
  postPublic(t, 'events', { pixel_key: pixelKey, transaction_id: uniqueId(), amount: 3, currency: 'USD' }, { remoteAddress: ip });

describe('per client IP: POST /clicks, /installs and /events (RATE_LIMIT_PUBLIC_IP)', () => {
  it('lets 5 clicks a minute through from one IP with counting-down headers, refuses the 6th, and not another IP', async () => {
    await freshWindow();
    const ip = newIp();
    for (let n = 1; n <= 5; n++) {
      const res = await clickFrom(ip);
      expect(res.statusCode, res.body).toBe(200);
      const h = limitHeaders(res);
      expect(h).toMatchObject({ limit: 5, remaining: 5 - n });
      expect(h.reset).toBeGreaterThanOrEqual(1);
      expect(h.reset).toBeLessThanOrEqual(60);
    }
    expectRefused(await clickFrom(ip), 5);
    expect((await clickFrom(newIp())).statusCode).toBe(200);
  });

  it('counts installs and events of one IP together, refusing past the limit with nothing recorded', async () => {
    await freshWindow();
    const ip = newIp();
    // Two brands' keys, so that only the IP's count reaches its limit.
    for (let n = 0; n < 3; n++) expect((await installFrom(ip)).statusCode).toBe(201);
    for (let n = 0; n < 2; n++) expect((await eventFrom(ip, beta.brand.pixel_key)).statusCode).toBe(200);
    const installId = uniqueId();
    const refused = await postPublic(t, 'installs', { pixel_key: acme.brand.pixel_key, install_id: installId, platform: 'ios' }, { remoteAddress: ip });
    expectRefused(refused, 5);
    expectRefused(await eventFrom(ip, beta.brand.pixel_key), 5);
    const rows = await t.services.db.selectFrom('installs').select('id').where('install_id', '=', installId).execute();
    expect(rows).toEqual([]);
  });

  it('counts a body refused unread too, and gives its answer the headers', async () => {
    await freshWindow();
    const ip = newIp();
    const unreadable = () =>
      t.request({ method: 'POST', url: '/api/public/attribution/events', payload: '{"pixel_key":', headers: { 'content-type': 'application/json' }, remoteAddress: ip });
    const first = await unreadable();
    expect(first.statusCode).toBe(422);
    expect(limitHeaders(first)).toMatchObject({ limit: 5, remaining: 4 });
    for (let n = 0; n < 4; n++) expect((await clickFrom(ip)).statusCode).toBe(200);
    expectRefused(await unreadable(), 5);
  });

  it('keys an IPv6 client by its /64: six addresses of one /64 share one budget, another /64 has its own', async () => {
    await freshWindow();
    const net = `2001:db8:${(++ipCounter).toString(16)}:1`;
    for (let n = 1; n <= 5; n++) {
      const res = await clickFrom(`${net}::${n.toString(16)}`);
      expect(res.statusCode, res.body).toBe(200);
      expect(limitHeaders(res)).toMatchObject({ limit: 5, remaining: 5 - n });
    }
    expectRefused(await clickFrom(`${net}:ffff:ffff:ffff:ffff`), 5);
    expect((await clickFrom(`${net.replace(/:1$/, ':2')}::1`)).statusCode).toBe(200);
  });

  it('lets exactly the limit through when a burst arrives at once (counts are batched, never lost)', async () => {
    await freshWindow();
    const ip = newIp();
    const answers = await Promise.all(Array.from({ length: 20 }, () => clickFrom(ip)));
    const statuses = answers.map((a) => a.statusCode).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(15);
    const remaining = answers.filter((a) => a.statusCode === 200).map((a) => limitHeaders(a).remaining).sort();
    expect(remaining).toEqual([0, 1, 2, 3, 4]);
  });
});

describe('per pixel key (RATE_LIMIT_PIXEL_KEY)', () => {
  it('refuses the 5th request of one key from any IP, shows the tighter of the two limits, and leaves other brands alone', async () => {
    await freshWindow();
    const [limited, other] = [await attributionBrand(t, 'Gamma'), await attributionBrand(t, 'Delta')];
    for (let n = 1; n <= 4; n++) {
      const res = await installFrom(newIp(), limited.brand.pixel_key);
      expect(res.statusCode, res.body).toBe(201);
      expect(limitHeaders(res)).toMatchObject({ limit: 4, remaining: 4 - n }); // the key's limit is the tighter one
    }
    expectRefused(await installFrom(newIp(), limited.brand.pixel_key), 4);
    expect((await installFrom(newIp(), other.brand.pixel_key)).statusCode).toBe(201);
  });
});

describe('per Data API key (RATE_LIMIT_DATA_API)', () => {
  it('lets 3 requests a minute through per key, then 429 with Retry-After; another key of the brand is counted apart', async () => {
    await freshWindow();
    const [first, second] = [await createApiKey(t, acme.brand.id), await createApiKey(t, acme.brand.id)];
    const get = (key: string) => t.request({ method: 'GET', url: '/api/v1/creators', headers: { authorization: `Bearer ${key}` } });
    for (let n = 1; n <= 3; n++) {
      const res = await get(first.key);
      expect(res.statusCode, res.body).toBe(200);
      expect(limitHeaders(res)).toMatchObject({ limit: 3, remaining: 3 - n });
    }
    expectRefused(await get(first.key), 3);
    expect((await get(second.key)).statusCode).toBe(200);
  });

  it('counts a wrong key too: its 401 carries the headers, and guessing it is limited', async () => {
    await freshWindow();
    const wrong = `sk_live_${uniqueId()}`;
    const get = () => t.request({ method: 'GET', url: '/api/v1/brand', headers: { authorization: `Bearer ${wrong}` } });
    for (let n = 1; n <= 3; n++) {
      const res = await get();
      expect([res.statusCode, res.json()]).toEqual([401, { error: 'invalid_api_key' }]);
      expect(limitHeaders(res)).toMatchObject({ limit: 3, remaining: 3 - n });
    }
    expectRefused(await get(), 3);
  });
});

describe('wrong API keys per client IP (RATE_LIMIT_FAILED_KEYS)', () => {
  const get = (key: string, remoteAddress: string) =>
    t.request({ method: 'GET', url: '/api/v1/brand', headers: { authorization: `Bearer ${key}` }, remoteAddress });

  it('answers 401 to 4 wrong keys a minute from one IP, then 429 before any look-up (a right key too), from any address of its /64', async () => {
    await freshWindow();
    const net = `2001:db8:${(++ipCounter).toString(16)}:7`;
    for (let n = 1; n <= 4; n++) {
      const res = await get(`sk_live_${uniqueId()}`, `${net}::${n}`);
      expect([res.statusCode, res.json()]).toEqual([401, { error: 'invalid_api_key' }]);
    }
    const right = await createApiKey(t, acme.brand.id);
    expectRefused(await get(`sk_live_${uniqueId()}`, `${net}::99`), 4);
    expectRefused(await get(right.key, `${net}::1`), 4);
    // Another client is not held: its right key answers, and a wrong one is its first.
    expect((await get(right.key, newIp())).statusCode).toBe(200);
    expect((await get(`sk_live_${uniqueId()}`, newIp())).statusCode).toBe(401);
  });

  it('counts only wrong keys: right keys from one IP, more than 4, are answered', async () => {
    await freshWindow();
    const ip = newIp();
    const keys = await Promise.all([1, 2, 3].map(() => createApiKey(t, acme.brand.id)));
    // Three keys of three requests each (the per-key limit is 3): nine right keys from one IP.
    for (const key of keys) for (let n = 0; n < 3; n++) expect((await get(key.key, ip)).statusCode).toBe(200);
  });
});

describe('the limiter', () => {
  /** A limiter as the service makes it, with these limits, on `redis` (the service's connection unless given). */
  const limiter = (limits: ConstructorParameters<typeof RateLimiter>[1]['limits'], redis: Redis = t.services.redis, windowMs?: number) =>
    new RateLimiter(redis, { prefix: t.config.queuePrefix, secretKey: t.config.secretKey, limits, windowMs });

  /** Two limiters with this per-IP limit, each on its own Redis connection as two processes would be, in a fresh window. */
  async function twoProcesses(publicIp: number, test: (a: RateLimiter, b: RateLimiter) => Promise<void>) {
    await freshWindow();
    const other = new Redis(t.config.redisUrl);
    try {
      await other.ping();
      const limits = { dataApi: 0, publicIp, pixelKey: 0, failedKeys: 0, portal: 0 };
      await test(limiter(limits), limiter(limits, other));
    } finally {
      other.disconnect();
    }
  }

  it('counts across processes: two limiters on one Redis share each window', async () => {
    await twoProcesses(4, async (a, b) => {
      const ip = newIp();
      const answers = [];
      for (const limiter of [a, b, a, b, a]) answers.push(await limiter.consume('public_ip', ip));
      expect(answers.map((x) => x?.allowed)).toEqual([true, true, true, true, false]);
      expect(answers.map((x) => x?.remaining)).toEqual([3, 2, 1, 0, 0]);
    });
  });

  it('counts far below a large limit in process, shares it within a flush, and waits for Redis from half the limit on', async () => {
    await twoProcesses(1000, async (a, b) => {
      const ip = newIp();
      let last = null;
      for (let i = 0; i < 400; i++) last = await a.consume('public_ip', ip);
      expect(last).toMatchObject({ allowed: true, remaining: 600 });
      await sleep(300); // a's counts reach Redis
      await b.consume('public_ip', ip); // b learns the shared total with its own flush
      await sleep(300);
      expect(await b.consume('public_ip', ip)).toMatchObject({ allowed: true, remaining: 1000 - 402 });
      const rest = await Promise.all(Array.from({ length: 700 }, (_, i) => (i % 2 ? a : b).consume('public_ip', ip)));
      expect(rest.filter((r) => r?.allowed)).toHaveLength(1000 - 402);
    });
  });

  it('counts the counts on their way to Redis: past half the limit every answer is exact, also while a flush is out', async () => {
    await freshWindow();
    const a = limiter({ dataApi: 0, publicIp: 100, pixelKey: 4, failedKeys: 0, portal: 0 });
    const ip = newIp();
    for (let i = 0; i < 40; i++) await a.consume('public_ip', ip); // in process, not sent yet
    // A count that waits for Redis (the small pixel-key limit) sends every pending count; while they are out, 40 more come.
    const exact = a.consume('pixel_key', uniqueId());
    await new Promise((r) => setImmediate(r));
    const during = [];
    for (let i = 0; i < 40; i++) during.push(await a.consume('public_ip', ip));
    await exact;
    expect(during.at(-1)).toMatchObject({ allowed: true, remaining: 100 - 80 });
  });

  it('still refuses an id past its limit after a flood of other ids fills the totals it remembers', async () => {
    const a = limiter({ dataApi: 0, publicIp: 100, pixelKey: 50, failedKeys: 0, portal: 0 }, t.services.redis, 3_600_000);
    const ip = newIp();
    for (let i = 0; i < 100; i++) expect(await a.consume('public_ip', ip)).toMatchObject({ allowed: true });
    expect(await a.consume('public_ip', ip)).toMatchObject({ allowed: false, remaining: 0 });
    for (let i = 0; i <= 100_000; i++) await a.consume('public_ip', `flood-${i}`);
    // Their counts have reached Redis once a count that waits for Redis (the small pixel-key limit) is answered after them.
    await expect.poll(async () => (await a.consume('pixel_key', uniqueId())) !== null, { timeout: 20_000 }).toBe(true);
    await a.consume('public_ip', 'flood-last');
    expect(await a.consume('public_ip', ip)).toMatchObject({ allowed: false, remaining: 0 });
  }, 30_000);

  it('keeps a client address in Redis only as a keyed hash: neither the address nor its plain SHA-256', async () => {
    const ip = newIp();
    const counted = async (secretKey: string) => {
      const prefix = `${t.config.queuePrefix}:keyed-${secretKey}`;
      const limits = { dataApi: 0, publicIp: 5, pixelKey: 0, failedKeys: 0, portal: 0 }; // small: the count waits for Redis
      expect(await new RateLimiter(t.services.redis, { prefix, secretKey, limits }).consume('public_ip', ip)).toMatchObject({ allowed: true, remaining: 4 });
      const [window] = await t.services.redis.keys(`${prefix}:rate:public_ip:*`);
      return Object.keys(await t.services.redis.hgetall(window!));
    };
    const [field] = await counted(t.config.secretKey);
    expect(field).toBeDefined();
    expect(field).not.toContain(ip);
    expect(field).not.toBe(createHash('sha256').update(ip).digest('base64url').slice(0, 22));
    // Without SECRET_KEY the field cannot be computed from a guessed address.
    expect(await counted('another-secret-key')).not.toEqual([field]);
  });

  it('applies no limit when it is 0, or when Redis is unreachable (and answers at once)', async () => {
    const off = limiter({ dataApi: 0, publicIp: 0, pixelKey: 0, failedKeys: 0, portal: 0 });
    expect(await off.consume('public_ip', newIp())).toBeNull();
    const nowhere = createRedis(`redis://127.0.0.1:${await freePort()}`, 'request');
    nowhere.on('error', () => {});
    try {
      const away = limiter({ dataApi: 1, publicIp: 1, pixelKey: 1, failedKeys: 1, portal: 1 }, nowhere);
      const started = performance.now();
      expect(await away.consume('public_ip', newIp())).toBeNull();
      expect(performance.now() - started).toBeLessThan(100);
    } finally {
      nowhere.disconnect();
    }
  });
});
