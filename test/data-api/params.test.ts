import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMonths, periodStart, todayUtc } from '../../src/http/query';
import { envelope, summarySchema } from '../../src/data-api/resources';
import { createApiKey } from '../helpers/fixtures';
import { destroyTestService, startTestService, type TestService } from '../helpers/harness';
import { addPlacements, addSnapshots, api, brandWithKey, createCampaign, ok } from './helpers';

/** Authentication, parameter errors and periods (docs/api.md#data-api), and /openapi.json. */
let t: TestService;
let key: string;
let brandId: string;
let campaignId: string;
const summary = envelope(summarySchema);

const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);

beforeAll(async () => {
  t = await startTestService();
  ({
    key,
    brand: { id: brandId },
  } = await brandWithKey(t, { name: 'Params' }));
  campaignId = (await createCampaign(t, { brand_id: brandId, name: 'C' })).id;
  // Placements posted at noon today, yesterday, 6, 7 and 29 days ago.
  const ages = [0, 1, 6, 7, 29];
  await addPlacements(
    t,
    brandId,
    ages.map((age) => ({ id: `age-${age}`, campaign_id: campaignId, creator_id: null, platform: 'tiktok', posted_at: `${daysAgo(age)}T12:00:00Z` })),
  );
  for (const age of ages) await addSnapshots(t, `age-${age}`, [[daysAgo(age), 10, 1, 0, 0]]);
  await t.settle();
});
afterAll(async () => destroyTestService(t));

describe('authentication', () => {
  it('takes the key as a Bearer token, an X-SVC-API-Key header or an api_key parameter', async () => {
    const bearer = await t.request({ method: 'GET', url: '/api/v1/metrics/summary', headers: { authorization: `Bearer ${key}` } });
    const header = await t.request({ method: 'GET', url: '/api/v1/metrics/summary', headers: { 'x-svc-api-key': key } });
    const query = await t.request({ method: 'GET', url: `/api/v1/metrics/summary?api_key=${encodeURIComponent(key)}` });
    expect([bearer.statusCode, header.statusCode, query.statusCode]).toEqual([200, 200, 200]);
    expect(query.json().data).toEqual(bearer.json().data);
  });

  it('answers 401 missing_api_key without a key, invalid_api_key for an unknown or revoked one', async () => {
    for (const path of ['/brand', '/metrics/summary', '/metrics/daily', '/posts', '/creators', '/metrics/daily.csv', '/posts.csv', '/creators.csv']) {
      const missing = await api(t, undefined, path);
      expect(missing.statusCode).toBe(401);
      expect(missing.json()).toEqual({ error: 'missing_api_key' });
    }
    const basic = await t.request({ method: 'GET', url: '/api/v1/brand', headers: { authorization: 'Basic abc' } });
    expect(basic.json()).toEqual({ error: 'missing_api_key' });
    const unknown = await api(t, 'sk_not_a_real_key', '/brand');
    expect(unknown.statusCode).toBe(401);
    expect(unknown.json()).toEqual({ error: 'invalid_api_key' });

    const revoked = await createApiKey(t, brandId);
    await t.services.db.updateTable('api_keys').set({ revoked_at: new Date() }).where('id', '=', revoked.id).execute();
    const res = await api(t, revoked.key, '/brand');
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error: 'invalid_api_key' });
  });

  it('checks the key before the parameters', async () => {
    const res = await api(t, undefined, '/metrics/summary', { period: 'week' });
    expect(res.statusCode).toBe(401);
  });
});

describe('invalid parameters', () => {
  const cases: [string, Record<string, string>, string][] = [
    ['/metrics/summary', { period: 'week' }, 'period'],
    ['/metrics/summary', { start_date: '2026-13-01', end_date: '2026-12-31' }, 'start_date'],
    ['/metrics/summary', { start_date: '2026-02-01', end_date: '2026-02-30' }, 'end_date'],
    ['/metrics/summary', { start_date: '1 May 2026', end_date: '2026-05-02' }, 'start_date'],
    ['/metrics/summary', { start_date: '2026-05-01' }, 'end_date'],
    ['/metrics/summary', { end_date: '2026-05-01' }, 'start_date'],
    ['/metrics/summary', { start_date: '2026-05-02', end_date: '2026-05-01' }, 'end_date'],
    ['/metrics/summary', { period: '7d', start_date: '2026-05-01', end_date: '2026-05-02' }, 'period'],
    ['/metrics/summary', { period: 'custom' }, 'start_date'],
    ['/metrics/summary', { platform: 'myspace' }, 'platform'],
    ['/metrics/summary', { platform: 'tiktok,myspace' }, 'platform'],
    ['/metrics/summary', { platform: '' }, 'platform'],
    ['/metrics/summary', { attribution: 'click_date' }, 'attribution'],
    ['/metrics/summary', { campaign_id: 'nope' }, 'campaign_id'],
    ['/brand', { period: 'forever' }, 'period'],
    ['/metrics/daily', { view_type: 'weekly' }, 'view_type'],
    ['/metrics/daily.csv', { view_type: 'weekly' }, 'view_type'],
    ['/posts', { sort: 'popular' }, 'sort'],
    ['/posts.csv', { sort: 'popular' }, 'sort'],
    ['/posts', { limit: '0' }, 'limit'],
    ['/posts', { limit: '101' }, 'limit'],
    ['/posts', { limit: 'ten' }, 'limit'],
    ['/posts', { cursor: 'not-a-cursor' }, 'cursor'],
    ['/posts', { cursor: Buffer.from('["views","x","id"]').toString('base64url'), sort: 'views' }, 'cursor'],
    ['/creators', { page: '0' }, 'page'],
    ['/creators', { page: '1.5' }, 'page'],
    ['/creators', { limit: '1000' }, 'limit'],
    ['/creators.csv', { attribution: 'x' }, 'attribution'],
  ];

  it.each(cases)('%s %j answers 400 naming %s', async (path, query, param) => {
    const res = await api(t, key, path, query);
    expect(res.statusCode).toBe(400);
    const body = res.json();
    expect(body).toMatchObject({ error: 'invalid_parameter', param });
    expect(typeof body.message).toBe('string');
  });

  const cursor = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const daysAhead = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10);
  const strict: [string, Record<string, string>, string][] = [
    // Dates bounded: none before 2000-01-01, none more than 366 days after today.
    ['/metrics/summary', { start_date: '1970-01-01', end_date: '2000-01-10' }, 'start_date'],
    ['/metrics/summary', { start_date: '1999-12-31', end_date: '2000-01-10' }, 'start_date'],
    ['/metrics/daily', { start_date: '2026-01-01', end_date: '2149-06-06' }, 'end_date'],
    ['/metrics/daily', { start_date: '2026-01-01', end_date: daysAhead(368) }, 'end_date'],
    // A cursor's sort key is a finite number from 0 (views at most 2^53, engagement at most 10^6).
    ['/posts', { sort: 'engagement', cursor: cursor(['engagement', 1e308, 'x']) }, 'cursor'],
    ['/posts', { sort: 'engagement', cursor: cursor(['engagement', 1_000_001, 'x']) }, 'cursor'],
    ['/posts', { sort: 'engagement', cursor: cursor(['engagement', -0.5, 'x']) }, 'cursor'],
    ['/posts', { sort: 'views', cursor: cursor(['views', -1, 'x']) }, 'cursor'],
    ['/posts', { sort: 'views', cursor: cursor(['views', 2 ** 53 + 2, 'x']) }, 'cursor'],
    ['/posts', { sort: 'recent', cursor: cursor(['recent', -86_400_000, 'x']) }, 'cursor'],
    // Integers are decimal digits only.
    ...['0x10', '1e2', '+5', ' 5', '5.0', '5 ', '', '-1', '٥'].flatMap((v): [string, Record<string, string>, string][] => [
      ['/posts', { limit: v }, 'limit'],
      ['/creators', { limit: v }, 'limit'],
      ['/creators', { page: v }, 'page'],
    ]),
  ];

  it.each(strict)('strict input: %s %j answers 400 naming %s', async (path, query, param) => {
    const res = await api(t, key, path, query);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toMatchObject({ error: 'invalid_parameter', param, message: expect.any(String) });
  });

  it('takes the widest range the bounds allow, and a cursor key at the bounds', async () => {
    const wide = await ok(summary, t, key, '/metrics/summary', { start_date: '2000-01-01', end_date: daysAhead(366) });
    expect(wide.meta).toMatchObject({ start_date: '2000-01-01', end_date: daysAhead(366) });
    expect(wide.data.posts).toBe(5);
    for (const [sort, k] of [['engagement', 1_000_000], ['views', 2 ** 53], ['views', 0], ['engagement', 0]] as const) {
      const res = await api(t, key, '/posts', { sort, cursor: cursor([sort, k, 'x']) });
      expect(res.statusCode, `${sort} ${k}`).toBe(200);
    }
    const digits = await api(t, key, '/creators', { limit: '007', page: '01' });
    expect(digits.statusCode).toBe(200);
    expect(digits.json().pagination).toMatchObject({ page: 1, page_size: 7 });
  });

  it('says that a well-formed date which is not in the calendar does not exist', async () => {
    for (const [start, end, param, said] of [
      ['2026-02-30', '2026-03-02', 'start_date', '2026-02-30 does not exist'],
      ['2026-02-01', '2026-02-29', 'end_date', '2026-02-29 does not exist'],
      ['2026-13-01', '2026-12-31', 'start_date', '2026-13-01 does not exist'],
    ]) {
      const res = await api(t, key, '/metrics/summary', { start_date: start!, end_date: end! });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ error: 'invalid_parameter', param });
      expect(res.json().message).toContain(said);
    }
    const leap = await ok(summary, t, key, '/metrics/summary', { start_date: '2024-02-29', end_date: '2024-02-29' });
    expect(leap.meta.start_date).toBe('2024-02-29');
    const malformed = await api(t, key, '/metrics/summary', { start_date: '2026-2-3', end_date: '2026-03-02' });
    expect(malformed.json().message).toBe('must be a date YYYY-MM-DD');
  });

  it('period=all never starts before 2000-01-01, whatever time a placement carries', async () => {
    const old = await brandWithKey(t, { name: 'Old times' });
    const campaign = (await createCampaign(t, { brand_id: old.brand.id, name: 'C' })).id;
    await addPlacements(t, old.brand.id, [{ id: 'epoch-1', campaign_id: campaign, creator_id: null, platform: 'tiktok', posted_at: '1970-01-02T00:00:00Z' }]);
    await addSnapshots(t, 'epoch-1', [['1970-01-02', 10, 1, 0, 0]]);
    await t.settle();
    for (const period of [{ period: 'all' }, {}] as Record<string, string>[]) {
      const body = await ok(summary, t, old.key, '/metrics/summary', period);
      expect(body.meta).toMatchObject({ start_date: '2000-01-01', end_date: todayUtc() });
    }
  });

  it('a parameter given twice is invalid', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v1/metrics/summary?period=7d&period=30d', headers: { authorization: `Bearer ${key}` } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ param: 'period' });
  });

  it('period=custom with both dates is accepted', async () => {
    const body = await ok(summary, t, key, '/metrics/summary', { period: 'custom', start_date: '2026-01-01', end_date: '2026-01-01' });
    expect(body.meta).toMatchObject({ start_date: '2026-01-01', end_date: '2026-01-01' });
  });
});

describe('periods', () => {
  it('start where docs/api.md#semantics says, given today', () => {
    const today = '2026-11-22';
    expect(
      Object.fromEntries((['24h', '7d', '30d', '60d', '90d', '6m', 'ytd'] as const).map((p) => [p, periodStart(p, today)])),
    ).toEqual({
      '24h': '2026-11-21',
      '7d': '2026-11-16',
      '30d': '2026-10-24',
      '60d': '2026-09-24',
      '90d': '2026-08-25',
      '6m': '2026-05-23',
      ytd: '2026-01-01',
    });
    // 6 calendar months before tomorrow, clamped to the end of a shorter month
    expect(periodStart('6m', '2026-08-30')).toBe('2026-02-28');
    expect(periodStart('6m', '2028-08-30')).toBe('2028-02-29');
    expect(periodStart('6m', '2026-12-31')).toBe('2026-07-01');
    expect(addMonths('2026-03-31', -1)).toBe('2026-02-28');
  });

  it('end today (UTC) and count the placements posted in them', async () => {
    const today = todayUtc();
    const counts: Record<string, number> = {};
    for (const period of ['24h', '7d', '30d', 'all']) {
      const body = await ok(summary, t, key, '/metrics/summary', { period });
      expect(body.meta.end_date).toBe(today);
      counts[period] = body.data.posts;
    }
    expect(counts).toEqual({ '24h': 2, '7d': 3, '30d': 5, all: 5 });
    const all = await ok(summary, t, key, '/metrics/summary');
    expect(all.meta.start_date).toBe(daysAgo(29));
    const week = await ok(summary, t, key, '/metrics/summary', { period: '7d', attribution: 'view_date' });
    expect(week.meta).toMatchObject({ start_date: daysAgo(6), attribution: 'view_date' });
    expect(week.data.posts).toBe(3);
  });
});

describe('GET /openapi.json', () => {
  it('is public, OpenAPI 3.1.0, generated from the request schemas', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v1/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info).toMatchObject({ version: '1.0.0', title: expect.any(String), description: expect.any(String) });
    expect(doc.servers).toEqual([{ url: 'http://svc.test/api/v1' }]);
    expect(doc.components.securitySchemes.bearerKey).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(Object.values(doc.components.securitySchemes)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-SVC-API-Key' }),
        expect.objectContaining({ type: 'apiKey', in: 'query', name: 'api_key' }),
      ]),
    );
    const common = ['start_date', 'end_date', 'period', 'platform', 'attribution', 'campaign_id'];
    const extra: Record<string, string[]> = {
      '/brand': [],
      '/metrics/summary': [],
      '/metrics/daily': ['view_type'],
      '/posts': ['sort', 'limit', 'cursor'],
      '/creators': ['page', 'limit'],
      '/metrics/daily.csv': ['view_type'],
      '/posts.csv': ['sort'],
      '/creators.csv': [],
    };
    for (const [path, names] of Object.entries(extra)) {
      const params = doc.paths[path].get.parameters as { name: string; in: string; schema: Record<string, unknown> }[];
      expect(params.map((p) => p.name).sort()).toEqual([...common, ...names].sort());
      expect(params.every((p) => p.in === 'query')).toBe(true);
    }
    const period = doc.paths['/metrics/summary'].get.parameters.find((p: { name: string }) => p.name === 'period');
    expect(period.schema.enum).toEqual(['24h', '7d', '30d', '60d', '90d', '6m', 'ytd', 'all', 'custom']);
    const limit = doc.paths['/posts'].get.parameters.find((p: { name: string }) => p.name === 'limit');
    expect(limit.schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 100, default: 50 });
    expect(doc.paths['/posts.csv'].get.responses['200'].content).toHaveProperty(['text/csv']);
    expect(doc.components.schemas.Summary.required).toEqual(
      expect.arrayContaining(['posts', 'views', 'likes', 'comments', 'shares', 'engagement_rate', 'creators']),
    );
  });
});
