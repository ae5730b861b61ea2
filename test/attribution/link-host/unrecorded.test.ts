import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { clickTokenLinkId } from '../../../src/attribution/links/click-token';
import { FreezableProxy } from '../../helpers/freezable-proxy';
import { testDatabaseUrl, testPostgres } from '../../helpers/test-postgres';
import { destroyTestService, eventually, sleep, startTestService, type TestService } from '../../helpers/harness';
import { PrivateRedis } from '../../helpers/private-redis';
import { attributionBrand, IPHONE, postPublic, uniqueId, warehouseRows } from '../public/setup';

/**
 * Visits the link host serves but does not record (docs/link-host.md#what-visitors-see): over the per-IP limit
 * (counted per visitor, behind a proxy too) and with Redis gone, the visitor still reaches the
 * destination, without a click token; with Postgres hung or down, a link not in memory is a 503
 * page, and one read before is still served.
 */
const services: TestService[] = [];
const redises: PrivateRedis[] = [];
const proxies: FreezableProxy[] = [];
afterAll(async () => {
  for (const p of proxies) p.thaw();
  for (const t of services) await destroyTestService(t);
  for (const r of redises) await r.kill();
  for (const p of proxies) await p.close();
});

const visit = (t: TestService, host: string, path: string, remoteAddress = '203.0.113.1', headers: Record<string, string> = {}) =>
  t.request({ method: 'GET', url: path, headers: { host, 'user-agent': IPHONE, ...headers }, remoteAddress });
const tokenOf = (location: unknown) => new URL(String(location)).searchParams.get('svc_cid');

/** Limits count in fixed minutes: start a counting test early in one, so it ends in the same. */
async function freshWindow(): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 10_000) await sleep(left + 50);
}

describe('link host over the per-IP limit', () => {
  it('still redirects, records nothing and mints no token; other addresses are recorded', async () => {
    const t = await startTestService({ env: { RATE_LIMIT_PUBLIC_IP: '3' } });
    services.push(t);
    const acme = await attributionBrand(t, 'Limits');
    await freshWindow();
    const tokens: (string | null)[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await visit(t, acme.hostname, '/maya?utm_source=x');
      expect(res.statusCode).toBe(302);
      expect(res.headers.location).toMatch(/^https:\/\/acme\.example\/shop\?ref=maya&utm_source=x/);
      tokens.push(new URL(res.headers.location as string).searchParams.get('svc_cid'));
    }
    expect(tokens.slice(0, 3).every((token) => token && clickTokenLinkId(t.config.secretKey, token) === acme.web.id)).toBe(true);
    expect(tokens.slice(3)).toEqual([null, null]);
    const app = await visit(t, acme.hostname, '/app');
    expect(app.statusCode).toBe(200);
    expect(app.body).toContain('<main>');
    expect(app.body).not.toMatch(/<main data-click-token/);

    const other = await visit(t, acme.hostname, '/maya', '203.0.113.2');
    expect(new URL(other.headers.location as string).searchParams.get('svc_cid')).toMatch(/^svc_/);
    await t.settle();
    const rows = await warehouseRows(t, 'clicks', 'brand_id = {b:String}', { b: acme.brand.id });
    expect(rows).toHaveLength(4);
  });
});

describe('link host with Redis gone', () => {
  it('serves web and app links without a click token, promptly, while POST /clicks answers 503', async () => {
    const redis = await PrivateRedis.start();
    redises.push(redis);
    const t = await startTestService({ workers: false, env: { REDIS_URL: redis.url } });
    services.push(t);
    const acme = await attributionBrand(t, 'Outage');
    expect((await visit(t, acme.hostname, '/maya')).headers.location).toContain('svc_cid=svc_');

    await redis.kill();
    const started = Date.now();
    const web = await visit(t, acme.hostname, '/maya?utm_source=x');
    expect(web.statusCode).toBe(302);
    expect(web.headers.location).toBe('https://acme.example/shop?ref=maya&utm_source=x');
    const app = await visit(t, acme.hostname, '/app');
    expect(app.statusCode).toBe(200);
    expect(app.body).toContain('Download on the App Store');
    expect(app.body).not.toMatch(/<main data-click-token/);
    expect(Date.now() - started).toBeLessThan(5_000);

    const post = await postPublic(t, 'clicks', { domain: acme.hostname, slug: 'maya' });
    expect(post.statusCode).toBe(503);
    expect(post.json()).toEqual({ error: 'unavailable' });

    // Redis back: visits are recorded again, by themselves.
    await redis.restart();
    await expect
      .poll(async () => (await visit(t, acme.hostname, '/maya')).headers.location, { timeout: 10_000, interval: 200 })
      .toContain('svc_cid=svc_');
  });
});

describe('link host behind a proxy (TRUST_PROXY)', () => {
  it('takes the domain from X-Forwarded-Host and the visitor from X-Forwarded-For, for the limit and the IP match', async () => {
    const t = await startTestService({ env: { RATE_LIMIT_PUBLIC_IP: '2', TRUST_PROXY: '10.0.0.1' } });
    services.push(t);
    const acme = await attributionBrand(t, 'Proxied');
    const viaProxy = (path: string, visitor: string) =>
      visit(t, 'svc-internal.test', path, '10.0.0.1', { 'x-forwarded-host': acme.hostname, 'x-forwarded-for': visitor });
    await freshWindow();
    const tokens = [];
    for (let i = 0; i < 3; i++) tokens.push(tokenOf((await viaProxy('/maya', '198.51.100.1')).headers.location));
    expect(tokens.map((token) => token && clickTokenLinkId(t.config.secretKey, token))).toEqual([acme.web.id, acme.web.id, null]);
    // Another visitor behind the same proxy has a limit of its own, and its app click is IP-matched by its own address.
    const page = await viaProxy('/app', '198.51.100.2');
    expect(page.body).toMatch(/<main data-click-token="svc_/);
    const install = await postPublic(
      t,
      'installs',
      { pixel_key: acme.brand.pixel_key, install_id: uniqueId('proxied'), platform: 'ios' },
      { remoteAddress: '10.0.0.1', headers: { 'x-forwarded-for': '198.51.100.2' } },
    );
    expect(install.json().install).toMatchObject({ resolution_method: 'ip', link: { id: acme.app.id } });
    // From anywhere but the trusted proxy, the headers are the visitor's own and are not believed.
    const spoofed = await visit(t, 'svc-internal.test', '/maya', '203.0.113.5', { 'x-forwarded-host': acme.hostname });
    expect(spoofed.json()).toEqual({ error: 'not_found' });
  });
});

/** A test service whose Postgres is reached through a proxy the test can freeze or cut. */
async function behindPostgresProxy() {
  const proxy = await FreezableProxy.start(testPostgres);
  proxies.push(proxy);
  const t = await startTestService({ env: { DATABASE_URL: testDatabaseUrl(`svc_lhpg_${randomBytes(5).toString('hex')}`, proxy.port) } });
  services.push(t);
  return { proxy, t };
}

/** The same, with a brand whose web link `/maya` was visited once (so this process holds it). */
async function brandBehindPostgresProxy(name: string) {
  const { proxy, t } = await behindPostgresProxy();
  const acme = await attributionBrand(t, name);
  expect((await visit(t, acme.hostname, '/maya')).statusCode).toBe(302);
  return { proxy, t, acme };
}

describe('link host with Postgres hung', () => {
  it('serves a link it holds in memory, and answers a 503 page within 5 s for one it must read', async () => {
    const { proxy, t, acme } = await brandBehindPostgresProxy('Hung');

    proxy.freeze();
    const cached = await visit(t, acme.hostname, '/maya');
    expect(tokenOf(cached.headers.location)).toMatch(/^svc_/);
    const started = Date.now();
    const uncached = await visit(t, acme.hostname, '/app');
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(uncached.statusCode).toBe(503);
    expect(uncached.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(uncached.body).toContain('Temporarily unavailable');

    proxy.thaw();
    await eventually(() => visit(t, acme.hostname, '/app').then((r) => r.statusCode), (status) => status === 200, 15_000);
  });
});

describe('link host with Postgres down', () => {
  it('serves the links it read before, POST /clicks too, and a 503 page for one it never read', async () => {
    const { proxy, t, acme } = await brandBehindPostgresProxy('Down');

    proxy.cut();
    // The change feed hears the connection drop: nothing cached is known to be current any more.
    await eventually(() => Promise.resolve(t.services.linkChanges.live), (live) => !live, 5_000);
    const cached = await visit(t, acme.hostname, '/maya');
    expect(cached.statusCode).toBe(302);
    expect(clickTokenLinkId(t.config.secretKey, tokenOf(cached.headers.location)!)).toBe(acme.web.id);
    const posted = await postPublic(t, 'clicks', { domain: acme.hostname, slug: 'maya' });
    expect(posted.statusCode).toBe(200);
    const uncached = await visit(t, acme.hostname, '/app');
    expect(uncached.statusCode).toBe(503);
    expect(uncached.headers['content-type']).toBe('text/html; charset=utf-8');

    proxy.restore();
    await eventually(() => visit(t, acme.hostname, '/app').then((r) => r.statusCode), (status) => status === 200, 15_000);
  });

  it('down since the start (no domain list read): a path no API route takes is a 503 page, API routes answer 503 JSON', async () => {
    const { proxy, t } = await behindPostgresProxy();
    proxy.cut(); // before the first request, which would read the list
    const page = await visit(t, 'go.unknown-yet.example', '/maya');
    expect(page.statusCode).toBe(503);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.body).toContain('Temporarily unavailable');
    const api = await t.request({ method: 'GET', url: '/api/v1/brand', headers: { authorization: 'Bearer sk_test_nothing' } });
    expect([api.statusCode, api.json()]).toEqual([503, { error: 'unavailable' }]);

    proxy.restore();
    await eventually(() => visit(t, 'go.unknown-yet.example', '/maya').then((r) => r.statusCode), (status) => status === 404, 15_000);
  });
});
