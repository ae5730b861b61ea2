import { afterAll, describe, expect, it } from 'vitest';
import { clickTokenLinkId } from '../../../src/attribution/links/click-token';
import { destroyTestService, startTestService, type TestService } from '../../helpers/harness';
import { PrivateRedis } from '../../helpers/private-redis';
import { attributionBrand, IPHONE, postPublic, warehouseRows } from '../public/setup';

/**
 * Visits the link host serves but does not record (CONTRACT 9 and 10): over the per-IP limit
 * and with Redis gone, the visitor still reaches the destination, without a click token.
 */
const services: TestService[] = [];
const redises: PrivateRedis[] = [];
afterAll(async () => {
  for (const t of services) await destroyTestService(t);
  for (const r of redises) await r.kill();
});

const visit = (t: TestService, host: string, path: string, remoteAddress = '203.0.113.1') =>
  t.request({ method: 'GET', url: path, headers: { host, 'user-agent': IPHONE }, remoteAddress });

describe('link host over the per-IP limit', () => {
  it('still redirects, records nothing and mints no token; other addresses are recorded', async () => {
    const t = await startTestService({ env: { RATE_LIMIT_PUBLIC_IP: '3' } });
    services.push(t);
    const acme = await attributionBrand(t, 'Limits');
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
