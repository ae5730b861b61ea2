import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cursorPaginationSchema, dailyRowSchema, envelope, pagedEnvelope, postSchema, summarySchema } from '../../src/data-api/resources';
import { derivePlacements } from '../../src/placements/derive';
import { postSnapshots } from '../helpers/fixtures';
import { destroyTestService, startTestService, type TestService } from '../helpers/harness';
import { addPlacements, addSnapshots, brandWithKey, createCampaign, ok } from './helpers';

/**
 * The derived tables follow the facts however they arrive (CONTRACT 4): snapshots late,
 * out of order, replaced, before their placement; placements re-posted; batches replayed.
 */
let t: TestService;
let key: string;
let brandId: string;
let campaignA: string;
let campaignB: string;
const may = { start_date: '2026-05-01', end_date: '2026-05-04' };
const summary = envelope(summarySchema);
const daily = envelope(dailyRowSchema.array());

beforeAll(async () => {
  t = await startTestService();
  ({
    key,
    brand: { id: brandId },
  } = await brandWithKey(t, { name: 'Late' }));
  campaignA = (await createCampaign(t, { brand_id: brandId, name: 'A' })).id;
  campaignB = (await createCampaign(t, { brand_id: brandId, name: 'B' })).id;
});
afterAll(async () => destroyTestService(t));

const placement = (id: string, overrides: Record<string, unknown> = {}) => ({
  id,
  campaign_id: campaignA,
  creator_id: null,
  platform: 'tiktok',
  posted_at: '2026-05-01T08:00:00Z',
  ...overrides,
});

/** Views per day of one placement, view_date. */
async function viewsPerDay(platform = 'tiktok') {
  const body = await ok(daily, t, key, '/metrics/daily', { ...may, attribution: 'view_date', platform });
  return body.data.map((d) => d.views);
}

describe('snapshots', () => {
  it('arriving out of order, each in its own batch, give the right daily activity', async () => {
    await addPlacements(t, brandId, [placement('late')]);
    for (const snapshot of [
      ['2026-05-03', 300, 30, 3, 3],
      ['2026-05-01', 100, 10, 1, 1],
      ['2026-05-02', 150, 15, 1, 2],
    ] as const) {
      await addSnapshots(t, 'late', [[...snapshot]]);
      await t.settle();
    }
    expect(await viewsPerDay()).toEqual([100, 50, 150, 0]);
    const body = await ok(summary, t, key, '/metrics/summary', may);
    expect(body.data).toMatchObject({ posts: 1, views: 300, likes: 30, comments: 3, shares: 3 });
  });

  it('a later snapshot for a day replaces the earlier one, in a later request or the same one', async () => {
    await addSnapshots(t, 'late', [['2026-05-02', 200, 20, 2, 2]]);
    await t.settle();
    expect(await viewsPerDay()).toEqual([100, 100, 100, 0]);
    await postSnapshots(t, [
      { placement_id: 'late', date: '2026-05-03', views: 310, likes: 30, comments: 3, shares: 3 },
      { placement_id: 'late', date: '2026-05-03', views: 350, likes: 31, comments: 3, shares: 3 },
    ]);
    await t.settle();
    expect(await viewsPerDay()).toEqual([100, 100, 150, 0]);
    const body = await ok(summary, t, key, '/metrics/summary', may);
    expect(body.data).toMatchObject({ views: 350, likes: 31 });
  });

  it('arriving before their placement are counted once it arrives', async () => {
    await addSnapshots(t, 'early', [
      ['2026-05-01', 10, 1, 0, null],
      ['2026-05-04', 40, 2, 0, null],
    ]);
    await t.settle();
    await addPlacements(t, brandId, [placement('early', { platform: 'instagram' })]);
    await t.settle();
    expect(await viewsPerDay('instagram')).toEqual([10, 0, 0, 30]);
    const body = await ok(summary, t, key, '/metrics/summary', { ...may, platform: 'instagram' });
    expect(body.data).toMatchObject({ posts: 1, views: 40, likes: 2, shares: null });
  });

  it('deriving the same placements again (a replayed batch) changes nothing', async () => {
    const before = await ok(daily, t, key, '/metrics/daily', { ...may, attribution: 'view_date' });
    await derivePlacements(t.services.warehouse, ['late', 'early', 'late']);
    await derivePlacements(t.services.warehouse, ['early']);
    const after = await ok(daily, t, key, '/metrics/daily', { ...may, attribution: 'view_date' });
    expect(after.data).toEqual(before.data);
  });
});

describe('placements', () => {
  it('re-posted with another platform and campaign move with their history', async () => {
    await addPlacements(t, brandId, [placement('moved', { platform: 'youtube' })]);
    await addSnapshots(t, 'moved', [
      ['2026-05-02', 500, 50, 5, 5],
      ['2026-05-03', 700, 70, 7, 7],
    ]);
    await t.settle();
    const youtube = { ...may, attribution: 'view_date', platform: 'youtube' };
    expect((await ok(summary, t, key, '/metrics/summary', { ...youtube, campaign_id: campaignA })).data.views).toBe(700);

    await addPlacements(t, brandId, [placement('moved', { platform: 'facebook', campaign_id: campaignB, caption: 'edited' })]);
    await t.settle();
    expect((await ok(summary, t, key, '/metrics/summary', youtube)).data).toMatchObject({ posts: 0, views: 0 });
    const facebook = await ok(daily, t, key, '/metrics/daily', { ...may, attribution: 'view_date', platform: 'facebook', campaign_id: campaignB });
    expect(facebook.data.map((d) => d.views)).toEqual([0, 500, 200, 0]);
    const posts = await ok(pagedEnvelope(postSchema.array(), cursorPaginationSchema), t, key, '/posts', { ...may, platform: 'facebook' });
    expect(posts.data).toHaveLength(1);
    expect(posts.data[0]).toMatchObject({ id: 'moved', caption: 'edited', campaign: { id: campaignB, name: 'B' }, views: 700 });
  });

  it('without snapshots count in upload_date with zeros and null shares, and not in view_date', async () => {
    await addPlacements(t, brandId, [placement('silent', { platform: 'facebook', posted_at: '2026-05-04T23:59:59Z' })]);
    await t.settle();
    const upload = await ok(summary, t, key, '/metrics/summary', { start_date: '2026-05-04', end_date: '2026-05-04', platform: 'facebook' });
    expect(upload.data).toEqual({ posts: 1, views: 0, likes: 0, comments: 0, shares: null, engagement_rate: 0, creators: 0 });
    const viewed = await ok(summary, t, key, '/metrics/summary', {
      start_date: '2026-05-04',
      end_date: '2026-05-04',
      platform: 'facebook',
      attribution: 'view_date',
    });
    expect(viewed.data.posts).toBe(0);
  });
});
