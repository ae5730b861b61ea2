import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brandSchema, dailyRowSchema, envelope, summarySchema } from '../../src/data-api/resources';
import { destroyTestService, startTestService, type TestService } from '../helpers/harness';
import { addPlacements, addSnapshots, api, brandWithKey, createCampaign, ok, seedAcme } from './helpers';

/** Summary, daily and brand answers over the hand-computed brand of seedAcme (docs/api.md#semantics). */
let t: TestService;
let key: string;
let brandId: string;
let spring: string;
let summer: string;
let hidden: string;
const range = { start_date: '2026-03-01', end_date: '2026-03-04' };
const summary = envelope(summarySchema);
const daily = envelope(dailyRowSchema.array());

beforeAll(async () => {
  t = await startTestService();
  ({ key, brandId, spring, summer, hidden } = await seedAcme(t));
});
afterAll(async () => destroyTestService(t));

describe('GET /brand', () => {
  it('answers the brand, its visible campaigns and metrics_since from visible placements', async () => {
    const body = await ok(envelope(brandSchema), t, key, '/brand');
    expect(body.data).toEqual({
      id: brandId,
      name: 'Acme',
      logo_url: 'https://cdn.example.com/acme.png',
      default_platforms: ['instagram', 'tiktok', 'youtube', 'facebook'],
      campaigns: [
        { id: spring, name: 'Spring', status: 'active', start_date: '2026-03-01', end_date: '2026-03-31' },
        { id: summer, name: 'Summer', status: 'draft', start_date: null, end_date: null },
      ],
      metrics_since: '2026-03-01',
    });
    expect(body.meta).toMatchObject({
      brand: { id: brandId, name: 'Acme' },
      start_date: '2026-03-01',
      platforms: ['instagram', 'tiktok', 'youtube', 'facebook'],
      attribution: 'upload_date',
    });
    expect(Date.parse(body.meta.generated_at)).toBeGreaterThan(Date.now() - 60_000);
  });
});

describe('GET /metrics/summary', () => {
  it('upload_date: placements posted in the range with their lifetime totals', async () => {
    const body = await ok(summary, t, key, '/metrics/summary', range);
    expect(body.data).toEqual({
      posts: 4,
      views: 440,
      likes: 36,
      comments: 6,
      shares: 7,
      engagement_rate: 49 / 440,
      creators: 2,
    });
    expect(body.meta).toMatchObject({ start_date: '2026-03-01', end_date: '2026-03-04', attribution: 'upload_date' });
  });

  it('period=all starts at metrics_since and ignores the hidden campaign', async () => {
    const body = await ok(summary, t, key, '/metrics/summary');
    expect(body.meta.start_date).toBe('2026-03-01');
    expect(body.data.views).toBe(440);
  });

  // upload_date over period=all counts from 2000-01-01 beside the metrics_since look-up: what it states must not show it.
  it('period=all in both attributions states the range from metrics_since: meta, daily rows and CSV file names', async () => {
    const today = new Date().toISOString().slice(0, 10);
    for (const attribution of ['upload_date', 'view_date']) {
      const all = await ok(daily, t, key, '/metrics/daily', { attribution });
      const explicit = await ok(daily, t, key, '/metrics/daily', { start_date: '2026-03-01', end_date: today, attribution });
      expect(all.meta).toMatchObject({ start_date: '2026-03-01', end_date: today });
      expect(all.data).toEqual(explicit.data);
      expect(all.data[0]!.date).toBe('2026-03-01');
      const allSummary = await ok(summary, t, key, '/metrics/summary', { attribution });
      expect(allSummary.data).toEqual((await ok(summary, t, key, '/metrics/summary', { start_date: '2026-03-01', end_date: today, attribution })).data);
      for (const name of ['posts', 'creators', 'daily'] as const) {
        const path = name === 'daily' ? '/metrics/daily.csv' : `/${name}.csv`;
        const res = await api(t, key, path, { attribution });
        expect(res.headers['content-disposition']).toBe(`attachment; filename="${name}_2026-03-01_${today}.csv"`);
      }
    }
  });

  // The daily answers count from 2000-01-01 in both attributions: activity before the first posting day must stay out.
  it('period=all leaves out activity dated before the first posting day, daily and cumulative, JSON and CSV', async () => {
    const today = new Date().toISOString().slice(0, 10);
    const { brand, key: early } = await brandWithKey(t, { name: 'Early snapshots' });
    const campaign = (await createCampaign(t, { brand_id: brand.id, name: 'Launch' })).id;
    await addPlacements(t, brand.id, [{ id: 'E1', campaign_id: campaign, creator_id: null, platform: 'tiktok', posted_at: '2026-04-10T09:00:00Z' }]);
    await addSnapshots(t, 'E1', [
      ['2026-04-08', 50, 5, 1, 0],
      ['2026-04-10', 80, 8, 1, 0],
      ['2026-04-11', 120, 9, 2, 1],
    ]);
    await t.settle();
    for (const view_type of ['incremental', 'cumulative']) {
      const all = await ok(daily, t, early, '/metrics/daily', { attribution: 'view_date', view_type });
      const explicit = await ok(daily, t, early, '/metrics/daily', { start_date: '2026-04-10', end_date: today, attribution: 'view_date', view_type });
      expect(all.meta).toMatchObject({ start_date: '2026-04-10', end_date: today });
      expect(all.data[0]!.date).toBe('2026-04-10');
      expect(all.data).toEqual(explicit.data);
      const csvAll = await api(t, early, '/metrics/daily.csv', { attribution: 'view_date', view_type });
      const csvExplicit = await api(t, early, '/metrics/daily.csv', { start_date: '2026-04-10', end_date: today, attribution: 'view_date', view_type });
      expect(csvAll.body).toBe(csvExplicit.body);
    }
    // The activity before the posting day exists, and a range that holds it counts it.
    const withEarly = await ok(summary, t, early, '/metrics/summary', { start_date: '2026-04-01', end_date: today, attribution: 'view_date' });
    const fromPosting = await ok(summary, t, early, '/metrics/summary', { attribution: 'view_date' });
    expect(withEarly.data.views).toBeGreaterThan(fromPosting.data.views);
  });

  it('view_date: activity on the days it happened; posts count placements with activity', async () => {
    const all = await ok(summary, t, key, '/metrics/summary', { ...range, attribution: 'view_date' });
    expect(all.data).toEqual({ posts: 3, views: 440, likes: 36, comments: 6, shares: 7, engagement_rate: 49 / 440, creators: 2 });
    const tail = await ok(summary, t, key, '/metrics/summary', {
      start_date: '2026-03-03',
      end_date: '2026-03-04',
      attribution: 'view_date',
    });
    expect(tail.data).toEqual({ posts: 3, views: 100, likes: 7, comments: 1, shares: 1, engagement_rate: 9 / 100, creators: 2 });
    const oneDay = await ok(summary, t, key, '/metrics/summary', {
      period: 'custom',
      start_date: '2026-03-02',
      end_date: '2026-03-02',
      attribution: 'view_date',
    });
    expect(oneDay.data).toEqual({ posts: 2, views: 190, likes: 14, comments: 4, shares: 3, engagement_rate: 21 / 190, creators: 1 });
  });

  it('shares are null only when every counted placement has null shares', async () => {
    const instagram = await ok(summary, t, key, '/metrics/summary', { ...range, platform: 'instagram' });
    expect(instagram.data).toMatchObject({ posts: 1, views: 60, shares: null, engagement_rate: 7 / 60 });
    const viewed = await ok(summary, t, key, '/metrics/summary', {
      start_date: '2026-03-03',
      end_date: '2026-03-03',
      platform: 'instagram',
      attribution: 'view_date',
    });
    expect(viewed.data).toEqual({ posts: 1, views: 20, likes: 1, comments: 0, shares: null, engagement_rate: 1 / 20, creators: 1 });
    // P4 reported 0 shares, so Summer's total is 0, not null.
    const summerOnly = await ok(summary, t, key, '/metrics/summary', { ...range, campaign_id: summer });
    expect(summerOnly.data).toMatchObject({ posts: 2, views: 60, shares: 0, creators: 1 });
    const nothing = await ok(summary, t, key, '/metrics/summary', { start_date: '2025-01-01', end_date: '2025-01-31' });
    expect(nothing.data).toEqual({ posts: 0, views: 0, likes: 0, comments: 0, shares: 0, engagement_rate: 0, creators: 0 });
  });

  it('filters by platform and campaign', async () => {
    const tiktok = await ok(summary, t, key, '/metrics/summary', { ...range, platform: 'tiktok' });
    expect(tiktok.data).toMatchObject({ posts: 2, views: 300, likes: 25, comments: 3, shares: 6, creators: 1 });
    expect(tiktok.meta.platforms).toEqual(['tiktok']);
    const two = await ok(summary, t, key, '/metrics/summary', { ...range, platform: 'youtube,instagram' });
    expect(two.data).toMatchObject({ posts: 2, views: 140, creators: 2 });
    expect(two.meta.platforms).toEqual(['instagram', 'youtube']);
    const both = await ok(summary, t, key, '/metrics/summary', { ...range, campaign_id: `${spring},${summer}` });
    expect(both.data.views).toBe(440);
    const springTiktok = await ok(summary, t, key, '/metrics/summary', {
      ...range,
      campaign_id: spring,
      platform: 'tiktok',
      attribution: 'view_date',
    });
    expect(springTiktok.data).toMatchObject({ posts: 1, views: 300, creators: 1 });
  });

  it('a hidden campaign is refused as a filter', async () => {
    const res = await api(t, key, '/metrics/summary', { campaign_id: hidden });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'invalid_parameter', param: 'campaign_id' });
  });
});

describe('GET /metrics/daily', () => {
  it('upload_date: one zero-filled row per day, placements on their posting day', async () => {
    const body = await ok(daily, t, key, '/metrics/daily', range);
    expect(body.data).toEqual([
      { date: '2026-03-01', posts: 2, views: 380, likes: 31, comments: 4, shares: 7 },
      { date: '2026-03-02', posts: 1, views: 60, likes: 5, comments: 2, shares: null },
      { date: '2026-03-03', posts: 1, views: 0, likes: 0, comments: 0, shares: 0 },
      { date: '2026-03-04', posts: 0, views: 0, likes: 0, comments: 0, shares: 0 },
    ]);
  });

  it('view_date: activity per day; posts are the placements active that day', async () => {
    const body = await ok(daily, t, key, '/metrics/daily', { ...range, attribution: 'view_date' });
    expect(body.data).toEqual([
      { date: '2026-03-01', posts: 2, views: 150, likes: 15, comments: 1, shares: 3 },
      { date: '2026-03-02', posts: 2, views: 190, likes: 14, comments: 4, shares: 3 },
      { date: '2026-03-03', posts: 2, views: 50, likes: 2, comments: 1, shares: 0 },
      { date: '2026-03-04', posts: 1, views: 50, likes: 5, comments: 0, shares: 1 },
    ]);
  });

  it('cumulative: views, likes and comments run from the first day of the range', async () => {
    const body = await ok(daily, t, key, '/metrics/daily', {
      start_date: '2026-03-02',
      end_date: '2026-03-05',
      attribution: 'view_date',
      view_type: 'cumulative',
    });
    expect(body.data).toEqual([
      { date: '2026-03-02', posts: 2, views: 190, likes: 14, comments: 4, shares: 3 },
      { date: '2026-03-03', posts: 2, views: 240, likes: 16, comments: 5, shares: 0 },
      { date: '2026-03-04', posts: 1, views: 290, likes: 21, comments: 5, shares: 1 },
      { date: '2026-03-05', posts: 0, views: 290, likes: 21, comments: 5, shares: 0 },
    ]);
    const upload = await ok(daily, t, key, '/metrics/daily', { ...range, view_type: 'cumulative' });
    expect(upload.data.map((d) => d.views)).toEqual([380, 440, 440, 440]);
  });

  it('covers exactly the range of the period', async () => {
    const body = await ok(daily, t, key, '/metrics/daily', { period: '7d' });
    expect(body.data).toHaveLength(7);
    expect(body.data[0]!.date).toBe(body.meta.start_date);
    expect(body.data[6]!.date).toBe(body.meta.end_date);
  });
});

describe('brand isolation', () => {
  it("a key answers for its own brand only: another brand's key sees none of these placements", async () => {
    const other = await brandWithKey(t, { name: 'Other', default_platforms: ['tiktok'] });
    const body = await ok(summary, t, other.key, '/metrics/summary', range);
    expect(body.data).toMatchObject({ posts: 0, views: 0 });
    expect(body.meta).toMatchObject({ brand: { id: other.brand.id, name: 'Other' }, platforms: ['tiktok'] });
    const brand = await ok(envelope(brandSchema), t, other.key, '/brand');
    expect(brand.data).toMatchObject({ campaigns: [], metrics_since: null });
    expect(brand.meta.start_date).toBe(brand.meta.end_date); // period=all with no placements: today
    const foreign = await api(t, other.key, '/metrics/summary', { campaign_id: spring });
    expect(foreign.statusCode).toBe(400);
    expect(foreign.json()).toMatchObject({ param: 'campaign_id' });
  });
});
