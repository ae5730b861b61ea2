import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays, todayUtc } from '../../src/http/query';
import { chDateTime } from '../../src/warehouse/values';
import { createCode, createDomain, createLink, insertPastClicks, insertSandboxPurchase } from '../helpers/attribution-fixtures';
import { createBrand, createCreator } from '../helpers/fixtures';
import { destroyTestService, startTestService, type TestService } from '../helpers/harness';
import { createPortalUser, type Portal, portal, portalLogin } from './helpers';

/**
 * Every number the portal shows, against facts whose totals are worked out by hand below.
 * Facts go in through the public endpoints where they can; clicks on past days and a
 * sandbox ledger row (only provider webhooks make those) go straight into ClickHouse.
 *
 * Brand A (default range 30d = today-29 .. today; previous = today-59 .. today-30):
 *   link anna:  3 clicks today, 2 clicks 40 days ago; 1 install today (clipboard token);
 *               purchase 49.99 USD and refund 10 USD today (its click token),
 *               purchase 20 USD 40 days ago (its click token)
 *   link anna2: 1 click 10 days ago
 *   code ANNA:  purchase 9.99 EUR today
 *   brand-wide: 1 unattributed install today, 1 signup today (no amount), the first
 *               purchase sent twice, a sandbox purchase of 500 USD today
 * Brand B: link bob, 2 clicks today and a purchase of 100 USD.
 */

let t: TestService;
let a: Portal;
let b: Portal;
const today = todayUtc();
const ago = (days: number, minutes = 0) => new Date(Date.parse(`${addDays(today, -days)}T12:00:00Z`) - minutes * 60_000);
const fx = {} as {
  brandA: { id: string; pixel_key: string };
  brandB: { id: string; pixel_key: string };
  anna: { id: number };
  anna2: { id: number };
  bob: { id: number };
  code: { id: string; label: string };
  creatorA: { id: string; name: string };
  creatorB: { id: string; name: string };
  sharedDomain: { id: string; hostname: string };
};

/** The expected `daily` of a 30-day range starting `from` days before today: zero but for `facts`. */
function days(from: number, facts: Record<string, Partial<{ clicks: number; installs: number; conversions: number; revenue: Record<string, number> }>>) {
  return Array.from({ length: 30 }, (_, i) => {
    const date = addDays(today, from + i);
    return { date, clicks: 0, installs: 0, conversions: 0, revenue: {}, ...facts[date] };
  });
}

async function post(endpoint: 'clicks' | 'installs' | 'events', payload: Record<string, unknown>) {
  const res = await t.request({ method: 'POST', url: `/api/public/attribution/${endpoint}`, payload });
  expect(res.statusCode, res.body).toBeLessThan(300);
  return res.json();
}

const pastClicks = (brandId: string, linkId: number, creatorId: string, at: Date, count: number) =>
  insertPastClicks(t, { brandId, linkId, creatorId, domain: fx.sharedDomain.hostname }, at, count);

beforeAll(async () => {
  t = await startTestService();
  fx.brandA = await createBrand(t, { name: 'Acme' });
  fx.brandB = await createBrand(t, { name: 'Bravo' });
  fx.creatorA = await createCreator(t, { name: 'Anna Berg', first_name: 'Anna' });
  fx.creatorB = await createCreator(t, { name: 'Bob Stone', first_name: 'Bob' });
  fx.sharedDomain = await createDomain(t, { hostname: `go-${randomBytes(3).toString('hex')}.test` });
  const onShared = { domain_id: fx.sharedDomain.id };
  fx.anna = await createLink(t, { ...onShared, brand_id: fx.brandA.id, creator_id: fx.creatorA.id, slug: 'anna' });
  fx.anna2 = await createLink(t, { ...onShared, brand_id: fx.brandA.id, creator_id: fx.creatorA.id, slug: 'anna2' });
  fx.bob = await createLink(t, { ...onShared, brand_id: fx.brandB.id, creator_id: fx.creatorB.id, slug: 'bob' });
  fx.code = await createCode(t, { brand_id: fx.brandA.id, creator_id: fx.creatorA.id, label: 'ANNA' });
  await createPortalUser(t, fx.brandA.id, 'a@acme.test');
  await createPortalUser(t, fx.brandB.id, 'b@bravo.test');
  a = portal(t, await portalLogin(t, 'a@acme.test'));
  b = portal(t, await portalLogin(t, 'b@bravo.test'));

  const host = fx.sharedDomain.hostname;
  const tokens = [];
  for (let i = 0; i < 3; i++) tokens.push((await post('clicks', { domain: host, slug: 'anna' })).click_token as string);
  for (let i = 0; i < 2; i++) await post('clicks', { domain: host, slug: 'bob' });
  await pastClicks(fx.brandA.id, fx.anna.id, fx.creatorA.id, ago(40), 2);
  await pastClicks(fx.brandA.id, fx.anna2.id, fx.creatorA.id, ago(10), 1);

  const pkA = fx.brandA.pixel_key;
  await post('installs', { pixel_key: pkA, install_id: 'device-1', platform: 'ios', clipboard_token: tokens[0] });
  await post('installs', { pixel_key: pkA, install_id: 'device-2', platform: 'android' });
  const purchase = { pixel_key: pkA, event_type: 'purchase', transaction_id: 'order-1', amount: 49.99, currency: 'USD', click_token: tokens[1], occurred_at: new Date(Date.now() - 4 * 60_000).toISOString() };
  await post('events', purchase);
  expect((await post('events', purchase)).duplicate).toBe(true);
  await post('events', { pixel_key: pkA, event_type: 'refund', transaction_id: 'order-1', amount: 10, currency: 'USD', click_token: tokens[1], occurred_at: new Date(Date.now() - 3 * 60_000).toISOString() });
  await post('events', { pixel_key: pkA, event_type: 'purchase', transaction_id: 'order-2', amount: 9.99, currency: 'EUR', code: 'anna', occurred_at: new Date(Date.now() - 2 * 60_000).toISOString() });
  await post('events', { pixel_key: pkA, event_type: 'signup', transaction_id: 'user-7', occurred_at: new Date(Date.now() - 60_000).toISOString() });
  await post('events', { pixel_key: pkA, event_type: 'purchase', transaction_id: 'order-0', amount: 20, currency: 'USD', click_token: tokens[2], occurred_at: ago(40).toISOString() });
  await post('events', { pixel_key: fx.brandB.pixel_key, event_type: 'purchase', transaction_id: 'order-1', amount: 100, currency: 'USD' });
  await insertSandboxPurchase(t, fx.brandA.id, new Date(Date.now() - 30_000));
  await t.settle();
});
afterAll(async () => destroyTestService(t));

describe('GET /overview', () => {
  it('answers the 30-day range and the 30 days before it, by hand', async () => {
    const res = await a.get('/overview');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      period: '30d',
      webhook_alerts: [],
      start_date: addDays(today, -29),
      end_date: today,
      clicks: 4,
      bot_clicks: 0,
      installs: 2,
      // Where they came from: device-1 through the install page's clipboard, device-2 from nowhere.
      installs_by_method: { clipboard: 1, unattributed: 1 },
      conversions: 3,
      revenue: { USD: 39.99, EUR: 9.99 },
      refunds: { USD: 10 },
      daily: days(-29, {
        [addDays(today, -10)]: { clicks: 1 },
        [today]: { clicks: 3, installs: 2, conversions: 3, revenue: { USD: 39.99, EUR: 9.99 } },
      }),
      previous: {
        start_date: addDays(today, -59),
        end_date: addDays(today, -30),
        clicks: 2,
        bot_clicks: 0,
        installs: 0,
        installs_by_method: {},
        conversions: 1,
        revenue: { USD: 20 },
        refunds: {},
        daily: days(-59, { [addDays(today, -40)]: { clicks: 2, conversions: 1, revenue: { USD: 20 } } }),
      },
    });
  });

  it('draws the chart of a custom range from the same facts: one item per day, sandbox left out', async () => {
    const res = await a.get(`/overview?start_date=${addDays(today, -2)}&end_date=${today}`);
    const body = res.json();
    expect(body.daily).toEqual([
      { date: addDays(today, -2), clicks: 0, installs: 0, conversions: 0, revenue: {} },
      { date: addDays(today, -1), clicks: 0, installs: 0, conversions: 0, revenue: {} },
      { date: today, clicks: 3, installs: 2, conversions: 3, revenue: { USD: 39.99, EUR: 9.99 } },
    ]);
    expect(body.previous.daily.map((d: { date: string }) => d.date)).toEqual([addDays(today, -5), addDays(today, -4), addDays(today, -3)]);
    // The days add up to the totals the cards show.
    const sum = (key: 'clicks' | 'installs' | 'conversions') => body.daily.reduce((n: number, d: Record<string, number>) => n + d[key]!, 0);
    expect([sum('clicks'), sum('installs'), sum('conversions')]).toEqual([body.clicks, body.installs, body.conversions]);
  });

  it('publishes daily in the OpenAPI document, under the range and under previous', async () => {
    const doc = (await t.request({ method: 'GET', url: '/api/client/openapi.json' })).json();
    const schema = doc.paths['/api/client/attribution/overview'].get.responses['200'].content['application/json'].schema;
    for (const totals of [schema, schema.properties.previous]) {
      expect(totals.required).toContain('daily');
      expect(Object.keys(totals.properties.daily.items.properties).sort()).toEqual(['clicks', 'conversions', 'date', 'installs', 'revenue']);
    }
  });

  it('takes a custom range and compares it with the range of equal length before it', async () => {
    const res = await a.get(`/overview?start_date=${addDays(today, -9)}&end_date=${today}`);
    expect(res.json()).toMatchObject({
      period: 'custom',
      clicks: 3,
      conversions: 3,
      previous: { start_date: addDays(today, -19), end_date: addDays(today, -10), clicks: 1, conversions: 0, revenue: {} },
    });
  });

  it("shows brand B only brand B's numbers", async () => {
    const res = await b.get('/overview');
    expect(res.json()).toMatchObject({ clicks: 2, installs: 0, conversions: 1, revenue: { USD: 100 }, refunds: {} });
  });

  it('answers 400 invalid_parameter for bad ranges', async () => {
    const cases: [string, string][] = [
      ['period=week', 'period'],
      [`start_date=${today}`, 'end_date'],
      [`end_date=${today}`, 'start_date'],
      [`start_date=${today}&end_date=${addDays(today, -1)}`, 'end_date'],
      [`period=7d&start_date=${today}&end_date=${today}`, 'period'],
      ['period=custom', 'start_date'],
      ['start_date=2026-02-30&end_date=2026-03-01', 'start_date'],
      ['period=7d&period=30d', 'period'],
    ];
    for (const [query, param] of cases) {
      const res = await a.get(`/overview?${query}`);
      expect(res.statusCode, query).toBe(400);
      expect(res.json(), query).toMatchObject({ error: 'invalid_parameter', param });
    }
  });
});

describe('GET /links', () => {
  it('answers per-link totals for the range, without brand, pixel key or creator user ids', async () => {
    const res = await a.get('/links');
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.pagination).toEqual({ next_cursor: null, has_more: false });
    expect(body.data).toEqual([
      expect.objectContaining({
        id: String(fx.anna.id),
        domain: fx.sharedDomain.hostname,
        slug: 'anna',
        type: 'web',
        active: true,
        destination_url: 'https://example.com/landing',
        creator: { id: fx.creatorA.id, name: 'Anna Berg' },
        clicks: 3,
        installs: 1,
        conversions: 1,
        revenue: { USD: 39.99 },
      }),
      expect.objectContaining({ id: String(fx.anna2.id), slug: 'anna2', clicks: 1, installs: 0, conversions: 0, revenue: {} }),
    ]);
    expect(Object.keys(body.data[0]).sort()).toEqual(
      ['active', 'android_url', 'bot_clicks', 'clicks', 'conversions', 'creator', 'deep_link', 'destination_url', 'domain', 'domain_id', 'id', 'installs', 'ios_url', 'revenue', 'slug', 'type'].sort(),
    );
    expect(res.body).not.toContain(fx.brandA.pixel_key);
    expect(res.body).not.toContain(fx.brandA.id);
  });

  it('counts the older range from the per-day rollup', async () => {
    const res = await a.get(`/links?start_date=${addDays(today, -59)}&end_date=${addDays(today, -30)}`);
    const anna = res.json().data.find((l: { id: string }) => l.id === String(fx.anna.id));
    expect(anna).toMatchObject({ clicks: 2, installs: 0, conversions: 1, revenue: { USD: 20 } });
  });

  it('pages with limit and cursor', async () => {
    const first = (await a.get('/links?limit=1')).json();
    expect(first.data.map((l: { id: string }) => l.id)).toEqual([String(fx.anna.id)]);
    expect(first.pagination.has_more).toBe(true);
    const second = (await a.get(`/links?limit=1&cursor=${first.pagination.next_cursor}`)).json();
    expect(second.data.map((l: { id: string }) => l.id)).toEqual([String(fx.anna2.id)]);
    expect(second.pagination).toEqual({ next_cursor: null, has_more: false });
    expect((await a.get('/links?limit=0')).json()).toMatchObject({ error: 'invalid_parameter', param: 'limit' });
    expect((await a.get('/links?cursor=nonsense')).json()).toMatchObject({ error: 'invalid_parameter', param: 'cursor' });
  });

  it("shows brand B only its link", async () => {
    const res = await b.get('/links');
    expect(res.json().data).toEqual([expect.objectContaining({ id: String(fx.bob.id), clicks: 2, creator: { id: fx.creatorB.id, name: 'Bob Stone' } })]);
  });
});

describe('GET /codes', () => {
  it("answers the brand's codes with live conversions and revenue", async () => {
    const res = await a.get('/codes');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toEqual([
      { id: fx.code.id, label: 'ANNA', active: true, creator: { id: fx.creatorA.id, name: 'Anna Berg' }, conversions: 1, revenue: { EUR: 9.99 } },
    ]);
    expect((await b.get('/codes')).json().data).toEqual([]);
  });

  it('is read-only', async () => {
    for (const method of ['POST', 'DELETE'] as const) {
      expect((await a.send(method, `/codes${method === 'DELETE' ? `/${fx.code.id}` : ''}`, method === 'POST' ? { label: 'X' } : undefined)).statusCode).toBe(404);
    }
  });
});

describe('GET /events', () => {
  type Item = { transaction_id: string; event_type: string; amount: number; link: unknown; creator: unknown; code: string | null; sandbox: boolean };
  const feed = async (portalOf: Portal, query = '') => {
    const res = await portalOf.get(`/events${query}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { data: Item[]; pagination: { next_cursor: string | null; has_more: boolean } };
  };

  it('answers live rows of the range, newest first, with link, creator and code', async () => {
    const { data } = await feed(a);
    expect(data.map((e) => e.transaction_id)).toEqual(['user-7', 'order-2', 'order-1', 'order-1']);
    expect(data[3]).toMatchObject({
      event_type: 'purchase',
      source: 'pixel',
      amount: 49.99,
      currency: 'USD',
      sandbox: false,
      external_user_id: null,
      link: { id: fx.anna.id, domain: fx.sharedDomain.hostname, slug: 'anna' },
      creator: { id: fx.creatorA.id, name: 'Anna Berg' },
      code: null,
      resolution_method: 'click',
    });
    expect(data[2]).toMatchObject({ event_type: 'refund', amount: -10 });
    expect(data[1]).toMatchObject({ code: 'ANNA', creator: { id: fx.creatorA.id, name: 'Anna Berg' }, link: null, resolution_method: 'code' });
    expect(data[0]).toMatchObject({ event_type: 'signup', link: null, creator: null, code: null, resolution_method: 'unattributed' });
    expect(Object.keys(data[0]!).sort()).toEqual(
      ['amount', 'code', 'confidence', 'creator', 'currency', 'event_type', 'external_user_id', 'id', 'link', 'occurred_at', 'resolution_method', 'sandbox', 'source', 'transaction_id'].sort(),
    );
  });

  it('filters by event type, creator, sandbox and range', async () => {
    expect((await feed(a, '?event_type=refund')).data.map((e) => e.transaction_id)).toEqual(['order-1']);
    expect((await feed(a, '?event_type=purchase,refund&period=90d')).data.map((e) => e.transaction_id)).toEqual(['order-2', 'order-1', 'order-1', 'order-0']);
    expect((await feed(a, `?creator_id=${fx.creatorA.id}`)).data).toHaveLength(3);
    expect((await feed(a, `?creator_id=${fx.creatorB.id}`)).data).toHaveLength(0);
    const sandbox = (await feed(a, '?sandbox=true')).data;
    expect(sandbox.map((e) => [e.transaction_id, e.sandbox])).toEqual([['sandbox-1', true]]);
    expect((await a.get('/events?event_type=bogus')).json()).toMatchObject({ error: 'invalid_parameter', param: 'event_type' });
    for (const path of ['/links', '/codes', '/events']) {
      expect((await a.get(`${path}?creator_id=`)).json(), path).toMatchObject({ error: 'invalid_parameter', param: 'creator_id' });
    }
    expect((await a.get('/events?sandbox=maybe')).json()).toMatchObject({ error: 'invalid_parameter', param: 'sandbox' });
  });

  it('pages with a stable cursor that visits every row once', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Awaited<ReturnType<typeof feed>> = await feed(a, `?period=90d&limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...page.data.map((e) => e.transaction_id));
      cursor = page.pagination.next_cursor;
      expect(page.pagination.has_more).toBe(cursor !== null);
    } while (cursor);
    expect(seen).toEqual(['user-7', 'order-2', 'order-1', 'order-1', 'order-0']);
    expect((await a.get('/events?limit=101')).json()).toMatchObject({ error: 'invalid_parameter', param: 'limit' });
  });

  it("shows brand B only its own row, though it shares a transaction id with brand A's", async () => {
    const { data } = await feed(b);
    expect(data.map((e) => [e.transaction_id, e.amount])).toEqual([['order-1', 100]]);
  });
});

describe('currencies shown (one rule for /overview, /links and /codes)', () => {
  it('shows a currency once a live row in it carries an amount: a trial alone adds none, a full refund shows 0', async () => {
    const brand = await createBrand(t, { name: 'Charlie' });
    const link = await createLink(t, { domain_id: fx.sharedDomain.id, brand_id: brand.id, creator_id: fx.creatorA.id, slug: 'charlie' });
    const code = await createCode(t, { brand_id: brand.id, creator_id: fx.creatorA.id, label: 'CHARLIE' });
    await createPortalUser(t, brand.id, 'c@charlie.test');
    const c = portal(t, await portalLogin(t, 'c@charlie.test'));
    // Rows credited to both the link and the code, so one set of facts checks both lists.
    const row = (id: string, event_type: string, amount: number, at: Date) => ({
      brand_id: brand.id,
      id,
      event_type,
      transaction_id: id,
      amount: String(amount),
      currency: 'USD',
      source: 'stripe',
      link_id: link.id,
      code_id: code.id,
      code_label: 'CHARLIE',
      resolution_method: 'click',
      sandbox: 0,
      occurred_at: chDateTime(at),
      recorded_at: chDateTime(at),
    });
    // Today a trial only; 40 days ago a purchase refunded in full.
    await t.services.warehouse.insert('ledger', [row('c-trial', 'trial', 0, ago(0)), row('c-buy', 'purchase', 20, ago(40)), row('c-refund', 'refund', -20, ago(40, -1))]);

    // objectContaining, unlike toMatchObject, compares `revenue: {}` exactly.
    expect((await c.get('/overview')).json()).toEqual(
      expect.objectContaining({
        conversions: 1,
        revenue: {},
        refunds: {},
        previous: expect.objectContaining({ conversions: 1, revenue: { USD: 0 }, refunds: { USD: 20 } }),
      }),
    );
    for (const path of ['/links', '/codes']) {
      expect((await c.get(path)).json().data, path).toEqual([expect.objectContaining({ conversions: 1, revenue: {} })]);
      expect((await c.get(`${path}?period=90d`)).json().data, path).toEqual([expect.objectContaining({ conversions: 2, revenue: { USD: 0 } })]);
    }
  });
});

describe("period all", () => {
  it("starts at the brand's first person's click, not at a crawler's", async () => {
    const brand = await createBrand(t, { name: 'Delta' });
    const link = await createLink(t, { domain_id: fx.sharedDomain.id, brand_id: brand.id, creator_id: fx.creatorA.id, slug: 'delta' });
    await createPortalUser(t, brand.id, 'd@delta.test');
    const d = portal(t, await portalLogin(t, 'd@delta.test'));
    const click = (at: Date, bot: number) => ({
      brand_id: brand.id,
      link_id: link.id,
      creator_id: fx.creatorA.id,
      click_token: `svc_${randomBytes(12).toString('base64url')}`,
      clicked_at: chDateTime(at),
      domain: fx.sharedDomain.hostname,
      link_type: 'web',
      bot,
    });
    await t.services.warehouse.insert('clicks', [click(ago(50), 1), click(ago(5), 0)]);
    expect((await d.get('/overview?period=all')).json()).toMatchObject({ start_date: addDays(today, -5), clicks: 1, bot_clicks: 0 });
  });
});

describe('brand isolation', () => {
  it("never answers brand A's rows to brand B, even when B names A's creator", async () => {
    const paths = ['/overview', '/links', '/codes', '/events?period=all', '/events?period=all&sandbox=true', '/setup', '/domains'];
    const named = [`/links?creator_id=${fx.creatorA.id}`, `/codes?creator_id=${fx.creatorA.id}`, `/events?period=all&creator_id=${fx.creatorA.id}`];
    for (const path of [...paths, ...named]) {
      const res = await b.get(path);
      expect(res.statusCode, path).toBe(200);
      for (const secret of [fx.brandA.pixel_key, fx.brandA.id, fx.code.id, 'order-2', 'sandbox-1']) expect(res.body, path).not.toContain(secret);
      if (path.includes('creator_id')) expect(res.json().data, path).toEqual([]);
    }
    expect((await b.get('/setup')).json().pixel_key).toBe(fx.brandB.pixel_key);
  });
});

describe('session required', () => {
  it('answers 401 unauthorized on every portal endpoint without a session', async () => {
    const paths = ['/overview', '/links', '/codes', '/events', '/setup', '/domains'];
    for (const path of paths) {
      const res = await t.request({ method: 'GET', url: `/api/client/attribution${path}` });
      expect(res.statusCode, path).toBe(401);
      expect(res.json()).toEqual({ error: 'unauthorized' });
    }
  });
});
