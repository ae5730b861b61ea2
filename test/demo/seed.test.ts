import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedDemo } from '../../src/demo/seed';
import { destroyTestService, startTestService, type TestService } from '../helpers/harness';

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => destroyTestService(t));

describe('seed-demo', () => {
  it('loads brands whose Data API, portal and ledger answer with data', async () => {
    const [brand] = await seedDemo(t.app, t.adminToken, { brands: 1, creators: 5, placements: 20, days: 30 }, { publicBaseUrl: t.config.publicBaseUrl });
    await t.settle(60_000);

    const summary = await t.request({ method: 'GET', url: '/api/v1/metrics/summary', headers: { authorization: `Bearer ${brand!.apiKey}` } });
    expect(summary.statusCode).toBe(200);
    // Some placements fall in the hidden campaign, which the Data API never shows.
    expect(summary.json().data.posts).toBeGreaterThan(0);
    expect(summary.json().data.posts).toBeLessThanOrEqual(20);
    expect(summary.json().data.views).toBeGreaterThan(0);

    const login = await t.request({ method: 'POST', url: '/api/client/auth/login', payload: brand!.portal });
    expect(login.statusCode).toBe(200);
    const cookie = String(login.headers['set-cookie']).split(';')[0]!;
    const session = (c: string) => ({ get: (path: string) => t.request({ method: 'GET', url: `/api/client/attribution${path}`, headers: { cookie: c } }) });
    const overview = (await t.request({ method: 'GET', url: '/api/client/attribution/overview?period=90d', headers: { cookie } })).json();
    const ledger = await t.services.db
      .selectFrom('ledger_events')
      .select(['event_type', 'amount', 'currency'])
      .where('brand_id', '=', brand!.id)
      .execute();
    const count = async (table: string) =>
      (await t.services.warehouse.rows<{ n: number }>(`SELECT count() AS n FROM ${table} FINAL WHERE brand_id = {b:String}`, { b: brand!.id }))[0]!.n;
    const clicks = await count('clicks');
    expect(clicks).toBeGreaterThanOrEqual(400);
    expect(overview.clicks).toBe(clicks);
    expect(overview.installs).toBe(await count('installs'));
    expect(overview.installs).toBeGreaterThan(5);
    expect(overview.conversions).toBe(ledger.filter((r) => r.event_type !== 'refund').length);
    const usd = ledger.filter((r) => r.currency === 'USD').reduce((sum, r) => sum + Number(r.amount), 0);
    expect(overview.revenue.USD).toBeCloseTo(usd, 2);

    // Spread over the 90 days, not all on today: clicks on most days, recent weeks busier than
    // the first ones; installs and purchases on many days too.
    type Day = { date: string; clicks: number; installs: number; conversions: number };
    const daily: Day[] = overview.daily;
    expect(daily).toHaveLength(90);
    const daysWith = (key: keyof Omit<Day, 'date'>) => daily.filter((d) => d[key] > 0).length;
    expect(daysWith('clicks')).toBeGreaterThan(75);
    expect(daysWith('installs')).toBeGreaterThan(5);
    expect(daysWith('conversions')).toBeGreaterThan(5);
    const clicksIn = (days: Day[]) => days.reduce((sum, d) => sum + d.clicks, 0);
    expect(clicksIn(daily.slice(-30))).toBeGreaterThan(1.3 * clicksIn(daily.slice(0, 30)));
    expect(daily.at(-1)!.clicks).toBeLessThan(clicks / 10);
    const weekend = daily.filter((d) => [0, 6].includes(new Date(d.date).getUTCDay()));
    const weekdays = daily.filter((d) => !weekend.includes(d));
    expect(clicksIn(weekend) / weekend.length).toBeGreaterThan(clicksIn(weekdays) / weekdays.length);

    // Its links: on an operator domain under localhost (served at once), a web link and an app link.
    expect(brand!.links.hostname).toBe(`go-${brand!.id.replace(/-/g, '').slice(0, 8)}.localhost`);
    const host = `${brand!.links.hostname}:3000`;
    const web = await t.request({ method: 'GET', url: `/${brand!.links.web}`, headers: { host } });
    expect(web.statusCode).toBe(302);
    expect(web.headers.location).toMatch(/^https:\/\/shop\.example\.com\/landing\?.*svc_cid=svc_/);
    const app = await t.request({ method: 'GET', url: `/${brand!.links.app}`, headers: { host, 'user-agent': 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X)' } });
    expect(app.statusCode).toBe(200);
    expect(app.body).toContain('apps.apple.com');
    expect((await session(cookie).get('/domains')).json().data).toEqual([
      expect.objectContaining({ hostname: brand!.links.hostname, registered_by: 'operator', served: true }),
    ]);
    // Its pictures come from this service, never from another host.
    const logo = app.body.match(/<img class="logo" src="([^"]+)"/)?.[1];
    expect(logo?.startsWith(`${t.config.publicBaseUrl}/demo/images/logo.svg?`)).toBe(true);
    const image = await t.request({ method: 'GET', url: logo!.slice(t.config.publicBaseUrl.length) });
    expect([image.statusCode, image.headers['content-type']]).toEqual([200, 'image/svg+xml; charset=utf-8']);
    expect(image.body).toContain('>NC</text>');
    const thumbnails = await t.services.warehouse.rows<{ url: string }>('SELECT DISTINCT thumbnail_url AS url FROM placements WHERE brand_id = {b:String}', { b: brand!.id });
    expect(thumbnails.length).toBeGreaterThan(0);
    for (const { url } of thumbnails) expect(url.startsWith(`${t.config.publicBaseUrl}/demo/images/thumbnail.svg?`), url).toBe(true);
    const thumbnail = await t.request({ method: 'GET', url: thumbnails[0]!.url.slice(t.config.publicBaseUrl.length) });
    expect(thumbnail.statusCode).toBe(200);
  });

  it('gives a second seed its own demo domain, so seeding again never collides', async () => {
    const [brand] = await seedDemo(t.app, t.adminToken, { brands: 1, creators: 2, placements: 2, days: 2 }, { publicBaseUrl: t.config.publicBaseUrl });
    const domains = (await t.request({ method: 'GET', url: '/api/internal/attribution-domains', admin: true })).json().data;
    expect(domains.map((d: { hostname: string }) => d.hostname)).toContain(brand!.links.hostname);
    expect(new Set(domains.map((d: { hostname: string }) => d.hostname)).size).toBe(domains.length);
    expect(domains.length).toBeGreaterThanOrEqual(2);
  });

  it('draws its images from plain text only', async () => {
    for (const url of ['/demo/images/logo.svg?text=%3Cscript%3E', '/demo/images/logo.svg?hue=999', '/demo/images/thumbnail.svg?text=a%22b']) {
      expect((await t.request({ method: 'GET', url })).statusCode, url).toBe(404);
    }
  });
});
