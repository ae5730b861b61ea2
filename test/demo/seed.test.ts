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
    const [brand] = await seedDemo(t.app, t.adminToken, { brands: 1, creators: 5, placements: 20, days: 30 });
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
    const overview = (await t.request({ method: 'GET', url: '/api/client/attribution/overview?period=90d', headers: { cookie } })).json();
    const ledger = await t.services.db
      .selectFrom('ledger_events')
      .select(['event_type', 'amount', 'currency'])
      .where('brand_id', '=', brand!.id)
      .execute();
    const clicks = await t.services.warehouse.rows<{ n: number }>('SELECT count() AS n FROM clicks WHERE brand_id = {b:String}', { b: brand!.id });
    expect(clicks[0]!.n).toBeGreaterThanOrEqual(80);
    expect(overview.clicks).toBe(clicks[0]!.n);
    expect(overview.installs).toBe(6);
    expect(overview.conversions).toBe(ledger.filter((r) => r.event_type !== 'refund').length);
    const usd = ledger.filter((r) => r.currency === 'USD').reduce((sum, r) => sum + Number(r.amount), 0);
    expect(overview.revenue.USD).toBeCloseTo(usd, 2);
  });
});
