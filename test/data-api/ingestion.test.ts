import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cursorPaginationSchema, dailyRowSchema, envelope, pagedEnvelope, postSchema, summarySchema } from '../../src/data-api/resources';
import { derivePlacements } from '../../src/placements/derive';
import { postSnapshots } from '../helpers/fixtures';
import { destroyTestService, startTestService, type TestService } from '../helpers/harness';
import { addPlacements, addSnapshots, brandWithKey, createCampaign, ok, type Snapshot } from './helpers';

/**
 * The derived tables follow the facts however they arrive: snapshots late,
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

/** view_date figures recomputed from snapshots as given (the last one of a day counts): each day's change from the previous snapshot. */
function recompute(snapshots: Map<string, Map<string, Snapshot>>, start: string, end: string) {
  type Day = { posts: number; views: number; likes: number; comments: number; shares: number; sharesKnown: number };
  const days = new Map<string, Day>();
  const activeIn = new Set<string>();
  for (const [id, byDate] of snapshots) {
    let prev = [0, 0, 0, 0];
    for (const [date, views, likes, comments, shares] of [...byDate.values()].sort((a, b) => a[0].localeCompare(b[0]))) {
      const now = [views, likes, comments, shares ?? 0];
      const delta = now.map((v, i) => v - prev[i]!);
      prev = now;
      if (delta.every((d) => d === 0) || date < start || date > end) continue;
      activeIn.add(id);
      const day = days.get(date) ?? { posts: 0, views: 0, likes: 0, comments: 0, shares: 0, sharesKnown: 0 };
      days.set(date, day);
      day.posts++;
      day.views += delta[0]!;
      day.likes += delta[1]!;
      day.comments += delta[2]!;
      day.shares += delta[3]!;
      if (shares !== null) day.sharesKnown++;
    }
  }
  const shown = (d: Day) => (d.posts > 0 && d.sharesKnown === 0 ? null : d.shares);
  const total = [...days.values()].reduce(
    (a, d) => ({ posts: 0, views: a.views + d.views, likes: a.likes + d.likes, comments: a.comments + d.comments, shares: a.shares + d.shares, sharesKnown: a.sharesKnown + d.sharesKnown }),
    { posts: 0, views: 0, likes: 0, comments: 0, shares: 0, sharesKnown: 0 },
  );
  total.posts = activeIn.size;
  const daily = [];
  for (let date = start; date <= end; date = new Date(Date.parse(date) + 86_400_000).toISOString().slice(0, 10)) {
    const d = days.get(date);
    daily.push({ date, posts: d?.posts ?? 0, views: d?.views ?? 0, likes: d?.likes ?? 0, comments: d?.comments ?? 0, shares: d ? shown(d) : 0 });
  }
  return { daily, summary: { posts: total.posts, views: total.views, likes: total.likes, comments: total.comments, shares: shown(total) } };
}

describe('replaced snapshots', () => {
  it('leave every view_date figure equal to a recomputation from the snapshots, before and after merges', async () => {
    const { key: replacedKey, brand } = await brandWithKey(t, { name: 'Replaced' });
    const campaign = (await createCampaign(t, { brand_id: brand.id, name: 'R' })).id;
    const ids = ['r1', 'r2', 'r3', 'r4'];
    await addPlacements(t, brand.id, ids.map((id, i) => ({ id, campaign_id: campaign, creator_id: null, platform: i === 3 ? 'instagram' : 'tiktok', posted_at: '2026-06-01T08:00:00Z' })));
    // A deterministic history: each placement grows over ten days (instagram reports no shares).
    const snapshots = new Map(ids.map((id) => [id, new Map<string, Snapshot>()]));
    let seed = 7;
    const next = () => {
      seed = (seed * 48271) % 2147483647;
      return seed % 100;
    };
    const put = (id: string, day: number, views: number) => {
      const date = `2026-06-${String(day).padStart(2, '0')}`;
      const snapshot: Snapshot = [date, views, Math.floor(views / 10), Math.floor(views / 100), id === 'r4' ? null : Math.floor(views / 50)];
      snapshots.get(id)!.set(date, snapshot);
      return snapshot;
    };
    for (const id of ids) {
      let views = 0;
      const history: Snapshot[] = [];
      for (let day = 1; day <= 10; day++) {
        views += next() * 10;
        history.push(put(id, day, views));
      }
      await addSnapshots(t, id, history);
    }
    await t.settle();
    const range = { start_date: '2026-06-01', end_date: '2026-06-12', attribution: 'view_date' };
    const inner = { start_date: '2026-06-04', end_date: '2026-06-08', attribution: 'view_date' };
    const check = async () => {
      for (const r of [range, inner]) {
        const want = recompute(snapshots, r.start_date, r.end_date);
        expect((await ok(daily, t, replacedKey, '/metrics/daily', r)).data).toEqual(want.daily);
        expect((await ok(summary, t, replacedKey, '/metrics/summary', r)).data).toMatchObject(want.summary);
      }
    };
    await check();

    // Replacements: a middle day up and down (the next day's change moves too), a day made equal to
    // the one before (no longer active), the first day, the last day; in separate batches and in one.
    await addSnapshots(t, 'r1', [put('r1', 5, 99_999)]);
    await t.settle();
    await check();
    const r2Day3 = snapshots.get('r2')!.get('2026-06-03')!;
    await addSnapshots(t, 'r2', [put('r2', 4, r2Day3[1]), put('r2', 1, 0), put('r2', 10, 1)]);
    await postSnapshots(t, [
      { placement_id: 'r3', date: '2026-06-06', views: 5, likes: 0, comments: 0, shares: 0 },
      { placement_id: 'r4', date: '2026-06-06', views: 123_456, likes: 7, comments: 0, shares: null },
    ]);
    snapshots.get('r3')!.set('2026-06-06', ['2026-06-06', 5, 0, 0, 0]);
    snapshots.get('r4')!.set('2026-06-06', ['2026-06-06', 123_456, 7, 0, null]);
    await t.settle();
    await check();

    // Merges fold the corrections away and change no figure.
    await t.services.warehouse.command('OPTIMIZE TABLE placement_activity FINAL');
    await t.services.warehouse.command('OPTIMIZE TABLE placement_totals FINAL');
    await check();
  });
});
